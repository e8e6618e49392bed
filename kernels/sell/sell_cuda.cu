// CUDA SELL-C-sigma kernels: a thread per sorted position (row), C threads per slice, and the
// conversion from CSR on the device (CUB radix sort within windows, CUB scan of slice sizes).
//
// Thread p of the product kernels owns sorted position p (slice p / C, row p % C of it) and walks
// the slice column-major: entry j of the C rows of a slice is contiguous, so the loads of one
// slice coalesce (with C = 32 a warp is a slice; Kreutzer et al. 2014, and the interleaved CRS of
// the Parallel Toolbox). Each thread issues kLoadBatch independent loads before it uses them and
// adds its row's products in order, so its sum is the CSR reference's bit for bit (decision
// 002); the _rn intrinsics keep fused multiply-add out whatever the compiler flags. The fused
// x·y adds each block's 256 terms with block_sum and, in the last block to finish, the block
// sums in the order of grid_sum's second stage (sell.hpp) in per-matrix scratch.
#include <cuda_runtime.h>
#include <cub/cub.cuh>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"
#include "kernels/backend/device_scratch.cuh"
#include "kernels/backend/reduction.cuh"
#include "kernels/sell/sell.hpp"

namespace kryflow::kernels::sell::cuda {
namespace {

using kernels::cuda::block_sum;
using kernels::cuda::check_launch;
using kernels::cuda::Context;
using kernels::cuda::DeviceScratch;
using size_type = long long;

constexpr int kBlock = kDotGroup;
/// Entries each thread loads before it uses them (independent loads in flight per thread).
constexpr int kLoadBatch = 4;

enum class Mode {
  product,      // y = A x
  residual,     // y = b - A x
  product_dot,  // y = A x, returns x·y
  diagonal,     // y_i = sum of the stored a_ii
};

/// Thread 0 receives v[0] + ... + v[n-1] in the order of grid_sum's second stage: thread j adds
/// v[j], v[j + 256], ... in order from 0 (read through L2), then block_sum. Every thread calls
/// it. The same order as kernels/spmv/spmv_cuda.cu's ordered_sum.
__device__ double ordered_sum(const double* v, size_type n) {
  double total = 0.0;
  for (size_type q = threadIdx.x; q < n; q += kBlock) total = __dadd_rn(total, __ldcg(v + q));
  double sums[1] = {total};
  block_sum<kBlock, 1>(sums);
  return sums[0];
}

/// Sorted position blockIdx.x * 256 + threadIdx.x: its row's sum, written to y in original
/// order (b - sum for the residual); for product_dot also the x·y grid sum into *result.
template <int C, class T, Mode kMode>
__global__ void __launch_bounds__(kBlock)
    sell_kernel(const SellView<T> a, const double* __restrict__ x, const double* b, double* y,
                double* result) {
  const size_type p = static_cast<size_type>(blockIdx.x) * kBlock + threadIdx.x;
  const bool mine = p < a.num_rows;
  double sum = 0.0;
  index_t row = 0;
  if (mine) {
    const size_type s = p / C;
    row = __ldg(a.permutation + p);
    const size_type base = __ldg(a.slice_ptr + s) + p % C;
    const index_t width = __ldg(a.slice_width + s);
    const index_t* cols = a.col_idx + base;
    const T* vals = a.values + base;
    if constexpr (kMode == Mode::diagonal) {
      for (index_t j = 0; j < width; ++j) {
        const size_type k = static_cast<size_type>(j) * C;
        if (__ldg(cols + k) == row) sum = __dadd_rn(sum, static_cast<double>(__ldg(vals + k)));
      }
    } else {
      index_t j = 0;
#pragma unroll 1
      for (; j + kLoadBatch <= width; j += kLoadBatch) {
        index_t c[kLoadBatch];
        T v[kLoadBatch];
#pragma unroll
        for (int u = 0; u < kLoadBatch; ++u) {
          const size_type k = static_cast<size_type>(j + u) * C;
          c[u] = __ldcs(cols + k);  // streamed once: evict first, keep x in the caches
          v[u] = __ldcs(vals + k);
        }
#pragma unroll
        for (int u = 0; u < kLoadBatch; ++u) {
          sum = __dadd_rn(sum, __dmul_rn(static_cast<double>(v[u]), __ldg(x + c[u])));
        }
      }
      for (; j < width; ++j) {
        const size_type k = static_cast<size_type>(j) * C;
        sum = __dadd_rn(
            sum, __dmul_rn(static_cast<double>(__ldcs(vals + k)), __ldg(x + __ldcs(cols + k))));
      }
    }
    y[row] = kMode == Mode::residual ? __dsub_rn(b[row], sum) : sum;
  }
  if constexpr (kMode == Mode::product_dot) {
    // The group sums are added by dot_finish_kernel, launched next (same order as before: no
    // completion count, fence or second barrier in each group).
    double term[1] = {mine ? __dmul_rn(__ldg(x + row), sum) : 0.0};
    kernels::cuda::block_sum_once<kBlock, 1>(term);
    if (threadIdx.x == 0) a.block_partials[blockIdx.x] = term[0];
  }
  (void)result;
}

/// x·y of sell_spmv_dot: the group sums added in the order of ordered_sum, one block.
__global__ void __launch_bounds__(kBlock)
    dot_finish_kernel(const double* partials, size_type count, double* result) {
  const double total = ordered_sum(partials, count);
  if (threadIdx.x == 0) *result = total;
}

template <class T, Mode kMode>
void launch(const Backend& backend, const SellView<T>& a, const double* x, const double* b,
            double* y, const char* name, double* result = nullptr) {
  if (a.num_rows == 0) return;
  Context& context = *backend.cuda_context();
  const auto groups = static_cast<unsigned int>(
      num_dot_groups(static_cast<std::int64_t>(a.num_slices) * a.slice_height));
  switch (a.slice_height) {
#define KRYFLOW_SELL_CASE(C)                                                             \
  case C:                                                                                \
    sell_kernel<C, T, kMode><<<groups, kBlock, 0, context.stream>>>(a, x, b, y, result); \
    break;
    KRYFLOW_SELL_CASE(1)
    KRYFLOW_SELL_CASE(2)
    KRYFLOW_SELL_CASE(4)
    KRYFLOW_SELL_CASE(8)
    KRYFLOW_SELL_CASE(16)
    KRYFLOW_SELL_CASE(32)
    KRYFLOW_SELL_CASE(64)
    KRYFLOW_SELL_CASE(128)
#undef KRYFLOW_SELL_CASE
    default:
      throw InvalidInput(std::string(name) + ": slice height " + std::to_string(a.slice_height) +
                         " is not compiled (1, 2, 4, ..., 128)");
  }
  check_launch(name);
  if constexpr (kMode == Mode::product_dot) {
    dot_finish_kernel<<<1, kBlock, 0, context.stream>>>(a.block_partials, groups, result);
    check_launch(name);
  }
}

// ---- Conversion ----

/// Sort keys: window index in the high 32 bits, INT32_MAX - length in the low ones, so an
/// ascending stable radix sort orders each window by length, longest first, ties in row order.
__global__ void layout_keys(CsrPattern csr, index_t sigma, unsigned long long* keys,
                            index_t* rows) {
  const size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= csr.num_rows) return;
  const index_t length = csr.row_ptr[i + 1] - csr.row_ptr[i];
  keys[i] = (static_cast<unsigned long long>(i / sigma) << 32) |
            static_cast<unsigned long long>(0x7fffffff - length);
  rows[i] = static_cast<index_t>(i);
}

/// slice_width[s] = longest row of slice s; sizes[s] = C * slice_width[s], sizes[num_slices] = 0.
__global__ void layout_widths(CsrPattern csr, int c, index_t num_slices, const index_t* permutation,
                              index_t* slice_width, std::int64_t* sizes) {
  const size_type s = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s > num_slices) return;
  if (s == num_slices) {
    sizes[s] = 0;
    return;
  }
  index_t width = 0;
  const size_type end = min(static_cast<size_type>(csr.num_rows), (s + 1) * c);
  for (size_type p = s * c; p < end; ++p) {
    const index_t i = permutation[p];
    width = max(width, csr.row_ptr[i + 1] - csr.row_ptr[i]);
  }
  slice_width[s] = width;
  sizes[s] = static_cast<std::int64_t>(c) * width;
}

