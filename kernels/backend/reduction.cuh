// Deterministic block and grid sums for the CUDA kernels: fixed trees, no floating-point atomics.
//
// A reduction kernel runs on a grid whose size is a fixed function of the problem size. Each
// thread accumulates its own terms in a fixed order, each block adds its threads with a fixed
// warp-shuffle tree, writes its sums to the context's partials and counts itself done; the last
// block to finish adds the partials in block order and writes the results. The same input on the
// same grid therefore gives the same bits on every run, whatever the scheduling.
#pragma once

#include <cuda_runtime.h>

#include "kernels/backend/cuda_context.cuh"

namespace kryflow::kernels::cuda {

/// Sum over the 32 lanes of a warp by a fixed shuffle tree; lane 0 holds the result.
__device__ __forceinline__ double warp_sum(double value) {
  for (int offset = 16; offset > 0; offset /= 2) {
    value += __shfl_down_sync(0xffffffffu, value, offset);
  }
  return value;
}

/// block_sum without its closing barrier: for a sum whose shared scratch is not touched again
/// before the block's next barrier (same order, same bits as block_sum).
template <int kBlock, int K>
__device__ __forceinline__ void block_sum_once(double (&values)[K]) {
  static_assert(kBlock % 32 == 0 && kBlock <= 1024, "block size: a multiple of 32, <= 1024");
  constexpr int kWarps = kBlock / 32;
  __shared__ double warp_sums_once[K][kWarps];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  for (int k = 0; k < K; ++k) {
    values[k] = warp_sum(values[k]);
    if (lane == 0) warp_sums_once[k][warp] = values[k];
  }
  __syncthreads();
  if (warp == 0) {
    for (int k = 0; k < K; ++k) {
      values[k] = warp_sum(lane < kWarps ? warp_sums_once[k][lane] : 0.0);
    }
  }
}

/// Sums each of the K values over the kBlock threads of the block (fixed order); thread 0 holds
/// the results. Every thread of the block must call it (it synchronises the block).
template <int kBlock, int K>
__device__ __forceinline__ void block_sum(double (&values)[K]) {
  block_sum_once<kBlock, K>(values);
  __syncthreads();  // the scratch may be reused by a second call
}

/// Thread 0 receives v[0] + ... + v[n-1] in the fixed order of grid_sum's second stage (the
/// emulation's ordered_sum): thread j adds v[j], v[j + kBlock], ... in order from 0 (read
/// through L2, where other blocks or kernels wrote them; loaded kBatch at a time, added in
/// order), then block_sum. Every thread of the block calls it. kBatch only sets how many loads
/// are in flight; the bits do not depend on it.
template <int kBlock, int kBatch = 8>
__device__ double ordered_sum(const double* v, long long n) {
  double total = 0.0;
  // Every round issues kBatch loads per thread, masked past n, so a thread waits for one
  // memory round trip per kBatch of its terms, the last partial batch included (a serial tail
  // of up to kBatch - 1 dependent round trips otherwise). Masked terms are not added. The
  // first round is outside the loop, so that its loads may be issued together with the
  // caller's loads before it.
  const auto round = [&](long long q) {
    double p[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) p[u] = q + u * kBlock < n ? __ldcg(v + q + u * kBlock) : 0.0;
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      if (q + u * kBlock < n) total = __dadd_rn(total, p[u]);
    }
  };
  round(threadIdx.x);
#pragma unroll 1
  for (long long q = threadIdx.x + kBatch * kBlock; q < n; q += kBatch * kBlock) round(q);
  double sums[1] = {total};
  block_sum<kBlock, 1>(sums);
  return sums[0];
}

/// ordered_sum with the result in every thread of the block.
template <int kBlock, int kBatch = 8>
__device__ double ordered_sum_to_all(const double* v, long long n) {
  __shared__ double result;
  const double total = ordered_sum<kBlock, kBatch>(v, n);
  if (threadIdx.x == 0) result = total;
  __syncthreads();
  return result;
}

/// Grid-wide sums of K values per thread (K <= kMaxReductionValues, gridDim.x <=
/// kMaxReductionBlocks). Every thread of every block calls it once, at the end of the kernel.
/// `partials` and `counter` are the context's reduction buffers (the counter is 0 on entry and
/// is 0 again when the kernel ends); `finish(totals)` is called with the K sums by one thread
/// (thread 0 of the last block), after every block has passed its reads of scalars made at the
/// kernel's start (so it may overwrite them).
template <int kBlock, int K, class Finish>
__device__ void grid_sum_then(double (&values)[K], double* partials, unsigned int* counter,
                              Finish finish) {
  static_assert(K <= kMaxReductionValues, "too many sums for the reduction buffers");
  __shared__ bool is_last_block;
  block_sum<kBlock, K>(values);
  if (threadIdx.x == 0) {
    for (int k = 0; k < K; ++k) partials[k * kMaxReductionBlocks + blockIdx.x] = values[k];
    __threadfence();  // the partials are visible before the count says so
    const unsigned int done = atomicAdd(counter, 1u);
    is_last_block = done == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last_block) return;
  __threadfence();
  double total[K];
#pragma unroll
  for (int k = 0; k < K; ++k) total[k] = 0.0;
  // Thread j adds block sums j, j + kBlock, ... in order; every load of a round is issued
  // before the first add (one memory round trip per round; gridDim.x <= kMaxReductionBlocks
  // makes it one round). __ldcg reads through L2, where the other blocks' partials are.
  constexpr int kBatch = (kMaxReductionBlocks + kBlock - 1) / kBlock;
#pragma unroll 1
  for (unsigned int b0 = threadIdx.x; b0 < gridDim.x; b0 += kBatch * kBlock) {
    double p[K][kBatch];
#pragma unroll
    for (int k = 0; k < K; ++k) {
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const unsigned int b = b0 + u * kBlock;
        p[k][u] = b < gridDim.x ? __ldcg(partials + k * kMaxReductionBlocks + b) : 0.0;
      }
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        if (b0 + u * kBlock < gridDim.x) total[k] += p[k][u];
      }
    }
  }
  block_sum<kBlock, K>(total);
  if (threadIdx.x == 0) {
    finish(total);
    *counter = 0u;
  }
}

/// grid_sum_then writing the K sums to result[0..K).
template <int kBlock, int K>
__device__ void grid_sum(double (&values)[K], double* partials, unsigned int* counter,
                         double* result) {
  grid_sum_then<kBlock, K>(values, partials, counter, [result](const double(&total)[K]) {
    for (int k = 0; k < K; ++k) result[k] = total[k];
  });
}

}  // namespace kryflow::kernels::cuda
