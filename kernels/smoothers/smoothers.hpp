// Contract of the smoother kernels that need a matrix's entries: l1 row norms (l1-Jacobi) and
// sequential Gauss-Seidel sweeps.
//
// Same layout as kernels/sparse_setup (reference oracle, cpu, cuda, dispatch). Gauss-Seidel is
// sequential by definition; the cpu kernel is the same loop, and the cuda one throws
// NotSupported naming the parallel smoothers (a parallel variant needs a coloring,
// kernels/coloring).
#pragma once

#include "kernels/sparse_setup/sparse_setup.hpp"

namespace kryflow::kernels::smoothers {

using sparse_setup::MatrixView;

enum class SweepDirection { forward, backward };

#define KRYFLOW_SMOOTHERS_DECLARATIONS                                                         \
  /** d_i = sum_j |a_ij| (Baker, Falgout, Kolev, Yang, SIAM J. Sci. Comput. 33, 2011: the l1   \
      smoother's diagonal on one process) */                                                   \
  void l1_row_norms(const Backend& backend, const MatrixView& a, Span<double> d);              \
  /** One Gauss-Seidel sweep over the rows in `direction`: x_i = (b_i - sum_{j != i} a_ij x_j) \
      inverse_diagonal_i, with the newest x_j (Saad, Iterative Methods, 2nd ed., sec. 4.1) */  \
  void gauss_seidel(const Backend& backend, const MatrixView& a,                               \
                    Span<const double> inverse_diagonal, Span<const double> b, Span<double> x, \
                    SweepDirection direction);

/// Dispatch (gauss_seidel: NotSupported on cuda).
KRYFLOW_SMOOTHERS_DECLARATIONS

namespace reference {
KRYFLOW_SMOOTHERS_DECLARATIONS
}
namespace cpu {
KRYFLOW_SMOOTHERS_DECLARATIONS
}
namespace cuda {
KRYFLOW_SMOOTHERS_DECLARATIONS
}

#undef KRYFLOW_SMOOTHERS_DECLARATIONS

}  // namespace kryflow::kernels::smoothers