template <class T>
__global__ void fill_kernel(const SellView<T> a, CsrPattern csr, const double* csr_values,
                            index_t* col_idx, T* values) {
  const size_type p = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int c = a.slice_height;
  if (p >= static_cast<size_type>(a.num_slices) * c) return;
  const size_type s = p / c;
  const size_type base = a.slice_ptr[s] + p % c;
  index_t begin = 0;
  index_t length = 0;
  index_t pad_col = 0;
  if (p < a.num_rows) {
    const index_t i = a.permutation[p];
    begin = csr.row_ptr[i];
    length = csr.row_ptr[i + 1] - begin;
    if (length > 0 && col_idx != nullptr) pad_col = csr.col_idx[begin + length - 1];
  }
  const index_t width = a.slice_width[s];
  for (index_t j = 0; j < width; ++j) {
    const size_type k = base + static_cast<size_type>(j) * c;
    const bool stored = j < length;
    if (col_idx != nullptr) col_idx[k] = stored ? csr.col_idx[begin + j] : pad_col;
    values[k] = stored ? static_cast<T>(csr_values[begin + j]) : T(0);
  }
}

template <class T>
__global__ void gather_kernel(const SellView<T> a, CsrPattern csr, index_t* csr_col_idx,
                              double* csr_values) {
  const size_type p = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= a.num_rows) return;
  const int c = a.slice_height;
  const size_type base = a.slice_ptr[p / c] + p % c;
  const index_t i = a.permutation[p];
  const index_t begin = csr.row_ptr[i];
  const index_t length = csr.row_ptr[i + 1] - begin;
  for (index_t j = 0; j < length; ++j) {
    const size_type k = base + static_cast<size_type>(j) * c;
    csr_col_idx[begin + j] = a.col_idx[k];
    csr_values[begin + j] = static_cast<double>(a.values[k]);
  }
}

