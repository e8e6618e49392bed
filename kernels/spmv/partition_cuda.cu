// The row-block partition built on the device (spmv::build_partition): the facts of row_ptr by a
// grid reduction, then the segments (kPartitionSegmentRows rows each) split by a block each
// with the host's split_segment (its row pointers first copied to shared memory), counted,
// scanned and filled. The host reads the sizes and the facts once; the partition is the one
// partition_rows gives on the host.
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <cub/cub.cuh>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"
#include "kernels/backend/device_scratch.cuh"
#include "kernels/spmv/partition_walk.hpp"
#include "kernels/spmv/spmv.hpp"

namespace kryflow::kernels::spmv::cuda {
namespace {

using kernels::cuda::blocks_for;
using kernels::cuda::check_launch;
using kernels::cuda::Context;
using kernels::cuda::DeviceScratch;
using kernels::cuda::read_integers;
using size_type = long long;

constexpr int kBlock = 256;
constexpr int kScanThreads = 256;

/// The summary the host reads (long long each).
enum Summary {
  kBlocks,
  kLongRows,
  kChunks,
  kFirst,
  kLast,
  kMinLength,
  kMaxLength,
  kEmptyRows,
  kFirstDecrease,
  kSummaryCount
};

/// Integer facts reduced by atomics (any order gives the same result).
struct Facts {
  int min_length;
  int max_length;
  int empty_rows;
  int first_decrease;  // INT_MAX: none
};

__global__ void init_facts(Facts* facts) {
  facts->min_length = INT_MAX;
  facts->max_length = INT_MIN;
  facts->empty_rows = 0;
  facts->first_decrease = INT_MAX;
}

struct MinOp {
  __device__ int operator()(int a, int b) const { return a < b ? a : b; }
};
struct MaxOp {
  __device__ int operator()(int a, int b) const { return a > b ? a : b; }
};

__global__ void reduce_facts(const index_t* row_ptr, index_t num_rows, Facts* facts) {
  using Reduce = cub::BlockReduce<int, kBlock>;
  __shared__ typename Reduce::TempStorage storage;
  int lo = INT_MAX;
  int hi = INT_MIN;
  int empty = 0;
  int decrease = INT_MAX;
  for (size_type i = blockIdx.x * size_type{kBlock} + threadIdx.x; i < num_rows;
       i += size_type{gridDim.x} * kBlock) {
    const int length = row_ptr[i + 1] - row_ptr[i];
    lo = min(lo, length);
    hi = max(hi, length);
    empty += length == 0 ? 1 : 0;
    if (length < 0) decrease = min(decrease, static_cast<int>(i));
  }
  lo = Reduce(storage).Reduce(lo, MinOp());
  __syncthreads();
  hi = Reduce(storage).Reduce(hi, MaxOp());
  __syncthreads();
  empty = Reduce(storage).Sum(empty);
  __syncthreads();
  decrease = Reduce(storage).Reduce(decrease, MinOp());
  if (threadIdx.x == 0) {
    atomicMin(&facts->min_length, lo);
    atomicMax(&facts->max_length, hi);
    atomicAdd(&facts->empty_rows, empty);
    atomicMin(&facts->first_decrease, decrease);
  }
}

struct CountEmitter {
  index_t blocks = 0;
  index_t long_rows = 0;
  index_t chunks = 0;
  __device__ void block(index_t) { ++blocks; }
  __device__ void long_row(index_t, index_t c) {
    ++long_rows;
    chunks += c;
  }
};

/// Threads per block of the segment kernels: a block per segment copies the segment's row
/// pointers to shared memory by coalesced loads, then one thread walks it there. A thread per
/// segment walking row_ptr in global memory (a chain of dependent loads, one binary search per
/// row block) took 15-40 us per matrix on the small levels of an AMG hierarchy (H200, OpenFOAM
/// pressure matrix), as long as the kernels that do the level's arithmetic.
constexpr int kSegmentThreads = 128;

/// The row pointers of segment blockIdx.x in `copy` (kPartitionSegmentRows + 1 entries), for
/// every thread of the block; returns the segment's rows [first, end) as a SegmentRows.
__device__ SegmentRows load_segment(const index_t* row_ptr, index_t num_rows, index_t* copy,
                                    index_t& end) {
  const auto first = static_cast<index_t>(blockIdx.x * size_type{kPartitionSegmentRows});
  end = partition_segment_end(first, num_rows);
  for (index_t k = static_cast<index_t>(threadIdx.x); k <= end - first; k += kSegmentThreads) {
    copy[k] = row_ptr[first + k];
  }
  __syncthreads();
  return SegmentRows{copy, first};
}

/// counts[3 s + 0..2] = blocks, long rows and chunks of segment s = blockIdx.x.
__global__ void __launch_bounds__(kSegmentThreads)
    count_segments(const index_t* row_ptr, index_t num_rows, int tile, index_t* counts) {
  __shared__ index_t copy[kPartitionSegmentRows + 1];
  index_t end = 0;
  const SegmentRows rows = load_segment(row_ptr, num_rows, copy, end);
  if (threadIdx.x != 0) return;
  const size_type s = blockIdx.x;
  CountEmitter emit;
  split_segment(rows, rows.first, end, tile, emit);
  counts[3 * s] = emit.blocks;
  counts[3 * s + 1] = emit.long_rows;
  counts[3 * s + 2] = emit.chunks;
}

/// One block: counts become exclusive offsets in place (segment order), the totals and the facts
/// go to the summary.
__global__ void scan_segments(index_t* counts, index_t segments, const index_t* row_ptr,
                              index_t num_rows, const Facts* facts, long long* summary) {
  using Scan = cub::BlockScan<long long, kScanThreads>;
  __shared__ typename Scan::TempStorage storage;
  const index_t per = (segments + kScanThreads - 1) / kScanThreads;
  const index_t begin = min(segments, static_cast<index_t>(threadIdx.x) * per);
  const index_t end = min(segments, begin + per);
  for (int k = 0; k < 3; ++k) {
    long long local = 0;
    for (index_t s = begin; s < end; ++s) local += counts[3 * s + k];
    long long offset = 0;
    long long total = 0;
    Scan(storage).ExclusiveSum(local, offset, total);
    __syncthreads();
    for (index_t s = begin; s < end; ++s) {
      const index_t c = counts[3 * s + k];
      counts[3 * s + k] = static_cast<index_t>(offset);
      offset += c;
    }
    if (threadIdx.x == 0) summary[kBlocks + k] = total;
  }
  if (threadIdx.x == 0) {
    summary[kFirst] = row_ptr[0];
    summary[kLast] = row_ptr[num_rows];
    summary[kMinLength] = num_rows > 0 ? facts->min_length : 0;
    summary[kMaxLength] = num_rows > 0 ? facts->max_length : 0;
    summary[kEmptyRows] = facts->empty_rows;
    summary[kFirstDecrease] = facts->first_decrease == INT_MAX ? -1 : facts->first_decrease;
  }
}

struct FillEmitter {
  index_t* row_blocks;       // past the leading 0, at the segment's offset
  index_t* long_rows;        // at the segment's offset
  index_t* long_row_chunks;  // past the leading 0, at the segment's offset
  index_t* chunk_long_row;   // at the segment's offset
  index_t slot;              // the next long row's slot
  index_t chunk;             // chunks before the next long row
  index_t block_count = 0;
  index_t long_count = 0;
  __device__ void block(index_t end) { row_blocks[block_count++] = end; }
  __device__ void long_row(index_t row, index_t chunks) {
    long_rows[long_count] = row;
    for (index_t c = 0; c < chunks; ++c) chunk_long_row[c] = slot;
    chunk_long_row += chunks;
    chunk += chunks;
    long_row_chunks[long_count] = chunk;
    ++long_count;
    ++slot;
  }
};

__global__ void __launch_bounds__(kSegmentThreads)
    fill_segments(const index_t* row_ptr, index_t num_rows, int tile, const index_t* offsets,
                  index_t* row_blocks, index_t* long_rows, index_t* long_row_chunks,
                  index_t* chunk_long_row) {
  __shared__ index_t copy[kPartitionSegmentRows + 1];
  index_t end = 0;
  const SegmentRows rows = load_segment(row_ptr, num_rows, copy, end);
  if (threadIdx.x != 0) return;
  const size_type s = blockIdx.x;
  const index_t block_offset = offsets[3 * s];
  const index_t long_offset = offsets[3 * s + 1];
  const index_t chunk_offset = offsets[3 * s + 2];
  FillEmitter emit{row_blocks + 1 + block_offset,
                   long_rows + long_offset,
                   long_row_chunks + 1 + long_offset,
                   chunk_long_row + chunk_offset,
                   long_offset,
                   chunk_offset};
  split_segment(rows, rows.first, end, tile, emit);
}

}  // namespace

PartitionArrays build_partition(const Backend& backend, Span<const index_t> row_ptr, int tile) {
  // The tile and row_ptr's length are checked by the dispatch (spmv.cpp).
  Context& context = *backend.cuda_context();
  const auto num_rows = static_cast<index_t>(row_ptr.size() - 1);
  const index_t segments = (num_rows + kPartitionSegmentRows - 1) / kPartitionSegmentRows;

  DeviceScratch facts(context, sizeof(Facts));
  DeviceScratch summary(context, sizeof(long long) * kSummaryCount);
  DeviceScratch counts(context, sizeof(index_t) * 3 * static_cast<std::size_t>(segments));
  init_facts<<<1, 1, 0, context.stream>>>(facts.as<Facts>());
  check_launch("spmv::build_partition (init)");
  if (num_rows > 0) {
    reduce_facts<<<blocks_for(num_rows, kBlock, 4096), kBlock, 0, context.stream>>>(
        row_ptr.data(), num_rows, facts.as<Facts>());
    check_launch("spmv::build_partition (facts)");
    count_segments<<<static_cast<unsigned int>(segments), kSegmentThreads, 0, context.stream>>>(
        row_ptr.data(), num_rows, tile, counts.as<index_t>());
    check_launch("spmv::build_partition (count)");
  }
  scan_segments<<<1, kScanThreads, 0, context.stream>>>(counts.as<index_t>(), segments,
                                                        row_ptr.data(), num_rows, facts.as<Facts>(),
                                                        summary.as<long long>());
  check_launch("spmv::build_partition (scan)");
  long long host[kSummaryCount] = {};
  read_integers(context, summary.as<long long>(), kSummaryCount, host);

  PartitionArrays out;
  out.tile = tile;
  out.facts.first = host[kFirst];
  out.facts.last = host[kLast];
  out.facts.first_decrease = host[kFirstDecrease];
  out.facts.min_length = static_cast<index_t>(host[kMinLength]);
  out.facts.max_length = static_cast<index_t>(host[kMaxLength]);
  out.facts.empty_rows = static_cast<index_t>(host[kEmptyRows]);
  if (!out.facts.valid()) return out;

  out.row_blocks = Array<index_t>(backend, static_cast<std::size_t>(host[kBlocks]) + 1);
  out.long_rows = Array<index_t>(backend, static_cast<std::size_t>(host[kLongRows]));
  out.long_row_chunks = Array<index_t>(backend, static_cast<std::size_t>(host[kLongRows]) + 1);
  out.chunk_long_row = Array<index_t>(backend, static_cast<std::size_t>(host[kChunks]));
  out.counters = Array<unsigned int>(backend, static_cast<std::size_t>(host[kLongRows]) + 1);
  KRYFLOW_CUDA_CHECK(cudaMemsetAsync(out.counters.data(), 0, out.counters.size() * sizeof(unsigned),
                                     context.stream));
  KRYFLOW_CUDA_CHECK(cudaMemsetAsync(out.row_blocks.data(), 0, sizeof(index_t), context.stream));
  KRYFLOW_CUDA_CHECK(
      cudaMemsetAsync(out.long_row_chunks.data(), 0, sizeof(index_t), context.stream));
  if (num_rows > 0) {
    fill_segments<<<static_cast<unsigned int>(segments), kSegmentThreads, 0, context.stream>>>(
        row_ptr.data(), num_rows, tile, counts.as<index_t>(), out.row_blocks.data(),
        out.long_rows.data(), out.long_row_chunks.data(), out.chunk_long_row.data());
    check_launch("spmv::build_partition (fill)");
  }
  return out;
}

}  // namespace kryflow::kernels::spmv::cuda
