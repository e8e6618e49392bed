// Dispatch of the spectral-element Schwarz local solves to the backend that owns the data.
#include "kernels/sem/schwarz.hpp"

#include <cstdint>
#include <string>

#include "kernels/backend/dispatch.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::sem {
namespace {

/// At most one of the locals' arrays set, and one where there are elements.
void check_locals(const SchwarzLocals& y_local, std::int64_t num_elements, const char* who) {
  const bool set = y_local.values != nullptr, set32 = y_local.values32 != nullptr;
  if ((set && set32) || (num_elements > 0 && !set && !set32)) {
    throw InvalidInput(std::string(who) + ": y_local needs exactly one of values and values32");
  }
}

}  // namespace

void schwarz_fdm_solve(const Backend& backend, const SchwarzView& view, Span<const double> r,
                       const SchwarzLocals& y_local) {
  check_locals(y_local, view.num_elements, "sem::schwarz_fdm_solve");
  if (y_local.values32 != nullptr && view.eigenvectors32 == nullptr) {
    throw InvalidInput("sem::schwarz_fdm_solve: float locals need float32 patches");
  }
  KRYFLOW_DISPATCH(sem, schwarz_fdm_solve, backend, view, r, y_local);
}

void schwarz_assemble(const Backend& backend, const TransferSideView& out,
                      const SchwarzLocals& y_local, Span<const double> r,
                      const SchwarzUpdate& update, Span<double> z) {
  check_locals(y_local, out.num_elements, "sem::schwarz_assemble");
  KRYFLOW_DISPATCH(sem, schwarz_assemble, backend, out, y_local, r, update, z);
}

void schwarz_scatter_add(const Backend& backend, const SchwarzView& view,
                         const SchwarzLocals& y_local, double omega, const double* patch_scale,
                         Span<double> x) {
  check_locals(y_local, view.num_elements, "sem::schwarz_scatter_add");
  KRYFLOW_DISPATCH(sem, schwarz_scatter_add, backend, view, y_local, omega, patch_scale, x);
}

void schwarz_patch_norms(const Backend& backend, const SchwarzView& view, Span<const double> v,
                         Span<double> norms) {
  if (norms.size() < static_cast<std::size_t>(view.num_elements)) {
    throw DimensionMismatch("sem::schwarz_patch_norms: " + std::to_string(norms.size()) +
                            " norms for " + std::to_string(view.num_elements) + " patches");
  }
  KRYFLOW_DISPATCH(sem, schwarz_patch_norms, backend, view, v, norms);
}

void vertex_patch_fused_step(const Backend& backend, const SchwarzView& view,
                             const FusedPatchView& fused, const PoissonView& a,
                             Span<const double> b, double omega, const double* patch_scale,
                             Span<double> x) {
  if (view.num_elements == 0) return;
  if (fused.box_full == nullptr || fused.elements == nullptr || fused.placements == nullptr) {
    throw InvalidInput("sem::vertex_patch_fused_step: the fused patch data are not set");
  }
  if (view.n + 2 != 2 * a.n - 1) {
    throw DimensionMismatch("sem::vertex_patch_fused_step: boxes of " + std::to_string(view.n + 2) +
                            " points for elements of " + std::to_string(a.n) + " (need 2 N - 1)");
  }
  if (b.size() < static_cast<std::size_t>(a.num_global) ||
      x.size() < static_cast<std::size_t>(a.num_global)) {
    throw DimensionMismatch("sem::vertex_patch_fused_step: b and x need " +
                            std::to_string(a.num_global) + " entries");
  }
  KRYFLOW_DISPATCH(sem, vertex_patch_fused_step, backend, view, fused, a, b, omega, patch_scale, x);
}

}  // namespace kryflow::kernels::sem
