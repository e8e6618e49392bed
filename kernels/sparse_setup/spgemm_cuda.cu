// CUDA SpGEMM C = A B (sparse_setup.hpp): rows binned by their product count, a group of lanes
// per row sized to its bin, and one block per row past the largest bin. Every phase gives the
// reference's bits:
//   - the symbolic phases write each row's columns sorted, whatever the insertion order;
//   - spgemm_numeric adds each c_ij's products in Gustavson's order: a group walks the row's
//     products (a_ik in order, for each the stored b_kj) in chunks of one product per lane; a
//     chunk may span several rows of B, so its lanes add their products entry a_ik by entry,
//     with a __syncwarp over the group after each (the columns of one entry's products are
//     distinct, so every c_ij receives at most one product per step, and the barrier orders the
//     steps and the group's shared-memory accesses, CUDA Programming Guide, "Synchronization
//     Functions").
// Products and sums are rounded as on the host (the library compiles CUDA with --fmad=false).
//
// Binning (after Nagasaka, Nukada, Matsuoka, "High-performance and memory-saving sparse general
// matrix-matrix multiplication for NVIDIA Pascal GPU", ICPP 2017): the products of row i, sum
// over a_ik of the length of row k of B, bound its distinct columns. Bin b < kGroupBins holds
// the rows with at most kBinProducts(b) = 32 * 2^b products (the numeric phase also bounds the
// length of C's row by it); a group of min(32, 4 * 2^b) lanes computes each, with a shared hash
// table of twice that many slots (symbolic) or a shared copy of the row's columns and sums
// (numeric), except the symbolic phases of bin 0, one thread per row with the row's columns in
// its own array (on the H200 the finest R (A P) of classical AMG on 7-point 200^3 took 0.015 s
// instead of 0.026 s; a thread per row was slower than the groups in the numeric phase: 0.020
// against 0.017 s for the value-only Galerkin products of the same problem). Rows past the
// last group bin go to the long-row kernels: a block per row with a shared bitmap over column
// windows (symbolic), a warp per row accumulating in shared memory or, past kNumericShared entries,
// in c_values itself (numeric). Nothing waits for the host: the bin kernels loop over the bin sizes
// the device counted. spgemm_fill_numeric (a re-setup that kept only C's row pointers, and
// setup after the count) bins by products once; the rows of bin 0 get their columns and sums in
// one pass, a thread per row with 16 columns and sums in registers; the longer rows the fill's
// then the numeric phase's groups. A product of at most kMergedRows rows runs all group bins of
// a phase in one launch (merged_* kernels: each block takes tiles of the non-empty bins in
// turn), since there the launches of mostly empty bins, not the work, set its time. A product
// of at most kDenseRows rows into at most kDenseColumns columns (the coarse levels' products)
// skips the bins: a block per row marks its columns in a shared bitmap and adds its products
// into a shared dense row, staged so that each entry of A costs one barrier and no dependent
// load (dense_* kernels).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cub/cub.cuh>
#include <limits>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"
#include "kernels/backend/device_scratch.cuh"
#include "kernels/backend/lane_group.cuh"
#include "kernels/sparse_setup/sparse_setup.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::sparse_setup::cuda {
namespace {

using kernels::cuda::check_launch;
using kernels::cuda::Context;
using kernels::cuda::DeviceScratch;
using kernels::cuda::lane_group_mask;
using size_type = long long;

constexpr int kBlock = 256;
constexpr int kWarp = 32;
/// Bins of rows computed by lane groups; bin kGroupBins holds the longer rows.
constexpr int kGroupBins = 7;
constexpr int kBins = kGroupBins + 1;
/// Most products of a row of bin b (b < kGroupBins).
__host__ __device__ constexpr long long bin_products(int b) {
  return 32LL << b;
}
/// Lanes per row in bin b: 4, 8, 16, then a warp.
__host__ __device__ constexpr int bin_lanes(int b) {
  return (4 << b) < kWarp ? (4 << b) : kWarp;
}
/// Threads per block of the group kernels (fewer for the largest tables, see below).
constexpr int kGroupBlock = 128;
/// Entries of C's row the long-row numeric kernel keeps in shared memory; longer rows
/// accumulate in c_values directly (global memory, same order, same bits).
constexpr int kNumericShared = 512;
/// Warps per block of the long-row numeric kernel.
constexpr int kRowWarps = 4;
/// Bitmap words of the block-per-row symbolic path: one window of 32 * kBitmapWords columns.
constexpr int kBitmapWords = 8192;
constexpr size_type kWindowColumns = size_type{32} * kBitmapWords;
/// Most resident blocks per multiprocessor the bin kernels are launched with (they loop over
/// their bin, whose size only the device knows).
constexpr unsigned int kBlocksPerSm = 16;

Context& context_of(const Backend& backend) {
  return *backend.cuda_context();
}

/// The bin of a row with `size` products (numeric: the larger of products and C's row length).
__device__ int bin_of(long long size) {
  int b = 0;
  while (b < kGroupBins && size > bin_products(b)) ++b;
  return b;
}

/// Products of row i of A B, one thread.
__device__ long long row_products(const PatternView& a, const PatternView& b, index_t i) {
  long long products = 0;
  for (index_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
    const index_t k = a.col_idx[p];
    products += b.row_ptr[k + 1] - b.row_ptr[k];
  }
  return products;
}

// ---------------------------------------------------------------------------------------------
// Binning: row_bin[i] and the bin sizes, then the rows of each bin listed contiguously (bin b
// from the sum of the sizes of bins < b; any order within a bin: each row's output is its own).

/// Adds 1 to counters[bin] for each calling thread, one shared atomic per distinct bin of the
/// warp; returns the counter's value before this thread's increment.
__device__ unsigned int add_to_bin(unsigned int* counters, int bin) {
  const unsigned int active = __activemask();
  const unsigned int same = __match_any_sync(active, bin);
  const int lane = threadIdx.x % kWarp;
  const int leader = __ffs(same) - 1;
  unsigned int base = 0;
  if (lane == leader) base = atomicAdd(&counters[bin], static_cast<unsigned int>(__popc(same)));
  base = __shfl_sync(same, base, leader);
  return base + __popc(same & ((1u << lane) - 1u));
}

/// Products of row i of A B summed by a group of kLanes lanes (each lane strides over A's
/// row); every lane gets the total.
template <int kLanes>
__device__ long long group_row_products(const PatternView& a, const PatternView& b, index_t i,
                                        unsigned int mask, int lane) {
  long long products = 0;
  for (index_t p = a.row_ptr[i] + lane; p < a.row_ptr[i + 1]; p += kLanes) {
    const index_t k = a.col_idx[p];
    products += b.row_ptr[k + 1] - b.row_ptr[k];
  }
  for (int offset = kLanes / 2; offset > 0; offset /= 2) {
    products += __shfl_xor_sync(mask, products, offset, kLanes);
  }
  return products;
}

/// kNumeric: bins by max(products, length of C's row) (the numeric tables hold C's row).
/// kLanes lanes per row: 1 for many short rows, a warp for a few long ones (the rows of R in
/// R (A P) on the coarse levels, whose serial walk by one thread took 0.13-0.18 ms).
template <bool kNumeric, int kLanes>
__global__ void __launch_bounds__(kBlock)
    count_bins(PatternView a, PatternView b, const index_t* c_row_ptr, unsigned char* row_bin,
               unsigned int* bin_sizes) {
  __shared__ unsigned int counts[kBins];
  if (threadIdx.x < kBins) counts[threadIdx.x] = 0;
  __syncthreads();
  constexpr int kGroups = kBlock / kLanes;
  const int lane = threadIdx.x % kLanes;
  // Every lane of a block takes the same number of turns (rows past the end included), so the
  // group's shuffles see all its lanes.
  const size_type rows = (size_type{a.num_rows} + kGroups - 1) / kGroups * kGroups;
  for (size_type row = blockIdx.x * size_type{kGroups} + threadIdx.x / kLanes; row < rows;
       row += size_type{gridDim.x} * kGroups) {
    const auto i = static_cast<index_t>(row < a.num_rows ? row : a.num_rows - 1);
    long long size = 0;
    if constexpr (kLanes == 1) {
      size = row_products(a, b, i);
    } else {
      size = group_row_products<kLanes>(a, b, i, lane_group_mask<kLanes>(), lane);
    }
    if constexpr (kNumeric) {
      const long long length = c_row_ptr[i + 1] - c_row_ptr[i];
      size = length > size ? length : size;
    }
    if (lane == 0 && row < a.num_rows) {
      const int bin = bin_of(size);
      row_bin[i] = static_cast<unsigned char>(bin);
      if constexpr (kLanes == 1) {
        add_to_bin(counts, bin);  // one shared atomic per distinct bin of the warp
      } else {
        atomicAdd(&counts[bin], 1u);
      }
    }
  }
  __syncthreads();
  if (threadIdx.x < kBins && counts[threadIdx.x] > 0) {
    atomicAdd(&bin_sizes[threadIdx.x], counts[threadIdx.x]);
  }
}

/// First entry of bin `bin` in the bin list.
__device__ unsigned int bin_begin(const unsigned int* bin_sizes, int bin) {
  unsigned int begin = 0;
  for (int b = 0; b < bin; ++b) begin += bin_sizes[b];
  return begin;
}

/// Lists the rows of each bin: each block takes tiles of kBlock rows, counts them per bin in
/// shared memory, reserves room in each bin with one atomic (bin_cursor), then writes.
__global__ void __launch_bounds__(kBlock)
    fill_bins(index_t n, const unsigned char* row_bin, const unsigned int* bin_sizes,
              unsigned int* bin_cursor, index_t* bin_list) {
  __shared__ unsigned int counts[kBins];
  __shared__ unsigned int bases[kBins];
  const size_type tiles = (size_type{n} + kBlock - 1) / kBlock;
  for (size_type tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    if (threadIdx.x < kBins) counts[threadIdx.x] = 0;
    __syncthreads();
    const size_type row = tile * kBlock + threadIdx.x;
    int bin = 0;
    unsigned int local = 0;
    if (row < n) {
      bin = row_bin[row];
      local = add_to_bin(counts, bin);
    }
    __syncthreads();
    if (threadIdx.x < kBins) {
      bases[threadIdx.x] = bin_begin(bin_sizes, static_cast<int>(threadIdx.x)) +
                           atomicAdd(&bin_cursor[threadIdx.x], counts[threadIdx.x]);
    }
    __syncthreads();
    if (row < n) bin_list[bases[bin] + local] = static_cast<index_t>(row);
    __syncthreads();  // counts and bases are reused by the next tile
  }
}

/// The rows of A in bins (device memory of the calling scope's lifetime).
class Bins {
 public:
  Bins(Context& context, index_t n)
      : row_bin_(context, static_cast<std::size_t>(n)),
        counters_(context, 2 * kBins * sizeof(unsigned int)),
        list_(context, sizeof(index_t) * static_cast<std::size_t>(n)) {}
  unsigned char* row_bin() const { return row_bin_.as<unsigned char>(); }
  unsigned int* sizes() const { return counters_.as<unsigned int>(); }
  unsigned int* cursors() const { return counters_.as<unsigned int>() + kBins; }
  index_t* list() const { return list_.as<index_t>(); }

