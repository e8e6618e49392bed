// CUDA sparse setup kernels: CUB scans and radix sorts, and a row-by-row SpGEMM with one warp
// per row (shared-memory hash tables) and one block per long row (shared-memory bitmaps over
// column windows). Every kernel gives the reference's bits:
//   - scans and counts are integer sums (associative, any order);
//   - transpose_fill stable-radix-sorts the entries by column, so each row of a^T lists its
//     sources in increasing entry order, which is the reference's row order;
//   - the symbolic phases write each row's columns sorted, whatever the insertion order;
//   - spgemm_numeric adds each c_ij's products in Gustavson's order: a warp walks the entries
//     a_ik of row i in order, and for each the stored b_kj in chunks of 32 consecutive entries,
//     one lane per entry; the columns of one chunk are distinct (one row of B), so every c_ij
//     receives at most one product per a_ik, and __syncwarp orders the chunks.
// Products and sums are rounded as on the host (the library compiles CUDA with --fmad=false).
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
constexpr int kWarp = 32;
/// Warps per block of the warp-per-row SpGEMM kernels.
constexpr int kRowWarps = 4;
/// Hash slots per warp of the symbolic phase: a row whose product count (sum of the lengths
/// of the rows of B it touches, an upper bound of its distinct columns) exceeds it goes to the
/// block-per-row path.
constexpr int kHashSlots = 2048;
/// Entries of C's row the numeric phase keeps in shared memory; longer rows accumulate in
/// c_values directly (global memory, same order, same bits).
constexpr int kNumericShared = 512;
/// Bitmap words of the block-per-row symbolic path: one window of 32 * kBitmapWords columns.
constexpr int kBitmapWords = 8192;
constexpr size_type kWindowColumns = size_type{32} * kBitmapWords;
/// Blocks of the block-per-row path (they loop over the long rows, whose number only the
/// device knows).
constexpr unsigned int kLongRowBlocks = 264;

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

/// The row holding entry k: the last r with row_ptr[r] <= k (binary search, log2(rows) steps).
__device__ index_t row_of_entry(const PatternView& a, index_t k) {
  index_t low = 0, high = a.num_rows;  // row_ptr[low] <= k < row_ptr[high]
  while (high - low > 1) {
    const index_t middle = low + (high - low) / 2;
    if (a.row_ptr[middle] <= k) {
      low = middle;
    } else {
      high = middle;
    }
  }
  return low;
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
// SpGEMM, symbolic phases

__device__ long long warp_sum(long long value) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  }
  return value;
}

/// Products of row i of A B: sum over a_ik of the length of row k of B (lanes of a warp).
__device__ long long row_products(const PatternView& a, const PatternView& b, index_t i, int lane) {
  long long products = 0;
  for (index_t p = a.row_ptr[i] + lane; p < a.row_ptr[i + 1]; p += kWarp) {
    const index_t k = a.col_idx[p];
    products += b.row_ptr[k + 1] - b.row_ptr[k];
  }
  return warp_sum(products);
}

/// Hash slots of a row with `products` (<= kHashSlots) products: a power of two, at least 32
/// and twice the products when that fits (the table never fills: distinct <= products).
__device__ unsigned int table_slots(long long products) {
  unsigned int slots = 32;
  while (slots < kHashSlots && slots < 2 * products) slots *= 2;
  return slots;
}

/// Inserts j into the hash table (slots a power of two, -1 empty); true when it was new.
__device__ bool hash_insert(index_t* table, unsigned int slots, index_t j) {
  unsigned int h = (static_cast<unsigned int>(j) * 2654435761u) & (slots - 1);
  while (true) {
    const index_t previous = atomicCAS(&table[h], -1, j);
    if (previous == -1) return true;
    if (previous == j) return false;
    h = (h + 1) & (slots - 1);
  }
}

