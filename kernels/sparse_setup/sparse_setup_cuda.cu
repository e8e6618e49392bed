// CUDA sparse setup kernels: CUB scans and radix sorts (SpGEMM: spgemm_cuda.cu). Every kernel
// gives the reference's bits:
//   - scans and counts are integer sums (associative, any order);
//   - transpose_fill stable-radix-sorts the entries by column, so each row of a^T lists its
//     sources in increasing entry order, which is the reference's row order.
#include <cuda_runtime.h>

#include <bit>
#include <cstdint>
#include <cub/cub.cuh>
#include <limits>
#include <string>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"
#include "kernels/backend/device_scratch.cuh"
#include "kernels/sparse_setup/sparse_setup.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::sparse_setup::cuda {
namespace {

using kernels::cuda::blocks_for;
using kernels::cuda::check_launch;
using kernels::cuda::Context;
using kernels::cuda::DeviceScratch;
using kernels::cuda::read_integers;
using size_type = long long;

constexpr int kBlock = 256;
Context& context_of(const Backend& backend) {
  return *backend.cuda_context();
}

// ---------------------------------------------------------------------------------------------
// exclusive_scan

/// total = sum of counts in 64 bits (integer sums: any order gives the same total).
__global__ void sum_counts(const index_t* counts, size_type n, unsigned long long* total) {
  using BlockReduce = cub::BlockReduce<long long, kBlock>;
  __shared__ typename BlockReduce::TempStorage storage;
  long long sum = 0;
  for (size_type i = blockIdx.x * size_type{kBlock} + threadIdx.x; i < n;
       i += size_type{gridDim.x} * kBlock) {
    sum += counts[i];
  }
  sum = BlockReduce(storage).Sum(sum);
  if (threadIdx.x == 0) atomicAdd(total, static_cast<unsigned long long>(sum));
}

/// Counts up to which a scan runs in one block (small_scan_kernel) instead of cub's device scan
/// after a separate total: one launch instead of three kernels and two memsets. An AMG setup
/// scans tens of such arrays (H200, OpenFOAM pressure matrix: 50 scans in one setup).
constexpr int kSmallScanThreads = 512;
constexpr int kSmallScanItems = 8;
constexpr size_type kSmallScanTile = size_type{kSmallScanThreads} * kSmallScanItems;
constexpr size_type kSmallScanCounts = 8 * kSmallScanTile;

/// Shared-memory slot of a tile's count i: one padding word per 32, so that the blocked reads
/// (thread t reads t * kSmallScanItems + k) fall in distinct banks.
__device__ __forceinline__ int staged_slot(int i) {
  return i + i / 32;
}

/// offsets[0] = 0, offsets[1..n] = the inclusive sum of counts and, unless null, total = the sum
/// in 64 bits: one block walks the counts in tiles of kSmallScanTile, carrying the prefix. Each
/// tile is loaded and stored coalesced through shared memory and scanned blocked (thread t
/// holds counts t * kSmallScanItems ...): with the blocked global accesses of a thread's own
/// counts, a tile of 16 K counts took 15 us on the H200, the loads and stores of one
/// multiprocessor touching a sector per thread and item. The block scan is cub's warp-scan
/// variant on 512 threads (H200, time per launch: 3.7 us for up to 2,000 counts and 9.7 us for
/// 23,325, where 1,024 threads with the raking variant took 7.2 and 17.3 us). Integer sums: the
/// same values as the device-wide scan.
__global__ void __launch_bounds__(kSmallScanThreads)
    small_scan_kernel(const index_t* counts, size_type n, index_t* offsets,
                      unsigned long long* total) {
  using Scan = cub::BlockScan<long long, kSmallScanThreads, cub::BLOCK_SCAN_WARP_SCANS>;
  __shared__ typename Scan::TempStorage storage;
  __shared__ index_t staged[kSmallScanTile + kSmallScanTile / 32];
  __shared__ long long carry;
  if (threadIdx.x == 0) {
    carry = 0;
    offsets[0] = 0;
  }
  for (size_type base = 0; base < n; base += kSmallScanTile) {
#pragma unroll
    for (int k = 0; k < kSmallScanItems; ++k) {
      const int i = k * kSmallScanThreads + static_cast<int>(threadIdx.x);
      staged[staged_slot(i)] = base + i < n ? counts[base + i] : 0;
    }
    __syncthreads();  // the tile is staged, and carry is written
    long long items[kSmallScanItems];
    const int first = static_cast<int>(threadIdx.x) * kSmallScanItems;
#pragma unroll
    for (int k = 0; k < kSmallScanItems; ++k) items[k] = staged[staged_slot(first + k)];
    long long tile_total = 0;
    Scan(storage).InclusiveSum(items, items, tile_total);  // its barriers follow every read above
    const long long prefix = carry;
#pragma unroll
    for (int k = 0; k < kSmallScanItems; ++k) {
      staged[staged_slot(first + k)] = static_cast<index_t>(prefix + items[k]);
    }
    __syncthreads();  // the sums are staged, and every thread has read carry
#pragma unroll
    for (int k = 0; k < kSmallScanItems; ++k) {
      const int i = k * kSmallScanThreads + static_cast<int>(threadIdx.x);
      if (base + i < n) offsets[base + i + 1] = staged[staged_slot(i)];
    }
    if (threadIdx.x == 0) carry = prefix + tile_total;
    __syncthreads();  // the stores have read staged, and carry is written
  }
  if (threadIdx.x == 0 && total != nullptr) *total = static_cast<unsigned long long>(carry);
}

/// offsets[0] = 0, offsets[1..n] = the inclusive sum of counts and, unless null, *total = the
/// sum in 64 bits, all queued (no wait): small_scan_kernel for at most kSmallScanCounts counts,
/// else a grid sum for the total and cub's device scan.
void scan_into(Context& context, Span<const index_t> counts, Span<index_t> offsets,
               unsigned long long* total, const char* name) {
  const auto n = static_cast<size_type>(counts.size());
  if (n > 0 && n <= kSmallScanCounts) {
    small_scan_kernel<<<1, kSmallScanThreads, 0, context.stream>>>(counts.data(), n, offsets.data(),
                                                                   total);
    check_launch(name);
    return;
  }
  KRYFLOW_CUDA_CHECK(cudaMemsetAsync(offsets.data(), 0, sizeof(index_t), context.stream));
  if (total != nullptr) {
    KRYFLOW_CUDA_CHECK(cudaMemsetAsync(total, 0, sizeof(unsigned long long), context.stream));
  }
  if (n == 0) return;
  if (total != nullptr) {
    sum_counts<<<blocks_for(n, kBlock, 1024), kBlock, 0, context.stream>>>(counts.data(), n, total);
    check_launch(name);
  }
  std::size_t temp_bytes = 0;
  KRYFLOW_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, counts.data(),
                                                   offsets.data() + 1, n, context.stream));
  DeviceScratch temp(context, temp_bytes);
  KRYFLOW_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.as<void>(), temp_bytes, counts.data(),
                                                   offsets.data() + 1, n, context.stream));
}

