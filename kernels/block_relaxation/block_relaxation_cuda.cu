// CUDA block relaxation kernels (block_relaxation.hpp), templated on B = 1..8, the value type V
// and the inverse type W.
//
// invert_diagonal_blocks: one thread per block row runs block_rows.hpp's elimination (the
// reference's bits); the first failing block row is an atomicMin read back once.
// block_diagonal_apply: one thread per scalar row, the reference's order (its bits).
// multicolor_sweep runs on a color-ordered matrix, a color being a contiguous range of block
// rows. coefficient variant (Gorobets et al.'s NOISEtte kernel): a team of 256 threads takes
// R = 256 / B consecutive block rows of the color, whose coefficients are one contiguous range;
// thread t loads coefficients t, t + 256, ... of a chunk, four at a time before it uses them,
// multiplies each by its x entry into shared memory (the diagonal blocks' too: loading them
// keeps the loads unconditional), then thread ii of block row r skips the diagonal block and
// subtracts its row's other products from b in block-then-column order (the reference's bits),
// and applies D_I^-1 with the block row's t from shared memory. block_row variant: thread ii of
// block row r walks row ii of the row's blocks from global memory (the reference's bits).
// warp variant: kL lanes per block row (32 for B >= 3, 16 for B = 2, 8 for B = 1) stride over
// the row's coefficients, each keeping B partial sums, added by xor shuffles (another order
// than the reference's: the same bits from run to run). Multiplications and additions keep
// their order (--fmad=false). The reordering kernels copy rows (one warp per block row) and
// gather vector blocks.
#include <cuda_runtime.h>
#include <math.h>

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
using kernels::cuda::DeviceScratch;
using size_type = long long;

constexpr int kThreads = 256;
using bsr::cuda::kStage;
static_assert(bsr::cuda::kStageThreads == kThreads, "the sweep's teams are staging teams");

template <class V>
__device__ __forceinline__ V load_value(const V* p, bool stream) {
  return stream ? __ldcs(p) : __ldg(p);
}

template <int kB, class V, class W>
__global__ void invert_kernel(BsrView<V> a, W* inverse, unsigned int* first_bad) {
  const size_type I = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x;
  if (I >= a.num_block_rows) return;
  const index_t k = diagonal_block(a, static_cast<index_t>(I));
  const bool ok = k >= 0 && invert_block<kB>(a.values + static_cast<size_type>(k) * kB * kB,
                                             inverse + I * kB * kB);
  if (!ok) atomicMin(first_bad, static_cast<unsigned int>(I));
}

template <int kB, class W>
__global__ void block_apply_kernel(size_type n, const W* __restrict__ inverse, double omega,
                                   const double* __restrict__ r, double* __restrict__ z) {
  const size_type i = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const size_type I = i / kB;
  const int ii = static_cast<int>(i - I * kB);
  const W* row = inverse + (I * kB + ii) * kB;
  const double* v = r + I * kB;
  double s = 0.0;
#pragma unroll
  for (int c = 0; c < kB; ++c) s = __dadd_rn(s, __dmul_rn(static_cast<double>(row[c]), v[c]));
  z[i] = __dmul_rn(omega, s);
}

/// x_I[ii] from t (B entries) as the reference's apply_block and update.
template <int kB, class W>
__device__ __forceinline__ void update_entry(const W* inverse, size_type I, int ii, double omega,
                                             const double* t, double* x) {
  const W* row = inverse + (I * kB + ii) * kB;
  double s = 0.0;
#pragma unroll
  for (int c = 0; c < kB; ++c) s = __dadd_rn(s, __dmul_rn(static_cast<double>(row[c]), t[c]));
  const double update = __dmul_rn(omega, s);
  double* xi = x + I * kB + ii;
  *xi = omega == 1.0 ? update : __dadd_rn(__dmul_rn(1.0 - omega, *xi), update);
}

