// Dispatch of the spectral-element grid transfers to the backend that owns the data.
#include "kernels/sem/transfer.hpp"

#include "kernels/backend/dispatch.hpp"

namespace kryflow::kernels::sem {

void transfer_interpolate(const Backend& backend, const TransferSideView& in, int n_out,
                          const double* matrix, Span<const double> x, Span<double> y_local) {
  KRYFLOW_DISPATCH(sem, transfer_interpolate, backend, in, n_out, matrix, x, y_local);
}

void transfer_prolongate(const Backend& backend, const TransferSideView& in,
                         const TransferSideView& out, const double* matrix, Span<const double> x,
                         double beta, Span<double> y) {
  KRYFLOW_DISPATCH(sem, transfer_prolongate, backend, in, out, matrix, x, beta, y);
}

void transfer_assemble(const Backend& backend, const TransferSideView& out,
                       Span<const double> y_local, double beta, Span<double> y) {
  KRYFLOW_DISPATCH(sem, transfer_assemble, backend, out, y_local, beta, y);
}

}  // namespace kryflow::kernels::sem
