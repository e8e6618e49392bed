// The staging step (and the chunked row sums built on it) of the one-work-item-per-coefficient
// scheme (Gorobets et al., NOISEtte), shared by the BSR product's coefficient kernel and the
// multicolor Gauss-Seidel coefficient kernel, and the block-row loads of the BSR product's
// block_row kernel and the sweeps' row kernels; included by .cu files only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

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

/// One pass of a team over the coefficients of block rows first .. last - 1 (contiguous in a):
/// chunk by chunk, stage_products, then each `mine` thread adds row ii of its block row I's
/// products in block-then-column order (the reference order of a row product). B is kB when
/// kB > 0 (unrolled), else the runtime block size. Every thread of the team calls it; the sum is
/// 0 for the others.
template <int kB, class V>
__device__ __forceinline__ double staged_row_sum(const BsrView<V>& a, index_t first, index_t last,
                                                 index_t I, int ii, bool mine, int B,
                                                 const double* __restrict__ x, double* products) {
  const int BB = B * B;
  const int chunk_blocks = kStage / BB;
  const index_t group_begin = __ldg(a.row_ptr + first);
  const index_t group_end = __ldg(a.row_ptr + last);
  index_t row_begin = 0;
  index_t row_end = 0;
  if (mine) {
    row_begin = __ldg(a.row_ptr + I);
    row_end = __ldg(a.row_ptr + I + 1);
  }
  double sum = 0.0;
  for (index_t c0 = group_begin; c0 < group_end; c0 += chunk_blocks) {  // uniform in the team
    const index_t c1 = min(c0 + chunk_blocks, group_end);
    const int count = (c1 - c0) * BB;
    stage_products(a, c0, count, B, BB, x, products);
    __syncthreads();
    if (mine) {
      const index_t k_begin = max(row_begin, c0);
      const index_t k_end = min(row_end, c1);
      for (index_t k = k_begin; k < k_end; ++k) {
        const double* row = products + (k - c0) * BB + ii * B;
        if constexpr (kB > 0) {
#pragma unroll
          for (int c = 0; c < kB; ++c) sum = __dadd_rn(sum, row[c]);
        } else {
          for (int c = 0; c < B; ++c) sum = __dadd_rn(sum, row[c]);
        }
      }
    }
    __syncthreads();  // the next chunk overwrites the products
  }
  return sum;
}

/// out = the kB consecutive values at p, by kB / 2 pair loads (double2 or float2) and, for odd
/// kB, one single load: the pairs start at p, or at p + 1 when p is not pair-aligned (the single
/// value is then p[0], else p[kB - 1]). Reads nothing outside p[0 .. kB - 1]; the array that
/// holds p must start pair-aligned (8 or 16 bytes). Fewer load instructions and L1 wavefronts
/// than kB single loads when rows are not vector-aligned (B = 3, 5, 7).
template <int kB, class T>
__device__ __forceinline__ void load_pairs(const T* p, bool stream, T (&out)[kB]) {
  using Pair = std::conditional_t<std::is_same_v<T, double>, double2, float2>;
  constexpr int kPairs = kB / 2;
  const bool shifted = kB % 2 == 1 && reinterpret_cast<std::uintptr_t>(p) % sizeof(Pair) != 0;
  const Pair* q = reinterpret_cast<const Pair*>(p + (shifted ? 1 : 0));
  Pair pair[kPairs > 0 ? kPairs : 1];
#pragma unroll
  for (int i = 0; i < kPairs; ++i) pair[i] = stream ? __ldcs(q + i) : __ldg(q + i);
  T lone = T(0);
  if constexpr (kB % 2 == 1) {
    const T* at = p + (shifted ? 0 : kB - 1);
    lone = stream ? __ldcs(at) : __ldg(at);
  }
  auto component = [&](int i) { return i % 2 == 0 ? pair[i / 2].x : pair[i / 2].y; };
#pragma unroll
  for (int c = 0; c < kB; ++c) {
    if constexpr (kB % 2 == 0) {
      out[c] = component(c);
    } else {
      const T straight = c == kB - 1 ? lone : component(c < kB - 1 ? c : 0);
      const T moved = c == 0 ? lone : component(c > 0 ? c - 1 : 0);
      out[c] = shifted ? moved : straight;
    }
  }
}

/// Loads the kB values of one block row (row-major, starting at `row`) into v and the kB
/// entries of x at xb into xv. When `aligned` (the arrays holding row and x start 16-byte
/// aligned) with vector loads: float4 for float rows of a multiple of 4 values, else pair loads
/// (load_pairs: 16-byte loads only where kB is even in double); fewer load instructions in
/// flight per product.
template <int kB, class V>
__device__ __forceinline__ void load_block_row(const V* row, const double* xb, bool stream,
                                               bool aligned, V (&v)[kB], double (&xv)[kB]) {
  if (kB > 1 && aligned) {
    load_pairs<kB>(xb, false, xv);
  } else {
#pragma unroll
    for (int c = 0; c < kB; ++c) xv[c] = __ldg(xb + c);
  }
  if constexpr (std::is_same_v<V, float> && kB % 4 == 0) {
    if (aligned) {
#pragma unroll
      for (int c = 0; c < kB / 4; ++c) {
        const float4* p = reinterpret_cast<const float4*>(row) + c;
        const float4 quad = stream ? __ldcs(p) : __ldg(p);
        v[4 * c] = quad.x;
        v[4 * c + 1] = quad.y;
        v[4 * c + 2] = quad.z;
        v[4 * c + 3] = quad.w;
      }
      return;
    }
  } else if constexpr (kB > 1) {
    if (aligned) {
      load_pairs<kB>(row, stream, v);
      return;
    }
  }
#pragma unroll
  for (int c = 0; c < kB; ++c) v[c] = stream ? __ldcs(row + c) : __ldg(row + c);
}

}  // namespace kryflow::kernels::bsr::cuda