template <int kB, class V, class W>
__global__ void __launch_bounds__(kThreads)
    coefficient_sweep_kernel(BsrView<V> a, ColorRange color, const W* __restrict__ inverse,
                             double omega, const double* __restrict__ b, double* x) {
  constexpr int kBB = kB * kB;
  constexpr int kR = kThreads / kB;
  constexpr int kChunkBlocks = kStage / kBB;
  __shared__ double products[kStage];
  __shared__ double t_shared[kR * kB];
  const int t = static_cast<int>(threadIdx.x);
  const int r = t / kB;
  const int ii = t - r * kB;
  const index_t first = color.first + static_cast<index_t>(blockIdx.x) * kR;
  const index_t last = min(first + kR, color.first + color.count);
  const index_t I = first + r;
  const bool mine = r < kR && I < last;
  const index_t group_begin = __ldg(a.row_ptr + first);
  const index_t group_end = __ldg(a.row_ptr + last);
  index_t row_begin = 0;
  index_t row_end = 0;
  double sum = 0.0;
  if (mine) {
    row_begin = __ldg(a.row_ptr + I);
    row_end = __ldg(a.row_ptr + I + 1);
    sum = b[static_cast<size_type>(I) * kB + ii];
  }
  // As the BSR product's coefficient kernel: the team's blocks are one contiguous range,
  // streamed in chunks, kLoadBatch unconditional loads per thread in flight (the diagonal
  // blocks' products too: they are skipped when the rows add theirs).
  for (index_t c0 = group_begin; c0 < group_end; c0 += kChunkBlocks) {  // uniform in the team
    const index_t c1 = min(c0 + kChunkBlocks, group_end);
    const int count = (c1 - c0) * kBB;
    bsr::cuda::stage_products(a, c0, count, kB, kBB, x, products);
    __syncthreads();
    if (mine) {
      const index_t k_begin = max(row_begin, c0);
      const index_t k_end = min(row_end, c1);
      for (index_t k = k_begin; k < k_end; ++k) {
        if (__ldg(a.col_idx + k) == I) continue;
        const double* row = products + (k - c0) * kBB + ii * kB;
#pragma unroll
        for (int c = 0; c < kB; ++c) sum = __dsub_rn(sum, row[c]);
      }
    }
    __syncthreads();  // the next chunk overwrites the products
  }
  if (mine) t_shared[r * kB + ii] = sum;
  __syncthreads();
  if (mine) update_entry<kB>(inverse, I, ii, omega, t_shared + r * kB, x);
}

template <int kB>
constexpr int lanes_per_row() {
  return kB == 1 ? 8 : kB == 2 ? 16 : 32;
}

template <int kB, class V, class W>
__global__ void __launch_bounds__(kThreads)
    warp_sweep_kernel(BsrView<V> a, ColorRange color, const W* __restrict__ inverse, double omega,
                      const double* __restrict__ b, double* x) {
  constexpr int kBB = kB * kB;
  constexpr int kL = lanes_per_row<kB>();
  const size_type thread = blockIdx.x * static_cast<size_type>(kThreads) + threadIdx.x;
  const size_type slot = thread / kL;
  const int lane = static_cast<int>(thread % kL);
  const bool active = slot < color.count;  // the same for the kL lanes of a row
  double acc[kB];
#pragma unroll
  for (int c = 0; c < kB; ++c) acc[c] = 0.0;
  index_t I = 0;
  if (active) {
    I = color.first + static_cast<index_t>(slot);
    const index_t row_begin = __ldg(a.row_ptr + I);
    const int total = (__ldg(a.row_ptr + I + 1) - row_begin) * kBB;
    const V* values = a.values + static_cast<size_type>(row_begin) * kBB;
#pragma unroll 4
    for (int q = lane; q < total; q += kL) {
      const int block = q / kBB;
      const int rem = q - block * kBB;
      const int row = rem / kB;
      const int column = rem - row * kB;
      const index_t J = __ldg(a.col_idx + row_begin + block);
      if (J != I) {
        const double p = __dmul_rn(static_cast<double>(load_value(values + q, a.stream_values)),
                                   __ldg(x + static_cast<size_type>(J) * kB + column));
#pragma unroll
        for (int c = 0; c < kB; ++c) acc[c] = c == row ? __dadd_rn(acc[c], p) : acc[c];
      }
    }
  }
#pragma unroll
  for (int c = 0; c < kB; ++c) {
#pragma unroll
    for (int width = kL / 2; width > 0; width /= 2) {
      acc[c] = __dadd_rn(acc[c], __shfl_xor_sync(0xffffffffu, acc[c], width, kL));
    }
  }
  if (active && lane < kB) {
    double t[kB];
#pragma unroll
    for (int c = 0; c < kB; ++c) t[c] = __dsub_rn(b[static_cast<size_type>(I) * kB + c], acc[c]);
    update_entry<kB>(inverse, I, lane, omega, t, x);
  }
}

