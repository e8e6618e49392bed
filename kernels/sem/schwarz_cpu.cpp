// OpenMP spectral-element Schwarz local solves: elements split among threads; each writes its
// own entries, so the bits are the reference's.
#include <vector>

#include "kernels/backend/parallel.hpp"
#include "kernels/sem/schwarz_element.hpp"

namespace kryflow::kernels::sem::cpu {

void schwarz_fdm_solve(const Backend& backend, const SchwarzView& view, Span<const double> r,
                       Span<double> y_local) {
  const std::int64_t scratch_size = host::fdm_scratch(view.n);
  const std::int64_t N = view.n + 2;
  parallel::for_each(backend, view.num_elements * N * N * N * N * 6, view.num_elements,
                     [&](std::int64_t e) {
                       thread_local std::vector<double> scratch;
                       if (static_cast<std::int64_t>(scratch.size()) < scratch_size) {
                         scratch.resize(static_cast<std::size_t>(scratch_size));
                       }
                       host::fdm_solve_element(view, r.data(), y_local.data(), e, scratch.data());
                     });
}

void schwarz_assemble(const Backend& backend, const TransferSideView& out,
                      Span<const double> y_local, Span<const double> r, const SchwarzUpdate& update,
                      Span<double> z) {
  const std::int64_t locals = out.num_global > 0 ? out.global_offsets[out.num_global] : 0;
  parallel::for_each(backend, locals, out.num_global, [&](std::int64_t g) {
    host::schwarz_assemble_point(out, y_local.data(), r.data(), update, z.data(), g);
  });
}

}  // namespace kryflow::kernels::sem::cpu
