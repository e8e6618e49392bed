// Compressed sparse row matrices (double or float values, 32-bit indices) as LinearOperators.
#pragma once

#include <cstdint>
#include <vector>

#include "kryflow/core/precision.hpp"
#include "kryflow/linalg/coo_matrix.hpp"
#include "kryflow/linalg/host_csr.hpp"
#include "kryflow/linalg/linear_operator.hpp"

namespace kryflow {

namespace kernels::spmv {
struct CsrView;
struct RowPointerFacts;
struct PartitionArrays;
}  // namespace kernels::spmv

/// Row-length statistics of a CSR pattern (stored entries per row; all 0 without rows).
struct RowLengthStats {
  index_t min = 0;
  index_t max = 0;
  double mean = 0.0;       ///< nnz / num_rows
  index_t empty_rows = 0;  ///< rows storing no entry
};

/// A CSR matrix on one backend: row_ptr (num_rows + 1), col_idx and values (nnz each), columns
/// sorted within each row, no duplicates (Saad, Iterative Methods, 2nd ed., sec. 3.4).
/// Values are stored in double or, by precision(), in float (kryflow/core/precision.hpp);
/// vectors and all arithmetic stay double: a float value is converted to double before the
/// product, so a float32 matrix gives the same bits as a float64 matrix holding the
/// float-rounded values (docs/decisions/002-formats-sum-like-csr.md). A stored entry takes 4
/// bytes of column index plus 8 (float64) or 4 (float32) of value, so SpMV costs 12 or 8 bytes
/// per stored entry plus 4 per row plus the vectors.
/// Rounding to float is to nearest; a finite value whose magnitude rounds beyond the float
/// range throws InvalidInput naming its 1-based row and column (Inf and NaN stay as they are).
/// from_host and from_coo round on the host (their input is there); with_precision,
/// set_precision and update_values of a float32 matrix convert on the backend
/// (kernels::blas::round_to_float and widen_to_double), reading back only the index of the
/// first overflow; values_to_host converts on the host.
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
  /// NotSupported when nnz exceeds the 32-bit index_t range. With Precision::float32 the values
  /// are rounded to float (InvalidInput on overflow, see the class comment).
  static CsrMatrix from_host(const Backend& backend, index_t num_rows, index_t num_cols,
                             std::vector<index_t> row_ptr, std::vector<index_t> col_idx,
                             std::vector<double> values, Precision precision = Precision::float64);
  /// Compresses triplets: sorts each row by column and sums duplicates (a sum that is 0 stays
  /// stored). Throws InvalidInput when a dimension is negative, the triplet arrays differ in
  /// length, or an index is outside the num_rows x num_cols matrix (the message names the
  /// 1-based entry and position); NotSupported when the compressed nnz exceeds index_t.
  /// Duplicates are summed in double, then the sums are stored in `precision` (float32:
  /// rounded, InvalidInput on overflow).
  static CsrMatrix from_coo(const Backend& backend, const CooMatrix& coo,
                            Precision precision = Precision::float64);
  /// Takes ownership of CSR arrays already on one backend, as kernels build them (the AMG
  /// setup): row_ptr (num_rows + 1), col_idx and values (nnz each), float64. No copy of the
  /// arrays: the products' row-block partition is built where they live (on cuda by device
  /// kernels; the host reads only its sizes) and row_ptr is checked there (from 0 to nnz,
  /// non-decreasing). The columns are not checked: they must be in range,
  /// sorted and unique within each row, as the producing kernel's contract guarantees. Throws
  /// InvalidInput when a dimension is negative, the lengths disagree, the arrays live on
  /// different backends or row_ptr is invalid; NotSupported when nnz exceeds index_t.
  ///
  /// With `partition` = Partition::deferred nothing is built or checked yet: the matrix can
  /// be read (row_ptr(), col_idx(), values()) but not applied until build_partitions, which
  /// builds the partitions of several such matrices with one host wait on cuda.
  enum class Partition { now, deferred };
  static CsrMatrix from_arrays(index_t num_rows, index_t num_cols, Array<index_t> row_ptr,
                               Array<index_t> col_idx, Array<double> values,
                               Partition partition = Partition::now);
  /// Builds the row-block partitions that from_arrays(..., Partition::deferred) left out, for
  /// every matrix of `matrices` that lacks one (the others are left alone), and checks their
  /// row_ptr as from_arrays does. On cuda the matrices of one backend share three launches and
  /// one host wait (kernels::spmv::build_partitions). Throws InvalidInput for the first matrix
  /// whose row_ptr is invalid; the matrices before it have their partitions.
  static void build_partitions(const std::vector<CsrMatrix*>& matrices);
  /// Whether the matrix still waits for build_partitions (it cannot be applied before).
  bool partition_deferred() const noexcept { return partition_deferred_; }

