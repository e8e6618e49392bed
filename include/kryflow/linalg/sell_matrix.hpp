// SELL-C-sigma sparse matrices (sliced ELLPACK with rows sorted by length in windows) as
// LinearOperators.
#pragma once

#include <cstdint>

#include "kryflow/core/precision.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/linear_operator.hpp"

namespace kryflow {

namespace kernels::sell {
template <class T>
struct SellView;
}

/// A SELL-C-sigma matrix on one backend (Kreutzer, Hager, Wellein, Fehske and Bishop, "A unified
/// sparse matrix data format for efficient general sparse matrix-vector multiplication on
/// modern processors with wide SIMD units", SIAM J. Sci. Comput. 36(5), C401-C423, 2014).
/// Interleaved CRS of the Parallel Toolbox is SELL-32-1.
///
/// Layout. Within each window of `sigma` consecutive rows, rows are sorted by stored length,
/// longest first (stable: equal lengths keep their order); sorted position p holds original
/// row permutation()[p]. Consecutive runs of C sorted positions form the num_slices() =
/// ceil(num_rows / C) slices; slice s is padded to its longest row, slice_width()[s] entries
/// per row, and stored column-major from slice_ptr()[s] (64-bit offsets, num_slices + 1 of
/// them): entry j of the row at position r of the slice is at slice_ptr[s] + j * C + r, the
/// row's entries in increasing column order. A padding entry has value 0 and repeats the
/// row's last column (decision 002), or column 0 for an empty row; positions past num_rows in
/// the last slice are padding with column 0 and are never read by the products.
///
/// Products. Every row's sum is y_i = 0; y_i = y_i + double(a_ik) * x_k over its entries in
/// column order, then its padding (+0): bit-identical to the CSR reference on the same
/// (float-rounded) values, on every backend (docs/decisions/002-formats-sum-like-csr.md). The
/// permutation is internal: x and y are in the original row and column order.
///
/// Storage precision: float64 keeps double values; float32 rounds them to float at
/// construction and in update_values (products and sums stay in double).
///
/// Products with one matrix must not run concurrently from several host threads (the fused
/// dot uses per-matrix scratch). Move-only. Allocations throw OutOfMemory when they do not
/// fit; on cuda any call may throw BackendError when the device reports a failure.
class SellMatrix : public LinearOperator {
 public:
  /// The slice heights C the kernels are compiled for.
  static constexpr int kSliceHeights[] = {1, 2, 4, 8, 16, 32, 64, 128};

  SellMatrix() = default;
  /// Converts `csr` on its own backend (host loops for reference and cpu, device sort and
  /// scans for cuda; the SELL matrix lives on the same backend). `slice_height` C is one of
  /// kSliceHeights; `sigma` (the sorting window, in rows) is 1 (no sorting) or a positive
  /// multiple of C. Throws InvalidInput naming the valid choices otherwise, and OutOfMemory
  /// when the padded storage does not fit (slice offsets are 64-bit, so its size is limited by
  /// memory only).
  static SellMatrix from_csr(const CsrMatrix& csr, int slice_height, index_t sigma,
                             Precision precision = Precision::float64);

  /// The matrix in CSR form on backend(): the original rows, columns and values (float-rounded
  /// values for float32 storage), padding dropped. The round trip is exact.
  CsrMatrix to_csr() const;
  /// Replaces the values from CSR-ordered values (the pattern of the CSR matrix this one was
  /// converted from): nnz() entries on backend(), rounded to float for float32 storage.
  /// Throws DimensionMismatch for another length and InvalidInput for another backend.
  void update_values(const Array<double>& csr_values);

  index_t num_rows() const override { return num_rows_; }
  index_t num_cols() const override { return num_cols_; }
  const Backend& backend() const override { return col_idx_.backend(); }

