// OpenMP gather-scatter: shared points split among threads (each local index belongs to one
// shared point, so threads write disjoint entries).
#include "kernels/sem/gather_scatter.hpp"

namespace kryflow::kernels::sem::cpu {

void gather_scatter(const Backend& backend, const GatherScatterView& g, Span<double> u) {
  (void)backend;
  double* values = u.data();
#pragma omp parallel for schedule(static) num_threads(backend.num_threads())
  for (index_t s = 0; s < g.num_shared; ++s) {
    double sum = 0.0;
    for (std::int64_t q = g.offsets[s]; q < g.offsets[s + 1]; ++q) sum = sum + values[g.locals[q]];
    for (std::int64_t q = g.offsets[s]; q < g.offsets[s + 1]; ++q) values[g.locals[q]] = sum;
  }
}

}  // namespace kryflow::kernels::sem::cpu
