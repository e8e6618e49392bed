// CUDA gather-scatter: one thread per shared point, its locals summed in increasing order and
// written back (no atomics; each local index belongs to one shared point).
#include <cuda_runtime.h>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/sem/gather_scatter.hpp"

namespace kryflow::kernels::sem::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    gather_scatter_kernel(const GatherScatterView g, double* __restrict__ u) {
  const index_t s = static_cast<index_t>(blockIdx.x) * kThreads + static_cast<index_t>(threadIdx.x);
  if (s >= g.num_shared) return;
  const std::int64_t begin = __ldg(g.offsets + s);
  const std::int64_t end = __ldg(g.offsets + s + 1);
  double sum = 0.0;
  for (std::int64_t q = begin; q < end; ++q) sum = __dadd_rn(sum, u[__ldg(g.locals + q)]);
  for (std::int64_t q = begin; q < end; ++q) u[__ldg(g.locals + q)] = sum;
}

}  // namespace

void gather_scatter(const Backend& backend, const GatherScatterView& g, Span<double> u) {
  if (g.num_shared == 0) return;
  const auto blocks = static_cast<unsigned int>((g.num_shared + kThreads - 1) / kThreads);
  gather_scatter_kernel<<<blocks, kThreads, 0, backend.cuda_context()->stream>>>(g, u.data());
  kernels::cuda::check_launch("sem::gather_scatter");
}

}  // namespace kryflow::kernels::sem::cuda
