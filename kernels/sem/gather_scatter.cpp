// Dispatch of the gather-scatter to the backend that owns the data.
#include "kernels/sem/gather_scatter.hpp"

#include "kryflow/core/error.hpp"

namespace kryflow::kernels::sem {

void gather_scatter(const Backend& backend, const GatherScatterView& g, Span<double> u) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::gather_scatter(backend, g, u);
    case BackendKind::cpu:
      return cpu::gather_scatter(backend, g, u);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::gather_scatter(backend, g, u);
#else
      throw NotCompiled("sem::gather_scatter: cuda backend not compiled");
#endif
  }
  throw NotSupported("sem::gather_scatter: unknown backend");
}

}  // namespace kryflow::kernels::sem
