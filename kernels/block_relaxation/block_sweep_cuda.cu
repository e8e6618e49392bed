// CUDA triangular sweeps of the block relaxation kernels (block_relaxation.hpp), templated on
// B = 1..8, the value type V and the inverse type W.
//
// triangular_sweep runs on the rows of one color of a color-ordered part (L or U), a color being
// a contiguous range of block rows, and a second part when given. coefficient variant
// (Gorobets et al.'s NOISEtte kernel): a team of 256 threads takes R = 256 / B consecutive block
// rows of the color, whose coefficients are one contiguous range of the part; thread t loads
// coefficients t, t + 256, ... of a chunk, four at a time before it uses them, multiplies each by
// its x entry into shared memory, then thread ii of block row r adds its row's products in
// block-then-column order (the reference's bits), the same for the second part, and applies
// D_I^-1 with the block row's t from shared memory. block_row variant: thread ii of block row r
// walks row ii of the row's blocks from global memory (the reference's bits). warp variant: kL
// lanes per block row (32 for B >= 3, 16 for B = 2, 8 for B = 1) stride over the row's
// coefficients, each keeping B partial sums, added by xor shuffles (another order than the
// reference's: the same bits from run to run). staged_block_row variant: block_row's arithmetic
// on values the team stages in shared memory with coalesced 16-byte loads. Multiplications and
// additions keep their order
// (--fmad=false).
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/device_scratch.cuh"
#include "kernels/block_relaxation/block_relaxation.hpp"
#include "kernels/block_relaxation/block_rows.hpp"
#include "kernels/bsr/coefficient_stage.cuh"