// ---------------------------------------------------------------------------------------------
// transpose

/// counts[j] += 1 for every stored entry of column j: nnz atomic increments, grid-stride over
/// the entries (nnz is read on the device).
__global__ void count_columns(PatternView a, index_t* counts) {
  const size_type nnz = a.row_ptr[a.num_rows];
  for (size_type k = blockIdx.x * size_type{kBlock} + threadIdx.x; k < nnz;
       k += size_type{gridDim.x} * kBlock) {
    atomicAdd(&counts[a.col_idx[k]], 1);
  }
}

__global__ void iota(index_t* values, size_type n) {
  for (size_type k = blockIdx.x * size_type{kBlock} + threadIdx.x; k < n;
       k += size_type{gridDim.x} * kBlock) {
    values[k] = static_cast<index_t>(k);
  }
}

/// at_col_idx[position] = row of a's entry source[position].
__global__ void transpose_rows(PatternView a, const index_t* source, index_t* at_col_idx,
                               size_type nnz) {
  for (size_type k = blockIdx.x * size_type{kBlock} + threadIdx.x; k < nnz;
       k += size_type{gridDim.x} * kBlock) {
    at_col_idx[k] = row_of_entry(a, source[k]);
  }
}

__global__ void gather_kernel(const double* x, const index_t* map, double* y, size_type n) {
  for (size_type k = blockIdx.x * size_type{kBlock} + threadIdx.x; k < n;
       k += size_type{gridDim.x} * kBlock) {
    y[k] = x[map[k]];
  }
}

// ---------------------------------------------------------------------------------------------
// pattern_symmetric

/// sums[0] += sum of pair_hash(i, j), sums[1] += sum of pair_hash(j, i) over the entries
/// (modulo 2^64: any order gives the same sums). One thread per row.
__global__ void pair_hash_sums(PatternView a, unsigned long long* sums) {
  using BlockReduce = cub::BlockReduce<unsigned long long, kBlock>;
  __shared__ typename BlockReduce::TempStorage storage;
  unsigned long long forward = 0, backward = 0;
  for (size_type row = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x;
       row < a.num_rows; row += static_cast<size_type>(gridDim.x) * blockDim.x) {
    const auto i = static_cast<index_t>(row);
    for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const index_t j = a.col_idx[k];
      forward += pair_hash(i, j);
      backward += pair_hash(j, i);
    }
  }
  forward = BlockReduce(storage).Sum(forward);
  __syncthreads();
  backward = BlockReduce(storage).Sum(backward);
  if (threadIdx.x == 0) {
    atomicAdd(sums, forward);
    atomicAdd(sums + 1, backward);
  }
}

