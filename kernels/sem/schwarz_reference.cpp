// Reference spectral-element Schwarz local solves: a plain loop over the elements.
#include <vector>

#include "kernels/sem/schwarz_element.hpp"

namespace kryflow::kernels::sem::reference {

void schwarz_fdm_solve(const Backend&, const SchwarzView& view, Span<const double> r,
                       Span<double> y_local) {
  std::vector<double> scratch(static_cast<std::size_t>(host::fdm_scratch(view.n)));
  for (std::int64_t e = 0; e < view.num_elements; ++e) {
    host::fdm_solve_element(view, r.data(), y_local.data(), e, scratch.data());
  }
}

void schwarz_assemble(const Backend&, const TransferSideView& out, Span<const double> y_local,
                      Span<const double> r, const SchwarzUpdate& update, Span<double> z) {
  for (std::int64_t g = 0; g < out.num_global; ++g) {
    host::schwarz_assemble_point(out, y_local.data(), r.data(), update, z.data(), g);
  }
}

}  // namespace kryflow::kernels::sem::reference
