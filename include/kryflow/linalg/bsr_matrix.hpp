// Block compressed sparse row matrices (square B x B blocks, row-major) as LinearOperators.
#pragma once

#include <cstdint>

#include "kryflow/core/precision.hpp"
#include "kryflow/linalg/csr_matrix.hpp"

namespace kryflow {

namespace kernels::bsr {
template <class V>
struct BsrView;
}

/// The cuda SpMV kernel of a BsrMatrix (kernels/bsr/bsr.hpp describes both); the reference and
/// cpu backends have one kernel each and ignore the choice. All give the same bits.
enum class BsrKernel {
  block_row,    ///< B threads per block row, one scalar row each
  coefficient,  ///< one thread per block coefficient, products staged in shared memory
  automatic,    ///< per block size and value type, from kernels::bsr::automatic_variant
};

/// How a CSR pattern tiles into B x B blocks, computed on host CSR arrays.
struct BlockTiling {
  /// Every row and column count is a multiple of B and every block that holds a stored entry
  /// holds B^2 of them ("strict tiling").
  bool strict = false;
  /// Rows and columns are multiples of B (the pattern can be stored with fill-in).
  bool divisible = false;
  /// 0-based block row of the first block that is less than fully stored (-1 when strict or
  /// not divisible).
  index_t first_partial_block_row = -1;
};

/// Checks whether the CSR pattern (num_rows + 1 row pointers, sorted unique columns per row,
/// as CsrMatrix stores them) tiles strictly into block_size x block_size blocks: for each block
/// row, its first row's columns must be whole aligned groups of B and its other B - 1 rows must
/// have the same columns. O(nnz), stops at the first failure. block_size >= 1 (1 always tiles).
BlockTiling check_block_tiling(index_t num_rows, index_t num_cols, Span<const index_t> row_ptr,
                               Span<const index_t> col_idx, int block_size);

/// The largest B in 8, 7, ..., 2 for which the pattern tiles strictly (check_block_tiling), else
/// 1. Host CSR arrays as in check_block_tiling; cheap enough for the CLI advisor (each failing B
/// usually stops in its first block row).
int detect_block_size(index_t num_rows, index_t num_cols, Span<const index_t> row_ptr,
                      Span<const index_t> col_idx);

/// A BSR matrix on one backend (Saad, Iterative Methods, 2nd ed., sec. 3.4; cuSPARSE BSR with
/// CUSPARSE_DIRECTION_ROW): num_rows / B block rows, block_row_ptr (num_block_rows + 1),
/// block_col_idx (num_blocks, increasing within a block row) and num_blocks B x B blocks of
/// values stored row-major, in float64 or float32 (products and sums in double either way).
/// Every product adds row i's entries in increasing column order one at a time
/// (docs/decisions/002-formats-sum-like-csr.md), so apply, residual and diagonal give the same
/// bits as the CSR reference kernels on to_csr(), on every backend and with either cuda kernel.
/// SpMV moves B^2 value bytes and 4 index bytes per block. Products with one matrix must not
/// run concurrently from several host threads (shared scratch). Move-only (copy_to copies).
/// Allocations throw OutOfMemory; on cuda any call may throw BackendError.
class BsrMatrix : public LinearOperator {
 public:
  BsrMatrix() = default;

  /// Converts a CSR matrix (on any backend; its arrays are downloaded to the host once) into
  /// B x B blocks on A's backend. Every block that holds a stored CSR entry is stored whole;
  /// entries of a stored block that A does not store become explicit zeros (fill-in).
  /// Strict tiling (allow_fill = false): a block that would need fill-in is an error.
  /// Throws InvalidInput when block_size is outside 1..32, when num_rows or num_cols is not a
  /// multiple of it, or, without allow_fill, when a block would be less than fully populated:
  /// the message names the first such (1-based) block row and the block size.
  /// NotSupported when the stored values exceed the 32-bit index range.
  static BsrMatrix from_csr(const CsrMatrix& A, int block_size,
                            Precision precision = Precision::float64, bool allow_fill = false);
  /// from_csr with allow_fill = true; fill_ratio() tells how many entries were added.
  static BsrMatrix from_csr_filled(const CsrMatrix& A, int block_size,
                                   Precision precision = Precision::float64) {
    return from_csr(A, block_size, precision, true);
  }
  /// detect_block_size on A's pattern (downloads row pointers and column indices when A lives
  /// on a device).
  static int detect_block_size(const CsrMatrix& A);