/// The kB values of one block row and the kB entries of x at xb, with 16-byte loads where kB
/// and the value type allow (the arrays are allocated 256-byte aligned, and kB even keeps every
/// block row and x block 16-byte aligned).
template <int kB, class V>
__device__ __forceinline__ void load_row(const V* row, const double* xb, bool stream, V (&v)[kB],
                                         double (&xv)[kB]) {
  if constexpr (kB % 2 == 0) {
#pragma unroll
    for (int c = 0; c < kB / 2; ++c) {
      const double2 pair = __ldg(reinterpret_cast<const double2*>(xb) + c);
      xv[2 * c] = pair.x;
      xv[2 * c + 1] = pair.y;
    }
  } else {
#pragma unroll
    for (int c = 0; c < kB; ++c) xv[c] = __ldg(xb + c);
  }
  if constexpr (std::is_same_v<V, double> && kB % 2 == 0) {
#pragma unroll
    for (int c = 0; c < kB / 2; ++c) {
      const double2* p = reinterpret_cast<const double2*>(row) + c;
      const double2 pair = stream ? __ldcs(p) : __ldg(p);
      v[2 * c] = pair.x;
      v[2 * c + 1] = pair.y;
    }
  } else if constexpr (std::is_same_v<V, float> && kB % 4 == 0) {
#pragma unroll
    for (int c = 0; c < kB / 4; ++c) {
      const float4* p = reinterpret_cast<const float4*>(row) + c;
      const float4 quad = stream ? __ldcs(p) : __ldg(p);
      v[4 * c] = quad.x;
      v[4 * c + 1] = quad.y;
      v[4 * c + 2] = quad.z;
      v[4 * c + 3] = quad.w;
    }
  } else {
#pragma unroll
    for (int c = 0; c < kB; ++c) v[c] = load_value(row + c, stream);
  }
}

/// block_row variant: thread ii of block row r of the team subtracts row ii of each
/// off-diagonal block times x from b_ii in the reference's order, then D_I^-1 from shared memory.
template <int kB, class V, class W>
__global__ void __launch_bounds__(kThreads)
    block_row_sweep_kernel(BsrView<V> a, ColorRange color, const W* __restrict__ inverse,
                           double omega, const double* __restrict__ b, double* x) {
  constexpr int kR = kThreads / kB;
  __shared__ double t_shared[kR * kB];
  const int t = static_cast<int>(threadIdx.x);
  const int r = t / kB;
  const int ii = t - r * kB;
  const index_t slot = static_cast<index_t>(blockIdx.x) * kR + r;
  const bool mine = r < kR && slot < color.count;
  const index_t I = color.first + slot;
  if (mine) {
    double sum = b[static_cast<size_type>(I) * kB + ii];
    const index_t end = __ldg(a.row_ptr + I + 1);
#pragma unroll 4
    for (index_t k = __ldg(a.row_ptr + I); k < end; ++k) {
      const index_t J = __ldg(a.col_idx + k);
      if (J == I) continue;
      const V* row = a.values + (static_cast<size_type>(k) * kB + ii) * kB;
      const double* xb = x + static_cast<size_type>(J) * kB;
      V v[kB];
      double xv[kB];
      load_row<kB>(row, xb, a.stream_values, v, xv);
#pragma unroll
      for (int c = 0; c < kB; ++c) {
        sum = __dsub_rn(sum, __dmul_rn(static_cast<double>(v[c]), xv[c]));
      }
    }
    t_shared[r * kB + ii] = sum;
  }
  __syncthreads();
  if (mine) update_entry<kB>(inverse, I, ii, omega, t_shared + r * kB, x);
}