  /// Copies CSR arrays that live in `backend`'s memory (device pointers on cuda, such as a CuPy
  /// matrix's; host pointers on cpu and reference): row_ptr (num_rows + 1 entries), col_idx and
  /// values (nnz each), 0-based. On cuda nothing passes through the host: the arrays are copied
  /// device to device and checked there (row_ptr from 0 to nnz and non-decreasing, then every
  /// row's columns in 0..num_cols-1, sorted and unique; one wait each). With
  /// Precision::float32 the values are rounded on the backend. Throws InvalidInput naming the
  /// first invalid (1-based) row, for negative sizes or a null array with entries;
  /// NotSupported when nnz exceeds index_t; OutOfMemory when the copy does not fit.
  static CsrMatrix copy_from(const Backend& backend, index_t num_rows, index_t num_cols,
                             std::int64_t nnz, const index_t* row_ptr, const index_t* col_idx,
                             const double* values, Precision precision = Precision::float64);
  /// The scalar CSR matrix of BSR arrays (Saad, Iterative Methods, 2nd ed., sec. 3.4; cuSPARSE's
  /// BSR layout with row-major blocks) that live in `backend`'s memory: block_row_ptr
  /// (num_block_rows + 1), block_col_idx (num_blocks) and block_values (num_blocks B^2, each
  /// block row-major), 0-based, B = block_size in 1..32; the matrix is (num_block_rows B) x
  /// (num_block_cols B) with every entry of every stored block (zeros included). As copy_from,
  /// nothing passes through the host on cuda: the block pattern is checked on the backend (block
  /// row_ptr from 0 to num_blocks and non-decreasing, block columns in range, sorted and unique
  /// per block row) and expanded there (kernels::sparse_setup::expand_blocks). When
  /// `block_position` is given it receives, for each CSR entry k in order, the index of its
  /// value in block_values: values given later in block order map to CSR order by a gather.
  /// Throws InvalidInput naming the first invalid (1-based) block row, for a block size outside
  /// 1..32, negative sizes or a null array with entries; NotSupported when num_blocks B^2
  /// exceeds index_t; OutOfMemory.
  static CsrMatrix copy_from_blocks(const Backend& backend, index_t num_block_rows,
                                    index_t num_block_cols, index_t block_size,
                                    std::int64_t num_blocks, const index_t* block_row_ptr,
                                    const index_t* block_col_idx, const double* block_values,
                                    Array<index_t>* block_position = nullptr,
                                    Precision precision = Precision::float64);
  /// A deep copy on `target` (pattern, values in the same precision, the row-block partition).
  CsrMatrix copy_to(const Backend& target) const;
  /// A copy on the same backend whose values are stored in `precision`: float64 to float32
  /// rounds to nearest and throws InvalidInput naming the 1-based row and column of the first
  /// finite value that overflows float; float32 to float64 is exact. The same precision gives
  /// a plain copy.
  CsrMatrix with_precision(Precision precision) const;
  /// Converts the stored values to `precision` in place, on the backend (pattern and row-block
  /// partition kept): float64 to float32 rounds to nearest and frees the double values (8 bytes
  /// per entry become 4); float32 to float64 is exact. Throws InvalidInput, changing nothing,
  /// naming the 1-based row and column of the first finite value that overflows float;
  /// OutOfMemory when the new values do not fit beside the old ones.
  void set_precision(Precision precision);
  /// set_precision with a deferred check, as update_values(values, first_overflow): the first
  /// entry (0-based) whose finite value overflows float goes to *first_overflow, an address on
  /// the matrix's backend (0xffffffff: none; written for either conversion), and nothing waits.
  /// On overflow the matrix keeps the rounded values (infinities where it overflowed): the
  /// caller reads the slot and discards the matrix. OutOfMemory as set_precision.
  void set_precision(Precision precision, unsigned int* first_overflow);
  /// Replaces the values, in the stored order (same pattern): `values` holds nnz() doubles on
  /// any backend and is copied (and rounded to float on the backend for a float32 matrix).
  /// Throws DimensionMismatch for another length; InvalidInput, changing nothing, when a
  /// float32 matrix would overflow (see with_precision).
  void update_values(const Array<double>& values);
  /// update_values with the float32 overflow check left on the backend: the first overflowing
  /// entry (0-based) goes to *first_overflow, an address on the matrix's backend (0xffffffff:
  /// none; written for either precision), and nothing waits, so that a setup that updates many
  /// matrices reads all their checks at once. `values` must live on the matrix's backend. On
  /// overflow the matrix keeps the rounded values (infinities where it overflowed): the caller
  /// reads the slot and discards the matrix. Throws DimensionMismatch for another length,
  /// InvalidInput for values on another backend.
  void update_values(const Array<double>& values, unsigned int* first_overflow);

