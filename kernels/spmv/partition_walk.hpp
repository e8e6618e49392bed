// The row-block split of one partition segment, shared by the host partition (partition_rows)
// and the cuda kernels that build a partition on the device (partition_cuda.cu), so that both
// give the same partition.
#pragma once

#include <cstdint>

#include "kernels/backend/host_device.hpp"
#include "kernels/spmv/spmv.hpp"

namespace kryflow::kernels::spmv {

/// Chunks of kLongRowChunk entries of a long row of `length` entries.
KRYFLOW_HOST_DEVICE inline index_t long_row_chunk_count(std::int64_t length) {
  return static_cast<index_t>((length + kLongRowChunk - 1) / kLongRowChunk);
}

/// The end of the partition segment that starts at row `first` (a multiple of
/// kPartitionSegmentRows below num_rows).
KRYFLOW_HOST_DEVICE inline index_t partition_segment_end(index_t first, index_t num_rows) {
  return num_rows - first > kPartitionSegmentRows ? first + kPartitionSegmentRows : num_rows;
}

/// Row pointers first..end of a segment held in a local copy: row_ptr[i] = copy[i - first].
struct SegmentRows {
  const index_t* copy;
  index_t first;
  KRYFLOW_HOST_DEVICE index_t operator[](index_t i) const { return copy[i - first]; }
};

/// Splits rows [first, end) greedily into row blocks (partition_rows): a row of more than
/// `tile` entries is a block of its own (emit.long_row(i, chunks), then emit.block(i + 1));
/// otherwise the block starting at row i takes rows while it holds at most kRowBlockRows rows
/// and `tile` entries (emit.block(e) for the block [i, e)). The greedy end is found by a
/// binary search over row_ptr (non-decreasing): the largest e <= min(i + kRowBlockRows, end)
/// with row_ptr[e] - row_ptr[i] <= tile, which is where the row-by-row greedy loop stops.
/// O(blocks * log2(kRowBlockRows)) reads; terminates whatever row_ptr holds. `row_ptr` is
/// anything that gives row_ptr[i] for first <= i <= end (a pointer, or SegmentRows).
template <class RowPtr, class Emit>
KRYFLOW_HOST_DEVICE inline void split_segment(const RowPtr& row_ptr, index_t first, index_t end,
                                              int tile, Emit& emit) {
  index_t i = first;
  while (i < end) {
    const std::int64_t start = row_ptr[i];
    const std::int64_t length = std::int64_t{row_ptr[i + 1]} - start;
    if (length > tile) {
      emit.long_row(i, long_row_chunk_count(length));
      emit.block(++i);
      continue;
    }
    index_t lo = i + 1;
    index_t hi = end - i > kRowBlockRows ? i + kRowBlockRows : end;
    while (lo < hi) {  // invariant: row_ptr[lo] - start <= tile (lo = i + 1 holds)
      const index_t mid = lo + (hi - lo + 1) / 2;
      if (std::int64_t{row_ptr[mid]} - start <= tile) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    emit.block(lo);
    i = lo;
  }
}

}  // namespace kryflow::kernels::spmv