__global__ void invert_permutation_kernel(size_type n, const index_t* order, index_t* position) {
  const size_type p = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x;
  if (p < n) position[order[p]] = static_cast<index_t>(p);
}

template <class V>
__global__ void row_lengths_kernel(BsrView<V> a, size_type n, const index_t* order,
                                   index_t* counts) {
  const size_type p = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x;
  if (p < n) counts[p] = a.row_ptr[order[p] + 1] - a.row_ptr[order[p]];
}

/// One warp per block row of the copy: the lanes copy its column indices and values coalesced.
template <class V>
__global__ void permute_fill_kernel(BsrView<V> a, size_type n, const index_t* order,
                                    const index_t* position, const index_t* row_ptr,
                                    index_t* col_idx, V* values) {
  const size_type p = (blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (p >= n) return;
  const size_type BB = static_cast<size_type>(a.block_size) * a.block_size;
  const index_t source = order[p];
  const index_t begin = a.row_ptr[source];
  const index_t count = a.row_ptr[source + 1] - begin;
  const index_t first = row_ptr[p];
  for (index_t k = lane; k < count; k += 32) col_idx[first + k] = position[a.col_idx[begin + k]];
  const V* from = a.values + begin * BB;
  V* to = values + first * BB;
  for (size_type q = lane; q < count * BB; q += 32) to[q] = from[q];
}

__global__ void gather_blocks_kernel(size_type n, int block_size, const index_t* map,
                                     const double* in, double* out) {
  const size_type i = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const size_type p = i / block_size;
  out[i] = in[static_cast<size_type>(map[p]) * block_size + (i - p * block_size)];
}

}  // namespace

void invert_permutation(const Backend& backend, Span<const index_t> order, Span<index_t> position) {
  const auto n = static_cast<size_type>(order.size());
  if (n == 0) return;
  Context& context = *backend.cuda_context();
  invert_permutation_kernel<<<blocks_for(n, kThreads, LLONG_MAX), kThreads, 0, context.stream>>>(
      n, order.data(), position.data());
  check_launch("block_relaxation::invert_permutation");
}

template <class V>
void permuted_row_lengths(const Backend& backend, const BsrView<V>& a, Span<const index_t> order,
                          Span<index_t> counts) {
  const auto n = static_cast<size_type>(order.size());
  if (n == 0) return;
  Context& context = *backend.cuda_context();
  row_lengths_kernel<<<blocks_for(n, kThreads, LLONG_MAX), kThreads, 0, context.stream>>>(
      a, n, order.data(), counts.data());
  check_launch("block_relaxation::permuted_row_lengths");
}

template <class V>
void permute_fill(const Backend& backend, const BsrView<V>& a, Span<const index_t> order,
                  Span<const index_t> position, const index_t* row_ptr, index_t* col_idx,
                  V* values) {
  const auto n = static_cast<size_type>(order.size());
  if (n == 0) return;
  Context& context = *backend.cuda_context();
  permute_fill_kernel<<<blocks_for(n * 32, kThreads, LLONG_MAX), kThreads, 0, context.stream>>>(
      a, n, order.data(), position.data(), row_ptr, col_idx, values);
  check_launch("block_relaxation::permute_fill");
}

