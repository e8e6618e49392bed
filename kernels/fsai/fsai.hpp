// Contract of the FSAI setup kernels: the factorized sparse approximate inverse G of an SPD
// matrix, G^T G ~ A^-1 (L. Yu. Kolotilina, A. Yu. Yeremin, "Factorized sparse approximate
// inverse preconditionings I. Theory", SIAM J. Matrix Anal. Appl. 14, 1993; the parallel form
// of E. Chow, "Parallel implementation and practical use of sparse approximate inverse
// preconditioners with a priori sparsity patterns", IJHPCA 15, 2001).
//
// G is lower triangular with a prescribed pattern (row i: columns J_i, sorted, i last). Row i is
// g_i = L_i^-T e_m, where L_i L_i^T = A[J_i, J_i] (m = |J_i|, e_m the last unit vector): the
// solution of A[J_i, J_i] y = e_m scaled by 1/sqrt(y_m), so that diag(G A G^T) = I. Every row is
// independent of the others, so the setup is one pass over the rows on any backend.
//
// Same layout as kernels/sparse_setup: namespaces reference (the oracle), cpu (OpenMP) and cuda
// with identical signatures, and unqualified functions that dispatch on the backend. Every
// pointer is an address on the backend; columns are sorted and unique within each row of every
// input.
//
// Every kernel gives the reference's bits on every backend: factor_values runs the same
// operations in the same order everywhere (a right-looking Cholesky factorization of the packed
// lower triangle, then a column-oriented back substitution), the build contracts no multiply and
// add into an fma (-ffp-contract=off, --fmad=false), and sqrt and division round correctly.
#pragma once

#include <cstdint>

#include "kernels/sparse_setup/sparse_setup.hpp"
#include "kryflow/core/array.hpp"

namespace kryflow::kernels::fsai {

using sparse_setup::MatrixView;
using sparse_setup::PatternView;

/// The longest row the factorizations take: factor_values_nonsymmetric's dense submatrix (m^2
/// doubles) and two right-hand sides fit one warp's share of shared memory on cuda (about 180
/// KB at m = 150; factor_values's packed triangle takes half).
constexpr index_t kMaxRowEntries = 150;

#define KRYFLOW_FSAI_DECLARATIONS                                                               \
  /** counts[i] = min(max_row_entries, the columns j <= i of row i of the square pattern s)     \
      (counts has s.num_rows entries, 1 <= max_row_entries <= kMaxRowEntries); returns the      \
      largest count (one wait on a device). */                                                  \
  index_t pattern_count(const Backend& backend, const PatternView& s, index_t max_row_entries,  \
                        Span<index_t> counts);                                                  \
  /** G's columns: row i holds the last g_row_ptr[i + 1] - g_row_ptr[i] columns j <= i of row i \
      of s, in increasing order (the ones nearest the diagonal; g_row_ptr from exclusive_scan   \
      of pattern_count). No wait. */                                                            \
  void pattern_fill(const Backend& backend, const PatternView& s, const index_t* g_row_ptr,     \
                    index_t* g_col_idx);                                                        \
  /** G's values on its pattern g (rows of at most `longest` <= kMaxRowEntries entries): row i  \
      is L_i^-T e_m with L_i L_i^T the entries (J_r, J_c), c <= r, of `sign` (+1 or -1) times   \
      a's lower triangle (read from row J_r of a, 0 where a stores none; the upper triangle of  \
      a is never read), so a negative definite a is factored as -a. Returns                     \
      the first (0-based) row whose last column is not i, or whose Cholesky factorization meets \
      a pivot that is not positive and finite (A[J_i, J_i] not positive definite), or -1; that  \
      row's values are left unwritten; with longest 0 (no row stores an entry at or left of its \
      diagonal) row 0 when there are rows. One wait on a device. */                             \
  index_t factor_values(const Backend& backend, const MatrixView& a, double sign,               \
                        const PatternView& g, index_t longest, double* g_values);               \
  /** The nonsymmetric FSAI (Kolotilina, Yeremin, "Factorized sparse approximate inverse        \
      preconditionings", 1993, the nonsymmetric form): for each row i of g (columns J, sorted,  \
      i last, m of them), the LU factorization A[J, J] = L U without pivoting (L unit lower),   \
      then row i of W' = L^-T e_m into w_values and column i of Z = U^-1 e_m into z_values (in  \
      g's pattern, so z_values holds Z^T). Then (W' A Z)_ii = 1 and A^-1 ~ Z W' (both exact     \
      when J is all of 0..i for every row). Reads both triangles of a. Returns the first row    \
      whose last column is not i or whose elimination meets a zero or non-finite pivot, or -1.  \
      One wait on a device. */                                                                  \
  index_t factor_values_nonsymmetric(const Backend& backend, const MatrixView& a,               \
                                     const PatternView& g, index_t longest, double* w_values,   \
                                     double* z_values);                                         \
  /** Post-filtration of G (Kolotilina, Yeremin 1993, sec. 5; Chow 2001): counts[i] = the       \
      entries of row i of g kept, those with |g_ij| sqrt(d_j) >= tolerance |g_ii| sqrt(d_i)     \
      (d = |diag(A)|, n entries: the test of the matrix scaled to a unit diagonal, where        \
      G S^-1 is its factor), and the diagonal always. `other_values` (null, or a second factor  \
      in g's pattern: the rows of Z^T of the nonsymmetric form) keeps an entry that passes the  \
      same test on it too. Returns the longest kept row (one wait on a device). */              \
  index_t filter_count(const Backend& backend, const PatternView& g, const double* g_values,    \
                       const double* other_values, const double* diagonal, double tolerance,    \
                       Span<index_t> counts);                                                   \
  /** The kept columns of each row (in order) into f_col_idx, for f_row_ptr from                \
      exclusive_scan of filter_count. No wait. */                                               \
  void filter_fill(const Backend& backend, const PatternView& g, const double* g_values,        \
                   const double* other_values, const double* diagonal, double tolerance,        \
                   const index_t* f_row_ptr, index_t* f_col_idx);

/// Dispatch.
KRYFLOW_FSAI_DECLARATIONS

namespace reference {
KRYFLOW_FSAI_DECLARATIONS
}
namespace cpu {
KRYFLOW_FSAI_DECLARATIONS
}
namespace cuda {
KRYFLOW_FSAI_DECLARATIONS
}

#undef KRYFLOW_FSAI_DECLARATIONS

}  // namespace kryflow::kernels::fsai
