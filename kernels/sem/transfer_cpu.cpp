// OpenMP spectral-element transfers: elements (interpolation) and global points (assembly)
// split among threads; each writes its own entries, so the bits are the reference's.
#include <vector>

#include "kernels/backend/parallel.hpp"
#include "kernels/sem/transfer_element.hpp"

namespace kryflow::kernels::sem::cpu {

void transfer_interpolate(const Backend& backend, const TransferSideView& in, int n_out,
                          const double* matrix, Span<const double> x, Span<double> y_local) {
  const std::int64_t scratch_size = host::interpolate_scratch(in.n, n_out);
  const std::int64_t work = in.num_elements * scratch_size;
  parallel::for_each(backend, work, in.num_elements, [&](std::int64_t e) {
    thread_local std::vector<double> scratch;
    if (static_cast<std::int64_t>(scratch.size()) < scratch_size) {
      scratch.resize(static_cast<std::size_t>(scratch_size));
    }
    host::interpolate_element(in, n_out, matrix, x.data(), y_local.data(), e, scratch.data());
  });
}

void transfer_prolongate(const Backend& backend, const TransferSideView& in,
                         const TransferSideView& out, const double* matrix, Span<const double> x,
                         double beta, Span<double> y) {
  const std::int64_t scratch_size =
      host::interpolate_scratch(in.n, out.n) + std::int64_t{out.n} * out.n * out.n;
  const std::int64_t work = in.num_elements * scratch_size;
  parallel::for_each(backend, work, in.num_elements, [&](std::int64_t e) {
    thread_local std::vector<double> scratch;
    if (static_cast<std::int64_t>(scratch.size()) < scratch_size) {
      scratch.resize(static_cast<std::size_t>(scratch_size));
    }
    host::prolongate_element(in, out, matrix, x.data(), beta, y.data(), e, scratch.data());
  });
}

void transfer_assemble(const Backend& backend, const TransferSideView& out,
                       Span<const double> y_local, double beta, Span<double> y) {
  const std::int64_t locals = out.num_global > 0 ? out.global_offsets[out.num_global] : 0;
  parallel::for_each(backend, locals, out.num_global, [&](std::int64_t g) {
    host::assemble_point(out, y_local.data(), beta, y.data(), g);
  });
}

}  // namespace kryflow::kernels::sem::cpu
