// The row-block partition built on the device (spmv::build_partitions), for several matrices
// in three launches: a block per segment (kPartitionSegmentRows rows) copies its row pointers
// to shared memory, reduces their facts and counts its row blocks with the host's split_segment;
// a block per matrix scans the counts; after the host has read every matrix's sizes and facts
// (one wait), a block per segment fills its part. The partition is the one partition_rows gives
// on the host.
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <cub/cub.cuh>
#include <limits>
#include <vector>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"
#include "kernels/backend/device_scratch.cuh"
#include "kernels/spmv/partition_walk.hpp"
#include "kernels/spmv/spmv.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::spmv::cuda {
namespace {

using kernels::cuda::check_launch;
using kernels::cuda::Context;
using kernels::cuda::DeviceScratch;
using kernels::cuda::read_integers;
using size_type = long long;

constexpr int kScanThreads = 256;

/// The summary the host reads per matrix (long long each).
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

/// Integer facts of a segment's rows (kFacts ints per segment): the smallest and largest row
/// length, the empty rows and the first row whose length is negative (INT_MAX: none).
enum SegmentFact { kMinFact, kMaxFact, kEmptyFact, kDecreaseFact, kFacts };

struct MinOp {
  __device__ int operator()(int a, int b) const { return a < b ? a : b; }
};
struct MaxOp {
  __device__ int operator()(int a, int b) const { return a > b ? a : b; }
};

/// The facts of some rows, combined by min, max, sum and min (any order gives the same result).
struct RowFacts {
  int lo = INT_MAX;
  int hi = INT_MIN;
  int empty = 0;
  int decrease = INT_MAX;  // the first row whose length is negative
};

/// The block's facts, on thread 0.
template <int kThreads, class Storage>
__device__ RowFacts reduce_facts(RowFacts f, Storage& storage) {
  using Reduce = cub::BlockReduce<int, kThreads>;
  f.lo = Reduce(storage).Reduce(f.lo, MinOp());
  __syncthreads();
  f.hi = Reduce(storage).Reduce(f.hi, MaxOp());
  __syncthreads();
  f.empty = Reduce(storage).Sum(f.empty);
  __syncthreads();
  f.decrease = Reduce(storage).Reduce(f.decrease, MinOp());
  return f;
}

/// Matrices per launch: the tables travel as kernel parameters (about 2 KB).
constexpr int kBatch = 32;

/// The matrices of one launch: matrix m has segments segment_begin[m] .. segment_begin[m + 1]
/// - 1 of the launch's grid (a block each), numbered over every launch of build_partitions by
/// first_segment (the counts' and facts' index).
struct BatchRows {
  int count = 0;
  index_t first_segment = 0;
  const index_t* row_ptr[kBatch] = {};
  index_t num_rows[kBatch] = {};
  int tile[kBatch] = {};
  index_t segment_begin[kBatch + 1] = {};
};

/// Where the fill writes matrix m's partition (null row_blocks: row_ptr is invalid, skipped).
struct BatchOutputs {
  index_t* row_blocks[kBatch] = {};
  index_t* long_rows[kBatch] = {};
  index_t* long_row_chunks[kBatch] = {};
  index_t* chunk_long_row[kBatch] = {};
  unsigned int* counters[kBatch] = {};
  index_t counter_count[kBatch] = {};
};

/// The matrix of this block, and the block's segment within it.
__device__ int batch_matrix(const BatchRows& rows, index_t& segment) {
  int m = 0;
  while (m + 1 < rows.count && static_cast<index_t>(blockIdx.x) >= rows.segment_begin[m + 1]) ++m;
  segment = static_cast<index_t>(blockIdx.x) - rows.segment_begin[m];
  return m;
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

/// The row pointers of `segment` in `copy` (kPartitionSegmentRows + 1 entries), for every thread
/// of the block; returns the segment's rows [first, end) as a SegmentRows.
__device__ SegmentRows load_segment(const index_t* row_ptr, index_t num_rows, index_t segment,
                                    index_t* copy, index_t& end) {
  const auto first = static_cast<index_t>(segment * size_type{kPartitionSegmentRows});
  end = partition_segment_end(first, num_rows);
  for (index_t k = static_cast<index_t>(threadIdx.x); k <= end - first; k += kSegmentThreads) {
    copy[k] = row_ptr[first + k];
  }
  __syncthreads();
  return SegmentRows{copy, first};
}

/// For segment s = first_segment + blockIdx.x: counts[3 s + 0..2] = its row blocks, long rows
/// and chunks; facts[kFacts s + ...] = the facts of its rows.
__global__ void __launch_bounds__(kSegmentThreads)
    count_segments(BatchRows batch, index_t* counts, int* facts) {
  using Reduce = cub::BlockReduce<int, kSegmentThreads>;
  __shared__ typename Reduce::TempStorage storage;
  __shared__ index_t copy[kPartitionSegmentRows + 1];
  index_t segment = 0;
  const int m = batch_matrix(batch, segment);
  index_t end = 0;
  const SegmentRows rows = load_segment(batch.row_ptr[m], batch.num_rows[m], segment, copy, end);
  RowFacts f;
  for (index_t i = rows.first + static_cast<index_t>(threadIdx.x); i < end; i += kSegmentThreads) {
    const int length = rows[i + 1] - rows[i];
    f.lo = min(f.lo, length);
    f.hi = max(f.hi, length);
    f.empty += length == 0 ? 1 : 0;
    if (length < 0) f.decrease = min(f.decrease, static_cast<int>(i));
  }
  f = reduce_facts<kSegmentThreads>(f, storage);
  if (threadIdx.x != 0) return;
  const size_type s = batch.first_segment + static_cast<size_type>(blockIdx.x);
  facts[kFacts * s + kMinFact] = f.lo;
  facts[kFacts * s + kMaxFact] = f.hi;
  facts[kFacts * s + kEmptyFact] = f.empty;
  facts[kFacts * s + kDecreaseFact] = f.decrease;
  CountEmitter emit;
  split_segment(rows, rows.first, end, batch.tile[m], emit);
  counts[3 * s] = emit.blocks;
  counts[3 * s + 1] = emit.long_rows;
  counts[3 * s + 2] = emit.chunks;
}

/// A block per matrix m = blockIdx.x: its segments' counts become exclusive offsets in place
/// (segment order), and its totals and facts go to summary[kSummaryCount * (matrix) + ...],
/// matrix = first_matrix + m.
__global__ void scan_segments(BatchRows batch, int first_matrix, index_t* counts, const int* facts,
                              long long* summary) {
  using Scan = cub::BlockScan<long long, kScanThreads>;
  using Reduce = cub::BlockReduce<int, kScanThreads>;
  __shared__ typename Scan::TempStorage storage;
  __shared__ typename Reduce::TempStorage reduce_storage;
  const int m = static_cast<int>(blockIdx.x);
  const index_t first = batch.first_segment + batch.segment_begin[m];
  const index_t segments = batch.segment_begin[m + 1] - batch.segment_begin[m];
  const index_t per = (segments + kScanThreads - 1) / kScanThreads;
  const index_t begin = first + min(segments, static_cast<index_t>(threadIdx.x) * per);
  const index_t end = min(first + segments, begin + per);
  long long* out = summary + kSummaryCount * static_cast<size_type>(first_matrix + m);
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
    if (threadIdx.x == 0) out[kBlocks + k] = total;
  }
  RowFacts f;
  for (index_t s = begin; s < end; ++s) {
    f.lo = min(f.lo, facts[kFacts * s + kMinFact]);
    f.hi = max(f.hi, facts[kFacts * s + kMaxFact]);
    f.empty += facts[kFacts * s + kEmptyFact];
    f.decrease = min(f.decrease, facts[kFacts * s + kDecreaseFact]);
  }
  f = reduce_facts<kScanThreads>(f, reduce_storage);
  if (threadIdx.x == 0) {
    const index_t num_rows = batch.num_rows[m];
    out[kFirst] = batch.row_ptr[m][0];
    out[kLast] = batch.row_ptr[m][num_rows];
    out[kMinLength] = num_rows > 0 ? f.lo : 0;
    out[kMaxLength] = num_rows > 0 ? f.hi : 0;
    out[kEmptyRows] = f.empty;
    out[kFirstDecrease] = f.decrease == INT_MAX ? -1 : f.decrease;
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

/// Writes each segment's part of its matrix's partition at the scanned offsets; the matrix's
/// segments also write the two leading zeros and zero its completion counters.
__global__ void __launch_bounds__(kSegmentThreads)
    fill_segments(BatchRows batch, BatchOutputs outputs, const index_t* offsets) {
  __shared__ index_t copy[kPartitionSegmentRows + 1];
  index_t segment = 0;
  const int m = batch_matrix(batch, segment);
  if (outputs.row_blocks[m] == nullptr) return;
  const index_t segments = batch.segment_begin[m + 1] - batch.segment_begin[m];
  for (index_t k = segment * kSegmentThreads + static_cast<index_t>(threadIdx.x);
       k < outputs.counter_count[m]; k += segments * kSegmentThreads) {
    outputs.counters[m][k] = 0u;
  }
  index_t end = 0;
  const SegmentRows rows = load_segment(batch.row_ptr[m], batch.num_rows[m], segment, copy, end);
  if (threadIdx.x != 0) return;
  if (segment == 0) {
    outputs.row_blocks[m][0] = 0;
    outputs.long_row_chunks[m][0] = 0;
  }
  const size_type s = batch.first_segment + static_cast<size_type>(blockIdx.x);
  const index_t block_offset = offsets[3 * s];
  const index_t long_offset = offsets[3 * s + 1];
  const index_t chunk_offset = offsets[3 * s + 2];
  FillEmitter emit{outputs.row_blocks[m] + 1 + block_offset,
                   outputs.long_rows[m] + long_offset,
                   outputs.long_row_chunks[m] + 1 + long_offset,
                   outputs.chunk_long_row[m] + chunk_offset,
                   long_offset,
                   chunk_offset};
  split_segment(rows, rows.first, end, batch.tile[m], emit);
}

index_t segments_of(index_t num_rows) {
  return (num_rows + kPartitionSegmentRows - 1) / kPartitionSegmentRows;
}

}  // namespace

std::vector<PartitionArrays> build_partitions(const Backend& backend,
                                              const std::vector<PartitionRequest>& requests) {
  // The tiles and row_ptr's lengths are checked by the dispatch (spmv.cpp).
  Context& context = *backend.cuda_context();
  const int count = static_cast<int>(requests.size());
  // The launches' tables: requests kBatch at a time, segments numbered over all of them.
  std::vector<BatchRows> batches;
  size_type total_segments = 0;
  for (int r = 0; r < count; ++r) {
    if (r % kBatch == 0) {
      batches.emplace_back();
      batches.back().first_segment = static_cast<index_t>(total_segments);
    }
    BatchRows& b = batches.back();
    const int m = b.count++;
    const auto num_rows = static_cast<index_t>(requests[r].row_ptr.size() - 1);
    b.row_ptr[m] = requests[r].row_ptr.data();
    b.num_rows[m] = num_rows;
    b.tile[m] = requests[r].tile;
    b.segment_begin[m + 1] = b.segment_begin[m] + segments_of(num_rows);
    total_segments += segments_of(num_rows);
  }
  if (total_segments > std::numeric_limits<index_t>::max() / 4) {
    throw NotSupported("spmv::build_partitions: too many rows in one call");
  }
  DeviceScratch counts(context, sizeof(index_t) * 3 * static_cast<std::size_t>(total_segments));
  DeviceScratch facts(context, sizeof(int) * kFacts * static_cast<std::size_t>(total_segments));
  DeviceScratch summary(context,
                        sizeof(long long) * kSummaryCount * static_cast<std::size_t>(count));
  for (std::size_t b = 0; b < batches.size(); ++b) {
    const BatchRows& batch = batches[b];
    const index_t segments = batch.segment_begin[batch.count];
    if (segments > 0) {
      count_segments<<<static_cast<unsigned int>(segments), kSegmentThreads, 0, context.stream>>>(
          batch, counts.as<index_t>(), facts.as<int>());
      check_launch("spmv::build_partitions (count)");
    }
    scan_segments<<<static_cast<unsigned int>(batch.count), kScanThreads, 0, context.stream>>>(
        batch, static_cast<int>(b) * kBatch, counts.as<index_t>(), facts.as<int>(),
        summary.as<long long>());
    check_launch("spmv::build_partitions (scan)");
  }
  std::vector<long long> host(static_cast<std::size_t>(kSummaryCount) * count);
  read_integers(context, summary.as<long long>(), host.size(), host.data());

  std::vector<PartitionArrays> out(requests.size());
  for (std::size_t b = 0; b < batches.size(); ++b) {
    const BatchRows& batch = batches[b];
    BatchOutputs outputs;
    for (int m = 0; m < batch.count; ++m) {
      const std::size_t r = b * kBatch + static_cast<std::size_t>(m);
      const long long* h = host.data() + kSummaryCount * r;
      PartitionArrays& p = out[r];
      p.tile = requests[r].tile;
      p.facts.first = h[kFirst];
      p.facts.last = h[kLast];
      p.facts.first_decrease = h[kFirstDecrease];
      p.facts.min_length = static_cast<index_t>(h[kMinLength]);
      p.facts.max_length = static_cast<index_t>(h[kMaxLength]);
      p.facts.empty_rows = static_cast<index_t>(h[kEmptyRows]);
      if (!p.facts.valid()) continue;
      p.row_blocks = Array<index_t>(backend, static_cast<std::size_t>(h[kBlocks]) + 1);
      p.long_rows = Array<index_t>(backend, static_cast<std::size_t>(h[kLongRows]));
      p.long_row_chunks = Array<index_t>(backend, static_cast<std::size_t>(h[kLongRows]) + 1);
      p.chunk_long_row = Array<index_t>(backend, static_cast<std::size_t>(h[kChunks]));
      p.counters = Array<unsigned int>(backend, static_cast<std::size_t>(h[kLongRows]) + 1);
      if (batch.num_rows[m] == 0) {  // no segment writes the leading zeros
        KRYFLOW_CUDA_CHECK(
            cudaMemsetAsync(p.counters.data(), 0, sizeof(unsigned int), context.stream));
        KRYFLOW_CUDA_CHECK(
            cudaMemsetAsync(p.row_blocks.data(), 0, sizeof(index_t), context.stream));
        KRYFLOW_CUDA_CHECK(
            cudaMemsetAsync(p.long_row_chunks.data(), 0, sizeof(index_t), context.stream));
        continue;
      }
      outputs.row_blocks[m] = p.row_blocks.data();
      outputs.long_rows[m] = p.long_rows.data();
      outputs.long_row_chunks[m] = p.long_row_chunks.data();
      outputs.chunk_long_row[m] = p.chunk_long_row.data();
      outputs.counters[m] = p.counters.data();
      outputs.counter_count[m] = static_cast<index_t>(p.counters.size());
    }
    const index_t segments = batch.segment_begin[batch.count];
    if (segments > 0) {
      fill_segments<<<static_cast<unsigned int>(segments), kSegmentThreads, 0, context.stream>>>(
          batch, outputs, counts.as<index_t>());
      check_launch("spmv::build_partitions (fill)");
    }
  }
  return out;
}

}  // namespace kryflow::kernels::spmv::cuda
