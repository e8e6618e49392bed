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

using sparse_setup::PatternView;

/// A CSR matrix whose values are stored in double (values) or in float (values_f32): exactly
/// one of the two is non-null when the matrix has entries. Every kernel reads a float value as
/// double(a_ij), exactly, and sums in double, so a float view gives the bits of a double view
/// of the float-rounded values. Converts from sparse_setup::MatrixView (double values).
struct MatrixView {
  PatternView pattern;
  const double* values = nullptr;
  const float* values_f32 = nullptr;
  MatrixView() = default;
  MatrixView(const PatternView& p, const double* v, const float* v_f32 = nullptr)
      : pattern(p), values(v), values_f32(v_f32) {}
  MatrixView(const sparse_setup::MatrixView& a)  // NOLINT(google-explicit-constructor)
      : pattern(a.pattern), values(a.values) {}
};

/// Calls `f(values)` with the view's stored values, `const float*` when values_f32 is set,
/// else `const double*`: how each backend instantiates its kernel template.
template <class F>
decltype(auto) with_values(const MatrixView& a, F&& f) {
  if (a.values_f32 != nullptr) return f(a.values_f32);
  return f(a.values);
}

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

/// Dispatch (gauss_seidel: NotSupported on cuda). Throws InvalidInput when a view with entries
/// has both or neither of values and values_f32.
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
