// Cooperative launches: one kernel whose blocks are all resident at once, so that they can wait
// for each other at grid barriers (CUDA Programming Guide, "Grid Synchronization" of cooperative
// groups). A loop of short rounds (PMIS, the passes of multi-pass interpolation, CG-Lanczos
// steps) on a small level then costs one launch instead of a launch per phase and a host wait
// per few rounds; each barrier costs a few microseconds, growing with the blocks (H200).
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <tuple>
#include <utility>

#include <cub/block/block_reduce.cuh>

#include "kernels/backend/cuda_context.cuh"

namespace kryflow::kernels::cuda {

/// Rows up to which the AMG setup's loops of rounds (PMIS above one block, the passes of
/// multi-pass interpolation and its P's values) run as one cooperative launch: 2^20, or the
/// environment variable KRYFLOW_COOPERATIVE_ROWS when set (read once; 0 makes every level take
/// the launch-per-round path, which the kernel tests use to cover it on small matrices).
inline long long cooperative_rows() {
  static const long long rows = [] {
    const char* value = std::getenv("KRYFLOW_COOPERATIVE_ROWS");
    return value != nullptr ? std::atoll(value) : (1LL << 20);
  }();
  return rows;
}

/// Blocks of `block` threads of `kernel` that every multiprocessor can hold at once, in all (at
/// least one per multiprocessor): the most a cooperative launch may take.
template <class... Params>
long long cooperative_resident_blocks(const Context& context, void (*kernel)(Params...),
                                      int block) {
  int per_sm = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  return static_cast<long long>(std::max(per_sm, 1)) * context.properties.multiProcessorCount;
}

/// Blocks of `block` threads for a cooperative launch of `kernel` wanting `threads` threads in
/// all: at most cooperative_resident_blocks, at least one.
template <class... Params>
unsigned int cooperative_blocks(const Context& context, void (*kernel)(Params...), int block,
                                long long threads) {
  const long long wanted = std::max<long long>(1, (threads + block - 1) / block);
  return static_cast<unsigned int>(
      std::min(cooperative_resident_blocks(context, kernel, block), wanted));
}

/// Launches kernel<<<blocks, block>>>(args...) cooperatively on the context's stream (blocks
/// from cooperative_blocks); `name` for the launch check.
template <class... Params, class... Args>
void launch_cooperative(Context& context, void (*kernel)(Params...), unsigned int blocks, int block,
                        const char* name, Args&&... args) {
  std::tuple<Params...> values(std::forward<Args>(args)...);
  std::apply(
      [&](auto&... value) {
        void* arguments[] = {static_cast<void*>(&value)...};
        check(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), blocks, block,
                                          arguments, 0, context.stream),
              name);
      },
      values);
  check_launch(name);
}

/// The first index and the stride of a grid-stride loop over blocks of kBlock threads.
struct GridStride {
  long long first;
  long long stride;
};
template <int kBlock>
__device__ GridStride grid_stride() {
  return {static_cast<long long>(blockIdx.x) * kBlock + threadIdx.x,
          static_cast<long long>(gridDim.x) * kBlock};
}

/// The grid-wide sum of one double per thread, in a fixed order (each block's cub sum, then the
/// blocks' partials added in block order per lane and a fixed butterfly), returned to every
/// thread. Each call is a grid barrier. Two buffers of gridDim.x partials alternate between
/// calls, so a block that runs ahead cannot overwrite partials another block has yet to read.
template <int kBlock>
class GridSum {
 public:
  using BlockReduce = cub::BlockReduce<double, kBlock>;
  struct Storage {
    typename BlockReduce::TempStorage reduce;
    double total;
  };
  /// partials: 2 gridDim.x doubles on the device.
  __device__ GridSum(Storage& storage, double* partials) : storage_(storage), partials_(partials) {}

  __device__ double operator()(double local) { return (*this)(local, 0, gridDim.x); }

  /// The sum over the blocks first .. first + count - 1 only (a group of blocks working on its
  /// own problem, which contains this block); still a barrier of the whole grid, so every block
  /// calls it the same number of times.
  __device__ double operator()(double local, unsigned int first, unsigned int count) {
    double* partials = partials_ + (parity_ ? gridDim.x : 0);
    parity_ = !parity_;
    const double block = BlockReduce(storage_.reduce).Sum(local);
    if (threadIdx.x == 0) partials[blockIdx.x] = block;
    cooperative_groups::this_grid().sync();
    if (threadIdx.x < 32) {
      double sum = 0.0;
      for (unsigned int b = first + threadIdx.x; b < first + count; b += 32) sum += partials[b];
      for (int offset = 16; offset > 0; offset /= 2)
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
      if (threadIdx.x == 0) storage_.total = sum;
    }
    __syncthreads();
    const double total = storage_.total;
    __syncthreads();  // read before the next call writes it
    return total;
  }

 private:
  Storage& storage_;
  double* partials_;
  bool parity_ = false;
};

}  // namespace kryflow::kernels::cuda
