// Dispatch of the spectral-element Schwarz local solves to the backend that owns the data.
#include "kernels/sem/schwarz.hpp"

#include "kernels/backend/dispatch.hpp"

namespace kryflow::kernels::sem {

void schwarz_fdm_solve(const Backend& backend, const SchwarzView& view, Span<const double> r,
                       Span<double> y_local) {
  KRYFLOW_DISPATCH(sem, schwarz_fdm_solve, backend, view, r, y_local);
}

void schwarz_assemble(const Backend& backend, const TransferSideView& out,
                      Span<const double> y_local, Span<const double> r, const SchwarzUpdate& update,
                      Span<double> z) {
  KRYFLOW_DISPATCH(sem, schwarz_assemble, backend, out, y_local, r, update, z);
}

}  // namespace kryflow::kernels::sem