unsigned int grid_for(size_type threads) {
  return static_cast<unsigned int>((threads + kBlock - 1) / kBlock);
}

}  // namespace

void sell_layout(const Backend& backend, const CsrPattern& csr, int slice_height, index_t sigma,
                 index_t* permutation, index_t* slice_width, std::int64_t* slice_ptr) {
  Context& context = *backend.cuda_context();
  const size_type n = csr.num_rows;
  const size_type num_slices = (n + slice_height - 1) / slice_height;
  if (n > 0) {
    DeviceScratch keys_in(context, sizeof(unsigned long long) * n);
    DeviceScratch keys_out(context, sizeof(unsigned long long) * n);
    DeviceScratch rows_in(context, sizeof(index_t) * n);
    // sigma == 1 keeps the order: the window index alone is the key, already sorted.
    const index_t window = sigma > 1 ? sigma : 1;
    layout_keys<<<grid_for(n), kBlock, 0, context.stream>>>(
        csr, window, keys_in.as<unsigned long long>(),
        sigma > 1 ? rows_in.as<index_t>() : permutation);
    check_launch("sell::sell_layout (keys)");
    if (sigma > 1) {
      const size_type num_windows = (n + window - 1) / window;
      const int end_bit =
          32 +
          std::max(1, static_cast<int>(std::bit_width(static_cast<std::uint64_t>(num_windows))));
      std::size_t temp_bytes = 0;
      KRYFLOW_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
          nullptr, temp_bytes, keys_in.as<unsigned long long>(), keys_out.as<unsigned long long>(),
          rows_in.as<index_t>(), permutation, n, 0, end_bit, context.stream));
      DeviceScratch temp(context, temp_bytes);
      KRYFLOW_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
          temp.as<void>(), temp_bytes, keys_in.as<unsigned long long>(),
          keys_out.as<unsigned long long>(), rows_in.as<index_t>(), permutation, n, 0, end_bit,
          context.stream));
    }
  }
  DeviceScratch sizes(context, sizeof(std::int64_t) * (num_slices + 1));
  layout_widths<<<grid_for(num_slices + 1), kBlock, 0, context.stream>>>(
      csr, slice_height, static_cast<index_t>(num_slices), permutation, slice_width,
      sizes.as<std::int64_t>());
  check_launch("sell::sell_layout (widths)");
  std::size_t temp_bytes = 0;
  KRYFLOW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, sizes.as<std::int64_t>(),
                                                   slice_ptr, num_slices + 1, context.stream));
  DeviceScratch temp(context, temp_bytes);
  KRYFLOW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.as<void>(), temp_bytes,
                                                   sizes.as<std::int64_t>(), slice_ptr,
                                                   num_slices + 1, context.stream));
}