namespace kryflow::kernels::block_relaxation::cuda {
namespace {

using kernels::cuda::blocks_for;
using kernels::cuda::check_launch;
using kernels::cuda::Context;
using size_type = long long;

constexpr int kThreads = 256;
using bsr::cuda::kStage;
static_assert(bsr::cuda::kStageThreads == kThreads, "the sweep's teams are staging teams");

template <class V>
__device__ __forceinline__ V load_value(const V* p, bool stream) {
  return stream ? __ldcs(p) : __ldg(p);
}

template <int kB>
constexpr int lanes_per_row() {
  return kB == 1 ? 8 : kB == 2 ? 16 : 32;
}

template <int kB, class V, class W>
__global__ void __launch_bounds__(kThreads)
    coefficient_sweep_kernel(BsrView<V> part, BsrView<V> second, bool has_second, ColorRange color,
                             const W* __restrict__ inverse, SweepUpdate u, SweepVectors v) {
  constexpr int kR = kThreads / kB;
  __shared__ double products[kStage];
  __shared__ double t_shared[kR * kB];
  const int t = static_cast<int>(threadIdx.x);
  const int r = t / kB;
  const int ii = t - r * kB;
  const index_t first = color.first + static_cast<index_t>(blockIdx.x) * kR;
  const index_t last = min(first + kR, color.first + color.count);
  const index_t I = first + r;
  const bool mine = r < kR && I < last;
  EntryInputs<kB> in;
  if (mine) in = load_entry<kB>(u, v, inverse, I, ii);
  const double p = bsr::cuda::staged_row_sum<kB>(part, first, last, I, ii, mine, kB, v.x, products);
  double q = in.saved;
  if (has_second)
    q = bsr::cuda::staged_row_sum<kB>(second, first, last, I, ii, mine, kB, v.x, products);
  if (mine) t_shared[r * kB + ii] = entry_t<kB>(u, in, p, q);
  __syncthreads();
  if (mine) {
    store_entry<kB>(v, I, ii, entry_x<kB>(u, in, inverse != nullptr, t_shared + r * kB, ii), p);
  }
}

/// acc[c] += the products of block row I of `part` in row c, lane `lane` of kL taking
/// coefficients lane, lane + kL, ...
template <int kB, int kL, class V>
__device__ __forceinline__ void warp_row_products(const BsrView<V>& part, index_t I, int lane,
                                                  const double* __restrict__ x, double (&acc)[kB]) {
  constexpr int kBB = kB * kB;
  const index_t row_begin = __ldg(part.row_ptr + I);
  const int total = (__ldg(part.row_ptr + I + 1) - row_begin) * kBB;
  const V* values = part.values + static_cast<size_type>(row_begin) * kBB;
#pragma unroll 4
  for (int q = lane; q < total; q += kL) {
    const int block = q / kBB;
    const int rem = q - block * kBB;
    const int row = rem / kB;
    const int column = rem - row * kB;
    const index_t J = __ldg(part.col_idx + row_begin + block);
    const double p = __dmul_rn(static_cast<double>(load_value(values + q, part.stream_values)),
                               __ldg(x + static_cast<size_type>(J) * kB + column));
#pragma unroll
    for (int c = 0; c < kB; ++c) acc[c] = c == row ? __dadd_rn(acc[c], p) : acc[c];
  }
}

template <int kB, int kL>
__device__ __forceinline__ void warp_reduce(double (&acc)[kB]) {
#pragma unroll
  for (int c = 0; c < kB; ++c) {
#pragma unroll
    for (int width = kL / 2; width > 0; width /= 2) {
      acc[c] = __dadd_rn(acc[c], __shfl_xor_sync(0xffffffffu, acc[c], width, kL));
    }
  }
}

template <int kB, class V, class W>
__global__ void __launch_bounds__(kThreads)
    warp_sweep_kernel(BsrView<V> part, BsrView<V> second, bool has_second, ColorRange color,
                      const W* __restrict__ inverse, SweepUpdate u, SweepVectors v) {
  constexpr int kL = lanes_per_row<kB>();
  const size_type thread = blockIdx.x * static_cast<size_type>(kThreads) + threadIdx.x;
  const size_type slot = thread / kL;
  const int lane = static_cast<int>(thread % kL);
  const bool active = slot < color.count;  // the same for the kL lanes of a row
  double p[kB];
  double q[kB];
#pragma unroll
  for (int c = 0; c < kB; ++c) p[c] = q[c] = 0.0;
  const index_t I = active ? color.first + static_cast<index_t>(slot) : 0;
  if (active) warp_row_products<kB, kL>(part, I, lane, v.x, p);
  warp_reduce<kB, kL>(p);
  if (has_second) {
    if (active) warp_row_products<kB, kL>(second, I, lane, v.x, q);
    warp_reduce<kB, kL>(q);
  }
  if (active && lane < kB) {
    double t[kB];
    EntryInputs<kB> mine;
#pragma unroll
    for (int c = 0; c < kB; ++c) {
      const EntryInputs<kB> in = load_entry<kB>(u, v, inverse, I, c);
      t[c] = entry_t<kB>(u, in, p[c], has_second ? q[c] : in.saved);
      if (c == lane) mine = in;
    }
    // Every t before the first write of x_I (gamma reads x_I): the row's kB lanes meet.
    __syncwarp(((1u << kB) - 1u) << (threadIdx.x & 31u & ~static_cast<unsigned int>(kL - 1)));
    store_entry<kB>(v, I, lane, entry_x<kB>(u, mine, inverse != nullptr, t, lane), p[lane]);
  }
}

/// Row ii of block row I's blocks of `part` times x, summed in the reference's order.
template <int kB, class V>
__device__ __forceinline__ double block_row_sum(const BsrView<V>& part, index_t I, int ii,
                                                const double* __restrict__ x) {
  double sum = 0.0;
  const index_t end = __ldg(part.row_ptr + I + 1);
#pragma unroll 4
  for (index_t k = __ldg(part.row_ptr + I); k < end; ++k) {
    const index_t J = __ldg(part.col_idx + k);
    const V* row = part.values + (static_cast<size_type>(k) * kB + ii) * kB;
    V v[kB];
    double xv[kB];
    // aligned: the arrays are allocated 256-byte aligned, and the vector loads only serve a kB
    // that keeps every block row and x block 16-byte aligned.
    bsr::cuda::load_block_row<kB>(row, x + static_cast<size_type>(J) * kB, part.stream_values, true,
                                  v, xv);
#pragma unroll
    for (int c = 0; c < kB; ++c) sum = __dadd_rn(sum, __dmul_rn(static_cast<double>(v[c]), xv[c]));
  }
  return sum;
}

/// block_row variant: thread ii of block row r of the team sums row ii of each block times x
/// in the reference's order, then D_I^-1 with the row's t from shared memory.
template <int kB, class V, class W>
__global__ void __launch_bounds__(kThreads)
    block_row_sweep_kernel(BsrView<V> part, BsrView<V> second, bool has_second, ColorRange color,
                           const W* __restrict__ inverse, SweepUpdate u, SweepVectors v) {
  constexpr int kR = kThreads / kB;
  __shared__ double t_shared[kR * kB];
  const int t = static_cast<int>(threadIdx.x);
  const int r = t / kB;
  const int ii = t - r * kB;
  const index_t slot = static_cast<index_t>(blockIdx.x) * kR + r;
  const bool mine = r < kR && slot < color.count;
  const index_t I = color.first + slot;
  double p = 0.0;
  EntryInputs<kB> in;
  if (mine) {
    in = load_entry<kB>(u, v, inverse, I, ii);
    p = block_row_sum<kB>(part, I, ii, v.x);
    const double q = has_second ? block_row_sum<kB>(second, I, ii, v.x) : in.saved;
    t_shared[r * kB + ii] = entry_t<kB>(u, in, p, q);
  }
  __syncthreads();
  if (mine) {
    store_entry<kB>(v, I, ii, entry_x<kB>(u, in, inverse != nullptr, t_shared + r * kB, ii), p);
  }
}

/// Values of one staging chunk of the staged_block_row variant (16 KiB of shared memory).
template <class V>
constexpr int staged_chunk_values() {
  return 16384 / static_cast<int>(sizeof(V));
}

/// Row ii of block row I's blocks of `part` times x, summed in the reference's order, the
/// values read from shared memory: the team stages its rows' values (one contiguous range of
/// the part) chunk by chunk, a whole number of blocks per chunk, with coalesced 16-byte loads
/// from the 16-byte boundary at or before the chunk's first value (the arrays are 256-byte
/// aligned), then each `mine` thread adds its blocks of the chunk. Every thread of the team
/// calls it; the sum is 0 for the others.
template <int kB, class V>
__device__ __forceinline__ double staged_block_row_sum(const BsrView<V>& part, index_t first,
                                                       index_t last, index_t I, int ii, bool mine,
                                                       const double* __restrict__ x, V* stage) {
  constexpr int kBB = kB * kB;
  constexpr int kVec = 16 / static_cast<int>(sizeof(V));  // values per 16-byte load
  constexpr int kChunk = staged_chunk_values<V>();
  constexpr int kChunkBlocks = (kChunk - kVec) / kBB;  // room for the leading misalignment
  using Vec = std::conditional_t<std::is_same_v<V, double>, double2, float4>;
  const int t = static_cast<int>(threadIdx.x);
  const index_t group_begin = __ldg(part.row_ptr + first);
  const index_t group_end = __ldg(part.row_ptr + last);
  index_t row_begin = 0;
  index_t row_end = 0;
  if (mine) {
    row_begin = __ldg(part.row_ptr + I);
    row_end = __ldg(part.row_ptr + I + 1);
  }
  const size_type total = static_cast<size_type>(part.num_blocks) * kBB;  // the array's end
  double sum = 0.0;
  for (index_t c0 = group_begin; c0 < group_end; c0 += kChunkBlocks) {  // uniform in the team
    const index_t c1 = min(c0 + kChunkBlocks, group_end);
    const size_type base = (static_cast<size_type>(c0) * kBB) & ~static_cast<size_type>(kVec - 1);
    const size_type end = static_cast<size_type>(c1) * kBB;
    const int vectors = static_cast<int>((end - base + kVec - 1) / kVec);
    const Vec* source = reinterpret_cast<const Vec*>(part.values + base);
    for (int q0 = 0; q0 < vectors; q0 += 4 * kThreads) {
      Vec w[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int q = q0 + t + u * kThreads;
        if (q < vectors && base + static_cast<size_type>(q + 1) * kVec <= total) {
          w[u] = part.stream_values ? __ldcs(source + q) : __ldg(source + q);
        } else if (q < vectors) {  // the last, partial vector: its values one by one
          V* lanes = reinterpret_cast<V*>(&w[u]);
#pragma unroll
          for (int e = 0; e < kVec; ++e) {
            const size_type at = base + static_cast<size_type>(q) * kVec + e;
            lanes[e] = at < total ? part.values[at] : V(0);
          }
        }
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int q = q0 + t + u * kThreads;
        if (q < vectors) reinterpret_cast<Vec*>(stage)[q] = w[u];
      }
    }
    __syncthreads();
    if (mine) {
      const index_t k_begin = max(row_begin, c0);
      const index_t k_end = min(row_end, c1);
#pragma unroll 2
      for (index_t k = k_begin; k < k_end; ++k) {
        const index_t J = __ldg(part.col_idx + k);
        const V* row = stage + (static_cast<size_type>(k) * kBB - base) + ii * kB;
        const double* xb = x + static_cast<size_type>(J) * kB;
        double xv[kB];
#pragma unroll
        for (int c = 0; c < kB; ++c) xv[c] = __ldg(xb + c);
#pragma unroll
        for (int c = 0; c < kB; ++c) {
          sum = __dadd_rn(sum, __dmul_rn(static_cast<double>(row[c]), xv[c]));
        }
      }
    }
    __syncthreads();  // the next chunk overwrites the stage
  }
  return sum;
}

/// staged_block_row variant: block_row's arithmetic (the reference's bits) with the team's
/// values staged through shared memory by coalesced 16-byte loads, for block sizes whose block
/// rows are not 16-byte multiples.
template <int kB, class V, class W>
__global__ void __launch_bounds__(kThreads)
    staged_block_row_sweep_kernel(BsrView<V> part, BsrView<V> second, bool has_second,
                                  ColorRange color, const W* __restrict__ inverse, SweepUpdate u,
                                  SweepVectors v) {
  constexpr int kR = kThreads / kB;
  __shared__ __align__(16) V stage[staged_chunk_values<V>()];
  __shared__ double t_shared[kR * kB];
  const int t = static_cast<int>(threadIdx.x);
  const int r = t / kB;
  const int ii = t - r * kB;
  const index_t first = color.first + static_cast<index_t>(blockIdx.x) * kR;
  const index_t last = min(first + kR, color.first + color.count);
  const index_t I = first + r;
  const bool mine = r < kR && I < last;
  EntryInputs<kB> in;
  if (mine) in = load_entry<kB>(u, v, inverse, I, ii);
  const double p = staged_block_row_sum<kB>(part, first, last, I, ii, mine, v.x, stage);
  double q = in.saved;
  if (has_second) q = staged_block_row_sum<kB>(second, first, last, I, ii, mine, v.x, stage);
  if (mine) t_shared[r * kB + ii] = entry_t<kB>(u, in, p, q);
  __syncthreads();
  if (mine) {
    store_entry<kB>(v, I, ii, entry_x<kB>(u, in, inverse != nullptr, t_shared + r * kB, ii), p);
  }
}

/// Threads of the single-block kernel.
constexpr int kSingleBlockThreads = 512;

/// The steps of one single-block launch (kernel parameters).
struct SingleBlockSteps {
  SweepStep step[kSingleBlockSweepSteps];
  int count = 0;
};

/// block_row_sum with x read by plain (coherent) loads: the single-block kernel writes x between
/// colors.
template <int kB, class V>
__device__ __forceinline__ double coherent_block_row_sum(const BsrView<V>& part, index_t I, int ii,
                                                         const double* x) {
  double sum = 0.0;
  const index_t end = __ldg(part.row_ptr + I + 1);
  for (index_t k = __ldg(part.row_ptr + I); k < end; ++k) {
    const index_t J = __ldg(part.col_idx + k);
    const V* row = part.values + (static_cast<size_type>(k) * kB + ii) * kB;
    const double* xb = x + static_cast<size_type>(J) * kB;
#pragma unroll
    for (int c = 0; c < kB; ++c) {
      sum = __dadd_rn(sum, __dmul_rn(static_cast<double>(__ldg(row + c)), xb[c]));
    }
  }
  return sum;
}

/// All steps of a sequence in one cuda block: block_row's update of each step's color, kR block
/// rows at a time, a barrier (__syncthreads, which also makes the block's global writes visible
/// to it) between colors. x, the saved products and x_out are read with plain loads.
template <int kB, class V, class W>
__global__ void __launch_bounds__(kSingleBlockThreads)
    single_block_sweep_kernel(BsrView<V> lower, BsrView<V> upper, const W* __restrict__ inverse,
                              SingleBlockSteps steps) {
  constexpr int kR = kSingleBlockThreads / kB;
  __shared__ double t_shared[kR * kB];
  const int t = static_cast<int>(threadIdx.x);
  const int r = t / kB;
  const int ii = t - r * kB;
  for (int s = 0; s < steps.count; ++s) {
    const SweepStep& step = steps.step[s];
    const BsrView<V>& part = step.upper ? upper : lower;
    const BsrView<V>& other = step.upper ? lower : upper;
    for (index_t base = 0; base < step.color.count; base += kR) {
      const index_t slot = base + r;
      const bool mine = r < kR && slot < step.color.count;
      const index_t I = step.color.first + slot;
      const W* inv = step.inverse ? inverse : nullptr;
      double p = 0.0;
      EntryInputs<kB> in;
      if (mine) {
        in = load_entry<kB>(step.update, step.vectors, inv, I, ii);
        p = coherent_block_row_sum<kB>(part, I, ii, step.vectors.x);
        const double q =
            step.second ? coherent_block_row_sum<kB>(other, I, ii, step.vectors.x) : in.saved;
        t_shared[r * kB + ii] = entry_t<kB>(step.update, in, p, q);
      }
      __syncthreads();
      if (mine) {
        store_entry<kB>(step.vectors, I, ii,
                        entry_x<kB>(step.update, in, inv != nullptr, t_shared + r * kB, ii), p);
      }
      __syncthreads();  // the next rows reuse t_shared; the next color reads these x
    }
  }
}

}  // namespace

template <class V, class W>
void triangular_sweep(const Backend& backend, const BsrView<V>& part, const BsrView<V>* second,
                      SweepVariant variant, const W* inverse, ColorRange color, SweepUpdate update,
                      const SweepVectors& vectors) {
  if (color.count == 0) return;
  Context& context = *backend.cuda_context();
  const bool has_second = second != nullptr;
  const BsrView<V> other = has_second ? *second : part;
  with_block_size(part.block_size, "block_relaxation::triangular_sweep", [&](auto bs) {
    constexpr int kB = decltype(bs)::value;
    constexpr int kR = kThreads / kB;
    const auto teams = static_cast<unsigned int>((color.count + kR - 1) / kR);
    if (variant == SweepVariant::coefficient) {
      coefficient_sweep_kernel<kB><<<teams, kThreads, 0, context.stream>>>(
          part, other, has_second, color, inverse, update, vectors);
    } else if (variant == SweepVariant::block_row) {
      block_row_sweep_kernel<kB><<<teams, kThreads, 0, context.stream>>>(
          part, other, has_second, color, inverse, update, vectors);
    } else if (variant == SweepVariant::staged_block_row) {
      staged_block_row_sweep_kernel<kB><<<teams, kThreads, 0, context.stream>>>(
          part, other, has_second, color, inverse, update, vectors);
    } else {
      const size_type threads = static_cast<size_type>(color.count) * lanes_per_row<kB>();
      warp_sweep_kernel<kB>
          <<<blocks_for(threads, kThreads, LLONG_MAX), kThreads, 0, context.stream>>>(
              part, other, has_second, color, inverse, update, vectors);
    }
  });
  check_launch("block_relaxation::triangular_sweep");
}

template <class V, class W>
void triangular_sweeps(const Backend& backend, const BsrView<V>& lower, const BsrView<V>& upper,
                       SweepVariant variant, const W* inverse, const SweepStep* steps, int count,
                       std::int64_t single_block_rows) {
  if (static_cast<std::int64_t>(lower.num_block_rows) * lower.block_size > single_block_rows) {
    for (int s = 0; s < count; ++s) {
      const SweepStep& step = steps[s];
      const BsrView<V>& part = step.upper ? upper : lower;
      const BsrView<V>& other = step.upper ? lower : upper;
      block_relaxation::cuda::triangular_sweep(backend, part, step.second ? &other : nullptr,
                                               variant, step.inverse ? inverse : nullptr,
                                               step.color, step.update, step.vectors);
    }
    return;
  }
  Context& context = *backend.cuda_context();
  with_block_size(lower.block_size, "block_relaxation::triangular_sweeps", [&](auto bs) {
    constexpr int kB = decltype(bs)::value;
    for (int s0 = 0; s0 < count; s0 += kSingleBlockSweepSteps) {
      SingleBlockSteps launch;
      launch.count = std::min(kSingleBlockSweepSteps, count - s0);
      for (int s = 0; s < launch.count; ++s) launch.step[s] = steps[s0 + s];
      single_block_sweep_kernel<kB>
          <<<1, kSingleBlockThreads, 0, context.stream>>>(lower, upper, inverse, launch);
    }
  });
  check_launch("block_relaxation::triangular_sweeps");
}

KRYFLOW_BLOCK_RELAXATION_SWEEP_INSTANTIATIONS

}  // namespace kryflow::kernels::block_relaxation::cuda
