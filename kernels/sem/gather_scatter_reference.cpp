// Reference gather-scatter: the oracle of the cpu and cuda kernels.
#include "kernels/sem/gather_scatter.hpp"

namespace kryflow::kernels::sem::reference {

void gather_scatter(const Backend& /*backend*/, const GatherScatterView& g, Span<double> u) {
  for (index_t s = 0; s < g.num_shared; ++s) {
    double sum = 0.0;
    for (std::int64_t q = g.offsets[s]; q < g.offsets[s + 1]; ++q) sum = sum + u[g.locals[q]];
    for (std::int64_t q = g.offsets[s]; q < g.offsets[s + 1]; ++q) u[g.locals[q]] = sum;
  }
}

}  // namespace kryflow::kernels::sem::reference