/// The scalar pattern of a block pattern (sparse_setup.hpp: expand_blocks). One thread per
/// scalar row: row r of block row I starts at B^2 row_ptr_b[I] + r B (row_ptr_b[I+1] -
/// row_ptr_b[I]).
__global__ void expand_blocks_kernel(PatternView blocks, index_t B, index_t* row_ptr,
                                     index_t* col_idx, index_t* block_position) {
  const size_type rows = static_cast<size_type>(blocks.num_rows) * B;
  for (size_type row = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x; row < rows;
       row += static_cast<size_type>(gridDim.x) * blockDim.x) {
    const auto I = static_cast<index_t>(row / B);
    const auto r = static_cast<index_t>(row % B);
    const index_t begin = blocks.row_ptr[I], end = blocks.row_ptr[I + 1];
    index_t position = B * B * begin + r * B * (end - begin);
    for (index_t k = begin; k < end; ++k) {
      const index_t column = blocks.col_idx[k] * B;
      for (index_t c = 0; c < B; ++c, ++position) {
        col_idx[position] = column + c;
        block_position[position] = (k * B + r) * B + c;
      }
    }
    row_ptr[row + 1] = position;
    if (row == 0) row_ptr[0] = 0;
  }
}

/// *first = min(*first, i) over the rows i whose columns are not strictly increasing within
/// 0..num_cols-1. One thread per row.
__global__ void find_invalid_rows(PatternView a, int* first) {
  for (size_type row = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x;
       row < a.num_rows; row += static_cast<size_type>(gridDim.x) * blockDim.x) {
    const auto i = static_cast<index_t>(row);
    bool valid = true;
    for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1] && valid; ++k) {
      const index_t j = a.col_idx[k];
      valid = j >= 0 && j < a.num_cols && (k == a.row_ptr[i] || j > a.col_idx[k - 1]);
    }
    if (!valid) atomicMin(first, static_cast<int>(i));
  }
}

}  // namespace

void expand_blocks(const Backend& backend, const PatternView& blocks, index_t block_size,
                   index_t* row_ptr, index_t* col_idx, index_t* block_position) {
  Context& context = context_of(backend);
  const auto rows = static_cast<size_type>(blocks.num_rows) * block_size;
  if (rows == 0) {
    KRYFLOW_CUDA_CHECK(cudaMemsetAsync(row_ptr, 0, sizeof(index_t), context.stream));
    return;
  }
  expand_blocks_kernel<<<blocks_for(rows, kBlock, 4096), kBlock, 0, context.stream>>>(
      blocks, block_size, row_ptr, col_idx, block_position);
  check_launch("sparse_setup::expand_blocks");
}

index_t first_invalid_row(const Backend& backend, const PatternView& a) {
  if (a.num_rows == 0) return -1;
  Context& context = context_of(backend);
  DeviceScratch first(context, sizeof(long long));
  const long long none = std::numeric_limits<int>::max();
  // One long long slot: its low 32 bits (little endian) are the int the kernel lowers.
  KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(first.as<long long>(), &none, sizeof(long long),
                                     cudaMemcpyHostToDevice, context.stream));
  find_invalid_rows<<<blocks_for(a.num_rows, kBlock, 4096), kBlock, 0, context.stream>>>(
      a, reinterpret_cast<int*>(first.as<long long>()));
  check_launch("sparse_setup::first_invalid_row");
  long long host = 0;
  read_integers(context, first.as<long long>(), 1, &host);
  const auto row = static_cast<int>(host & 0xffffffffLL);
  return row == std::numeric_limits<int>::max() ? -1 : static_cast<index_t>(row);
}

bool pattern_symmetric(const Backend& backend, const PatternView& a) {
  if (a.num_rows != a.num_cols) return false;
  if (a.num_rows == 0) return true;
  Context& context = context_of(backend);
  DeviceScratch sums(context, 2 * sizeof(unsigned long long));
  KRYFLOW_CUDA_CHECK(cudaMemsetAsync(sums.as<unsigned long long>(), 0,
                                     2 * sizeof(unsigned long long), context.stream));
  pair_hash_sums<<<blocks_for(a.num_rows, kBlock, 4096), kBlock, 0, context.stream>>>(
      a, sums.as<unsigned long long>());
  check_launch("sparse_setup::pattern_symmetric");
  long long host[2] = {0, 0};
  read_integers(context, reinterpret_cast<const long long*>(sums.as<unsigned long long>()), 2,
                host);
  return host[0] == host[1];
}

