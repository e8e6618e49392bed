// The host pieces the fast-diagonalization Schwarz patches share (element patches in
// schwarz.cpp, vertex patches in vertex_patch.cpp): the separable 1D operators of the GLL
// discretization and their generalized eigenproblems.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kryflow/sem/geometry.hpp"
#include "kryflow/sem/gll.hpp"
#include "kryflow/sem/poisson_operator.hpp"

namespace kryflow::sem::detail {

/// Local index of the point with coordinates c[0..2] (each in 0..n-1) of element e.
inline std::int64_t local_index(std::int64_t e, int n, const std::array<int, 3>& c) {
  return ((e * n + c[2]) * n + c[1]) * n + c[0];
}

/// The global point of corner c (c = i + 2 j + 4 k, i, j, k in {0, 1}: the lexicographic
/// corners) of element e.
inline std::int64_t corner_point(const GlobalNumbering& numbering, std::int64_t e, int c) {
  const int n = numbering.order + 1;
  const int p = n - 1;
  return numbering
      .local_to_global[local_index(e, n, {(c & 1) * p, ((c >> 1) & 1) * p, ((c >> 2) & 1) * p})];
}

/// Per element and reference direction d (num_elements x 3, e * 3 + d): the mean length of the
/// element's four edges along d (exact for boxes, the separable approximation of a deformed
/// element; Lottes and Fischer 2005, sec. 3).
std::vector<double> element_lengths(const SemPoissonOperator& A);

/// Per element and reference direction d (num_elements x 3): the lengths (h_0, h_1, h_2) of the
/// axis-aligned box whose Laplacian has the element's mean diagonal metric terms: with g_d the
/// average over the GLL points (weights w_i w_j w_k) of |J| (J^-1 J^-T)_dd, a box has
/// g_d = h_0 h_1 h_2 / (2 h_d^2), so h_0 h_1 h_2 = 8 g_0 g_1 g_2 and h_d = sqrt(h_0 h_1 h_2 /
/// (2 g_d)). Exact for boxes; for sheared or tapered elements the separable model then has the
/// element's stiffness along each direction on average (where element_lengths underestimates
/// it), which leaves only the cross terms unmodeled.
std::vector<double> element_metric_lengths(const SemPoissonOperator& A);

/// The 1D GLL stiffness matrix of the reference interval [-1, 1] (n x n, n = p + 1):
/// K_ij = sum_q w_q D_qi D_qj. Its mass matrix is diag(w).
std::vector<double> reference_stiffness(const GllRule& rule);

/// The generalized eigenproblem A s = lambda B s (B diagonal, positive) on the `active`
/// indices of an N x N problem (A row-major): S (N x N, S[i N + m], rows of inactive indices
/// and columns of missing modes zero) with S^T A S = Lambda, S^T B S = I, and lambda (0 for
/// missing modes). LAPACK dsyev on B^-1/2 A B^-1/2. Throws InvalidInput when dsyev fails.
void generalized_eigen(int N, const std::vector<double>& A, const std::vector<double>& B,
                       const std::vector<char>& active, double* S, double* lambda);

}  // namespace kryflow::sem::detail