 private:
  DeviceScratch row_bin_;
  DeviceScratch counters_;
  DeviceScratch list_;
};

unsigned int grid_for(long long rows, int rows_per_block, const Context& context,
                      unsigned int blocks_per_sm = kBlocksPerSm) {
  const long long needed = (std::max(rows, 1LL) + rows_per_block - 1) / rows_per_block;
  const long long resident =
      static_cast<long long>(blocks_per_sm) * context.properties.multiProcessorCount;
  return static_cast<unsigned int>(std::max(1LL, std::min(needed, resident)));
}

template <bool kNumeric, int kLanes>
void launch_count_bins(Context& context, const PatternView& a, const PatternView& b,
                       const index_t* c_row_ptr, const Bins& bins) {
  count_bins<kNumeric, kLanes>
      <<<grid_for(a.num_rows, kBlock / kLanes, context), kBlock, 0, context.stream>>>(
          a, b, c_row_ptr, bins.row_bin(), bins.sizes());
}

/// count_bins with `lanes` (32, 8 or 1) lanes per row.
template <bool kNumeric>
void launch_count_bins(Context& context, const PatternView& a, const PatternView& b,
                       const index_t* c_row_ptr, const Bins& bins, int lanes) {
  if (lanes == kWarp) {
    launch_count_bins<kNumeric, kWarp>(context, a, b, c_row_ptr, bins);
  } else if (lanes == 8) {
    launch_count_bins<kNumeric, 8>(context, a, b, c_row_ptr, bins);
  } else {
    launch_count_bins<kNumeric, 1>(context, a, b, c_row_ptr, bins);
  }
}

/// Bins the rows of A (c_row_ptr given: by the numeric phase's rule). Two kernels, no wait.
void bin_rows(Context& context, const PatternView& a, const PatternView& b,
              const index_t* c_row_ptr, const Bins& bins) {
  KRYFLOW_CUDA_CHECK(
      cudaMemsetAsync(bins.sizes(), 0, 2 * kBins * sizeof(unsigned int), context.stream));
  const unsigned int blocks = grid_for(a.num_rows, kBlock, context);
  // Lanes per row of A: a warp while the rows give fewer than 8 resident blocks of threads per
  // multiprocessor (the coarse levels); 8 for a restriction-like A, whose rows average at least
  // num_cols / num_rows entries when every column is used (at least 4); one thread otherwise
  // (H200, the R (A P) binning of pcg_sa on 7-point 200^3: 10k rows of R 0.13 ms by threads,
  // 0.018 by warps; 100 rows 0.18 ms and 0.008).
  const long long rows = a.num_rows;
  const int lanes = rows < 8LL * kBlock * context.properties.multiProcessorCount ? kWarp
                    : a.num_cols >= 4LL * rows                                   ? 8
                                                                                 : 1;
  if (c_row_ptr == nullptr) {
    launch_count_bins<false>(context, a, b, c_row_ptr, bins, lanes);
  } else {
    launch_count_bins<true>(context, a, b, c_row_ptr, bins, lanes);
  }
  check_launch("sparse_setup::spgemm (count bins)");
  fill_bins<<<blocks, kBlock, 0, context.stream>>>(a.num_rows, bins.row_bin(), bins.sizes(),
                                                   bins.cursors(), bins.list());
  check_launch("sparse_setup::spgemm (fill bins)");
}

// ---------------------------------------------------------------------------------------------
// Lane groups: kLanes consecutive lanes of a warp (kLanes a power of two <= 32; their mask:
// lane_group_mask, kernels/backend/lane_group.cuh).

template <int kLanes, class T>
__device__ T group_sum(unsigned int mask, T value) {
  for (int offset = kLanes / 2; offset > 0; offset /= 2) {
    value += __shfl_xor_sync(mask, value, offset, kLanes);
  }
  return value;
}

/// kLanes entries of A's row i from position p0, as for_each_product_chunk loads them: lane l
/// holds entry p0 + l's row range of B (q_begin, length) and the inclusive scan of the lengths
/// (end; at most nnz(B): the entries of A's row are distinct); total is the group's sum.
template <int kLanes>
struct ChunkOfEntries {
  index_t q_begin = 0, length = 0, end = 0, total = 0;