  index_t num_rows() const override { return num_rows_; }
  index_t num_cols() const override { return num_cols_; }
  const Backend& backend() const override { return row_ptr_.backend(); }
  std::int64_t nnz() const noexcept { return static_cast<std::int64_t>(col_idx_.size()); }
  /// How the values are stored.
  Precision precision() const noexcept { return precision_; }

  /// y = A x (see LinearOperator::apply). Throws DimensionMismatch on wrong sizes,
  /// InvalidInput when x or y lives on another backend or x and y are the same vector.
  void apply(const Vector& x, Vector& y) const override;
  using LinearOperator::apply;
  /// y = alpha A x + beta y in one pass (kernels/spmv_axpby; y not read when beta == 0). Errors
  /// as apply(x, y).
  void apply(double alpha, const Vector& x, double beta, Vector& y) const override;
  /// Its products only queue kernels: they may be recorded and replayed.
  bool supports_recording() const override { return true; }
  /// r = b - A x in one pass. b and r have num_rows() entries, x num_cols(); all on backend();
  /// r distinct from x and b. Throws DimensionMismatch on wrong sizes, InvalidInput when an
  /// operand lives on another backend or r is x.
  void residual(const Vector& b, const Vector& x, Vector& r) const override;
  /// LinearOperator::chebyshev_step in one pass (kernels::spmv::csr_chebyshev_step): the bits
  /// of residual followed by the update. Errors as LinearOperator::chebyshev_step.
  void chebyshev_step(const Vector& b, const Vector& x, const Vector& dinv, double alpha,
                      double beta, Vector& d, Vector& y) const override;
  /// The first two steps of chebyshev_step's iteration from x_0 = 0 in one pass
  /// (kernels::spmv::csr_chebyshev_first_steps): x_1 = d_0 = alpha0 (dinv ∘ b), never stored,
  /// then chebyshev_step(b, x_1, dinv, alpha, beta, d, y) with d = d_0; d is only written. The
  /// bits of blas::chebyshev_update (x_is_zero) followed by chebyshev_step, one product and no
  /// vector of x_1 (Saad, Iterative Methods, 2nd ed., Algorithm 12.1, its first two steps).
  /// Square A; b, dinv, d and y of num_rows() entries on backend(); y distinct from b, dinv and
  /// d, d distinct from b and dinv. Throws DimensionMismatch on wrong sizes, InvalidInput on
  /// aliasing or another backend.
  void chebyshev_first_steps(const Vector& b, const Vector& dinv, double alpha0, double alpha,
                             double beta, Vector& d, Vector& y) const;
  using LinearOperator::apply_dot;
  /// y = A x and x·y into the device scalar xy in one pass, deterministic (same input, same bits)
  /// in the order of kernels/spmv/spmv.hpp, which may differ from dot()'s in the last bits. Errors
  /// as apply, plus DimensionMismatch when A is not square.
  void apply_dot(const Vector& x, Vector& y, DeviceScalar xy) const override;
  /// y = A x and w_k·y (LinearOperator::apply_dots) in one pass, deterministic in the order of
  /// kernels/spmv/spmv.hpp. Errors as apply_dots, and InvalidInput when a w_k lives on another
  /// backend or is y.
  void apply_dots(const Vector& x, Vector& y, std::span<const Vector* const> with,
                  DeviceScalar first) const override;
  /// True for matrices of at most kernels::spmv::kLatencyBoundRowBlocks row blocks (about
  /// 262,000 rows of up to 4 entries, fewer for longer rows), whose products are bound by
  /// latency: there one pass fewer is faster; on larger matrices the three gathers per entry of
  /// the fused product cost more than the pass they save (measured on the H200).
  bool fuses_combination() const override;
  /// y = A v, v = s ∘ u + c w never stored, and v·y into vy in one pass
  /// (LinearOperator::apply_combination_dot; bits of apply_dot on the stored v), whatever
  /// fuses_combination() says. With partials_ok, on cuda and at most
  /// kernels::spmv::kLatencyBoundRowBlocks row blocks, v·y is left as the row blocks' sums
  /// (valid until this matrix's next product). Throws
  /// DimensionMismatch when A is not square or a vector has the wrong size, InvalidInput when
  /// an operand lives on another backend or y is u, w or *scale.
  DeviceSum apply_combination_dot(const Vector* scale, const Vector& u, DeviceScalar c,
                                  const Vector& w, Vector& y, DeviceScalar vy,
                                  bool partials_ok = false) const override;
  /// As fuses_combination(): true for matrices of at most kLatencyBoundRowBlocks row blocks.
  bool fuses_shifted_product() const override;
  /// s = u - alpha w, z = d ∘ s, y = A z and s·s, y·y, y·s in one pass
  /// (LinearOperator::apply_shifted_dots), whatever fuses_shifted_product() says; with
  /// partials_ok, on cuda and at most kLatencyBoundRowBlocks row blocks, the sums are left as
  /// the row blocks' sums (valid until this matrix's next product). Throws DimensionMismatch
  /// when A is not square or a vector has the wrong size, InvalidInput when an operand lives on
  /// another backend or an output is also an input or another output.
  DeviceSum apply_shifted_dots(const Vector& d, const Vector& u, DeviceScalar numerator,
                               DeviceScalar denominator, const Vector& w, Vector& s, Vector& z,
                               Vector& y, DeviceScalar sums,
                               bool partials_ok = false) const override;
  /// d_i = a_ii (0 where row i stores no diagonal entry). d has num_rows() entries on
  /// backend(); throws DimensionMismatch or InvalidInput otherwise.
  void diagonal(Vector& d) const override;

