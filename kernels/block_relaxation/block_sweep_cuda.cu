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
// reference's: the same bits from run to run). Multiplications and additions keep their order
// (--fmad=false).
#include <cuda_runtime.h>

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

constexpr int power_of_two_at_least(int n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
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

/// Block-slot products for B * B <= kL (B = 1..5): the kL lanes of a block row take kL / B^2
/// blocks per step, lane slot * B + r holding coefficient (r, c) of block g, slot = g B + c, so
/// that a step loads whole blocks (one 200-byte run for B = 5) by coalesced 8-byte loads with no
/// index arithmetic per coefficient; lanes past the last whole block stay idle (7 of 32 for
/// B = 5). Returns the lane's sum over its blocks of value (r, c) times x_J[c], blocks in order.
template <int kB, int kL, class V>
__device__ __forceinline__ double slot_products(const BsrView<V>& part, index_t I, int lane,
                                                const double* __restrict__ x) {
  constexpr int kBB = kB * kB;
  constexpr int kG = kL / kBB;  // blocks per step
  const int g = lane / kBB;
  const int rest = lane - g * kBB;
  const int c = rest / kB;
  const int r = rest - c * kB;
  double acc = 0.0;
  if (g >= kG) return acc;
  const index_t end = __ldg(part.row_ptr + I + 1);
  const V* values = part.values + r * kB + c;
#pragma unroll 4
  for (index_t k = __ldg(part.row_ptr + I) + g; k < end; k += kG) {
    const index_t J = __ldg(part.col_idx + k);
    const V value = load_value(values + static_cast<size_type>(k) * kBB, part.stream_values);
    acc = __dadd_rn(
        acc, __dmul_rn(static_cast<double>(value), __ldg(x + static_cast<size_type>(J) * kB + c)));
  }
  return acc;
}

/// The row sums of slot_products: lane r (< B) of the row's kL lanes receives row r's sum, the
/// slots added in a fixed tree (the same bits from run to run). Every lane of the warp calls it.
template <int kB, int kL>
__device__ __forceinline__ double slot_reduce(double acc, int lane) {
  constexpr int kSpan = power_of_two_at_least(kL / kB);
#pragma unroll
  for (int s = kSpan / 2; s > 0; s /= 2) {
    const double other = __shfl_down_sync(0xffffffffu, acc, s * kB, kL);
    acc = lane + s * kB < kL ? __dadd_rn(acc, other) : acc;
  }
  return acc;
}

/// warp variant: kL lanes per block row. B <= 5: slot_products and slot_reduce, lane ii (< B)
/// then updates entry ii with the row's t gathered by shuffles. B > 5: each lane strides over
/// the row's coefficients keeping B partial sums, added by xor shuffles.
template <int kB, class V, class W>
__global__ void __launch_bounds__(kThreads)
    warp_sweep_kernel(BsrView<V> part, BsrView<V> second, bool has_second, ColorRange color,
                      const W* __restrict__ inverse, SweepUpdate u, SweepVectors v) {
  constexpr int kL = lanes_per_row<kB>();
  const size_type thread = blockIdx.x * static_cast<size_type>(kThreads) + threadIdx.x;
  const size_type slot = thread / kL;
  const int lane = static_cast<int>(thread % kL);
  const bool active = slot < color.count;  // the same for the kL lanes of a row
  const index_t I = active ? color.first + static_cast<index_t>(slot) : 0;
  if constexpr (kB * kB <= kL) {
    const bool head = active && lane < kB;
    EntryInputs<kB> in;
    if (head) in = load_entry<kB>(u, v, inverse, I, lane);
    double p = active ? slot_products<kB, kL>(part, I, lane, v.x) : 0.0;
    p = slot_reduce<kB, kL>(p, lane);
    double q = 0.0;
    if (has_second) {
      q = active ? slot_products<kB, kL>(second, I, lane, v.x) : 0.0;
      q = slot_reduce<kB, kL>(q, lane);
    }
    const double t_mine = head ? entry_t<kB>(u, in, p, has_second ? q : in.saved) : 0.0;
    double t[kB];
#pragma unroll
    for (int c = 0; c < kB; ++c) t[c] = __shfl_sync(0xffffffffu, t_mine, c, kL);
    if (head) store_entry<kB>(v, I, lane, entry_x<kB>(u, in, inverse != nullptr, t, lane), p);
  } else {
    double p[kB];
    double q[kB];
#pragma unroll
    for (int c = 0; c < kB; ++c) p[c] = q[c] = 0.0;
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
}

/// Whether the block_row sweep reads values with the evict-first hint when they exceed the cache
/// (BsrView::stream_values): not for B = 5, whose 200-byte blocks straddle cache lines that the
/// next blocks' loads still need. H200, symmetric sweep of block 3D Poisson with about 1 GiB of
/// values (bench/results/h200_block_relaxation/d588325): B = 5 0.83 of copy without the hint
/// against 0.82 with it (float values 0.78 against 0.76); B = 7 (256 MiB) lost without it (0.67
/// against 0.79), B = 6 was even (0.77).
template <int kB>
inline constexpr bool kStreamBlockRows = kB != 5;

/// Columns of a block row's first blocks that the block_row sweep loads before it waits for the
/// kernels before it (programmatic dependent launch).
constexpr int kEarlyColumns = 4;

/// What block_row_sum needs of block row I of `part` before it reads x: the row's block range
/// and its first columns. Matrix data only: read before wait_for_prerequisites().
struct RowStart {
  index_t begin = 0;
  index_t end = 0;
  index_t column[kEarlyColumns] = {};
};

template <class V>
__device__ __forceinline__ RowStart row_start(const BsrView<V>& part, index_t I) {
  RowStart start;
  start.begin = __ldg(part.row_ptr + I);
  start.end = __ldg(part.row_ptr + I + 1);
#pragma unroll
  for (int q = 0; q < kEarlyColumns; ++q) {
    if (start.begin + q < start.end) start.column[q] = __ldg(part.col_idx + start.begin + q);
  }
  return start;
}

/// acc + row ii of block k of `part` (column J) times x, in the reference's order.
template <int kB, class V>
__device__ __forceinline__ double add_block_row(const BsrView<V>& part, index_t k, index_t J,
                                                int ii, const double* __restrict__ x, double sum) {
  const V* row = part.values + (static_cast<size_type>(k) * kB + ii) * kB;
  V v[kB];
  double xv[kB];
  // aligned: the arrays are allocated 256-byte aligned (the vector and pair loads of
  // load_block_row need the arrays' starts aligned).
  bsr::cuda::load_block_row<kB>(row, x + static_cast<size_type>(J) * kB,
                                kStreamBlockRows<kB> && part.stream_values, true, v, xv);
#pragma unroll
  for (int c = 0; c < kB; ++c) sum = __dadd_rn(sum, __dmul_rn(static_cast<double>(v[c]), xv[c]));
  return sum;
}

/// How many blocks block_row_sum's loop unrolls, by value type. H200, symmetric sweep of block
/// 3D Poisson with about 1 GiB of values, greedy coloring, fraction of the copy bandwidth with
/// unrolling 1 against 4 (bench/results/h200_block_relaxation/block_row_unroll): double B = 4
/// 0.99 / 0.95, B = 5 0.91 / 0.83, B = 6 0.92 / 0.84, B = 7 0.87 / 0.80, B = 8 0.97 / 0.77 (the
/// unrolled loop holds four blocks' loads in registers, so fewer teams fit on an SM); float
/// B = 4 0.80 / 0.93, B = 5 0.80 / 0.78.
template <class V>
inline constexpr int kBlockRowUnroll = std::is_same_v<V, float> ? 4 : 1;

/// Row ii of block row I's blocks of `part` times x, summed in the reference's order.
template <int kB, class V>
__device__ __forceinline__ double block_row_sum(const BsrView<V>& part, index_t I, int ii,
                                                const double* __restrict__ x) {
  constexpr int kUnroll = kBlockRowUnroll<V>;
  double sum = 0.0;
  const index_t end = __ldg(part.row_ptr + I + 1);
#pragma unroll kUnroll
  for (index_t k = __ldg(part.row_ptr + I); k < end; ++k) {
    sum = add_block_row<kB>(part, k, __ldg(part.col_idx + k), ii, x, sum);
  }
  return sum;
}

/// block_row_sum of the block row that `start` describes (its first columns already loaded).
template <int kB, class V>
__device__ __forceinline__ double early_block_row_sum(const BsrView<V>& part, const RowStart& start,
                                                      int ii, const double* __restrict__ x) {
  double sum = 0.0;
  auto add_block = [&](index_t k, index_t J) { sum = add_block_row<kB>(part, k, J, ii, x, sum); };
#pragma unroll
  for (int q = 0; q < kEarlyColumns; ++q) {
    if (start.begin + q < start.end) add_block(start.begin + q, start.column[q]);
  }
#pragma unroll 4
  for (index_t k = start.begin + kEarlyColumns; k < start.end; ++k) {
    add_block(k, __ldg(part.col_idx + k));
  }
  return sum;
}

/// block_row variant: thread ii of block row r of the team sums row ii of each block times x
/// in the reference's order, then D_I^-1 with the row's t from shared memory. kEarly (colors of
/// at most one wave of teams): launched as a programmatic dependent launch, the rows' ranges and
/// first columns read before the wait for the kernels before it, so that on a small matrix,
/// where a sweep is a chain of dependent loads per color, that part of the chain overlaps the
/// previous color's kernel. Larger colors keep the plain kernel (the early loads' registers cost
/// occupancy there).
template <int kB, bool kEarly, class V, class W>
__device__ __forceinline__ void block_row_sweep(const BsrView<V>& part, const BsrView<V>& second,
                                                bool has_second, ColorRange color,
                                                const W* __restrict__ inverse, const SweepUpdate& u,
                                                const SweepVectors& v) {
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
  if constexpr (kEarly) {
    RowStart part_start;
    RowStart second_start;
    if (mine) {
      part_start = row_start(part, I);
      if (has_second) second_start = row_start(second, I);
    }
    kernels::cuda::wait_for_prerequisites();
    kernels::cuda::allow_dependents();
    if (mine) {
      in = load_entry<kB>(u, v, inverse, I, ii);
      p = early_block_row_sum<kB>(part, part_start, ii, v.x);
      const double q =
          has_second ? early_block_row_sum<kB>(second, second_start, ii, v.x) : in.saved;
      t_shared[r * kB + ii] = entry_t<kB>(u, in, p, q);
    }
  } else if (mine) {
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

/// block_row_sweep with the launch bounds of its value type: at least four resident teams per
/// SM for double values, the compiler's choice for float. H200, as for kBlockRowUnroll, double
/// with at least four teams against the compiler's choice: B = 6 0.94 / 0.77, B = 7 0.89 / 0.80,
/// B = 8 0.98 / 0.65 of copy (B = 4, 5 even); float with at least four: B = 5 0.70 against 0.78
/// (B = 4 even).
template <int kB, bool kEarly, class V, class W>
__global__ void __launch_bounds__(kThreads, 4)
    block_row_sweep_kernel_four_teams(BsrView<V> part, BsrView<V> second, bool has_second,
                                      ColorRange color, const W* __restrict__ inverse,
                                      SweepUpdate u, SweepVectors v) {
  block_row_sweep<kB, kEarly>(part, second, has_second, color, inverse, u, v);
}

template <int kB, bool kEarly, class V, class W>
__global__ void __launch_bounds__(kThreads)
    block_row_sweep_kernel_any_teams(BsrView<V> part, BsrView<V> second, bool has_second,
                                     ColorRange color, const W* __restrict__ inverse, SweepUpdate u,
                                     SweepVectors v) {
  block_row_sweep<kB, kEarly>(part, second, has_second, color, inverse, u, v);
}

/// The block_row kernel for value type V (block_row_sweep_kernel_four_teams for double).
template <int kB, bool kEarly, class V, class W>
constexpr auto block_row_sweep_kernel() {
  if constexpr (std::is_same_v<V, float>) {
    return &block_row_sweep_kernel_any_teams<kB, kEarly, V, W>;
  } else {
    return &block_row_sweep_kernel_four_teams<kB, kEarly, V, W>;
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
      // One wave at four teams per SM: the early kernel (its launch overlaps the kernel before).
      if (teams <= 4u * static_cast<unsigned int>(context.properties.multiProcessorCount)) {
        kernels::cuda::launch_dependent(context, block_row_sweep_kernel<kB, true, V, W>(), teams,
                                        kThreads, "block_relaxation::triangular_sweep", part, other,
                                        has_second, color, inverse, update, vectors);
      } else {
        block_row_sweep_kernel<kB, false, V, W>()<<<teams, kThreads, 0, context.stream>>>(
            part, other, has_second, color, inverse, update, vectors);
      }
    } else {
      const size_type threads = static_cast<size_type>(color.count) * lanes_per_row<kB>();
      warp_sweep_kernel<kB>
          <<<blocks_for(threads, kThreads, LLONG_MAX), kThreads, 0, context.stream>>>(
              part, other, has_second, color, inverse, update, vectors);
    }
  });
  check_launch("block_relaxation::triangular_sweep");
}

KRYFLOW_BLOCK_RELAXATION_SWEEP_INSTANTIATIONS

}  // namespace kryflow::kernels::block_relaxation::cuda
