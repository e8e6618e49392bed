// CUDA block relaxation kernels (block_relaxation.hpp), templated on B = 1..8, the value type V
// and the inverse type W.
//
// invert_diagonal_blocks: one thread per block row runs block_rows.hpp's elimination (the
// reference's bits); the first failing block row is an atomicMin read back once.
// block_diagonal_apply: one thread per scalar row, the reference's order (its bits).
// The sweeps are in block_sweep_cuda.cu, the factorizations in block_factor_cuda.cu. The split
// kernels take one warp per block row.
#include <cuda_runtime.h>
#include <math.h>

#include <climits>
#include <cstdint>
#include <type_traits>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/device_scratch.cuh"
#include "kernels/block_relaxation/block_relaxation.hpp"
#include "kernels/block_relaxation/block_rows.hpp"

namespace kryflow::kernels::block_relaxation::cuda {
namespace {

using kernels::cuda::blocks_for;
using kernels::cuda::check_launch;
using kernels::cuda::Context;
using kernels::cuda::DeviceScratch;
using size_type = long long;

constexpr int kThreads = 256;

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

template <int kB, class V, class W>
__global__ void invert_blocks_kernel(index_t count, const V* blocks, W* inverse,
                                     unsigned int* first_bad) {
  const size_type I = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x;
  if (I >= count) return;
  if (!invert_block<kB>(blocks + I * kB * kB, inverse + I * kB * kB)) {
    atomicMin(first_bad, static_cast<unsigned int>(I));
  }
}

__global__ void invert_permutation_kernel(size_type n, const index_t* order, index_t* position) {
  const size_type p = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x;
  if (p < n) position[order[p]] = static_cast<index_t>(p);
}

__global__ void split_lengths_kernel(sparse_setup::PatternView a, size_type n, const index_t* order,
                                     const index_t* position, index_t* lower, index_t* upper) {
  const size_type p = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x;
  if (p < n) split_row_lengths(a, order, position, static_cast<index_t>(p), lower, upper);
}

/// One warp per block row: lane l places the row's blocks l, l + 32, ... (split_place).
__global__ void split_pattern_kernel(sparse_setup::PatternView a, size_type n, const index_t* order,
                                     const index_t* position, const index_t* lower_ptr,
                                     const index_t* upper_ptr, index_t* lower_col,
                                     index_t* upper_col, index_t* lower_source,
                                     index_t* upper_source, index_t* diagonal_source) {
  const size_type p = (blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (p >= n) return;
  const auto row = static_cast<index_t>(p);
  // No lane of the row writes its diagonal_source before lane 0's -1: the stored diagonal is
  // placed after the warp meets.
  if (lane == 0) diagonal_source[row] = -1;
  __syncwarp();
  const index_t source = order[row];
  for (index_t k = a.row_ptr[source] + lane; k < a.row_ptr[source + 1]; k += 32) {
    split_place(a, order, position, row, k, lower_ptr, upper_ptr, lower_col, upper_col,
                lower_source, upper_source, diagonal_source);
  }
}

template <class V>
__global__ void gather_values_kernel(size_type n, int block_entries, const index_t* source,
                                     const V* in, V* out) {
  const size_type i = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const size_type k = i / block_entries;
  const index_t from = source[k];
  out[i] =
      from >= 0 ? in[static_cast<size_type>(from) * block_entries + (i - k * block_entries)] : V(0);
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

void split_lengths(const Backend& backend, const sparse_setup::PatternView& a,
                   Span<const index_t> order, Span<const index_t> position, Span<index_t> lower,
                   Span<index_t> upper) {
  const auto n = static_cast<size_type>(order.size());
  if (n == 0) return;
  Context& context = *backend.cuda_context();
  split_lengths_kernel<<<blocks_for(n, kThreads, LLONG_MAX), kThreads, 0, context.stream>>>(
      a, n, order.data(), position.data(), lower.data(), upper.data());
  check_launch("block_relaxation::split_lengths");
}

void split_pattern(const Backend& backend, const sparse_setup::PatternView& a,
                   Span<const index_t> order, Span<const index_t> position,
                   const index_t* lower_ptr, const index_t* upper_ptr, index_t* lower_col,
                   index_t* upper_col, index_t* lower_source, index_t* upper_source,
                   index_t* diagonal_source) {
  const auto n = static_cast<size_type>(order.size());
  if (n == 0) return;
  Context& context = *backend.cuda_context();
  split_pattern_kernel<<<blocks_for(n * 32, kThreads, LLONG_MAX), kThreads, 0, context.stream>>>(
      a, n, order.data(), position.data(), lower_ptr, upper_ptr, lower_col, upper_col, lower_source,
      upper_source, diagonal_source);
  check_launch("block_relaxation::split_pattern");
}

template <class V>
void gather_values(const Backend& backend, int block_entries, Span<const index_t> source,
                   const V* in, V* out) {
  const auto n = static_cast<size_type>(source.size()) * block_entries;
  if (n == 0) return;
  Context& context = *backend.cuda_context();
  gather_values_kernel<<<blocks_for(n, kThreads, LLONG_MAX), kThreads, 0, context.stream>>>(
      n, block_entries, source.data(), in, out);
  check_launch("block_relaxation::gather_values");
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

/// Runs launch(first_bad) (kernels that atomicMin a failing block row into *first_bad) and
/// returns the smallest failing block row, or -1. One wait.
template <class Launch>
index_t first_failure(Context& context, const char* who, Launch&& launch) {
  DeviceScratch first_bad(context, sizeof(long long));
  KRYFLOW_CUDA_CHECK(
      cudaMemsetAsync(first_bad.as<long long>(), 0, sizeof(long long), context.stream));
  KRYFLOW_CUDA_CHECK(
      cudaMemsetAsync(first_bad.as<unsigned int>(), 0xFF, sizeof(unsigned int), context.stream));
  launch(first_bad.as<unsigned int>());
  check_launch(who);
  long long bad = 0;
  kernels::cuda::read_integers(context, first_bad.as<long long>(), 1, &bad);
  const auto first = static_cast<unsigned int>(bad & 0xFFFFFFFFll);
  return first == 0xFFFFFFFFu ? index_t{-1} : static_cast<index_t>(first);
}

template <class V, class W>
index_t invert_diagonal_blocks(const Backend& backend, const BsrView<V>& a, Span<W> inverse) {
  if (a.num_block_rows == 0) return -1;
  Context& context = *backend.cuda_context();
  const char* who = "block_relaxation::invert_diagonal_blocks";
  return first_failure(context, who, [&](unsigned int* first_bad) {
    with_block_size(a.block_size, who, [&](auto bs) {
      constexpr int kB = decltype(bs)::value;
      invert_kernel<kB><<<blocks_for(a.num_block_rows, 128, LLONG_MAX), 128, 0, context.stream>>>(
          a, inverse.data(), first_bad);
    });
  });
}

template <class V, class W>
index_t invert_blocks(const Backend& backend, int block_size, index_t count, const V* blocks,
                      W* inverse) {
  if (count == 0) return -1;
  Context& context = *backend.cuda_context();
  const char* who = "block_relaxation::invert_blocks";
  return first_failure(context, who, [&](unsigned int* first_bad) {
    with_block_size(block_size, who, [&](auto bs) {
      constexpr int kB = decltype(bs)::value;
      invert_blocks_kernel<kB><<<blocks_for(count, 128, LLONG_MAX), 128, 0, context.stream>>>(
          count, blocks, inverse, first_bad);
    });
  });
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

KRYFLOW_BLOCK_RELAXATION_SETUP_INSTANTIATIONS

}  // namespace kryflow::kernels::block_relaxation::cuda
