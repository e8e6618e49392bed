// Contract of the matrix-free spectral-element Poisson operator on assembled (global) vectors:
// y = M A_L-assembled M x + (I - M) x, with A_L the element Laplacians by sum factorization
// (Deville, Fischer and Mund, High-Order Methods for Incompressible Fluid Flow, 2002, sec. 4.4
// and 4.5) and M the mask of the Dirichlet points (masked rows and columns are the identity).
//
// Order of operations, the same on every backend: x_L[l] = masked(g(l)) ? 0 : x[g(l)]; per
// element, with D the GLL derivative matrix, u_r = D_r x_L, u_s = D_s x_L, u_t = D_t x_L (each
// a sum over m in increasing order), w_a = G_a1 u_r + G_a2 u_s + G_a3 u_t (left to right),
// y_L = D_r^T w_r + D_s^T w_s + D_t^T w_t (r, then s, then t, each sum in increasing m); then
// y[g] = masked(g) ? x[g] : the sum of y_L over the locals of g in increasing local index.
#pragma once

#include <cstdint>

#include "kryflow/core/array.hpp"

namespace kryflow::kernels::sem {

/// The operator's data as the kernels see them (all on one backend).
struct PoissonView {
  std::int64_t num_elements = 0;
  int n = 0;                           // N = p + 1 points per direction
  const double* derivative = nullptr;  // N x N, D[i * N + m] = l_m'(x_i)
  const double* g = nullptr;           // num_elements x 6 x N^3 metric terms
  std::int64_t num_global = 0;
  const std::int64_t* local_to_global = nullptr;  // num_elements x N^3
  const std::int64_t* global_offsets = nullptr;   // num_global + 1
  const index_t* global_locals = nullptr;         // num_elements x N^3, grouped by global point
  const char* mask = nullptr;                     // num_global: 1 = Dirichlet point
  double* local_x = nullptr;                      // scratch, num_elements x N^3
  double* local_y = nullptr;                      // scratch, num_elements x N^3
};

#define KRYFLOW_SEM_POISSON_DECLARATIONS                                                 \
  /** y = A x on global vectors (num_global entries each) */                             \
  void poisson_apply(const Backend& backend, const PoissonView& a, Span<const double> x, \
                     Span<double> y);

/// Dispatch (cuda: NotSupported until its kernels exist).
KRYFLOW_SEM_POISSON_DECLARATIONS

namespace reference {
KRYFLOW_SEM_POISSON_DECLARATIONS
}
namespace cpu {
KRYFLOW_SEM_POISSON_DECLARATIONS
}

#undef KRYFLOW_SEM_POISSON_DECLARATIONS

}  // namespace kryflow::kernels::sem