  /// The matrix as CSR on backend(): every stored block entry (fill-in zeros included) in
  /// increasing column order, float32 values widened to double. For a strictly tiled A it is A
  /// exactly (float32: A's values rounded to float).
  CsrMatrix to_csr() const;
  /// A deep copy on `target`.
  BsrMatrix copy_to(const Backend& target) const;
  /// Replaces the values from CSR-ordered values of the pattern this matrix was converted from
  /// (source_nnz() entries, on any backend; copied to backend() when elsewhere); fill-in stays
  /// zero; float32 storage rounds them. Throws DimensionMismatch for another length.
  void update_values(const Array<double>& csr_values);

  index_t num_rows() const override { return num_block_rows_ * block_size_; }
  index_t num_cols() const override { return num_block_cols_ * block_size_; }
  const Backend& backend() const override { return row_ptr_.backend(); }

  /// y = A x. Errors as CsrMatrix::apply.
  void apply(const Vector& x, Vector& y) const override;
  using LinearOperator::apply;  // y = alpha A x + beta y
  /// Its products only queue kernels: they may be recorded and replayed.
  bool supports_recording() const override { return true; }
  /// r = b - A x in one pass. Errors as CsrMatrix::residual.
  void residual(const Vector& b, const Vector& x, Vector& r) const override;
  using LinearOperator::apply_dot;
  /// y = A x and x·y into the device scalar xy in one pass, deterministic (same input, same bits,
  /// on cpu and cuda and with either kernel) in the group order of kernels/bsr/bsr.hpp, which may
  /// differ from dot()'s in the last bits. Errors as apply, plus DimensionMismatch when A is not
  /// square.
  void apply_dot(const Vector& x, Vector& y, DeviceScalar xy) const override;
  /// d_i = a_ii (0 where the diagonal block is not stored). d has num_rows() entries on
  /// backend(); throws DimensionMismatch or InvalidInput otherwise.
  void diagonal(Vector& d) const override;

  /// Chooses the cuda kernel (a speed knob: results are bit-identical).
  void set_kernel(BsrKernel kernel) noexcept { kernel_ = kernel; }
  BsrKernel kernel() const noexcept { return kernel_; }
  /// The kernel the cuda backend runs: kernel(), or for automatic the table's choice for B.
  BsrKernel effective_kernel() const noexcept;

  int block_size() const noexcept { return block_size_; }
  index_t num_block_rows() const noexcept { return num_block_rows_; }
  index_t num_block_cols() const noexcept { return num_block_cols_; }
  std::int64_t num_blocks() const noexcept { return static_cast<std::int64_t>(col_idx_.size()); }
  /// Stored values including fill-in: num_blocks() B^2.
  std::int64_t stored_entries() const noexcept { return num_blocks() * block_size_ * block_size_; }
  /// Stored entries of the CSR matrix this one was converted from.
  std::int64_t source_nnz() const noexcept {
    return static_cast<std::int64_t>(source_position_.size());
  }
  /// stored_entries() / source_nnz(): 1 for strict tiling (1 for an empty matrix).
  double fill_ratio() const noexcept;
  Precision precision() const noexcept { return precision_; }

  const Array<index_t>& block_row_ptr() const noexcept { return row_ptr_; }
  const Array<index_t>& block_col_idx() const noexcept { return col_idx_; }
  /// The values when precision() is float64 (empty otherwise).
  const Array<double>& values_float64() const noexcept { return values64_; }
  /// The values when precision() is float32 (empty otherwise).
  const Array<float>& values_float32() const noexcept { return values32_; }

  /// Bytes one SpMV must move at least: values (B^2 per block, 8 or 4 bytes each), block column
  /// indices, block row pointers, x once and y once.
  double spmv_bytes() const noexcept;

 private:
  template <class V>
  kernels::bsr::BsrView<V> view() const;
  index_t num_block_rows_ = 0;
  index_t num_block_cols_ = 0;
  int block_size_ = 1;
  Precision precision_ = Precision::float64;
  BsrKernel kernel_ = BsrKernel::automatic;
  Array<index_t> row_ptr_;
  Array<index_t> col_idx_;
  Array<double> values64_;
  Array<float> values32_;
  Array<index_t> source_position_;  // value index of each source CSR entry, CSR order
  // Scratch of apply_dot (mutable: written by every fused product).
  mutable Array<double> group_partials_;
  mutable Array<unsigned int> counter_;
};

}  // namespace kryflow
