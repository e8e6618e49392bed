// Launch scaffolding of the fused Krylov kernels on cuda: one element-wise pass over n entries
// in pairs (kernels/backend/vector_access.cuh), optionally with K sums reduced in the fixed
// order of kernels/backend/reduction_order.hpp. Launched as dependent launches
// (kernels/backend/cuda_context.cuh): each kernel waits for its prerequisites first, so the
// next one's launch overlaps its work.
//
// An operation `Op` provides:
//   __device__ bool prepare(bool writer)  reads its scalars (every thread, same values), returns
//                                         false when the whole kernel must do nothing (uniform);
//                                         `writer` is true in one thread, which may record why
//   template <bool kAligned> __device__ void pair(size_type p, double (&sum)[K])   (or without
//                                         sums for maps)
//   __device__ void single(size_type i, double (&sum)[K])                            (odd tail)
//   __device__ void finish(const double (&total)[K])   reductions: one thread, after every
//                                         block has read its scalars (may overwrite them)
//   bool aligned() const                   every pointer 16-byte aligned
//   static constexpr int kMinBlocksPerSm    optional: resident blocks per SM the kernel is
//                                         compiled for (default 8, i.e. at most 32 registers per
//                                         thread; operations with many streams need fewer blocks
//                                         and more registers, or they spill)
#pragma once

#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/reduction.cuh"
#include "kernels/backend/reduction_order.hpp"
#include "kernels/backend/vector_access.cuh"
#include "kryflow/core/array.hpp"
#include "kryflow/core/backend.hpp"

namespace kryflow::kernels::krylov::cuda {

using kernels::cuda::size_type;
constexpr int kBlock = kernels::kReductionThreads;
constexpr int kMinBlocksPerSm = 8;

/// Op::kMinBlocksPerSm when the operation declares it, kMinBlocksPerSm otherwise.
template <class Op>
constexpr int min_blocks_per_sm() {
  if constexpr (requires { Op::kMinBlocksPerSm; }) {
    return Op::kMinBlocksPerSm;
  } else {
    return kMinBlocksPerSm;
  }
}

template <int K, bool kAligned, class Op>
__global__ void __launch_bounds__(kBlock, min_blocks_per_sm<Op>())
    fused_reduce_kernel(size_type n, Op op, double* partials, unsigned int* counter) {
  kernels::cuda::wait_for_prerequisites();
  kernels::cuda::allow_dependents();
  const bool writer = blockIdx.x == 0 && threadIdx.x == 0;
  if (!op.prepare(writer)) return;
  double sum[K];
#pragma unroll
  for (int k = 0; k < K; ++k) sum[k] = 0.0;
  const size_type num_pairs = n / 2;
  const size_type stride = static_cast<size_type>(gridDim.x) * kBlock;
  for (size_type p = static_cast<size_type>(blockIdx.x) * kBlock + threadIdx.x; p < num_pairs;
       p += stride) {
    op.template pair<kAligned>(p, sum);
  }
  if (n % 2 == 1 && writer) op.single(n - 1, sum);
  kernels::cuda::grid_sum_then<kBlock, K>(sum, partials, counter,
                                          [&op](const double(&total)[K]) { op.finish(total); });
}

template <bool kAligned, class Op>
__global__ void __launch_bounds__(kBlock, min_blocks_per_sm<Op>())
    fused_map_kernel(size_type n, Op op) {
  kernels::cuda::wait_for_prerequisites();
  kernels::cuda::allow_dependents();
  const bool writer = blockIdx.x == 0 && threadIdx.x == 0;
  if (!op.prepare(writer)) return;
  const size_type num_pairs = n / 2;
  const size_type stride = static_cast<size_type>(gridDim.x) * kBlock;
  for (size_type p = static_cast<size_type>(blockIdx.x) * kBlock + threadIdx.x; p < num_pairs;
       p += stride) {
    op.template pair<kAligned>(p);
  }
  if (n % 2 == 1 && writer) op.single(n - 1);
}

/// Launches the reduction of K sums over n entries (n > 0) on the backend's stream.
template <int K, class Op>
void launch_reduce(kernels::cuda::Context& context, std::size_t size, const Op& op,
                   const char* name) {
  const auto n = static_cast<size_type>(size);
  if (n == 0) return;
  const size_type per_block = kBlock * kernels::kReductionElementsPerThread;
  const auto blocks = static_cast<unsigned int>(
      std::min<size_type>((n + per_block - 1) / per_block, kernels::kMaxReductionBlocks));
  if (op.aligned()) {
    kernels::cuda::launch_dependent(context, fused_reduce_kernel<K, true, Op>, blocks, kBlock, name,
                                    n, op, context.reduction_partials, context.reduction_counter);
  } else {
    kernels::cuda::launch_dependent(context, fused_reduce_kernel<K, false, Op>, blocks, kBlock,
                                    name, n, op, context.reduction_partials,
                                    context.reduction_counter);
  }
}

/// Launches the element-wise pass over n entries on the backend's stream.
template <class Op>
void launch_map(kernels::cuda::Context& context, std::size_t size, const Op& op, const char* name) {
  const auto n = static_cast<size_type>(size);
  if (n == 0) return;
  const size_type num_pairs = std::max<size_type>(n / 2, 1);
  const auto blocks = static_cast<unsigned int>(
      std::min<size_type>((num_pairs + kBlock - 1) / kBlock, size_type{1} << 20));
  if (op.aligned()) {
    kernels::cuda::launch_dependent(context, fused_map_kernel<true, Op>, blocks, kBlock, name, n,
                                    op);
  } else {
    kernels::cuda::launch_dependent(context, fused_map_kernel<false, Op>, blocks, kBlock, name, n,
                                    op);
  }
}

/// The cuda context of the backend a kernel runs on.
inline kernels::cuda::Context& context_of(const Backend& backend) {
  return *backend.cuda_context();
}

/// An optional vector's data, or null when it is empty.
inline const double* or_null(Span<const double> v) {
  return v.empty() ? nullptr : v.data();
}

/// Finite and of the sign of rz0 (see kernels/krylov/cg/cg.hpp).
__device__ __forceinline__ bool definite_on_device(double value, double rz0) {
  const double sign = rz0 < 0.0 ? -1.0 : 1.0;
  return isfinite(value) && sign * value > 0.0;
}

}  // namespace kryflow::kernels::krylov::cuda
