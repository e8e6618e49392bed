// Contract of the local diagonal of the spectral-element Poisson operator: d_L = diag(A_L), the
// diagonals of the element Laplacians A_e = D^T G^e D, without forming them (Deville, Fischer
// and Mund, High-Order Methods for Incompressible Fluid Flow, 2002, eq. (4.4.13); Wahlgren, "A
// GPU-accelerated Jacobi preconditioner for high-order fluid simulations", KTH 2022, eq. (9)),
// plus the cross terms of deformed elements.
//
// For element e and point q = (i, j, k) (q = (k N + j) N + i), with G_c(i, j, k) the metric term
// c of point (i, j, k) of element e (layout of PoissonView::g) and D[m * N + i] = l_i'(x_m):
//   d = 0
//   for m = 0 .. N-1 (increasing):
//     d = d + G11(m, j, k) * D[m, i] * D[m, i]      (products left to right)
//     d = d + G22(i, m, k) * D[m, j] * D[m, j]
//     d = d + G33(i, j, m) * D[m, k] * D[m, k]
//   d = d + 2 * (G12(i,j,k) * D[i, i] * D[j, j] + G13(i,j,k) * D[i, i] * D[k, k]
//                + G23(i,j,k) * D[j, j] * D[k, k])  (sums left to right)
//   d_local[e N^3 + q] = d
// The same operations in the same order on every backend and variant (cuda is compiled without
// fused multiply-adds), so every variant gives the reference's bits.
#pragma once

#include "kernels/sem/poisson.hpp"
#include "kryflow/core/array.hpp"

namespace kryflow::kernels::sem {

/// The cuda kernel designs of Wahlgren (2022), sec. 3.1. Host backends have one loop each
/// and ignore the variant.
enum class DiagonalVariant {
  natural,   ///< one block per element, one thread per point (N^3 <= 1024: N <= 10)
  shared,    ///< natural, with G11, G22, G33 of the element staged in shared memory (N <= 10)
  extended,  ///< one thread per point over consecutive points (blocks not aligned to elements)
  wide,      ///< one thread per (j, k) line computing its N points along r
};

/// Every variant, in the order above.
inline constexpr DiagonalVariant kDiagonalVariants[] = {
    DiagonalVariant::natural, DiagonalVariant::shared, DiagonalVariant::extended,
    DiagonalVariant::wide};

/// "natural", "shared", "extended" or "wide".
inline const char* to_string(DiagonalVariant variant) {
  switch (variant) {
    case DiagonalVariant::natural:
      return "natural";
    case DiagonalVariant::shared:
      return "shared";
    case DiagonalVariant::extended:
      return "extended";
    case DiagonalVariant::wide:
      return "wide";
  }
  return "unknown";
}

#define KRYFLOW_SEM_DIAGONAL_DECLARATIONS                                                     \
  /** d_local = diag(A_L): num_elements x N^3 entries (a.num_elements, a.n, a.derivative, a.g \
   * are read; nothing else of a). cuda: natural and shared throw NotSupported for N > 10. */ \
  void poisson_local_diagonal(const Backend& backend, const PoissonView& a,                   \
                              DiagonalVariant variant, Span<double> d_local);

/// Dispatch.
KRYFLOW_SEM_DIAGONAL_DECLARATIONS

namespace reference {
KRYFLOW_SEM_DIAGONAL_DECLARATIONS
}
namespace cpu {
KRYFLOW_SEM_DIAGONAL_DECLARATIONS
}
namespace cuda {
KRYFLOW_SEM_DIAGONAL_DECLARATIONS
}

#undef KRYFLOW_SEM_DIAGONAL_DECLARATIONS

}  // namespace kryflow::kernels::sem
