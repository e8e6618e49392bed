// The staging step of the one-work-item-per-coefficient scheme (Gorobets et al., NOISEtte),
// shared by the BSR product's coefficient kernel and the multicolor Gauss-Seidel coefficient
// kernel; included by .cu files only.
#pragma once

#include <cuda_runtime.h>

#include "kernels/bsr/bsr.hpp"

namespace kryflow::kernels::bsr::cuda {

/// Threads of a staging team (one cuda block), coefficients each loads before it uses them, and
/// the products one chunk holds in shared memory (16 KiB).
inline constexpr int kStageThreads = kGroupThreads;
inline constexpr int kLoadBatch = 4;
inline constexpr int kStage = 2048;
static_assert(kStage % (kLoadBatch * kStageThreads) == 0, "a chunk is whole load batches");
static_assert(kStage >= 2 * kMaxBlockSize * kMaxBlockSize, "a chunk holds at least two blocks");

/// products[q] = double(value q) * x(its column) for the `count` coefficients of the blocks
/// from c0 on (count <= kStage, a whole number of blocks, B x B = BB each): thread t of the team
/// takes q = t, t + kStageThreads, ..., kLoadBatch loads in flight before the first is used
/// (past the end it loads the last coefficient again; only the stores are guarded). Every
/// thread of the team calls it; the caller synchronizes before reading the products.
template <class V>
__device__ __forceinline__ void stage_products(const BsrView<V>& a, index_t c0, int count, int B,
                                               int BB, const double* __restrict__ x,
                                               double* products) {
  const int t = static_cast<int>(threadIdx.x);
  const V* values = a.values + static_cast<long long>(c0) * BB;
  for (int q0 = 0; q0 < count; q0 += kLoadBatch * kStageThreads) {
    V v[kLoadBatch];
    long long xi[kLoadBatch];
#pragma unroll
    for (int u = 0; u < kLoadBatch; ++u) {
      const int q = min(q0 + t + u * kStageThreads, count - 1);
      const int block = q / BB;
      const int column = (q - block * BB) % B;
      v[u] = a.stream_values ? __ldcs(values + q) : __ldg(values + q);
      xi[u] = static_cast<long long>(__ldg(a.col_idx + c0 + block)) * B + column;
    }
    double p[kLoadBatch];
#pragma unroll
    for (int u = 0; u < kLoadBatch; ++u) {
      p[u] = __dmul_rn(static_cast<double>(v[u]), __ldg(x + xi[u]));
    }
#pragma unroll
    for (int u = 0; u < kLoadBatch; ++u) {
      const int q = q0 + t + u * kStageThreads;
      if (q < count) products[q] = p[u];
    }
  }
}

}  // namespace kryflow::kernels::bsr::cuda