/// One warp per row of C whose product count fits kHashSlots: the distinct columns go into a
/// shared hash table (sized 2x the product count, rounded to a power of two); kFill == false
/// writes their number to out[i], kFill == true writes them sorted to out + c_row_ptr[i]
/// (each lane ranks its keys against all keys: m^2 / 32 comparisons per lane for m columns).
/// Longer rows are appended to long_rows (any order: each row's output is its own).
/// Work per row: products + table size (clear, compact).
template <bool kFill>
__global__ void __launch_bounds__(kRowWarps* kWarp)
    symbolic_warp_rows(PatternView a, PatternView b, const index_t* c_row_ptr, index_t* out,
                       index_t* long_rows, unsigned int* long_count) {
  __shared__ index_t tables[kRowWarps][kHashSlots];
  const int warp = threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  index_t* table = tables[warp];
  for (size_type row = size_type{blockIdx.x} * kRowWarps + warp; row < a.num_rows;
       row += size_type{gridDim.x} * kRowWarps) {
    const auto i = static_cast<index_t>(row);
    const long long products = row_products(a, b, i, lane);
    if (products > kHashSlots) {
      if (lane == 0) long_rows[atomicAdd(long_count, 1u)] = i;
      continue;
    }
    const unsigned int slots = table_slots(products);
    for (unsigned int s = lane; s < slots; s += kWarp) table[s] = -1;
    __syncwarp();
    long long inserted = 0;
    for (index_t p = a.row_ptr[i] + lane; p < a.row_ptr[i + 1]; p += kWarp) {
      const index_t k = a.col_idx[p];
      for (index_t q = b.row_ptr[k]; q < b.row_ptr[k + 1]; ++q) {
        inserted += hash_insert(table, slots, b.col_idx[q]) ? 1 : 0;
      }
    }
    __syncwarp();
    if constexpr (!kFill) {
      const long long distinct = warp_sum(inserted);
      if (lane == 0) out[i] = static_cast<index_t>(distinct);
    } else {
      // Compact the keys to the front of the table, chunk by chunk (a key moves only to a
      // slot at or before its own, already read).
      unsigned int m = 0;
      for (unsigned int s0 = 0; s0 < slots; s0 += kWarp) {
        const index_t key = table[s0 + lane];  // slots is a multiple of 32
        __syncwarp();
        const unsigned int occupied = __ballot_sync(0xffffffffu, key != -1);
        if (key != -1) table[m + __popc(occupied & ((1u << lane) - 1u))] = key;
        m += __popc(occupied);
        __syncwarp();
      }
      const index_t base = c_row_ptr[i];
      const index_t length = c_row_ptr[i + 1] - base;
      for (unsigned int t = lane; t < m; t += kWarp) {
        const index_t key = table[t];
        index_t rank = 0;
        for (unsigned int u = 0; u < m; ++u) rank += table[u] < key ? 1 : 0;
        if (rank < length) out[base + rank] = key;
      }
    }
    __syncwarp();
  }
}

struct Smaller {
  __device__ index_t operator()(index_t x, index_t y) const { return y < x ? y : x; }
};
struct Larger {
  __device__ index_t operator()(index_t x, index_t y) const { return x < y ? y : x; }
};

/// One block per long row (from symbolic_warp_rows): the row's columns in [lo, hi] are marked
/// in a shared bitmap one window of kWindowColumns at a time, then counted (and with kFill
/// written in increasing order: a block scan of each thread's popcounts). Work per row:
/// windows * (products + kBitmapWords), windows = (hi - lo) / kWindowColumns + 1.
template <bool kFill>
__global__ void __launch_bounds__(kBlock)
    symbolic_long_rows(PatternView a, PatternView b, const index_t* c_row_ptr, index_t* out,
                       const index_t* long_rows, const unsigned int* long_count) {
  using BlockScan = cub::BlockScan<index_t, kBlock>;
  using BlockReduce = cub::BlockReduce<index_t, kBlock>;
  __shared__ unsigned int bitmap[kBitmapWords];
  __shared__ union {
    typename BlockScan::TempStorage scan;
    typename BlockReduce::TempStorage reduce;
  } storage;
  __shared__ index_t range[2];
  constexpr int kWordsPerThread = kBitmapWords / kBlock;
  const int warp = threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  const unsigned int rows = *long_count;
  for (unsigned int r = blockIdx.x; r < rows; r += gridDim.x) {
    const index_t i = long_rows[r];
    const index_t begin = a.row_ptr[i];
    const index_t end = a.row_ptr[i + 1];
    // Column range of the row's products.
    index_t lo = std::numeric_limits<index_t>::max();
    index_t hi = -1;
    for (index_t p = begin + threadIdx.x; p < end; p += kBlock) {
      const index_t k = a.col_idx[p];
      if (b.row_ptr[k + 1] > b.row_ptr[k]) {
        lo = min(lo, b.col_idx[b.row_ptr[k]]);
        hi = max(hi, b.col_idx[b.row_ptr[k + 1] - 1]);
      }
    }
    lo = BlockReduce(storage.reduce).Reduce(lo, Smaller{});
    __syncthreads();
    hi = BlockReduce(storage.reduce).Reduce(hi, Larger{});
    if (threadIdx.x == 0) {
      range[0] = lo;
      range[1] = hi;
    }
    __syncthreads();
    lo = range[0];
    hi = range[1];
    index_t written = 0;
    const index_t base = kFill ? c_row_ptr[i] : 0;
    for (size_type window = lo; window <= hi; window += kWindowColumns) {
      for (int w = threadIdx.x; w < kBitmapWords; w += kBlock) bitmap[w] = 0u;
      __syncthreads();
      for (index_t p = begin + warp; p < end; p += kBlock / kWarp) {
        const index_t k = a.col_idx[p];
        for (index_t q = b.row_ptr[k] + lane; q < b.row_ptr[k + 1]; q += kWarp) {
          const size_type offset = b.col_idx[q] - window;
          if (offset >= 0 && offset < kWindowColumns) {
            atomicOr(&bitmap[offset / 32], 1u << (offset % 32));
          }
        }
      }
      __syncthreads();
      // Thread t owns words [t * kWordsPerThread, (t + 1) * kWordsPerThread).
      index_t mine = 0;
      for (int w = 0; w < kWordsPerThread; ++w) {
        mine += __popc(bitmap[threadIdx.x * kWordsPerThread + w]);
      }
      index_t before = 0;
      index_t total = 0;
      BlockScan(storage.scan).ExclusiveSum(mine, before, total);
      if constexpr (kFill) {
        index_t position = base + written + before;
        for (int w = 0; w < kWordsPerThread; ++w) {
          const int word = threadIdx.x * kWordsPerThread + w;
          unsigned int bits = bitmap[word];
          while (bits != 0u) {
            const int bit = __ffs(bits) - 1;
            bits &= bits - 1u;
            out[position++] = static_cast<index_t>(window + size_type{32} * word + bit);
          }
        }
      }
      written += total;
      __syncthreads();  // the bitmap and scan storage are reused
    }
    if (!kFill && threadIdx.x == 0) out[i] = written;
    __syncthreads();
  }
}