void gather_blocks(const Backend& backend, int block_size, Span<const index_t> map,
                   Span<const double> in, Span<double> out) {
  const auto n = static_cast<size_type>(out.size());
  if (n == 0) return;
  Context& context = *backend.cuda_context();
  gather_blocks_kernel<<<blocks_for(n, kThreads, LLONG_MAX), kThreads, 0, context.stream>>>(
      n, block_size, map.data(), in.data(), out.data());
  check_launch("block_relaxation::gather_blocks");
}

template <class V, class W>
index_t invert_diagonal_blocks(const Backend& backend, const BsrView<V>& a, Span<W> inverse) {
  if (a.num_block_rows == 0) return -1;
  Context& context = *backend.cuda_context();
  DeviceScratch first_bad(context, sizeof(long long));
  KRYFLOW_CUDA_CHECK(
      cudaMemsetAsync(first_bad.as<long long>(), 0, sizeof(long long), context.stream));
  KRYFLOW_CUDA_CHECK(
      cudaMemsetAsync(first_bad.as<unsigned int>(), 0xFF, sizeof(unsigned int), context.stream));
  with_block_size(a.block_size, "block_relaxation::invert_diagonal_blocks", [&](auto bs) {
    constexpr int kB = decltype(bs)::value;
    invert_kernel<kB><<<blocks_for(a.num_block_rows, 128, LLONG_MAX), 128, 0, context.stream>>>(
        a, inverse.data(), first_bad.as<unsigned int>());
  });
  check_launch("block_relaxation::invert_diagonal_blocks");
  long long bad = 0;
  kernels::cuda::read_integers(context, first_bad.as<long long>(), 1, &bad);
  const auto first = static_cast<unsigned int>(bad & 0xFFFFFFFFll);
  return first == 0xFFFFFFFFu ? index_t{-1} : static_cast<index_t>(first);
}

template <class W>
void block_diagonal_apply(const Backend& backend, int block_size, Span<const W> inverse,
                          double omega, Span<const double> r, Span<double> z) {
  const auto n = static_cast<size_type>(r.size());
  if (n == 0) return;
  Context& context = *backend.cuda_context();
  with_block_size(block_size, "block_relaxation::block_diagonal_apply", [&](auto bs) {
    constexpr int kB = decltype(bs)::value;
    block_apply_kernel<kB><<<blocks_for(n, kThreads, LLONG_MAX), kThreads, 0, context.stream>>>(
        n, inverse.data(), omega, r.data(), z.data());
  });
  check_launch("block_relaxation::block_diagonal_apply");
}

template <class V, class W>
void multicolor_sweep(const Backend& backend, const BsrView<V>& a, SweepVariant variant,
                      Span<const W> inverse, ColorRange color, double omega, Span<const double> b,
                      Span<double> x) {
  if (color.count == 0) return;
  Context& context = *backend.cuda_context();
  with_block_size(a.block_size, "block_relaxation::multicolor_sweep", [&](auto bs) {
    constexpr int kB = decltype(bs)::value;
    constexpr int kR = kThreads / kB;
    const auto teams = static_cast<unsigned int>((color.count + kR - 1) / kR);
    if (variant == SweepVariant::coefficient) {
      coefficient_sweep_kernel<kB><<<teams, kThreads, 0, context.stream>>>(
          a, color, inverse.data(), omega, b.data(), x.data());
    } else if (variant == SweepVariant::block_row) {
      block_row_sweep_kernel<kB><<<teams, kThreads, 0, context.stream>>>(a, color, inverse.data(),
                                                                         omega, b.data(), x.data());
    } else {
      const size_type threads = static_cast<size_type>(color.count) * lanes_per_row<kB>();
      warp_sweep_kernel<kB>
          <<<blocks_for(threads, kThreads, LLONG_MAX), kThreads, 0, context.stream>>>(
              a, color, inverse.data(), omega, b.data(), x.data());
    }
  });
  check_launch("block_relaxation::multicolor_sweep");
}

KRYFLOW_BLOCK_RELAXATION_INSTANTIATIONS

}  // namespace kryflow::kernels::block_relaxation::cuda
