// CUDA synchronization-free sparse triangular solve (triangular.hpp): one launch, a warp per
// row in solve order, each lane spinning on the ready flag of its column's row.
#include <cuda_runtime.h>

#include <algorithm>
#include <cuda/atomic>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"
#include "kernels/backend/device_scratch.cuh"
#include "kernels/triangular/triangular.hpp"

namespace kryflow::kernels::triangular::cuda {
namespace {

using kernels::cuda::blocks_for;
using kernels::cuda::check_launch;
using kernels::cuda::Context;

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 8;

/// Rows are handed out in solve order by ready[n] (an atomic counter): a row a warp waits for
/// went to a warp that is running, so every wait ends. The writer of x_i publishes it with a
/// release store of ready[i]; a reader's acquire load of the flag orders its read of x_i after.
__global__ void __launch_bounds__(kWarpsPerBlock* kWarp)
    sync_free_kernel(FactorView factor, bool lower, const double* inverse_diagonal, const double* b,
                     double* x, unsigned int* ready) {
  const unsigned int lane = threadIdx.x % kWarp;
  const index_t n = factor.n;
  for (;;) {
    index_t step = 0;
    if (lane == 0) step = static_cast<index_t>(atomicAdd(ready + n, 1u));
    step = __shfl_sync(0xFFFFFFFFu, step, 0);
    if (step >= n) break;
    const index_t i = lower ? step : n - 1 - step;
    const index_t end = factor.row_ptr[i + 1];
    double sum = 0.0;
    for (index_t k = factor.row_ptr[i] + static_cast<index_t>(lane); k < end; k += kWarp) {
      const index_t j = factor.col_idx[k];
      const double f = factor.values[k];
      if (lower ? j < i : j > i) {
        ::cuda::atomic_ref<unsigned int, ::cuda::thread_scope_device> flag(ready[j]);
        while (flag.load(::cuda::memory_order_acquire) == 0u) {
        }
        sum += f * x[j];
      }
    }
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
      sum += __shfl_xor_sync(0xFFFFFFFFu, sum, offset);
    }
    if (lane == 0) {
      const double value = b[i] - sum;
      x[i] = inverse_diagonal != nullptr ? value * inverse_diagonal[i] : value;
      ::cuda::atomic_ref<unsigned int, ::cuda::thread_scope_device> flag(ready[i]);
      flag.store(1u, ::cuda::memory_order_release);
    }
  }
}

}  // namespace

void solve(const Backend& backend, const FactorView& factor, bool lower,
           const double* inverse_diagonal, const double* b, double* x, unsigned int* ready) {
  if (factor.n == 0) return;
  Context& context = *backend.cuda_context();
  KRYFLOW_CUDA_CHECK(cudaMemsetAsync(
      ready, 0, (static_cast<std::size_t>(factor.n) + 1) * sizeof(unsigned int), context.stream));
  const auto sms = static_cast<long long>(context.properties.multiProcessorCount);
  const unsigned int blocks = blocks_for(factor.n, kWarpsPerBlock, 8 * sms);
  sync_free_kernel<<<blocks, kWarpsPerBlock * kWarp, 0, context.stream>>>(
      factor, lower, inverse_diagonal, b, x, ready);
  check_launch("triangular::solve");
}

}  // namespace kryflow::kernels::triangular::cuda