/// Both symbolic phases: warp-per-row pass, then the long rows it found. No host wait.
template <bool kFill>
void symbolic(const Backend& backend, const PatternView& a, const PatternView& b,
              const index_t* c_row_ptr, index_t* out, const char* name) {
  if (a.num_rows == 0) return;
  Context& context = context_of(backend);
  DeviceScratch long_rows(context, sizeof(index_t) * static_cast<std::size_t>(a.num_rows));
  DeviceScratch long_count(context, sizeof(unsigned int));
  KRYFLOW_CUDA_CHECK(
      cudaMemsetAsync(long_count.as<unsigned int>(), 0, sizeof(unsigned int), context.stream));
  symbolic_warp_rows<kFill>
      <<<blocks_for(a.num_rows, kRowWarps), kRowWarps * kWarp, 0, context.stream>>>(
          a, b, c_row_ptr, out, long_rows.as<index_t>(), long_count.as<unsigned int>());
  check_launch(name);
  symbolic_long_rows<kFill><<<kLongRowBlocks, kBlock, 0, context.stream>>>(
      a, b, c_row_ptr, out, long_rows.as<index_t>(), long_count.as<unsigned int>());
  check_launch(name);
}

// ---------------------------------------------------------------------------------------------
// SpGEMM, numeric phase

/// First position t in columns[0, m) with columns[t] >= j.
__device__ index_t lower_bound(const index_t* columns, index_t m, index_t j) {
  index_t low = 0, high = m;
  while (low < high) {
    const index_t middle = low + (high - low) / 2;
    if (columns[middle] < j) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return low;
}

/// One warp per row of C, in Gustavson's order (see the file comment): row i's pattern and
/// sums sit in shared memory when it has at most kNumericShared entries, else the sums
/// accumulate in c_values (global memory, the same order). Work per row: products * log2(m)
/// for the column search, in sum over a_ik of ceil(len(B_k) / 32) warp steps.
__global__ void __launch_bounds__(kRowWarps* kWarp)
    numeric_warp_rows(MatrixView a, MatrixView b, PatternView c, double* c_values) {
  __shared__ index_t shared_columns[kRowWarps][kNumericShared];
  __shared__ double shared_sums[kRowWarps][kNumericShared];
  const int warp = threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  const PatternView& ap = a.pattern;
  const PatternView& bp = b.pattern;
  for (size_type row = size_type{blockIdx.x} * kRowWarps + warp; row < ap.num_rows;
       row += size_type{gridDim.x} * kRowWarps) {
    const auto i = static_cast<index_t>(row);
    const index_t c_begin = c.row_ptr[i];
    const index_t m = c.row_ptr[i + 1] - c_begin;
    const bool in_shared = m <= kNumericShared;
    const index_t* columns = in_shared ? shared_columns[warp] : c.col_idx + c_begin;
    double* sums = in_shared ? shared_sums[warp] : c_values + c_begin;
    for (index_t t = lane; t < m; t += kWarp) {
      if (in_shared) shared_columns[warp][t] = c.col_idx[c_begin + t];
      sums[t] = 0.0;
    }
    __threadfence_block();
    __syncwarp();
    for (index_t p = ap.row_ptr[i]; p < ap.row_ptr[i + 1]; ++p) {
      const index_t k = ap.col_idx[p];
      const double a_ik = a.values[p];
      const index_t q_end = bp.row_ptr[k + 1];
      for (index_t q0 = bp.row_ptr[k]; q0 < q_end; q0 += kWarp) {
        const index_t q = q0 + lane;
        if (q < q_end) {
          const index_t j = bp.col_idx[q];
          const double product = a_ik * b.values[q];
          const index_t t = lower_bound(columns, m, j);
          if (t < m && columns[t] == j) sums[t] += product;
        }
        __threadfence_block();
        __syncwarp();
      }
    }
    if (in_shared) {
      for (index_t t = lane; t < m; t += kWarp) c_values[c_begin + t] = sums[t];
    }
    __syncwarp();
  }
}

}  // namespace

