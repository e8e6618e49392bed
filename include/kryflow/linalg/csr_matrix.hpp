// Compressed sparse row matrices (double values, 32-bit indices) as LinearOperators.
#pragma once

#include <cstdint>
#include <vector>

#include "kryflow/linalg/coo_matrix.hpp"
#include "kryflow/linalg/linear_operator.hpp"

namespace kryflow {

namespace kernels::spmv {
struct CsrView;
}

/// Row-length statistics of a CSR pattern (stored entries per row; all 0 without rows).
struct RowLengthStats {
  index_t min = 0;
  index_t max = 0;
  double mean = 0.0;       ///< nnz / num_rows
  index_t empty_rows = 0;  ///< rows storing no entry
};

/// A CSR matrix on one backend: row_ptr (num_rows + 1), col_idx and values (nnz each), columns
/// sorted within each row, no duplicates (Saad, Iterative Methods, 2nd ed., sec. 3.4).
/// SpMV costs 12 bytes per stored entry plus 4 per row plus the vectors.
/// The cpu and cuda products walk a row-block partition built at construction and share
/// per-matrix scratch, so products with one matrix must not run concurrently from several host
/// threads (calls on one backend's stream run in order). Move-only (copy_to copies).
/// Allocations on the backend throw OutOfMemory when they do not fit; on cuda any call may
/// throw BackendError when the device reports a failure.
class CsrMatrix : public LinearOperator {
 public:
  CsrMatrix() = default;
  /// Validates and uploads host CSR arrays: row_ptr of num_rows + 1 entries, col_idx and values
  /// of nnz entries each, 0-based. Explicit zeros are kept. Throws InvalidInput when a dimension
  /// is negative, the array lengths disagree, row_ptr does not run non-decreasing from 0 to nnz,
  /// a column index is outside 0..num_cols-1, or a row has unsorted or duplicate columns;
  /// NotSupported when nnz exceeds the 32-bit index_t range.
  static CsrMatrix from_host(const Backend& backend, index_t num_rows, index_t num_cols,
                             std::vector<index_t> row_ptr, std::vector<index_t> col_idx,
                             std::vector<double> values);
  /// Compresses triplets: sorts each row by column and sums duplicates (a sum that is 0 stays
  /// stored). Throws InvalidInput when a dimension is negative, the triplet arrays differ in
  /// length, or an index is outside the num_rows x num_cols matrix (the message names the
  /// 1-based entry and position); NotSupported when the compressed nnz exceeds index_t.
  static CsrMatrix from_coo(const Backend& backend, const CooMatrix& coo);

  /// A deep copy on `target` (pattern, values and the row-block partition).
  CsrMatrix copy_to(const Backend& target) const;
  /// Replaces the values, in the stored order (same pattern): `values` holds nnz() entries on
  /// any backend and is copied. Throws DimensionMismatch for another length.
  void update_values(const Array<double>& values);

  index_t num_rows() const override { return num_rows_; }
  index_t num_cols() const override { return num_cols_; }
  const Backend& backend() const override { return values_.backend(); }
  std::int64_t nnz() const noexcept { return static_cast<std::int64_t>(values_.size()); }

  /// y = A x (see LinearOperator::apply). Throws DimensionMismatch on wrong sizes,
  /// InvalidInput when x or y lives on another backend or x and y are the same vector.
  void apply(const Vector& x, Vector& y) const override;
  /// r = b - A x in one pass. b and r have num_rows() entries, x num_cols(); all on backend();
  /// r distinct from x and b. Throws DimensionMismatch on wrong sizes, InvalidInput when an
  /// operand lives on another backend or r is x.
  void residual(const Vector& b, const Vector& x, Vector& r) const override;
  /// y = A x and returns x·y in one pass, deterministic (same input, same bits) in the order of
  /// kernels/spmv/spmv.hpp, which may differ from dot()'s in the last bits. Errors as apply,
  /// plus DimensionMismatch when A is not square.
  double apply_dot(const Vector& x, Vector& y) const override;
  /// d_i = a_ii (0 where row i stores no diagonal entry). d has num_rows() entries on
  /// backend(); throws DimensionMismatch or InvalidInput otherwise.
  void diagonal(Vector& d) const override;

  const Array<index_t>& row_ptr() const noexcept { return row_ptr_; }
  const Array<index_t>& col_idx() const noexcept { return col_idx_; }
  const Array<double>& values() const noexcept { return values_; }
  const RowLengthStats& row_length_stats() const noexcept { return stats_; }
  /// Most stored entries of a row block of the cpu and cuda kernels (kernels/spmv/spmv.hpp):
  /// by default kernels::spmv::default_tile of the mean row length.
  int spmv_tile() const noexcept { return tile_; }
  /// Rebuilds the row-block partition for `tile` (1024, 2048 or 4096), a tuning knob: it
  /// changes the speed of the cpu and cuda kernels and the rounding of rows with more than
  /// `tile` entries, the same on both backends. Downloads the row pointers once when the matrix
  /// lives on a device. Throws InvalidInput for another tile.
  void set_spmv_tile(int tile);
  /// Row blocks of the partition (0 for a matrix without rows).
  index_t num_row_blocks() const noexcept {
    return row_blocks_.empty() ? 0 : static_cast<index_t>(row_blocks_.size() - 1);
  }
  /// Bytes one SpMV must move at least: values, indices, row pointers, x once and y once.
  double spmv_bytes() const noexcept;

 private:
  CsrMatrix(index_t num_rows, index_t num_cols, Array<index_t> row_ptr, Array<index_t> col_idx,
            Array<double> values, RowLengthStats stats);
  /// Builds the row-block partition from host row pointers and allocates the kernels' scratch.
  void build_partition(const std::vector<index_t>& host_row_ptr, int tile);
  kernels::spmv::CsrView view() const;
  index_t num_rows_ = 0;
  index_t num_cols_ = 0;
  Array<index_t> row_ptr_;
  Array<index_t> col_idx_;
  Array<double> values_;
  RowLengthStats stats_;
  // Row-block partition of the cpu and cuda kernels (kernels::spmv::RowPartition) on the
  // matrix's backend, and their scratch (partial sums and completion counters, written by
  // every product: mutable).
  int tile_ = 0;
  Array<index_t> row_blocks_;
  Array<index_t> long_rows_;
  Array<index_t> long_row_chunks_;
  Array<index_t> chunk_long_row_;
  mutable Array<double> block_partials_;
  mutable Array<double> chunk_partials_;
  mutable Array<unsigned int> counters_;
};

}  // namespace kryflow
