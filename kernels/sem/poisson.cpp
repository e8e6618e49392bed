// Dispatch of the SEM Poisson operator to the backend that owns the data.
#include "kernels/sem/poisson.hpp"

#include "kryflow/core/error.hpp"

namespace kryflow::kernels::sem {

void poisson_prepare(const Backend& backend, const PoissonView& a) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::poisson_prepare(backend, a);
    case BackendKind::cpu:
      return cpu::poisson_prepare(backend, a);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::poisson_prepare(backend, a);
#else
      throw NotCompiled("sem::poisson_prepare: cuda backend not compiled");
#endif
  }
}

void poisson_apply(const Backend& backend, const PoissonView& a, Span<const double> x,
                   Span<double> y) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::poisson_apply(backend, a, x, y);
    case BackendKind::cpu:
      return cpu::poisson_apply(backend, a, x, y);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::poisson_apply(backend, a, x, y);
#else
      throw NotCompiled("sem::poisson_apply: cuda backend not compiled");
#endif
  }
  throw NotSupported("sem::poisson_apply: unknown backend");
}

void poisson_assemble_diagonal(const Backend& backend, const PoissonView& a,
                               Span<const double> d_local, double masked_value, Span<double> y) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::poisson_assemble_diagonal(backend, a, d_local, masked_value, y);
    case BackendKind::cpu:
      return cpu::poisson_assemble_diagonal(backend, a, d_local, masked_value, y);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::poisson_assemble_diagonal(backend, a, d_local, masked_value, y);
#else
      throw NotCompiled("sem::poisson_assemble_diagonal: cuda backend not compiled");
#endif
  }
  throw NotSupported("sem::poisson_assemble_diagonal: unknown backend");
}

}  // namespace kryflow::kernels::sem