  __device__ ChunkOfEntries(const PatternView& a, const PatternView& b, index_t p0, index_t a_end,
                            unsigned int mask, int lane) {
    if (p0 + lane < a_end) {
      const index_t k = a.col_idx[p0 + lane];
      q_begin = b.row_ptr[k];
      length = b.row_ptr[k + 1] - q_begin;
    }
    end = length;
    for (int offset = 1; offset < kLanes; offset *= 2) {
      const index_t before = __shfl_up_sync(mask, end, offset, kLanes);
      if (lane >= offset) end += before;
    }
    total = __shfl_sync(mask, end, kLanes - 1, kLanes);
  }
  /// The entry of product t (t < total): the first e with end[e] > t. Group-wide.
  __device__ int entry(index_t t, unsigned int mask) const {
    int e = 0;
    for (int step = kLanes / 2; step > 0; step /= 2) {
      if (__shfl_sync(mask, end, e + step - 1, kLanes) <= t) e += step;
    }
    return e;
  }
  /// b_kj's position of product t of entry e. Group-wide.
  __device__ index_t position(int e, index_t t, unsigned int mask) const {
    const index_t e_end = __shfl_sync(mask, end, e, kLanes);
    const index_t e_length = __shfl_sync(mask, length, e, kLanes);
    const index_t e_begin = __shfl_sync(mask, q_begin, e, kLanes);
    return e_begin + (t - (e_end - e_length));
  }
};

/// Walks the products of row i of A B group-wide in chunks of kLanes consecutive products of the
/// row, in Gustavson's order (a_ik in order, for each the stored b_kj in order) flattened: a
/// chunk may span several rows of B, so every lane has a product while any are left (rows of B
/// shorter than the group no longer leave lanes idle). The group loads kLanes entries of A's
/// row (k and B's row range) at once, scans their lengths by shuffles, and each lane finds its
/// entry by a binary search over the scan (ChunkOfEntries). For every chunk all lanes call
/// body(valid, p, q, e, e_first, e_last): a_ik's position p (p0 + e, e its entry of the loaded
/// kLanes) and b_kj's position q, valid false past the row's last product; e_first and e_last
/// are the entries of the chunk's first and last products (the entries a body that must keep
/// Gustavson's order per c_ij walks in turn: the columns of one entry are distinct).
template <int kLanes, class Body>
__device__ void for_each_product_chunk(const PatternView& a, const PatternView& b, index_t i,
                                       unsigned int mask, int lane, Body body) {
  const index_t a_end = a.row_ptr[i + 1];
  for (index_t p0 = a.row_ptr[i]; p0 < a_end; p0 += kLanes) {
    const ChunkOfEntries<kLanes> chunk(a, b, p0, a_end, mask, lane);
    for (index_t t0 = 0; t0 < chunk.total; t0 += kLanes) {
      const index_t t = t0 + lane;
      const int e = chunk.entry(t, mask);
      const index_t q = chunk.position(e, t, mask);
      const int in_chunk = chunk.total - t0 < kLanes ? static_cast<int>(chunk.total - t0) : kLanes;
      const int e_first = __shfl_sync(mask, e, 0, kLanes);
      const int e_last = __shfl_sync(mask, e, in_chunk - 1, kLanes);
      body(lane < in_chunk, p0 + e, q, e, e_first, e_last);
    }
  }
}

/// The products of row i in any order, two per lane at a time: visit(valid0, q0, valid1, q1)
/// with b_kj's positions (valid false past the row's last product). Two independent products
/// per lane and step give the symbolic phases twice the loads in flight.
template <int kLanes, class Visit>
__device__ void for_each_product_pair(const PatternView& a, const PatternView& b, index_t i,
                                      unsigned int mask, int lane, Visit visit) {
  const index_t a_end = a.row_ptr[i + 1];
  for (index_t p0 = a.row_ptr[i]; p0 < a_end; p0 += kLanes) {
    const ChunkOfEntries<kLanes> chunk(a, b, p0, a_end, mask, lane);
    for (index_t t0 = 0; t0 < chunk.total; t0 += 2 * kLanes) {
      const index_t t = t0 + lane;
      const index_t q0 = chunk.position(chunk.entry(t, mask), t, mask);
      const index_t q1 = chunk.position(chunk.entry(t + kLanes, mask), t + kLanes, mask);
      visit(t < chunk.total, q0, t + kLanes < chunk.total, q1);
    }
  }
}

/// Adds `product` to sums[t] (t < 0: none) in Gustavson's order within a chunk of
/// for_each_product_chunk: the chunk's entries in turn, sync() after each.
template <class Sync>
__device__ void add_in_entry_order(double* sums, index_t t, double product, int e, int e_first,
                                   int e_last, Sync sync) {
  for (int entry = e_first; entry <= e_last; ++entry) {
    if (e == entry && t >= 0) sums[t] += product;
    sync();
  }
}

// ---------------------------------------------------------------------------------------------
// Symbolic phases

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

/// Hash slots per row of bin b (twice its most products: the table never fills) and rows per
/// block (kGroupBlock threads, fewer when that would pass 32 KB of tables).
template <int kBin>
struct SymbolicShape {
  static constexpr int lanes = bin_lanes(kBin);
  static constexpr int slots = static_cast<int>(2 * bin_products(kBin));
  static constexpr int groups =
      kGroupBlock / lanes < 8192 / slots ? kGroupBlock / lanes : 8192 / slots;
  static_assert(slots % lanes == 0 && groups >= 1);
};

/// A group per row of bin kBin: the distinct columns go into the group's shared hash table;
/// kFill == false writes their number to out[i], kFill == true writes them sorted to
/// out + c_row_ptr[i] (each lane ranks its keys against all m keys: m^2 / lanes comparisons).
/// Work per row: products + slots (clear, compact) + with kFill m^2 / lanes.
template <bool kFill, int kBin>
__device__ void symbolic_group_row(const PatternView& a, const PatternView& b,
                                   const index_t* c_row_ptr, index_t* out, index_t i,
                                   index_t* table, unsigned int mask, int lane) {
  constexpr int kLanes = SymbolicShape<kBin>::lanes;
  constexpr int kSlots = SymbolicShape<kBin>::slots;
  for (int s = lane; s < kSlots; s += kLanes) table[s] = -1;
  __syncwarp(mask);
  unsigned int inserted = 0;
  for_each_product_pair<kLanes>(a, b, i, mask, lane,
                                [&](bool valid0, index_t q0, bool valid1, index_t q1) {
                                  const index_t j0 = valid0 ? b.col_idx[q0] : -1;
                                  const index_t j1 = valid1 ? b.col_idx[q1] : -1;
                                  if (valid0 && hash_insert(table, kSlots, j0)) ++inserted;
                                  if (valid1 && hash_insert(table, kSlots, j1)) ++inserted;
                                });
  __syncwarp(mask);
  if constexpr (!kFill) {
    inserted = group_sum<kLanes>(mask, inserted);
    if (lane == 0) out[i] = static_cast<index_t>(inserted);
  } else {
    // Compact the keys to the front of the table, chunk by chunk (a key moves only to a
    // slot at or before its own, already read).
    const unsigned int first = (threadIdx.x % kWarp) / kLanes * kLanes;
    int m = 0;
    for (int s0 = 0; s0 < kSlots; s0 += kLanes) {
      const index_t key = table[s0 + lane];
      __syncwarp(mask);
      // Other groups' lanes may take part in the ballot: keep this group's bits.
      const unsigned int occupied = (__ballot_sync(mask, key != -1) & mask) >> first;
      if (key != -1) table[m + __popc(occupied & ((1u << lane) - 1u))] = key;
      m += __popc(occupied);
      __syncwarp(mask);
    }
    const index_t base = c_row_ptr[i];
    const index_t length = c_row_ptr[i + 1] - base;
    for (int t = lane; t < m; t += kLanes) {
      const index_t key = table[t];
      index_t rank = 0;
      for (int u = 0; u < m; ++u) rank += table[u] < key ? 1 : 0;
      if (rank < length) out[base + rank] = key;
    }
  }
  __syncwarp(mask);  // the table is cleared for the next row
}

/// Tile `tile` of bin kBin (kBin >= 1): its rows tile * groups + g, g < groups, one per group
/// of the block (SymbolicShape<kBin>::groups groups; further threads idle); `tables` holds the
/// groups' hash tables, slots + 1 entries each (+ 1: groups on different banks).
template <bool kFill, int kBin>
__device__ void symbolic_group_tile(const PatternView& a, const PatternView& b,
                                    const index_t* c_row_ptr, index_t* out, const index_t* bin_list,
                                    const unsigned int* bin_sizes, index_t* tables,
                                    size_type tile) {
  using Shape = SymbolicShape<kBin>;
  const int group = threadIdx.x / Shape::lanes;
  const size_type r = tile * Shape::groups + group;
  if (group >= Shape::groups || r >= bin_sizes[kBin]) return;
  symbolic_group_row<kFill, kBin>(a, b, c_row_ptr, out, bin_list[bin_begin(bin_sizes, kBin) + r],
                                  tables + group * (Shape::slots + 1),
                                  lane_group_mask<Shape::lanes>(), threadIdx.x % Shape::lanes);
}

/// The tiles of bin kBin, a kernel of its own (one launch per bin).
template <bool kFill, int kBin>
__global__ void __launch_bounds__(SymbolicShape<kBin>::lanes* SymbolicShape<kBin>::groups)
    symbolic_group_kernel(PatternView a, PatternView b, const index_t* c_row_ptr, index_t* out,
                          const index_t* bin_list, const unsigned int* bin_sizes) {
  using Shape = SymbolicShape<kBin>;
  __shared__ index_t tables[Shape::groups * (Shape::slots + 1)];
  for (size_type tile = blockIdx.x; tile * Shape::groups < bin_sizes[kBin]; tile += gridDim.x) {
    symbolic_group_tile<kFill, kBin>(a, b, c_row_ptr, out, bin_list, bin_sizes, tables, tile);
  }
}

struct Smaller {
  __device__ index_t operator()(index_t x, index_t y) const { return y < x ? y : x; }
};
struct Larger {
  __device__ index_t operator()(index_t x, index_t y) const { return x < y ? y : x; }
};

/// One block per row of the last bin (more than bin_products(kGroupBins - 1) products): the
/// row's columns in [lo, hi] are marked in a shared bitmap one window of kWindowColumns at a
/// time, then counted (and with kFill written in increasing order: a block scan of each
/// thread's popcounts). Work per row: windows * products + (hi - lo) / 32 + windows words,
/// windows = (hi - lo) / kWindowColumns + 1.
template <bool kFill>
__global__ void __launch_bounds__(kBlock)
    symbolic_long_rows(PatternView a, PatternView b, const index_t* c_row_ptr, index_t* out,
                       const index_t* bin_list, const unsigned int* bin_sizes) {
  using BlockScan = cub::BlockScan<index_t, kBlock>;
  using BlockReduce = cub::BlockReduce<index_t, kBlock>;
  __shared__ unsigned int bitmap[kBitmapWords];
  __shared__ union {
    typename BlockScan::TempStorage scan;
    typename BlockReduce::TempStorage reduce;
  } storage;
  __shared__ index_t range[2];
  const int warp = threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  const unsigned int first = bin_begin(bin_sizes, kGroupBins);
  const unsigned int rows = bin_sizes[kGroupBins];
  for (unsigned int r = blockIdx.x; r < rows; r += gridDim.x) {
    const index_t i = bin_list[first + r];
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
      // Only the words that cover [window, hi] are cleared and read (rows of the coarse levels
      // span a few thousand columns, not a whole window).
      const size_type span = size_type{hi} - window + 1;
      const int words = span >= kWindowColumns ? kBitmapWords : static_cast<int>((span + 31) / 32);
      const int per_thread = (words + kBlock - 1) / kBlock;
      const int first_word = min(words, static_cast<int>(threadIdx.x) * per_thread);
      const int last_word = min(words, first_word + per_thread);
      for (int w = threadIdx.x; w < words; w += kBlock) bitmap[w] = 0u;
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
      // Thread t owns words [first_word, last_word): consecutive threads, consecutive words.
      index_t mine = 0;
      for (int w = first_word; w < last_word; ++w) mine += __popc(bitmap[w]);
      index_t before = 0;
      index_t total = 0;
      BlockScan(storage.scan).ExclusiveSum(mine, before, total);
      if constexpr (kFill) {
        index_t position = base + written + before;
        for (int word = first_word; word < last_word; ++word) {
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

/// Most products of a row of bin 0, whose symbolic phases one thread computes
/// (symbolic_thread_tile) with the row's columns in its own array.
constexpr int kThreadProducts = static_cast<int>(bin_products(0));

/// A thread per row of bin 0: the distinct columns kept sorted in a local array, each
/// product's column inserted in place (at most kThreadProducts^2 / 2 moves; a group's hash
/// table, compaction and ranking cost more on rows this short). kFill == false writes their
/// number to out[i], kFill == true the columns to out + c_row_ptr[i]. Tile `tile`: rows
/// tile * kThreads + t of the bin, t the thread of the block.
template <bool kFill, int kThreads>
__device__ void symbolic_thread_tile(const PatternView& a, const PatternView& b,
                                     const index_t* c_row_ptr, index_t* out,
                                     const index_t* bin_list, const unsigned int* bin_sizes,
                                     size_type tile) {
  const size_type r = tile * kThreads + threadIdx.x;
  if (r < bin_sizes[0]) {
    const index_t i = bin_list[r];  // bin 0 starts the list
    index_t columns[kThreadProducts];
    int m = 0;
    for (index_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      const index_t k = a.col_idx[p];
      for (index_t q = b.row_ptr[k]; q < b.row_ptr[k + 1]; ++q) {
        const index_t j = b.col_idx[q];
        int t = m;
        while (t > 0 && columns[t - 1] > j) --t;
        if (t > 0 && columns[t - 1] == j) continue;
        for (int u = m; u > t; --u) columns[u] = columns[u - 1];
        columns[t] = j;
        ++m;
      }
    }
    if constexpr (kFill) {
      const index_t base = c_row_ptr[i];
      for (int t = 0; t < m; ++t) out[base + t] = columns[t];
    } else {
      out[i] = static_cast<index_t>(m);
    }
  }
}

/// The tiles of bin 0 by symbolic_thread_tile, a kernel of its own.
template <bool kFill>
__global__ void __launch_bounds__(kBlock)
    symbolic_thread_kernel(PatternView a, PatternView b, const index_t* c_row_ptr, index_t* out,
                           const index_t* bin_list, const unsigned int* bin_sizes) {
  for (size_type tile = blockIdx.x; tile * kBlock < bin_sizes[0]; tile += gridDim.x) {
    symbolic_thread_tile<kFill, kBlock>(a, b, c_row_ptr, out, bin_list, bin_sizes, tile);
  }
}

template <bool kFill, int kBin>
void launch_symbolic_bin(Context& context, const PatternView& a, const PatternView& b,
                         const index_t* c_row_ptr, index_t* out, const Bins& bins,
                         const char* name) {
  if constexpr (kBin == 0) {
    symbolic_thread_kernel<kFill>
        <<<grid_for(a.num_rows, kBlock, context), kBlock, 0, context.stream>>>(
            a, b, c_row_ptr, out, bins.list(), bins.sizes());
  } else {
    using Shape = SymbolicShape<kBin>;
    symbolic_group_kernel<kFill, kBin>
        <<<grid_for(a.num_rows, Shape::groups, context), Shape::lanes * Shape::groups, 0,
           context.stream>>>(a, b, c_row_ptr, out, bins.list(), bins.sizes());
  }
  check_launch(name);
}

template <bool kFill, int... kBin>
void launch_symbolic_bins(Context& context, const PatternView& a, const PatternView& b,
                          const index_t* c_row_ptr, index_t* out, const Bins& bins,
                          const char* name, std::integer_sequence<int, kBin...>) {
  (launch_symbolic_bin<kFill, kBin>(context, a, b, c_row_ptr, out, bins, name), ...);
}

// ---------------------------------------------------------------------------------------------
// Numeric phase

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

/// Adds every product a_ik b_kj of row i to sums[t], t the position of column j in C's row
/// (columns[0, m), sorted), in Gustavson's order (for_each_product_chunk, add_in_entry_order);
/// sync() orders the group's steps and its accesses to sums.
template <int kLanes, class Sync>
__device__ void add_row_products(const MatrixView& a, const MatrixView& b, index_t i,
                                 unsigned int mask, int lane, const index_t* columns, index_t m,
                                 double* sums, Sync sync) {
  for_each_product_chunk<kLanes>(
      a.pattern, b.pattern, i, mask, lane,
      [&](bool valid, index_t p, index_t q, int e, int e_first, int e_last) {
        double product = 0.0;
        index_t t = -1;
        if (valid) {
          product = a.values[p] * b.values[q];
          const index_t j = b.pattern.col_idx[q];
          t = lower_bound(columns, m, j);
          if (t >= m || columns[t] != j) t = -1;
        }
        add_in_entry_order(sums, t, product, e, e_first, e_last, sync);
      });
}

/// Entries of C's row held per group in bin b (its most products, which bound the row's
/// length by the numeric binning rule) and rows per block (at most 24 KB of tables).
template <int kBin>
struct NumericShape {
  static constexpr int lanes = bin_lanes(kBin);
  static constexpr int capacity = static_cast<int>(bin_products(kBin));
  static constexpr int groups =
      kGroupBlock / lanes < 2048 / capacity ? kGroupBlock / lanes : 2048 / capacity;
  static_assert(groups >= 1);
};

/// Row i of C by a group of bin kBin, in Gustavson's order (see the file comment): the row's
/// columns and sums sit in the group's shared tables (m <= capacity by the binning rule).
/// Work per row: products * log2(m) for the column search, in ceil(products / lanes) group
/// steps (for_each_product_chunk).
template <int kBin>
__device__ void numeric_group_row(const MatrixView& a, const MatrixView& b, const PatternView& c,
                                  double* c_values, index_t i, index_t* columns, double* sums,
                                  unsigned int mask, int lane) {
  constexpr int kLanes = NumericShape<kBin>::lanes;
  const index_t c_begin = c.row_ptr[i];
  const index_t m = c.row_ptr[i + 1] - c_begin;  // <= NumericShape<kBin>::capacity (binning)
  for (index_t t = lane; t < m; t += kLanes) {
    columns[t] = c.col_idx[c_begin + t];
    sums[t] = 0.0;
  }
  __syncwarp(mask);
  add_row_products<kLanes>(a, b, i, mask, lane, columns, m, sums, [mask] { __syncwarp(mask); });
  for (index_t t = lane; t < m; t += kLanes) c_values[c_begin + t] = sums[t];
  __syncwarp(mask);  // the tables are reused by the next row
}

/// Tile `tile` of bin kBin: its rows tile * groups + g, g < groups, one per group of the block
/// (NumericShape<kBin>::groups groups; further threads idle). Their tables: capacity + 1
/// entries each in `sums_of` and `columns_of` (+ 1: the groups' tables start on different
/// banks).
template <int kBin>
__device__ void numeric_group_tile(const MatrixView& a, const MatrixView& b, const PatternView& c,
                                   double* c_values, const index_t* bin_list,
                                   const unsigned int* bin_sizes, double* sums_of,
                                   index_t* columns_of, size_type tile) {
  using Shape = NumericShape<kBin>;
  const int group = threadIdx.x / Shape::lanes;
  const size_type r = tile * Shape::groups + group;
  if (group >= Shape::groups || r >= bin_sizes[kBin]) return;
  numeric_group_row<kBin>(a, b, c, c_values, bin_list[bin_begin(bin_sizes, kBin) + r],
                          columns_of + group * (Shape::capacity + 1),
                          sums_of + group * (Shape::capacity + 1), lane_group_mask<Shape::lanes>(),
                          threadIdx.x % Shape::lanes);
}

/// The tiles of bin kBin, a kernel of its own. Bins 0 and 1 (the short rows of the fine levels,
/// millions of them) run 16 blocks of 128 threads per multiprocessor, at most 32 registers each
/// (no spills): their steps wait on dependent loads, and twice the resident groups hide twice
/// the latency.
template <int kBin>
__global__ void __launch_bounds__(NumericShape<kBin>::lanes* NumericShape<kBin>::groups,
                                  kBin <= 1 ? 16 : 4)
    numeric_group_kernel(MatrixView a, MatrixView b, PatternView c, double* c_values,
                         const index_t* bin_list, const unsigned int* bin_sizes) {
  using Shape = NumericShape<kBin>;
  __shared__ double sums_of[Shape::groups * (Shape::capacity + 1)];
  __shared__ index_t columns_of[Shape::groups * (Shape::capacity + 1)];
  for (size_type tile = blockIdx.x; tile * Shape::groups < bin_sizes[kBin]; tile += gridDim.x) {
    numeric_group_tile<kBin>(a, b, c, c_values, bin_list, bin_sizes, sums_of, columns_of, tile);
  }
}

/// One warp per row of the last bin, in Gustavson's order: row i's pattern and sums sit in
/// shared memory when it has at most kNumericShared entries, else the sums accumulate in
/// c_values (global memory, the same order; __threadfence_block orders them between chunks).
__global__ void __launch_bounds__(kRowWarps* kWarp)
    numeric_long_rows(MatrixView a, MatrixView b, PatternView c, double* c_values,
                      const index_t* bin_list, const unsigned int* bin_sizes) {
  __shared__ index_t shared_columns[kRowWarps][kNumericShared];
  __shared__ double shared_sums[kRowWarps][kNumericShared];
  const int warp = threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  const unsigned int begin = bin_begin(bin_sizes, kGroupBins);
  const unsigned int count = bin_sizes[kGroupBins];
  for (size_type r = size_type{blockIdx.x} * kRowWarps + warp; r < count;
       r += size_type{gridDim.x} * kRowWarps) {
    const index_t i = bin_list[begin + r];
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
    add_row_products<kWarp>(a, b, i, 0xffffffffu, lane, columns, m, sums, [] {
      __threadfence_block();
      __syncwarp();
    });
    if (in_shared) {
      for (index_t t = lane; t < m; t += kWarp) c_values[c_begin + t] = sums[t];
    }
    __syncwarp();
  }
}

template <int kBin>
void launch_numeric_bin(Context& context, const MatrixView& a, const MatrixView& b,
                        const PatternView& c, double* c_values, const Bins& bins) {
  using Shape = NumericShape<kBin>;
  numeric_group_kernel<kBin>
      <<<grid_for(a.pattern.num_rows, Shape::groups, context), Shape::lanes * Shape::groups, 0,
         context.stream>>>(a, b, c, c_values, bins.list(), bins.sizes());
  check_launch("sparse_setup::spgemm_numeric");
}

template <int... kBin>
void launch_numeric_bins(Context& context, const MatrixView& a, const MatrixView& b,
                         const PatternView& c, double* c_values, const Bins& bins,
                         std::integer_sequence<int, kBin...>) {
  (launch_numeric_bin<kBin>(context, a, b, c, c_values, bins), ...);
}

// ---------------------------------------------------------------------------------------------
// Fill and numeric phases in one call (spgemm_fill_numeric), rows binned by their products

/// Distinct columns a thread of fused_thread_tile keeps in registers.
constexpr int kRegisterColumns = 16;

/// A thread per row of bin 0 (binned by products), in Gustavson's order (one thread walks the
/// row's products in turn): up to kRegisterColumns distinct columns and their sums live in
/// registers (every slot compared with each product, statically indexed), new columns appended;
/// then each slot's rank among the row's columns is counted and column and sum written there.
/// A row with more distinct columns starts over with sorted local arrays (as
/// symbolic_thread_rows, with the sums moved beside the columns). Work per row: products *
/// kRegisterColumns comparisons plus kRegisterColumns^2 for the ranks, no memory besides A's
/// row, B's rows and C's row (the fill's thread per row followed by the numeric groups took 1.4 +
/// 2.5 ms on the finest A P of pcg_sa on 7-point 200^3 on the H200; sorted local arrays of
/// columns and sums 7.9 ms).
/// Tile `tile`: rows tile * kThreads + t of the bin, t the thread of the block.
template <int kThreads>
__device__ void fused_thread_tile(const MatrixView& a, const MatrixView& b,
                                  const index_t* c_row_ptr, index_t* c_col_idx, double* c_values,
                                  const index_t* bin_list, const unsigned int* bin_sizes,
                                  size_type tile) {
  const size_type r = tile * kThreads + threadIdx.x;
  if (r < bin_sizes[0]) {
    const index_t i = bin_list[r];  // bin 0 starts the list
    const index_t a_begin = a.pattern.row_ptr[i];
    const index_t a_end = a.pattern.row_ptr[i + 1];
    index_t columns[kRegisterColumns];
    double sums[kRegisterColumns];
#pragma unroll
    for (int s = 0; s < kRegisterColumns; ++s) {
      columns[s] = -1;
      sums[s] = 0.0;
    }
    int m = 0;
    bool overflow = false;
    for (index_t p = a_begin; p < a_end && !overflow; ++p) {
      const index_t k = a.pattern.col_idx[p];
      const double a_ik = a.values[p];
      for (index_t q = b.pattern.row_ptr[k]; q < b.pattern.row_ptr[k + 1]; ++q) {
        const index_t j = b.pattern.col_idx[q];
        const double product = a_ik * b.values[q];
        bool found = false;
#pragma unroll
        for (int s = 0; s < kRegisterColumns; ++s) {
          if (s < m && columns[s] == j) {
            sums[s] += product;
            found = true;
          }
        }
        if (found) continue;
        if (m == kRegisterColumns) {
          overflow = true;
          break;
        }
#pragma unroll
        for (int s = 0; s < kRegisterColumns; ++s) {
          if (s == m) {
            columns[s] = j;
            sums[s] = 0.0;
            sums[s] += product;
          }
        }
        ++m;
      }
    }
    const index_t base = c_row_ptr[i];
    if (!overflow) {
#pragma unroll
      for (int s = 0; s < kRegisterColumns; ++s) {
        if (s < m) {
          index_t rank = 0;
#pragma unroll
          for (int t = 0; t < kRegisterColumns; ++t) {
            rank += (t < m && columns[t] < columns[s]) ? 1 : 0;
          }
          c_col_idx[base + rank] = columns[s];
          c_values[base + rank] = sums[s];
        }
      }
      return;
    }
    // More than kRegisterColumns distinct columns: sorted local arrays, from the start. (The
    // product walk is written out twice: through a shared lambda, ptxas moved the register
    // columns and sums to the stack.)
    index_t sorted[kThreadProducts];
    double sorted_sums[kThreadProducts];
    int n = 0;
    for (index_t p = a_begin; p < a_end; ++p) {
      const index_t k = a.pattern.col_idx[p];
      const double a_ik = a.values[p];
      for (index_t q = b.pattern.row_ptr[k]; q < b.pattern.row_ptr[k + 1]; ++q) {
        const index_t j = b.pattern.col_idx[q];
        const double product = a_ik * b.values[q];
        int t = n;
        while (t > 0 && sorted[t - 1] > j) --t;
        if (t > 0 && sorted[t - 1] == j) {
          sorted_sums[t - 1] += product;
          continue;
        }
        for (int u = n; u > t; --u) {
          sorted[u] = sorted[u - 1];
          sorted_sums[u] = sorted_sums[u - 1];
        }
        sorted[t] = j;
        sorted_sums[t] = 0.0;
        sorted_sums[t] += product;
        ++n;
      }
    }
    for (int t = 0; t < n; ++t) {
      c_col_idx[base + t] = sorted[t];
      c_values[base + t] = sorted_sums[t];
    }
  }
}

/// The tiles of bin 0 by fused_thread_tile, a kernel of its own.
__global__ void __launch_bounds__(kBlock)
    fused_thread_kernel(MatrixView a, MatrixView b, const index_t* c_row_ptr, index_t* c_col_idx,
                        double* c_values, const index_t* bin_list, const unsigned int* bin_sizes) {
  for (size_type tile = blockIdx.x; tile * kBlock < bin_sizes[0]; tile += gridDim.x) {
    fused_thread_tile<kBlock>(a, b, c_row_ptr, c_col_idx, c_values, bin_list, bin_sizes, tile);
  }
}

template <int kBin>
void launch_fused_bin(Context& context, const MatrixView& a, const MatrixView& b,
                      const index_t* c_row_ptr, index_t* c_col_idx, double* c_values,
                      const Bins& bins) {
  if constexpr (kBin == 0) {
    fused_thread_kernel<<<grid_for(a.pattern.num_rows, kBlock, context), kBlock, 0,
                          context.stream>>>(a, b, c_row_ptr, c_col_idx, c_values, bins.list(),
                                            bins.sizes());
    check_launch("sparse_setup::spgemm_fill_numeric");
  } else {
    // The fill's groups, then the numeric phase's on the same bins (C's row is no longer than
    // its products). Groups that hashed, ranked and summed a row in one pass were slower on the
    // H200: 0.073 s against 0.065 s for the finest R (A P) of pcg_sa on 27-point 200^3.
    launch_symbolic_bin<true, kBin>(context, a.pattern, b.pattern, c_row_ptr, c_col_idx, bins,
                                    "sparse_setup::spgemm_fill_numeric (fill)");
    const PatternView c{a.pattern.num_rows, b.pattern.num_cols, c_row_ptr, c_col_idx};
    launch_numeric_bin<kBin>(context, a, b, c, c_values, bins);
  }
}

template <int... kBin>
void launch_fused_bins(Context& context, const MatrixView& a, const MatrixView& b,
                       const index_t* c_row_ptr, index_t* c_col_idx, double* c_values,
                       const Bins& bins, std::integer_sequence<int, kBin...>) {
  (launch_fused_bin<kBin>(context, a, b, c_row_ptr, c_col_idx, c_values, bins), ...);
}

// ---------------------------------------------------------------------------------------------
// Small products: every group bin of a phase in one launch

/// Rows of A up to which a phase runs its group bins in one launch (merged_* kernels) instead
/// of a launch per bin. Below it the launches, not the work, bound a product: the setup of the
/// OpenFOAM pressure matrix (23 K rows, 30 products) launched about 900 kernels in its products,
/// most of them for empty bins.
constexpr long long kMergedRows = 1LL << 16;
/// Threads per block of the merged kernels: every group bin's shape fits in it.
constexpr int kMergedBlock = kGroupBlock;

/// Shared entries of the merged kernels: the largest bin's symbolic tables (index_t) and
/// numeric tables (a double and an index_t per entry). Bin 0's symbolic rows take a thread each.
template <int... kBin>
constexpr int largest_symbolic_tables(std::integer_sequence<int, kBin...>) {
  return std::max({SymbolicShape<kBin>::groups * (SymbolicShape<kBin>::slots + 1)...});
}
template <int... kBin>
constexpr int largest_numeric_tables(std::integer_sequence<int, kBin...>) {
  return std::max({NumericShape<kBin>::groups * (NumericShape<kBin>::capacity + 1)...});
}
template <int... kBin>
constexpr bool shapes_fit(std::integer_sequence<int, kBin...>) {
  return ((SymbolicShape<kBin>::lanes * SymbolicShape<kBin>::groups <= kMergedBlock &&
           NumericShape<kBin>::lanes * NumericShape<kBin>::groups <= kMergedBlock) &&
          ...);
}
using GroupBinSequence = std::make_integer_sequence<int, kGroupBins>;
constexpr int kSymbolicTables = largest_symbolic_tables(GroupBinSequence{});
constexpr int kNumericTables = largest_numeric_tables(GroupBinSequence{});
static_assert(shapes_fit(GroupBinSequence{}));
/// Doubles of the fused kernel's shared buffer, used first as symbolic then as numeric tables.
constexpr std::size_t kFusedSharedBytes = std::max(
    sizeof(index_t) * kSymbolicTables, (sizeof(double) + sizeof(index_t)) * kNumericTables);
constexpr int kFusedSharedDoubles = (kFusedSharedBytes + sizeof(double) - 1) / sizeof(double);

/// Rows per tile of bin b in the merged kernels.
template <bool kSymbolic, int kBin>
__device__ constexpr int merged_tile_rows() {
  if constexpr (kSymbolic && kBin == 0) {
    return kMergedBlock;  // a thread per row
  } else if constexpr (kSymbolic) {
    return SymbolicShape<kBin>::groups;
  } else {
    return NumericShape<kBin>::groups;
  }
}

/// Calls tile(bin constant, tile of that bin) for tiles blockIdx.x, blockIdx.x + gridDim.x,
/// ... of the group bins taken in turn (bin 0's tiles first): every block gets tiles of the
/// non-empty bins only, whatever the bin sizes, which only the device knows. The bin and so
/// the barriers of `tile` are uniform over the block; a barrier follows every tile.
template <bool kSymbolic, class Tile, int... kBin>
__device__ void for_each_merged_tile(const unsigned int* bin_sizes, Tile tile,
                                     std::integer_sequence<int, kBin...>) {
  size_type tiles[kGroupBins];
  size_type total = 0;
  ((tiles[kBin] = (size_type{bin_sizes[kBin]} + merged_tile_rows<kSymbolic, kBin>() - 1) /
                  merged_tile_rows<kSymbolic, kBin>(),
    total += tiles[kBin]),
   ...);
  for (size_type t = blockIdx.x; t < total; t += gridDim.x) {
    size_type first = 0;
    bool done = false;
    ((done ? void()
           : (t < first + tiles[kBin]
                  ? (tile(std::integral_constant<int, kBin>{}, t - first), done = true, void())
                  : (first += tiles[kBin], void()))),
     ...);
    // Consecutive tiles may be of different bins, whose groups lay out the shared tables
    // differently: no group may start the next tile while another still uses this one's.
    __syncthreads();
  }
}

/// Both symbolic phases' group bins in one launch (symbolic_thread_tile for bin 0,
/// symbolic_group_tile for the others).
template <bool kFill>
__global__ void __launch_bounds__(kMergedBlock)
    merged_symbolic_kernel(PatternView a, PatternView b, const index_t* c_row_ptr, index_t* out,
                           const index_t* bin_list, const unsigned int* bin_sizes) {
  __shared__ index_t tables[kSymbolicTables];
  for_each_merged_tile<true>(
      bin_sizes,
      [&](auto bin, size_type tile) {
        if constexpr (decltype(bin)::value == 0) {
          symbolic_thread_tile<kFill, kMergedBlock>(a, b, c_row_ptr, out, bin_list, bin_sizes,
                                                    tile);
        } else {
          symbolic_group_tile<kFill, decltype(bin)::value>(a, b, c_row_ptr, out, bin_list,
                                                           bin_sizes, tables, tile);
        }
      },
      GroupBinSequence{});
}

/// The numeric phase's group bins in one launch.
__global__ void __launch_bounds__(kMergedBlock)
    merged_numeric_kernel(MatrixView a, MatrixView b, PatternView c, double* c_values,
                          const index_t* bin_list, const unsigned int* bin_sizes) {
  __shared__ double sums_of[kNumericTables];
  __shared__ index_t columns_of[kNumericTables];
  for_each_merged_tile<false>(
      bin_sizes,
      [&](auto bin, size_type tile) {
        numeric_group_tile<decltype(bin)::value>(a, b, c, c_values, bin_list, bin_sizes, sums_of,
                                                 columns_of, tile);
      },
      GroupBinSequence{});
}

/// spgemm_fill_numeric's group bins in one launch: bin 0 by fused_thread_tile; a tile of bin
/// b > 0 is filled by the symbolic groups, then (after a barrier: the numeric groups read the
/// columns the fill wrote) summed by the numeric groups, whose shape may differ; the two phases
/// share one shared buffer.
__global__ void __launch_bounds__(kMergedBlock)
    merged_fill_numeric_kernel(MatrixView a, MatrixView b, const index_t* c_row_ptr,
                               index_t* c_col_idx, double* c_values, const index_t* bin_list,
                               const unsigned int* bin_sizes) {
  __shared__ double buffer[kFusedSharedDoubles];
  const PatternView c{a.pattern.num_rows, b.pattern.num_cols, c_row_ptr, c_col_idx};
  for_each_merged_tile<true>(
      bin_sizes,
      [&](auto bin, size_type tile) {
        constexpr int kBin = decltype(bin)::value;
        if constexpr (kBin == 0) {
          fused_thread_tile<kMergedBlock>(a, b, c_row_ptr, c_col_idx, c_values, bin_list, bin_sizes,
                                          tile);
        } else {
          using Symbolic = SymbolicShape<kBin>;
          using Numeric = NumericShape<kBin>;
          symbolic_group_tile<true, kBin>(a.pattern, b.pattern, c_row_ptr, c_col_idx, bin_list,
                                          bin_sizes, reinterpret_cast<index_t*>(buffer), tile);
          __syncthreads();
          // The symbolic tile's rows as numeric tiles (Numeric::groups divides Symbolic::groups).
          static_assert(Symbolic::groups % Numeric::groups == 0);
          constexpr int kParts = Symbolic::groups / Numeric::groups;
          for (int part = 0; part < kParts; ++part) {
            numeric_group_tile<kBin>(a, b, c, c_values, bin_list, bin_sizes, buffer,
                                     reinterpret_cast<index_t*>(buffer + kNumericTables),
                                     tile * kParts + part);
          }
        }
      },
      GroupBinSequence{});
}

/// Blocks of a merged kernel: a block per row, at most kBlocksPerSm per multiprocessor (the
/// kernels loop over their tiles). The tiles of the largest bins hold one or two rows (their
/// tables fill the shared memory), and on a coarse level most rows are there: with a block per
/// 16 rows, each block walked 8-16 such tiles one after the other (H200, OpenFOAM pressure
/// matrix: the coarse Galerkin products' numeric phases took 100-150 us on 5-77 blocks).
unsigned int merged_grid(long long rows, const Context& context) {
  return grid_for(rows, 1, context);
}

// ---------------------------------------------------------------------------------------------
// Small products into few columns: a block per row of A, C's row accumulated in shared memory

/// A product runs the dense kernels below when A has at most kDenseRows rows and B at most
/// kDenseColumns columns: the Galerkin products and the interpolation products of the coarse
/// levels of an AMG hierarchy. Their rows are long (hundreds to thousands of products into
/// tens to hundreds of columns), and the group bins walked them with one lane group per row,
/// a chain of dependent loads per entry of A: on the H200 the numeric phases of the pinned
/// OpenFOAM pressure matrix's levels of 70 to 1,225 rows took 30-100 us each.
constexpr long long kDenseRows = 4096;
constexpr index_t kDenseColumns = 4096;
constexpr int kDenseBlock = 128;
/// A row's column set is a bitmap of kDenseColumns bits, a word per thread.
constexpr int kDenseWords = kDenseColumns / 32;
static_assert(kDenseWords == kDenseBlock);
/// Products a block stages in shared memory at a time.
constexpr int kDenseStage = 512;
/// Blocks per multiprocessor the dense numeric kernels are launched with (about 42 KB of shared
/// memory each); the symbolic ones take kBlocksPerSm.
constexpr unsigned int kDenseNumericBlocksPerSm = 5;

bool dense_product(long long a_rows, index_t b_cols) {
  return a_rows <= kDenseRows && b_cols <= kDenseColumns;
}

/// Clears `bitmap` (a word per thread), then sets the bits of row i's product columns (the
/// order of the marks does not matter): the warps take A's entries in turn, their lanes B's
/// row. The caller's barrier must follow before the bitmap is read.
__device__ void mark_product_columns(const PatternView& a, const PatternView& b, index_t i,
                                     unsigned int* bitmap) {
  bitmap[threadIdx.x] = 0;
  __syncthreads();
  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  for (index_t p = a.row_ptr[i] + warp; p < a.row_ptr[i + 1]; p += kDenseBlock / kWarp) {
    const index_t k = a.col_idx[p];
    for (index_t q = b.row_ptr[k] + lane; q < b.row_ptr[k + 1]; q += kWarp) {
      const index_t j = b.col_idx[q];
      atomicOr(&bitmap[j / 32], 1u << (j % 32));
    }
  }
}

using DenseScan = cub::BlockScan<index_t, kDenseBlock>;

/// Calls emit(k, j) for the k-th column j (from 0, in increasing order) marked in `bitmap`,
/// thread t for the columns of word t after those of the words before it; returns the number
/// of marked columns on every thread.
template <class Emit>
__device__ index_t for_each_marked_column(const unsigned int* bitmap,
                                          typename DenseScan::TempStorage& storage, Emit emit) {
  const unsigned int word = bitmap[threadIdx.x];
  index_t position = 0;
  index_t total = 0;
  DenseScan(storage).ExclusiveSum(static_cast<index_t>(__popc(word)), position, total);
  for (unsigned int w = word; w != 0; w &= w - 1, ++position) {
    emit(position, static_cast<index_t>(threadIdx.x) * 32 + (__ffs(w) - 1));
  }
  return total;
}

/// Both symbolic phases: row i's columns marked in a shared bitmap, counted (kFill false:
/// out = counts) or written in increasing order from c_row_ptr[i] (kFill: out = C's col_idx),
/// thread t writing the columns of word t after those of the words before it.
template <bool kFill>
__global__ void __launch_bounds__(kDenseBlock)
    dense_symbolic_kernel(PatternView a, PatternView b, const index_t* c_row_ptr, index_t* out) {
  __shared__ unsigned int bitmap[kDenseWords];
  __shared__ typename DenseScan::TempStorage storage;
  for (index_t i = blockIdx.x; i < a.num_rows; i += gridDim.x) {
    mark_product_columns(a, b, i, bitmap);
    __syncthreads();
    if constexpr (kFill) {
      index_t* row = out + c_row_ptr[i];
      for_each_marked_column(bitmap, storage, [&](index_t k, index_t j) { row[k] = j; });
    } else {
      const index_t total = for_each_marked_column(bitmap, storage, [](index_t, index_t) {});
      if (threadIdx.x == 0) out[i] = total;
    }
    __syncthreads();  // the bitmap and the scan's storage are free again
  }
}

/// Row i of A B accumulated in acc (B's columns, zeroed first) in Gustavson's order, the
/// reference's bits: A's entries are taken kDenseBlock at a time (a thread each: its column k,
/// value and B's row), their products staged kDenseStage at a time (a_ik b_kj and j, a thread
/// per product), then added entry by entry, a barrier after each: the products of one entry
/// have distinct columns, so every acc[j] receives its products in the order of A's entries.
__device__ void accumulate_row(const MatrixView& a, const MatrixView& b, index_t i, double* acc) {
  __shared__ typename DenseScan::TempStorage storage;
  __shared__ index_t entry_first[kDenseBlock];  // B's first entry of each staged entry of A
  __shared__ index_t entry_end[kDenseBlock];    // its products' end in the batch's product order
  __shared__ double entry_value[kDenseBlock];
  __shared__ index_t staged_column[kDenseStage];
  __shared__ double staged_product[kDenseStage];
  for (index_t j = threadIdx.x; j < b.pattern.num_cols; j += kDenseBlock) acc[j] = 0.0;
  const index_t begin = a.pattern.row_ptr[i];
  const index_t end = a.pattern.row_ptr[i + 1];
  for (index_t batch = begin; batch < end; batch += kDenseBlock) {
    const index_t entries = min(static_cast<index_t>(kDenseBlock), end - batch);
    index_t length = 0;
    if (static_cast<index_t>(threadIdx.x) < entries) {
      const index_t p = batch + static_cast<index_t>(threadIdx.x);
      const index_t k = a.pattern.col_idx[p];
      const index_t first = b.pattern.row_ptr[k];
      length = b.pattern.row_ptr[k + 1] - first;
      entry_first[threadIdx.x] = first;
      entry_value[threadIdx.x] = a.values[p];
    }
    index_t products_end = 0;
    index_t products = 0;
    DenseScan(storage).InclusiveSum(length, products_end, products);
    entry_end[threadIdx.x] = products_end;
    __syncthreads();    // entry_* are complete
    index_t entry = 0;  // the first entry with products at or after the chunk's start
    for (index_t chunk = 0; chunk < products; chunk += kDenseStage) {
      const index_t staged = min(static_cast<index_t>(kDenseStage), products - chunk);
      for (index_t f = threadIdx.x; f < staged; f += kDenseBlock) {
        // The entry of product chunk + f: the first whose end is past it.
        const index_t product = chunk + f;
        index_t lo = 0;
        index_t hi = entries - 1;
        while (lo < hi) {
          const index_t mid = (lo + hi) / 2;
          if (entry_end[mid] > product) {
            hi = mid;
          } else {
            lo = mid + 1;
          }
        }
        const index_t start = lo == 0 ? 0 : entry_end[lo - 1];
        const index_t q = entry_first[lo] + (product - start);
        staged_column[f] = b.pattern.col_idx[q];
        staged_product[f] = entry_value[lo] * b.values[q];
      }
      __syncthreads();  // the chunk is staged
      for (; entry < entries; ++entry) {
        const index_t from = max(entry == 0 ? 0 : entry_end[entry - 1], chunk) - chunk;
        const index_t to = min(entry_end[entry], chunk + staged) - chunk;
        for (index_t f = from + static_cast<index_t>(threadIdx.x); f < to; f += kDenseBlock) {
          acc[staged_column[f]] += staged_product[f];
        }
        __syncthreads();  // the next entry's products may add to the same columns
        if (entry_end[entry] > chunk + staged) break;  // continues in the next chunk
      }
    }
    __syncthreads();  // entry_* and the scan's storage are free again
  }
  __syncthreads();  // acc is complete (also for a row of A without entries)
}

/// spgemm_numeric onto C's pattern (kFill false: c_col_idx given, c_col_idx_out null), or
/// spgemm_fill_numeric (kFill: C's columns written to c_col_idx_out, as
/// dense_symbolic_kernel<true>), a block per row of A.
template <bool kFill>
__global__ void __launch_bounds__(kDenseBlock)
    dense_numeric_kernel(MatrixView a, MatrixView b, const index_t* c_row_ptr,
                         const index_t* c_col_idx, index_t* c_col_idx_out, double* c_values) {
  __shared__ double acc[kDenseColumns];
  __shared__ unsigned int bitmap[kDenseWords];
  __shared__ typename DenseScan::TempStorage storage;
  for (index_t i = blockIdx.x; i < a.pattern.num_rows; i += gridDim.x) {
    if constexpr (kFill) mark_product_columns(a.pattern, b.pattern, i, bitmap);
    accumulate_row(a, b, i, acc);  // begins and ends with a barrier over the block
    if constexpr (kFill) {
      const index_t first = c_row_ptr[i];
      for_each_marked_column(bitmap, storage, [&](index_t k, index_t j) {
        c_col_idx_out[first + k] = j;
        c_values[first + k] = acc[j];
      });
    } else {
      for (index_t p = c_row_ptr[i] + static_cast<index_t>(threadIdx.x); p < c_row_ptr[i + 1];
           p += kDenseBlock) {
        c_values[p] = acc[c_col_idx[p]];
      }
    }
    __syncthreads();  // acc, the bitmap and the scan's storage are free again
  }
}

/// Both symbolic phases: binning, the group bins (one launch per bin, or one for all of them
/// for small products), then the long rows. No host wait.
template <bool kFill>
void symbolic(const Backend& backend, const PatternView& a, const PatternView& b,
              const index_t* c_row_ptr, index_t* out, const char* name) {
  if (a.num_rows == 0) return;
  Context& context = context_of(backend);
  if (dense_product(a.num_rows, b.num_cols)) {
    dense_symbolic_kernel<kFill>
        <<<grid_for(a.num_rows, 1, context), kDenseBlock, 0, context.stream>>>(a, b, c_row_ptr,
                                                                               out);
    check_launch(name);
    return;
  }
  const Bins bins(context, a.num_rows);
  bin_rows(context, a, b, nullptr, bins);
  if (a.num_rows <= kMergedRows) {
    merged_symbolic_kernel<kFill>
        <<<merged_grid(a.num_rows, context), kMergedBlock, 0, context.stream>>>(
            a, b, c_row_ptr, out, bins.list(), bins.sizes());
    check_launch(name);
  } else {
    launch_symbolic_bins<kFill>(context, a, b, c_row_ptr, out, bins, name,
                                std::make_integer_sequence<int, kGroupBins>{});
  }
  const auto sms = static_cast<unsigned int>(context.properties.multiProcessorCount);
  symbolic_long_rows<kFill>
      <<<2 * sms, kBlock, 0, context.stream>>>(a, b, c_row_ptr, out, bins.list(), bins.sizes());
  check_launch(name);
}

}  // namespace

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
  if (dense_product(a.pattern.num_rows, b.pattern.num_cols)) {
    dense_numeric_kernel<false>
        <<<grid_for(a.pattern.num_rows, 1, context, kDenseNumericBlocksPerSm), kDenseBlock, 0,
           context.stream>>>(a, b, c.row_ptr, c.col_idx, nullptr, c_values);
    check_launch("sparse_setup::spgemm_numeric");
    return;
  }
  const Bins bins(context, a.pattern.num_rows);
  bin_rows(context, a.pattern, b.pattern, c.row_ptr, bins);
  if (a.pattern.num_rows <= kMergedRows) {
    merged_numeric_kernel<<<merged_grid(a.pattern.num_rows, context), kMergedBlock, 0,
                            context.stream>>>(a, b, c, c_values, bins.list(), bins.sizes());
    check_launch("sparse_setup::spgemm_numeric");
  } else {
    launch_numeric_bins(context, a, b, c, c_values, bins,
                        std::make_integer_sequence<int, kGroupBins>{});
  }
  numeric_long_rows<<<grid_for(a.pattern.num_rows, kRowWarps, context), kRowWarps * kWarp, 0,
                      context.stream>>>(a, b, c, c_values, bins.list(), bins.sizes());
  check_launch("sparse_setup::spgemm_numeric");
}

void spgemm_fill_numeric(const Backend& backend, const MatrixView& a, const MatrixView& b,
                         const index_t* c_row_ptr, index_t* c_col_idx, double* c_values) {
  if (a.pattern.num_rows == 0) return;
  Context& context = context_of(backend);
  if (dense_product(a.pattern.num_rows, b.pattern.num_cols)) {
    dense_numeric_kernel<true>
        <<<grid_for(a.pattern.num_rows, 1, context, kDenseNumericBlocksPerSm), kDenseBlock, 0,
           context.stream>>>(a, b, c_row_ptr, nullptr, c_col_idx, c_values);
    check_launch("sparse_setup::spgemm_fill_numeric");
    return;
  }
  const Bins bins(context, a.pattern.num_rows);
  bin_rows(context, a.pattern, b.pattern, nullptr, bins);  // by products, as the symbolic phases
  if (a.pattern.num_rows <= kMergedRows) {
    merged_fill_numeric_kernel<<<merged_grid(a.pattern.num_rows, context), kMergedBlock, 0,
                                 context.stream>>>(a, b, c_row_ptr, c_col_idx, c_values,
                                                   bins.list(), bins.sizes());
    check_launch("sparse_setup::spgemm_fill_numeric");
  } else {
    launch_fused_bins(context, a, b, c_row_ptr, c_col_idx, c_values, bins,
                      std::make_integer_sequence<int, kGroupBins>{});
  }
  // The rows past the last group bin: their columns by the block-per-row fill, then their sums
  // by the warp-per-row numeric kernel (which takes any length of C's row).
  const auto sms = static_cast<unsigned int>(context.properties.multiProcessorCount);
  symbolic_long_rows<true><<<2 * sms, kBlock, 0, context.stream>>>(
      a.pattern, b.pattern, c_row_ptr, c_col_idx, bins.list(), bins.sizes());
  check_launch("sparse_setup::spgemm_fill_numeric (long rows)");
  const PatternView c{a.pattern.num_rows, b.pattern.num_cols, c_row_ptr, c_col_idx};
  numeric_long_rows<<<grid_for(a.pattern.num_rows, kRowWarps, context), kRowWarps * kWarp, 0,
                      context.stream>>>(a, b, c, c_values, bins.list(), bins.sizes());
  check_launch("sparse_setup::spgemm_fill_numeric (long rows)");
}

}  // namespace kryflow::kernels::sparse_setup::cuda
