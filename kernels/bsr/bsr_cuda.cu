// CUDA BSR kernels: the block_row and coefficient variants of bsr.hpp, templated on the value
// type and on B = 1..8 (B = 0: the runtime block size, for 9..32).
//
// Both variants run one cuda block of kGroupThreads threads per group of R = 256 / B block rows,
// thread t owning scalar row t of the group (block row t / B, row t % B of it; the last
// 256 - R B threads own none). block_row: each thread walks its block row's blocks and adds
// row t % B of each block from global memory. coefficient: the group's blocks are one contiguous
// range of coefficients; the threads stream it in chunks of kStage coefficients, thread t loading
// coefficients t, t + 256, ... (coalesced), multiplying each by its x entry into shared memory;
// after a barrier each thread adds its row's products of the chunk in block-then-column order.
// The fused x·y adds the threads' x_i y_i with block_sum, and the last group to finish adds the
// group sums in the order of grid_sum (kernels/backend/reduction.cuh), in per-matrix scratch.
// Multiplications and additions use the _rn intrinsics: no fused multiply-add whatever the flags.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/reduction.cuh"
#include "kernels/bsr/bsr.hpp"
#include "kernels/bsr/coefficient_stage.cuh"

namespace kryflow::kernels::bsr::cuda {
namespace {

using kernels::cuda::block_sum;
using kernels::cuda::check_launch;
using kernels::cuda::Context;
using size_type = long long;

constexpr int kThreads = kGroupThreads;
/// Threads per cuda block of block_row products of small matrices.
constexpr int kSmallThreads = 64;

enum class Mode { product, residual, product_dot };

/// Thread 0 receives v[0] + ... in the order of grid_sum's second stage: thread j adds v[j],
/// v[j + 256], ... in order from 0, then block_sum. Every thread of the block calls it.
__device__ double ordered_sum(const double* v, size_type n) {
  double total = 0.0;
  for (size_type q = threadIdx.x; q < n; q += kThreads) total = __dadd_rn(total, __ldcg(v + q));
  double sums[1] = {total};
  block_sum<kThreads, 1>(sums);
  return sums[0];
}

/// y = A x for the thread's row written (or r = b - A x), and for product_dot the x·y of the
/// group into the scratch; the last group to finish writes the total to *result.
template <Mode kMode, class V>
__device__ void finish(const BsrView<V>& a, bool mine, size_type row, double sum,
                       const double* __restrict__ x, const double* b, double* y, double* result) {
  if (mine) y[row] = kMode == Mode::residual ? __dsub_rn(b[row], sum) : sum;
  if constexpr (kMode == Mode::product_dot) {
    double term[1] = {mine ? __dmul_rn(__ldg(x + row), sum) : 0.0};
    block_sum<kThreads, 1>(term);
    __shared__ bool is_last;
    if (threadIdx.x == 0) {
      a.group_partials[blockIdx.x] = term[0];
      __threadfence();  // the partial is visible before the count says so
      is_last = atomicAdd(a.counter, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (is_last) {
      __threadfence();
      const double total = ordered_sum(a.group_partials, gridDim.x);
      if (threadIdx.x == 0) {
        *result = total;
        *a.counter = 0u;
      }
    }
  }
}

template <class V>
__device__ __forceinline__ double to_double(V v) {
  return static_cast<double>(v);
}

/// block_row variant: thread t adds row t % B of each block of block row first + t / B, in
/// cuda blocks of kT threads: kThreads for the fused dot (its groups), kSmallThreads for a
/// product or residual of a matrix too small to fill the GPU with groups (more cuda blocks
/// spread its loads over more SMs; each row's sum is the same).
template <int kB, Mode kMode, class V, int kT = kThreads>
__global__ void __launch_bounds__(kT)
    block_row_kernel(const BsrView<V> a, const double* __restrict__ x, const double* b, double* y,
                     double* result, bool aligned) {
  static_assert(kT == kThreads || kMode != Mode::product_dot, "the fused dot needs whole groups");
  const int B = kB > 0 ? kB : a.block_size;
  const int R = kT / B;
  const int t = static_cast<int>(threadIdx.x);
  const int r = t / B;
  const int ii = t - r * B;
  const index_t I = static_cast<index_t>(blockIdx.x) * R + r;
  const bool mine = r < R && I < a.num_block_rows;
  double sum = 0.0;
  if (mine) {
    const index_t end = __ldg(a.row_ptr + I + 1);
    // Unrolled so the loads of several blocks are in flight before their products are added
    // (the additions stay in block order): on small matrices the kernel is a latency chain.
#pragma unroll 4
    for (index_t k = __ldg(a.row_ptr + I); k < end; ++k) {
      const V* row = a.values + (static_cast<size_type>(k) * B + ii) * B;
      const double* xb = x + static_cast<size_type>(__ldg(a.col_idx + k)) * B;
      if constexpr (kB > 0) {
        V v[kB];
        double xv[kB];
        load_block_row<kB>(row, xb, a.stream_values, aligned, v, xv);
#pragma unroll
        for (int c = 0; c < kB; ++c) sum = __dadd_rn(sum, __dmul_rn(to_double(v[c]), xv[c]));
      } else {
        for (int c = 0; c < B; ++c) {
          const V value = a.stream_values ? __ldcs(row + c) : __ldg(row + c);
          sum = __dadd_rn(sum, __dmul_rn(to_double(value), __ldg(xb + c)));
        }
      }
    }
  }
  finish<kMode>(a, mine, static_cast<size_type>(I) * B + ii, sum, x, b, y, result);
}

/// coefficient variant: the group's coefficients staged through shared memory (file comment).
template <int kB, Mode kMode, class V>
__global__ void __launch_bounds__(kThreads)
    coefficient_kernel(const BsrView<V> a, const double* __restrict__ x, const double* b, double* y,
                       double* result) {
  __shared__ double products[kStage];
  const int B = kB > 0 ? kB : a.block_size;
  const int R = kThreads / B;
  const int t = static_cast<int>(threadIdx.x);
  const int r = t / B;
  const int ii = t - r * B;
  const index_t first = static_cast<index_t>(blockIdx.x) * R;
  const index_t last = min(first + R, a.num_block_rows);
  const index_t I = first + r;
  const bool mine = r < R && I < a.num_block_rows;
  const double sum = staged_row_sum<kB>(a, first, last, I, ii, mine, B, x, products);
  finish<kMode>(a, mine, static_cast<size_type>(I) * B + ii, sum, x, b, y, result);
}

template <int kB, Mode kMode, class V>
void launch_for(Context& context, const BsrView<V>& a, Variant variant, const double* x,
                const double* b, double* y, double* result) {
  const auto groups = static_cast<unsigned int>(num_groups(a.num_block_rows, a.block_size));
  const bool aligned = reinterpret_cast<std::uintptr_t>(x) % 16 == 0 &&
                       reinterpret_cast<std::uintptr_t>(a.values) % 16 == 0;
  if (variant == Variant::coefficient) {
    coefficient_kernel<kB, kMode, V><<<groups, kThreads, 0, context.stream>>>(a, x, b, y, result);
  } else if (kMode != Mode::product_dot &&
             groups < 2u * static_cast<unsigned int>(context.properties.multiProcessorCount)) {
    if constexpr (kMode != Mode::product_dot) {
      const index_t rows_per_block = kSmallThreads / a.block_size;  // B <= 32: at least 2
      const auto blocks =
          static_cast<unsigned int>((a.num_block_rows + rows_per_block - 1) / rows_per_block);
      block_row_kernel<kB, kMode, V, kSmallThreads>
          <<<blocks, kSmallThreads, 0, context.stream>>>(a, x, b, y, result, aligned);
    }
  } else {
    block_row_kernel<kB, kMode, V>
        <<<groups, kThreads, 0, context.stream>>>(a, x, b, y, result, aligned);
  }
}

template <Mode kMode, class V>
void launch(const Backend& backend, const BsrView<V>& a, Variant variant, const double* x,
            const double* b, double* y, const char* name, double* result = nullptr) {
  if (a.num_block_rows == 0) return;
  if (a.block_size < 1 || a.block_size > kMaxBlockSize) {
    throw InvalidInput(std::string(name) + ": block size must be 1.." +
                       std::to_string(kMaxBlockSize) + ", got " + std::to_string(a.block_size));
  }
  Context& context = *backend.cuda_context();
  switch (a.block_size) {
    case 1:
      launch_for<1, kMode>(context, a, variant, x, b, y, result);
      break;
    case 2:
      launch_for<2, kMode>(context, a, variant, x, b, y, result);
      break;
    case 3:
      launch_for<3, kMode>(context, a, variant, x, b, y, result);
      break;
    case 4:
      launch_for<4, kMode>(context, a, variant, x, b, y, result);
      break;
    case 5:
      launch_for<5, kMode>(context, a, variant, x, b, y, result);
      break;
    case 6:
      launch_for<6, kMode>(context, a, variant, x, b, y, result);
      break;
    case 7:
      launch_for<7, kMode>(context, a, variant, x, b, y, result);
      break;
    case 8:
      launch_for<8, kMode>(context, a, variant, x, b, y, result);
      break;
    default:
      launch_for<0, kMode>(context, a, variant, x, b, y, result);
      break;
  }
  check_launch(name);
}

/// d_i = 0 + a_ii from the diagonal block of row i's block row (binary search), else 0.
template <class V>
__global__ void __launch_bounds__(kThreads) diagonal_kernel(const BsrView<V> a, double* d) {
  const size_type i = static_cast<size_type>(blockIdx.x) * kThreads + threadIdx.x;
  const int B = a.block_size;
  if (i >= static_cast<size_type>(a.num_block_rows) * B) return;
  const auto I = static_cast<index_t>(i / B);
  const int ii = static_cast<int>(i - static_cast<size_type>(I) * B);
  index_t lo = __ldg(a.row_ptr + I);
  index_t hi = __ldg(a.row_ptr + I + 1);
  while (lo < hi) {  // first block with col_idx >= I
    const index_t mid = lo + (hi - lo) / 2;
    if (__ldg(a.col_idx + mid) < I) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  double sum = 0.0;
  if (lo < __ldg(a.row_ptr + I + 1) && __ldg(a.col_idx + lo) == I) {
    sum = __dadd_rn(sum, to_double(a.values[(static_cast<size_type>(lo) * B + ii) * B + ii]));
  }
  d[i] = sum;
}

template <class V>
__global__ void __launch_bounds__(kThreads)
    scatter_kernel(const index_t* position, const double* source, size_type n, V* values) {
  const size_type k = static_cast<size_type>(blockIdx.x) * kThreads + threadIdx.x;
  if (k < n) values[position[k]] = static_cast<V>(source[k]);
}

unsigned int blocks_for(size_type n) {
  return static_cast<unsigned int>((n + kThreads - 1) / kThreads);
}

}  // namespace

template <class V>
void bsr_spmv(const Backend& backend, const BsrView<V>& a, Variant variant, Span<const double> x,
              Span<double> y) {
  launch<Mode::product>(backend, a, variant, x.data(), nullptr, y.data(), "bsr::bsr_spmv");
}

template <class V>
void bsr_residual(const Backend& backend, const BsrView<V>& a, Variant variant,
                  Span<const double> b, Span<const double> x, Span<double> r) {
  launch<Mode::residual>(backend, a, variant, x.data(), b.data(), r.data(), "bsr::bsr_residual");
}

template <class V>
void bsr_spmv_dot(const Backend& backend, const BsrView<V>& a, Variant variant,
                  Span<const double> x, Span<double> y, double* result) {
  if (a.num_block_rows == 0) {
    KRYFLOW_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(double), backend.cuda_context()->stream));
    return;
  }
  launch<Mode::product_dot>(backend, a, variant, x.data(), nullptr, y.data(), "bsr::bsr_spmv_dot",
                            result);
}

template <class V>
void bsr_diagonal(const Backend& backend, const BsrView<V>& a, Span<double> d) {
  const size_type n = static_cast<size_type>(a.num_block_rows) * a.block_size;
  if (n == 0) return;
  Context& context = *backend.cuda_context();
  diagonal_kernel<V><<<blocks_for(n), kThreads, 0, context.stream>>>(a, d.data());
  check_launch("bsr::bsr_diagonal");
}

template <class V>
void bsr_scatter_values(const Backend& backend, Span<const index_t> position,
                        Span<const double> source, Span<V> values) {
  const auto n = static_cast<size_type>(position.size());
  if (n == 0) return;
  Context& context = *backend.cuda_context();
  scatter_kernel<V><<<blocks_for(n), kThreads, 0, context.stream>>>(position.data(), source.data(),
                                                                    n, values.data());
  check_launch("bsr::bsr_scatter_values");
}

#define KRYFLOW_BSR_INSTANTIATE(V)                                                              \
  template void bsr_spmv<V>(const Backend&, const BsrView<V>&, Variant, Span<const double>,     \
                            Span<double>);                                                      \
  template void bsr_residual<V>(const Backend&, const BsrView<V>&, Variant, Span<const double>, \
                                Span<const double>, Span<double>);                              \
  template void bsr_spmv_dot<V>(const Backend&, const BsrView<V>&, Variant, Span<const double>, \
                                Span<double>, double*);                                         \
  template void bsr_diagonal<V>(const Backend&, const BsrView<V>&, Span<double>);               \
  template void bsr_scatter_values<V>(const Backend&, Span<const index_t>, Span<const double>,  \
                                      Span<V>);
KRYFLOW_BSR_INSTANTIATE(double)
KRYFLOW_BSR_INSTANTIATE(float)
#undef KRYFLOW_BSR_INSTANTIATE

}  // namespace kryflow::kernels::bsr::cuda
