// OpenMP gather-scatter: shared points split among threads (each local index belongs to one
// shared point, so threads write disjoint entries). Serial below the work threshold of
// kernels/backend/parallel.hpp (work: the local entries of shared points).
#include "kernels/backend/parallel.hpp"
#include "kernels/sem/gather_scatter.hpp"

namespace kryflow::kernels::sem::cpu {

void gather_scatter(const Backend& backend, const GatherScatterView& g, Span<double> u) {
  double* values = u.data();
  const std::int64_t locals = g.num_shared > 0 ? g.offsets[g.num_shared] : 0;
  parallel::for_each(backend, locals, g.num_shared, [&](std::int64_t s) {
    double sum = 0.0;
    for (std::int64_t q = g.offsets[s]; q < g.offsets[s + 1]; ++q) sum = sum + values[g.locals[q]];
    for (std::int64_t q = g.offsets[s]; q < g.offsets[s + 1]; ++q) values[g.locals[q]] = sum;
  });
}

}  // namespace kryflow::kernels::sem::cpu
