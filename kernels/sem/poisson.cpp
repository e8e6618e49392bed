// Dispatch of the SEM Poisson operator.
#include "kernels/sem/poisson.hpp"

#include "kryflow/core/error.hpp"

namespace kryflow::kernels::sem {

void poisson_apply(const Backend& backend, const PoissonView& a, Span<const double> x,
                   Span<double> y) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::poisson_apply(backend, a, x, y);
    case BackendKind::cpu:
      return cpu::poisson_apply(backend, a, x, y);
    case BackendKind::cuda:
      throw NotSupported(
          "sem::poisson_apply: the cuda kernels of the SEM operator do not exist yet");
  }
  throw NotSupported("sem::poisson_apply: unknown backend");
}

}  // namespace kryflow::kernels::sem
