// Reference spectral-element transfers: plain loops over elements and global points.
#include <vector>

#include "kernels/sem/transfer_element.hpp"

namespace kryflow::kernels::sem::reference {

void transfer_interpolate(const Backend&, const TransferSideView& in, int n_out,
                          const double* matrix, Span<const double> x, Span<double> y_local) {
  std::vector<double> scratch(static_cast<std::size_t>(host::interpolate_scratch(in.n, n_out)));
  for (std::int64_t e = 0; e < in.num_elements; ++e) {
    host::interpolate_element(in, n_out, matrix, x.data(), y_local.data(), e, scratch.data());
  }
}

void transfer_prolongate(const Backend&, const TransferSideView& in, const TransferSideView& out,
                         const double* matrix, Span<const double> x, double beta, Span<double> y) {
  std::vector<double> scratch(static_cast<std::size_t>(host::interpolate_scratch(in.n, out.n) +
                                                       std::int64_t{out.n} * out.n * out.n));
  for (std::int64_t e = 0; e < in.num_elements; ++e) {
    host::prolongate_element(in, out, matrix, x.data(), beta, y.data(), e, scratch.data());
  }
}

void transfer_assemble(const Backend&, const TransferSideView& out, Span<const double> y_local,
                       double beta, Span<double> y) {
  for (std::int64_t g = 0; g < out.num_global; ++g) {
    host::assemble_point(out, y_local.data(), beta, y.data(), g);
  }
}

}  // namespace kryflow::kernels::sem::reference