  /// y = A x (see LinearOperator::apply). Throws DimensionMismatch on wrong sizes,
  /// InvalidInput when x or y lives on another backend or x and y are the same vector.
  void apply(const Vector& x, Vector& y) const override;
  using LinearOperator::apply;  // y = alpha A x + beta y
  /// Its products only queue kernels: they may be recorded and replayed.
  bool supports_recording() const override { return true; }
  /// r = b - A x in one pass; r_i = b_i - y_i with y_i summed as in apply. Errors as
  /// CsrMatrix::residual.
  void residual(const Vector& b, const Vector& x, Vector& r) const override;
  using LinearOperator::apply_dot;
  /// y = A x and x·y into the device scalar xy in one pass, deterministic (same input, same bits;
  /// cpu and cuda agree bit for bit) in the order of kernels/sell/sell.hpp. Errors as apply, plus
  /// DimensionMismatch when A is not square.
  void apply_dot(const Vector& x, Vector& y, DeviceScalar xy) const override;
  /// d_i = a_ii (0 where row i stores no diagonal entry), bit-identical to CsrMatrix::diagonal.
  /// d has num_rows() entries on backend(); throws DimensionMismatch or InvalidInput otherwise.
  void diagonal(Vector& d) const override;

  int slice_height() const noexcept { return slice_height_; }
  index_t sigma() const noexcept { return sigma_; }
  Precision precision() const noexcept { return precision_; }
  index_t num_slices() const noexcept { return num_slices_; }
  /// Stored nonzeros of the original matrix (padding excluded).
  std::int64_t nnz() const noexcept { return nnz_; }
  /// Stored entries including padding: slice_ptr()[num_slices()].
  std::int64_t stored_entries() const noexcept { return stored_entries_; }
  /// Padding entries: stored_entries() - nnz().
  std::int64_t padding_entries() const noexcept { return stored_entries_ - nnz_; }
  /// padding_entries() / stored_entries() (0 without stored entries).
  double padding_ratio() const noexcept;
  /// Useful bytes of one product: values and column indices of the nnz() nonzeros (value
  /// bytes + 4 each), x read once and y written once (8 bytes per column and per row). The
  /// bytes any format must move at least; GB/s in the benchmarks use it.
  double spmv_bytes() const noexcept;
  /// Bytes one product actually moves: values and column indices of all stored entries
  /// (padding included), slice_ptr (8 per slice + 8), slice_width (4 per slice), the
  /// permutation (4 per row), x once and y once.
  double spmv_moved_bytes() const noexcept;

  const Array<std::int64_t>& slice_ptr() const noexcept { return slice_ptr_; }
  const Array<index_t>& slice_width() const noexcept { return slice_width_; }
  const Array<index_t>& col_idx() const noexcept { return col_idx_; }
  /// float64 values (empty for float32 storage).
  const Array<double>& values() const noexcept { return values64_; }
  /// float32 values (empty for float64 storage).
  const Array<float>& values_float() const noexcept { return values32_; }
  /// Original row of each sorted position (num_rows entries).
  const Array<index_t>& permutation() const noexcept { return permutation_; }

 private:
  template <class T>
  kernels::sell::SellView<T> view() const;
  void check_backend(const Vector& v, const char* operation) const;
  index_t num_rows_ = 0;
  index_t num_cols_ = 0;
  int slice_height_ = 0;
  index_t sigma_ = 0;
  Precision precision_ = Precision::float64;
  index_t num_slices_ = 0;
  std::int64_t nnz_ = 0;
  std::int64_t stored_entries_ = 0;
  Array<index_t> row_ptr_;  // the CSR row pointers (original order) for to_csr, update_values
  Array<index_t> permutation_;
  Array<std::int64_t> slice_ptr_;
  Array<index_t> slice_width_;
  Array<index_t> col_idx_;
  Array<double> values64_;
  Array<float> values32_;
  // Scratch of the fused dot (written by every apply_dot: mutable).
  mutable Array<double> block_partials_;
  mutable Array<unsigned int> counter_;
};

}  // namespace kryflow
