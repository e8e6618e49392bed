// Contract of the sparse setup kernels: prefix sums, transposition, gathers and the two phases
// of the sparse matrix-matrix product (SpGEMM) that algebraic multigrid builds its Galerkin
// products with.
//
// Same layout as kernels/blas: namespaces reference (the oracle), cpu (OpenMP) and cuda with
// identical signatures, and unqualified functions that dispatch on the backend
// (kernels/backend/dispatch.hpp). Every pointer is an address on the backend. Column indices
// within a row are sorted and unique in every input, and every output pattern is written sorted
// and unique. On cuda nothing waits for the device except exclusive_scan (it returns the
// total): one wait.
//
// Every kernel is deterministic: the same input gives the same bits on every backend. The
// numeric SpGEMM adds the products of row i of C = A B in the order of Gustavson's row-by-row
// algorithm (F. Gustavson, ACM TOMS 4, 1978): for each stored a_ik in order, for each stored
// b_kj in order, c_ij += a_ik b_kj, starting from c_ij = 0.
#pragma once

#include <cstdint>

#include "kernels/backend/host_device.hpp"
#include "kryflow/core/array.hpp"

namespace kryflow::kernels::sparse_setup {

/// A CSR pattern as the kernels see it: row_ptr (num_rows + 1), col_idx (row_ptr[num_rows]).
struct PatternView {
  index_t num_rows = 0;
  index_t num_cols = 0;
  const index_t* row_ptr = nullptr;
  const index_t* col_idx = nullptr;
};

/// A CSR matrix in double: a pattern and its values (row_ptr[num_rows] entries).
struct MatrixView {
  PatternView pattern;
  const double* values = nullptr;
};

/// A 64-bit hash of the ordered pair (i, j) (splitmix64 of i * 2^32 + j), for
/// pattern_symmetric: the multiset of an pattern's entries against that of its transpose.
KRYFLOW_HOST_DEVICE inline std::uint64_t pair_hash(index_t i, index_t j) {
  std::uint64_t z = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(i)) << 32) |
                    static_cast<std::uint32_t>(j);
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The row holding entry k of the pattern a (0 <= k < nnz): the last r with row_ptr[r] <= k,
/// by a binary search of the row pointers (log2(rows) steps).
KRYFLOW_HOST_DEVICE inline index_t row_of_entry(const PatternView& a, std::int64_t k) {
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

#define KRYFLOW_SPARSE_SETUP_DECLARATIONS                                                      \
  /** offsets[0] = 0, offsets[i + 1] = offsets[i] + counts[i] (offsets has counts.size() + 1   \
      entries); returns the total, read on the host (one wait on a device). */                 \
  std::int64_t exclusive_scan(const Backend& backend, Span<const index_t> counts,              \
                              Span<index_t> offsets);                                          \
  /** exclusive_scan for a caller that knows a bound of the total (the exact total of a        \
      transpose: its source's entries; an upper bound where arrays are sized by bounds), which \
      must fit index_t: no wait on a device; the host backends check the total and throw       \
      BackendError when it exceeds the bound. */                                               \
  void exclusive_scan_bounded(const Backend& backend, Span<const index_t> counts,              \
                              Span<index_t> offsets, std::int64_t bound);                      \
  /** counts[j] = stored entries of column j of a (counts has a.num_cols entries) */           \
  void transpose_count(const Backend& backend, const PatternView& a, Span<index_t> counts);    \
  /** The pattern of a^T: at_row_ptr (a.num_cols + 1, from exclusive_scan of transpose_count)  \
      given; writes at_col_idx and source (nnz = a's entries each): entry k of a^T is entry    \
      source[k] of a. Rows of a^T list their columns in increasing order. No wait. */          \
  void transpose_fill(const Backend& backend, const PatternView& a, std::int64_t nnz,          \
                      const index_t* at_row_ptr, index_t* at_col_idx, index_t* source);        \
  /** Whether the square pattern a equals its transpose. The reference compares a with a^T;    \
      cpu and cuda compare sum_k pair_hash(i_k, j_k) with sum_k pair_hash(j_k, i_k) over the   \
      entries (i_k, j_k), modulo 2^64: equal for every symmetric pattern, and for a            \
      nonsymmetric one with probability about 2^-64. One wait on a device. */                  \
  bool pattern_symmetric(const Backend& backend, const PatternView& a);                        \
  /** The first (0-based) row of a whose columns are not strictly increasing within            \
      0..a.num_cols-1, or -1 when every row is valid (row_ptr must already be valid: from 0 to \
      nnz, non-decreasing). One wait on a device. */                                           \
  index_t first_invalid_row(const Backend& backend, const PatternView& a);                     \
  /** The scalar CSR pattern of a block pattern `blocks` with B x B blocks (blocks stored row  \
      by row, each block's B^2 values row-major, as BSR keeps them): row_ptr (blocks.num_rows  \
      B + 1), col_idx and block_position (B^2 nnzb each; entry k of the CSR pattern is value   \
      block_position[k] of the BSR array). Row r of block row I holds, for each block k of I   \
      in order, columns col_idx_b[k] B .. col_idx_b[k] B + B - 1. No wait on a device. */      \
  void expand_blocks(const Backend& backend, const PatternView& blocks, index_t block_size,    \
                     index_t* row_ptr, index_t* col_idx, index_t* block_position);             \
  /** y[k] = x[map[k]] for k < y.size() */                                                     \
  void gather(const Backend& backend, Span<const double> x, Span<const index_t> map,           \
              Span<double> y);                                                                 \
  /** Symbolic phase 1 of C = A B: counts[i] = distinct columns of row i of C (counts has      \
      a.num_rows entries); a.num_cols == b.num_rows. */                                        \
  void spgemm_count(const Backend& backend, const PatternView& a, const PatternView& b,        \
                    Span<index_t> counts);                                                     \
  /** Symbolic phase 2: writes c_col_idx (sorted per row) for c_row_ptr from exclusive_scan of \
      spgemm_count. */                                                                         \
  void spgemm_fill(const Backend& backend, const PatternView& a, const PatternView& b,         \
                   const index_t* c_row_ptr, index_t* c_col_idx);                              \
  /** Numeric phase: c_values of C = A B on the pattern c from spgemm_fill (or any pattern     \
      holding every column of the product; the others get 0), in Gustavson's order. */         \
  void spgemm_numeric(const Backend& backend, const MatrixView& a, const MatrixView& b,        \
                      const PatternView& c, double* c_values);                                 \
  /** spgemm_fill and spgemm_numeric in one call (on cuda the short rows in one pass), for a   \
      value-only re-setup that kept only C's row pointers: writes c_col_idx (sorted per row)   \
      and c_values of C = A B for c_row_ptr from exclusive_scan of spgemm_count; the bits of   \
      the two phases one after the other. */                                                   \
  void spgemm_fill_numeric(const Backend& backend, const MatrixView& a, const MatrixView& b,   \
                           const index_t* c_row_ptr, index_t* c_col_idx, double* c_values);

/// Dispatch.
KRYFLOW_SPARSE_SETUP_DECLARATIONS

namespace reference {
KRYFLOW_SPARSE_SETUP_DECLARATIONS
}
namespace cpu {
KRYFLOW_SPARSE_SETUP_DECLARATIONS
}
namespace cuda {
KRYFLOW_SPARSE_SETUP_DECLARATIONS
}

#undef KRYFLOW_SPARSE_SETUP_DECLARATIONS

}  // namespace kryflow::kernels::sparse_setup
