// Dispatch of the smoother kernels to the backend that owns the data.
#include "kernels/smoothers/smoothers.hpp"

#include "kernels/backend/dispatch.hpp"

namespace kryflow::kernels::smoothers {

void l1_row_norms(const Backend& backend, const MatrixView& a, Span<double> d) {
  KRYFLOW_DISPATCH(smoothers, l1_row_norms, backend, a, d);
}

void gauss_seidel(const Backend& backend, const MatrixView& a, Span<const double> inverse_diagonal,
                  Span<const double> b, Span<double> x, SweepDirection direction) {
  KRYFLOW_DISPATCH(smoothers, gauss_seidel, backend, a, inverse_diagonal, b, x, direction);
}

}  // namespace kryflow::kernels::smoothers
