// Reference spectral-element Schwarz local solves: a plain loop over the elements.
#include <vector>

#include "kernels/sem/schwarz_element.hpp"

namespace kryflow::kernels::sem::reference {

void schwarz_fdm_solve(const Backend&, const SchwarzView& view, Span<const double> r,
                       const SchwarzLocals& y_local) {
  std::vector<double> scratch(static_cast<std::size_t>(host::fdm_scratch(view.n)));
  for (std::int64_t e = 0; e < view.num_elements; ++e) {
    host::fdm_solve_element(view, r.data(), y_local, e, scratch.data());
  }
}

void schwarz_assemble(const Backend&, const TransferSideView& out, const SchwarzLocals& y_local,
                      Span<const double> r, const SchwarzUpdate& update, Span<double> z) {
  auto assemble = [&](const auto* locals) {
    for (std::int64_t g = 0; g < out.num_global; ++g) {
      host::schwarz_assemble_point(out, locals, r.data(), update, z.data(), g);
    }
  };
  if (y_local.values32 != nullptr) {
    assemble(y_local.values32);
  } else {
    assemble(y_local.values);
  }
}

void schwarz_scatter_add(const Backend&, const SchwarzView& view, const SchwarzLocals& y_local,
                         double omega, const double* patch_scale, Span<double> x) {
  for (std::int64_t e = 0; e < view.num_elements; ++e) {
    if (y_local.values32 != nullptr) {
      host::scatter_add_patch(view, y_local.values32, omega, patch_scale, x.data(), e);
    } else {
      host::scatter_add_patch(view, y_local.values, omega, patch_scale, x.data(), e);
    }
  }
}

void schwarz_patch_norms(const Backend&, const SchwarzView& view, Span<const double> v,
                         Span<double> norms) {
  for (std::int64_t e = 0; e < view.num_elements; ++e) {
    norms[static_cast<std::size_t>(e)] = host::patch_norm(view, v.data(), e);
  }
}

void vertex_patch_fused_step(const Backend&, const SchwarzView& view, const FusedPatchView& fused,
                             const PoissonView& a, Span<const double> b, double omega,
                             const double* patch_scale, Span<double> x) {
  std::vector<double> scratch(static_cast<std::size_t>(host::fused_scratch(view.n, a.n)));
  for (std::int64_t P = 0; P < view.num_elements; ++P) {
    host::fused_patch_step(view, fused, a, b.data(), omega, patch_scale, x.data(), P,
                           scratch.data());
  }
}

}  // namespace kryflow::kernels::sem::reference