std::int64_t exclusive_scan(const Backend& backend, Span<const index_t> counts,
                            Span<index_t> offsets) {
  Context& context = context_of(backend);
  const auto n = static_cast<size_type>(counts.size());
  KRYFLOW_CUDA_CHECK(cudaMemsetAsync(offsets.data(), 0, sizeof(index_t), context.stream));
  if (n == 0) return 0;
  DeviceScratch total(context, sizeof(unsigned long long));
  KRYFLOW_CUDA_CHECK(cudaMemsetAsync(total.as<unsigned long long>(), 0, sizeof(unsigned long long),
                                     context.stream));
  sum_counts<<<blocks_for(n, kBlock, 1024), kBlock, 0, context.stream>>>(
      counts.data(), n, total.as<unsigned long long>());
  check_launch("sparse_setup::exclusive_scan (total)");
  // An inclusive sum into offsets[1..n]; when the total fits 32 bits so does every prefix
  // (counts are not negative), and otherwise the result is refused below.
  std::size_t temp_bytes = 0;
  KRYFLOW_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, counts.data(),
                                                   offsets.data() + 1, n, context.stream));
  DeviceScratch temp(context, temp_bytes);
  KRYFLOW_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.as<void>(), temp_bytes, counts.data(),
                                                   offsets.data() + 1, n, context.stream));
  long long host_total = 0;
  read_integers(context, reinterpret_cast<const long long*>(total.as<unsigned long long>()), 1,
                &host_total);
  if (host_total > std::numeric_limits<index_t>::max()) {
    throw NotSupported("sparse_setup::exclusive_scan: " + std::to_string(host_total) +
                       " entries exceed the 32-bit index range");
  }
  return host_total;
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

void transpose_fill(const Backend& backend, const PatternView& a, const index_t* at_row_ptr,
                    index_t* at_col_idx, index_t* source) {
  Context& context = context_of(backend);
  if (a.num_rows == 0 || a.num_cols == 0) return;
  // The sort needs the entry count on the host: one wait.
  long long nnz = 0;
  {
    DeviceScratch count(context, sizeof(long long));
    KRYFLOW_CUDA_CHECK(
        cudaMemsetAsync(count.as<long long>(), 0, sizeof(long long), context.stream));
    KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(count.as<long long>(), at_row_ptr + a.num_cols,
                                       sizeof(index_t), cudaMemcpyDeviceToDevice, context.stream));
    read_integers(context, count.as<long long>(), 1, &nnz);  // little endian: the low word
  }
  if (nnz == 0) return;
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

void spgemm_count(const Backend& backend, const PatternView& a, const PatternView& b,
                  Span<index_t> counts) {
  symbolic<false>(backend, a, b, nullptr, counts.data(), "sparse_setup::spgemm_count");
}

void spgemm_fill(const Backend& backend, const PatternView& a, const PatternView& b,
                 const index_t* c_row_ptr, index_t* c_col_idx) {
  symbolic<true>(backend, a, b, c_row_ptr, c_col_idx, "sparse_setup::spgemm_fill");
}

void spgemm_numeric(const Backend& backend, const MatrixView& a, const MatrixView& b,
                    const PatternView& c, double* c_values) {
  if (a.pattern.num_rows == 0) return;
  Context& context = context_of(backend);
  numeric_warp_rows<<<blocks_for(a.pattern.num_rows, kRowWarps), kRowWarps * kWarp, 0,
                      context.stream>>>(a, b, c, c_values);
  check_launch("sparse_setup::spgemm_numeric");
}

}  // namespace kryflow::kernels::sparse_setup::cuda
