// Dispatch of the local diagonal of the SEM Poisson operator to the backend that owns the data.
#include "kernels/sem/diagonal.hpp"

#include <cstdint>
#include <string>

#include "kryflow/core/error.hpp"

namespace kryflow::kernels::sem {

void poisson_local_diagonal(const Backend& backend, const PoissonView& a, DiagonalVariant variant,
                            Span<double> d_local) {
  if (a.n < 2 || a.num_elements < 0) {
    throw InvalidInput("sem::poisson_local_diagonal: need N >= 2 and num_elements >= 0, got N = " +
                       std::to_string(a.n) + ", " + std::to_string(a.num_elements) + " elements");
  }
  const auto n3 = static_cast<std::int64_t>(a.n) * a.n * a.n;
  if (d_local.size() != static_cast<std::size_t>(a.num_elements * n3)) {
    throw DimensionMismatch("sem::poisson_local_diagonal: expected " +
                            std::to_string(a.num_elements * n3) + " entries, got " +
                            std::to_string(d_local.size()));
  }
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::poisson_local_diagonal(backend, a, variant, d_local);
    case BackendKind::cpu:
      return cpu::poisson_local_diagonal(backend, a, variant, d_local);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::poisson_local_diagonal(backend, a, variant, d_local);
#else
      throw NotCompiled("sem::poisson_local_diagonal: cuda backend not compiled");
#endif
  }
  throw NotSupported("sem::poisson_local_diagonal: unknown backend");
}

}  // namespace kryflow::kernels::sem