std::int64_t exclusive_scan(const Backend& backend, Span<const index_t> counts,
                            Span<index_t> offsets) {
  Context& context = context_of(backend);
  if (counts.empty()) {
    KRYFLOW_CUDA_CHECK(cudaMemsetAsync(offsets.data(), 0, sizeof(index_t), context.stream));
    return 0;
  }
  // When the total fits 32 bits so does every prefix (counts are not negative), and otherwise
  // the result is refused below.
  DeviceScratch total(context, sizeof(unsigned long long));
  scan_into(context, counts, offsets, total.as<unsigned long long>(),
            "sparse_setup::exclusive_scan");
  long long host_total = 0;
  read_integers(context, reinterpret_cast<const long long*>(total.as<unsigned long long>()), 1,
                &host_total);
  if (host_total > std::numeric_limits<index_t>::max()) {
    throw NotSupported("sparse_setup::exclusive_scan: " + std::to_string(host_total) +
                       " entries exceed the 32-bit index range");
  }
  return host_total;
}

void exclusive_scan_bounded(const Backend& backend, Span<const index_t> counts,
                            Span<index_t> offsets, std::int64_t bound) {
  if (bound > std::numeric_limits<index_t>::max()) {
    throw NotSupported("sparse_setup::exclusive_scan_bounded: a bound of " + std::to_string(bound) +
                       " entries exceeds the 32-bit index range");
  }
  scan_into(context_of(backend), counts, offsets, nullptr, "sparse_setup::exclusive_scan_bounded");
}

void transpose_count(const Backend& backend, const PatternView& a, Span<index_t> counts) {
  Context& context = context_of(backend);
  if (counts.empty()) return;
  KRYFLOW_CUDA_CHECK(
      cudaMemsetAsync(counts.data(), 0, sizeof(index_t) * counts.size(), context.stream));
  if (a.num_rows == 0) return;
  const int sms = context.properties.multiProcessorCount;
  count_columns<<<static_cast<unsigned int>(8 * sms), kBlock, 0, context.stream>>>(a,
                                                                                   counts.data());
  check_launch("sparse_setup::transpose_count");
}

void transpose_fill(const Backend& backend, const PatternView& a, std::int64_t nnz,
                    const index_t* at_row_ptr, index_t* at_col_idx, index_t* source) {
  Context& context = context_of(backend);
  (void)at_row_ptr;  // the sorted columns' order is a^T's; its row pointers are not read
  if (a.num_rows == 0 || a.num_cols == 0 || nnz == 0) return;
  // A stable radix sort of (column, entry) pairs: entries of one column keep their order.
  DeviceScratch positions(context, sizeof(index_t) * static_cast<std::size_t>(nnz));
  DeviceScratch sorted_columns(context, sizeof(index_t) * static_cast<std::size_t>(nnz));
  iota<<<blocks_for(nnz, kBlock), kBlock, 0, context.stream>>>(positions.as<index_t>(), nnz);
  check_launch("sparse_setup::transpose_fill (positions)");
  const int end_bit =
      std::max(1, static_cast<int>(std::bit_width(static_cast<std::uint32_t>(a.num_cols - 1))));
  const auto* keys_in = reinterpret_cast<const unsigned int*>(a.col_idx);
  std::size_t temp_bytes = 0;
  KRYFLOW_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, temp_bytes, keys_in, sorted_columns.as<unsigned int>(), positions.as<index_t>(),
      source, static_cast<std::int64_t>(nnz), 0, end_bit, context.stream));
  DeviceScratch temp(context, temp_bytes);
  KRYFLOW_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      temp.as<void>(), temp_bytes, keys_in, sorted_columns.as<unsigned int>(),
      positions.as<index_t>(), source, static_cast<std::int64_t>(nnz), 0, end_bit, context.stream));
  transpose_rows<<<blocks_for(nnz, kBlock), kBlock, 0, context.stream>>>(a, source, at_col_idx,
                                                                         nnz);
  check_launch("sparse_setup::transpose_fill (rows)");
}

void gather(const Backend& backend, Span<const double> x, Span<const index_t> map, Span<double> y) {
  if (y.empty()) return;
  Context& context = context_of(backend);
  const auto n = static_cast<size_type>(y.size());
  gather_kernel<<<blocks_for(n, kBlock), kBlock, 0, context.stream>>>(x.data(), map.data(),
                                                                      y.data(), n);
  check_launch("sparse_setup::gather");
}

}  // namespace kryflow::kernels::sparse_setup::cuda