  const Array<index_t>& row_ptr() const noexcept { return row_ptr_; }
  const Array<index_t>& col_idx() const noexcept { return col_idx_; }
  /// The double values (nnz, on backend()). Throws NotSupported when the matrix stores float32:
  /// use values_float32() or values_to_host().
  const Array<double>& values() const;
  /// The float values (nnz, on backend()). Throws NotSupported when the matrix stores float64.
  const Array<float>& values_float32() const;
  /// The values as doubles on the host, in stored order, for either precision (exact).
  std::vector<double> values_to_host() const;
  /// The square matrix's entries on the host (HostCsrMatrix; values widened to double). Throws
  /// DimensionMismatch when the matrix is not square.
  HostCsrMatrix to_host_csr() const;
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
  /// Bytes one SpMV must move at least: values (8 or 4 bytes each, by precision()), column
  /// indices, row pointers, x once and y once.
  double spmv_bytes() const noexcept;

 private:
  CsrMatrix(index_t num_rows, index_t num_cols, Array<index_t> row_ptr, Array<index_t> col_idx,
            RowLengthStats stats);
  /// A copy on `target` of everything but the values (left empty, precision float64).
  CsrMatrix copy_pattern_to(const Backend& target) const;
  /// `values` (nnz, in stored order) rounded to nearest float. Throws InvalidInput naming the
  /// 1-based row and column of the first finite value that overflows float.
  std::vector<float> round_to_float(const std::vector<double>& values) const;
  /// `values` (nnz, on backend()) rounded to nearest float on the backend. Throws as
  /// round_to_float.
  Array<float> round_to_float(const Array<double>& values) const;
  /// Throws InvalidInput naming the 1-based row and column of stored entry k, whose value
  /// `value` overflows float.
  [[noreturn]] void throw_float_overflow(std::size_t k, double value) const;
  /// Builds the row-block partition where row_ptr_ lives (kernels::spmv::build_partition),
  /// takes the row-length minimum, maximum and empty rows into stats_ and allocates the
  /// kernels' scratch; returns the facts of row_ptr_ and leaves everything unchanged when they
  /// are not valid (the caller throws).
  kernels::spmv::RowPointerFacts build_partition(int tile);
  /// Takes a partition built by kernels::spmv into the matrix (build_partition's second half).
  void install_partition(kernels::spmv::PartitionArrays&& p);
  /// InvalidInput unless `facts` say row_ptr_ runs non-decreasing from 0 to nnz.
  void check_row_pointers(const kernels::spmv::RowPointerFacts& facts) const;
  kernels::spmv::CsrView view() const;
  index_t num_rows_ = 0;
  index_t num_cols_ = 0;
  Array<index_t> row_ptr_;
  Array<index_t> col_idx_;
  Precision precision_ = Precision::float64;
  Array<double> values_;     // nnz when precision_ is float64, else empty
  Array<float> values_f32_;  // nnz when precision_ is float32, else empty
  RowLengthStats stats_;
  // Row-block partition of the cpu and cuda kernels (kernels::spmv::RowPartition) on the
  // matrix's backend, and their scratch (partial sums and completion counters, written by
  // every product: mutable).
  int tile_ = 0;
  bool partition_deferred_ = false;
  Array<index_t> row_blocks_;
  Array<index_t> long_rows_;
  Array<index_t> long_row_chunks_;
  Array<index_t> chunk_long_row_;
  mutable Array<double> block_partials_;
  mutable Array<double> chunk_partials_;
  mutable Array<unsigned int> counters_;
};

}  // namespace kryflow
