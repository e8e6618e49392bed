// OpenMP spectral-element Schwarz local solves: elements split among threads; each writes its
// own entries, so the bits are the reference's.
#include <vector>

#include "kernels/backend/parallel.hpp"
#include "kernels/sem/schwarz_element.hpp"

namespace kryflow::kernels::sem::cpu {

void schwarz_fdm_solve(const Backend& backend, const SchwarzView& view, Span<const double> r,
                       const SchwarzLocals& y_local) {
  const std::int64_t scratch_size = host::fdm_scratch(view.n);
  const std::int64_t N = view.n + 2;
  parallel::for_each(backend, view.num_elements * N * N * N * N * 6, view.num_elements,
                     [&](std::int64_t e) {
                       thread_local std::vector<double> scratch;
                       if (static_cast<std::int64_t>(scratch.size()) < scratch_size) {
                         scratch.resize(static_cast<std::size_t>(scratch_size));
                       }
                       host::fdm_solve_element(view, r.data(), y_local, e, scratch.data());
                     });
}

void schwarz_assemble(const Backend& backend, const TransferSideView& out,
                      const SchwarzLocals& y_local, Span<const double> r,
                      const SchwarzUpdate& update, Span<double> z) {
  const std::int64_t work = out.num_global > 0 ? out.global_offsets[out.num_global] : 0;
  auto assemble = [&](const auto* locals) {
    parallel::for_each(backend, work, out.num_global, [&](std::int64_t g) {
      host::schwarz_assemble_point(out, locals, r.data(), update, z.data(), g);
    });
  };
  if (y_local.values32 != nullptr) {
    assemble(y_local.values32);
  } else {
    assemble(y_local.values);
  }
}

void schwarz_scatter_add(const Backend& backend, const SchwarzView& view,
                         const SchwarzLocals& y_local, double omega, const double* patch_scale,
                         Span<double> x) {
  const std::int64_t N = view.n + 2;
  parallel::for_each(
      backend, view.num_elements * N * N * N, view.num_elements, [&](std::int64_t e) {
        if (y_local.values32 != nullptr) {
          host::scatter_add_patch(view, y_local.values32, omega, patch_scale, x.data(), e);
        } else {
          host::scatter_add_patch(view, y_local.values, omega, patch_scale, x.data(), e);
        }
      });
}

void schwarz_patch_norms(const Backend& backend, const SchwarzView& view, Span<const double> v,
                         Span<double> norms) {
  const std::int64_t N = view.n + 2;
  parallel::for_each(backend, view.num_elements * N * N * N, view.num_elements,
                     [&](std::int64_t e) {
                       norms[static_cast<std::size_t>(e)] = host::patch_norm(view, v.data(), e);
                     });
}

void vertex_patch_fused_step(const Backend& backend, const SchwarzView& view,
                             const FusedPatchView& fused, const PoissonView& a,
                             Span<const double> b, double omega, const double* patch_scale,
                             Span<double> x) {
  // Patches of one color read and write no common unknown: any split among threads gives the
  // reference's bits.
  const std::int64_t scratch_size = host::fused_scratch(view.n, a.n);
  const std::int64_t n3 = static_cast<std::int64_t>(a.n) * a.n * a.n;
  parallel::for_each(backend, view.num_elements * 8 * n3 * a.n * 12, view.num_elements,
                     [&](std::int64_t P) {
                       thread_local std::vector<double> scratch;
                       if (static_cast<std::int64_t>(scratch.size()) < scratch_size) {
                         scratch.resize(static_cast<std::size_t>(scratch_size));
                       }
                       host::fused_patch_step(view, fused, a, b.data(), omega, patch_scale,
                                              x.data(), P, scratch.data());
                     });
}

}  // namespace kryflow::kernels::sem::cpu