template <class T>
void sell_fill(const Backend& backend, const SellView<T>& a, const CsrPattern& csr,
               const double* csr_values, index_t* col_idx, T* values) {
  const size_type positions = static_cast<size_type>(a.num_slices) * a.slice_height;
  if (positions == 0) return;
  Context& context = *backend.cuda_context();
  fill_kernel<T>
      <<<grid_for(positions), kBlock, 0, context.stream>>>(a, csr, csr_values, col_idx, values);
  check_launch("sell::sell_fill");
}

template <class T>
void sell_gather(const Backend& backend, const SellView<T>& a, const CsrPattern& csr,
                 index_t* csr_col_idx, double* csr_values) {
  if (a.num_rows == 0) return;
  Context& context = *backend.cuda_context();
  gather_kernel<T>
      <<<grid_for(a.num_rows), kBlock, 0, context.stream>>>(a, csr, csr_col_idx, csr_values);
  check_launch("sell::sell_gather");
}

template <class T>
void sell_spmv(const Backend& backend, const SellView<T>& a, Span<const double> x, Span<double> y) {
  launch<T, Mode::product>(backend, a, x.data(), nullptr, y.data(), "sell::sell_spmv");
}

template <class T>
void sell_residual(const Backend& backend, const SellView<T>& a, Span<const double> b,
                   Span<const double> x, Span<double> r) {
  launch<T, Mode::residual>(backend, a, x.data(), b.data(), r.data(), "sell::sell_residual");
}

template <class T>
void sell_spmv_dot(const Backend& backend, const SellView<T>& a, Span<const double> x,
                   Span<double> y, double* result) {
  if (a.num_rows == 0) {
    KRYFLOW_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(double), backend.cuda_context()->stream));
    return;
  }
  launch<T, Mode::product_dot>(backend, a, x.data(), nullptr, y.data(), "sell::sell_spmv_dot",
                               result);
}

template <class T>
void sell_diagonal(const Backend& backend, const SellView<T>& a, Span<double> d) {
  launch<T, Mode::diagonal>(backend, a, nullptr, nullptr, d.data(), "sell::sell_diagonal");
}

#define KRYFLOW_SELL_INSTANTIATE(T)                                                                \
  template void sell_fill<T>(const Backend&, const SellView<T>&, const CsrPattern&, const double*, \
                             index_t*, T*);                                                        \
  template void sell_gather<T>(const Backend&, const SellView<T>&, const CsrPattern&, index_t*,    \
                               double*);                                                           \
  template void sell_spmv<T>(const Backend&, const SellView<T>&, Span<const double>,               \
                             Span<double>);                                                        \
  template void sell_residual<T>(const Backend&, const SellView<T>&, Span<const double>,           \
                                 Span<const double>, Span<double>);                                \
  template void sell_spmv_dot<T>(const Backend&, const SellView<T>&, Span<const double>,           \
                                 Span<double>, double*);                                           \
  template void sell_diagonal<T>(const Backend&, const SellView<T>&, Span<double>);
KRYFLOW_SELL_INSTANTIATE(double)
KRYFLOW_SELL_INSTANTIATE(float)
#undef KRYFLOW_SELL_INSTANTIATE

}  // namespace kryflow::kernels::sell::cuda
