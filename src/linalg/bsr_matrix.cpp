// BsrMatrix: block tiling checks, conversion from and to CSR, copies and the SpMV entry points.
#include "kryflow/linalg/bsr_matrix.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/blas/blas.hpp"
#include "kernels/bsr/bsr.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow {
namespace {

/// The product kernels read x while they write y: distinct buffers only.
void check_distinct(const Vector& in, const Vector& out, const char* operation) {
  if (in.size() > 0 && in.span().data() == out.span().data()) {
    throw InvalidInput(std::string(operation) + ": input and output are the same vector");
  }
}

kernels::bsr::Variant to_variant(BsrKernel kernel) {
  return kernel == BsrKernel::coefficient ? kernels::bsr::Variant::coefficient
                                          : kernels::bsr::Variant::block_row;
}

}  // namespace

BlockTiling check_block_tiling(index_t num_rows, index_t num_cols, Span<const index_t> row_ptr,
                               Span<const index_t> col_idx, int block_size) {
  BlockTiling tiling;
  const index_t B = block_size;
  if (B < 1 || num_rows % B != 0 || num_cols % B != 0) return tiling;
  tiling.divisible = true;
  for (index_t I = 0; I < num_rows / B; ++I) {
    const index_t first = I * B;
    const index_t begin = row_ptr[first];
    const index_t length = row_ptr[first + 1] - begin;
    bool whole = length % B == 0;
    // The first row: whole aligned groups of B consecutive columns.
    for (index_t g = 0; whole && g < length; g += B) {
      const index_t start = col_idx[begin + g];
      whole = start % B == 0;
      for (index_t c = 1; whole && c < B; ++c) whole = col_idx[begin + g + c] == start + c;
    }
    // The other rows: the same columns.
    for (index_t ii = 1; whole && ii < B; ++ii) {
      const index_t other = row_ptr[first + ii];
      whole = row_ptr[first + ii + 1] - other == length &&
              std::equal(col_idx.begin() + begin, col_idx.begin() + begin + length,
                         col_idx.begin() + other);
    }
    if (!whole) {
      tiling.first_partial_block_row = I;
      return tiling;
    }
  }
  tiling.strict = true;
  return tiling;
}

int detect_block_size(index_t num_rows, index_t num_cols, Span<const index_t> row_ptr,
                      Span<const index_t> col_idx) {
  for (int B = 8; B >= 2; --B) {
    if (check_block_tiling(num_rows, num_cols, row_ptr, col_idx, B).strict) return B;
  }
  return 1;
}

int BsrMatrix::detect_block_size(const CsrMatrix& A) {
  const std::vector<index_t> row_ptr = A.row_ptr().to_host();
  const std::vector<index_t> col_idx = A.col_idx().to_host();
  return kryflow::detect_block_size(A.num_rows(), A.num_cols(), row_ptr, col_idx);
}

BsrMatrix BsrMatrix::from_csr(const CsrMatrix& A, int block_size, Precision precision,
                              bool allow_fill) {
  const std::string where = "BsrMatrix::from_csr(block_size = " + std::to_string(block_size) + ")";
  if (block_size < 1 || block_size > kernels::bsr::kMaxBlockSize) {
    throw InvalidInput(where + ": the block size must be 1.." +
                       std::to_string(kernels::bsr::kMaxBlockSize));
  }
  const index_t B = block_size;
  const std::int64_t BB = static_cast<std::int64_t>(B) * B;
  const std::vector<index_t> row_ptr = A.row_ptr().to_host();
  const std::vector<index_t> col_idx = A.col_idx().to_host();
  const BlockTiling tiling = check_block_tiling(A.num_rows(), A.num_cols(), row_ptr, col_idx, B);
  if (!tiling.divisible) {
    throw InvalidInput(where + ": the " + std::to_string(A.num_rows()) + " x " +
                       std::to_string(A.num_cols()) +
                       " matrix's rows and columns must be multiples of the block size");
  }
  if (!tiling.strict && !allow_fill) {
    const index_t I = tiling.first_partial_block_row;
    throw InvalidInput(where + ": the pattern does not tile into " + std::to_string(B) + " x " +
                       std::to_string(B) + " blocks: block row " + std::to_string(I + 1) +
                       " (rows " + std::to_string(I * B + 1) + ".." + std::to_string(I * B + B) +
                       ") has a block that is not fully stored; convert with fill-in "
                       "(allow_fill, from_csr_filled) to store the missing entries as zeros");
  }

  // Block columns of each block row: the union over its B rows.
  const index_t num_block_rows = A.num_rows() / B;
  std::vector<index_t> block_row_ptr(static_cast<std::size_t>(num_block_rows) + 1, 0);
  std::vector<index_t> block_col_idx;
  block_col_idx.reserve(col_idx.size() / static_cast<std::size_t>(B));
  std::vector<index_t> columns;
  for (index_t I = 0; I < num_block_rows; ++I) {
    columns.clear();
    for (index_t k = row_ptr[I * B]; k < row_ptr[I * B + B]; ++k) columns.push_back(col_idx[k] / B);
    std::sort(columns.begin(), columns.end());
    columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
    block_col_idx.insert(block_col_idx.end(), columns.begin(), columns.end());
    if (static_cast<double>(block_col_idx.size()) * static_cast<double>(BB) >
        std::numeric_limits<index_t>::max()) {
      throw NotSupported(where + ": the stored values exceed the 32-bit index range");
    }
    block_row_ptr[I + 1] = static_cast<index_t>(block_col_idx.size());
  }
  // Where each CSR entry goes: (block, row in block, column in block).
  std::vector<index_t> position(col_idx.size());
  for (index_t i = 0; i < A.num_rows(); ++i) {
    const index_t I = i / B;
    const auto first = block_col_idx.begin() + block_row_ptr[I];
    const auto last = block_col_idx.begin() + block_row_ptr[I + 1];
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      const auto block = static_cast<index_t>(std::lower_bound(first, last, col_idx[k] / B) -
                                              block_col_idx.begin());
      position[k] = static_cast<index_t>(block * BB + (i % B) * B + col_idx[k] % B);
    }
  }
  std::vector<double> values(block_col_idx.size() * static_cast<std::size_t>(BB), 0.0);
  {
    const std::vector<double> csr_values = A.values_to_host();
    for (std::size_t k = 0; k < position.size(); ++k) values[position[k]] = csr_values[k];
  }

  const Backend& target = A.backend();
  BsrMatrix M;
  M.num_block_rows_ = num_block_rows;
  M.num_block_cols_ = A.num_cols() / B;
  M.block_size_ = block_size;
  M.precision_ = precision;
  M.row_ptr_ = Array<index_t>::from_host(target, block_row_ptr);
  M.col_idx_ = Array<index_t>::from_host(target, block_col_idx);
  if (precision == Precision::float32) {
    const std::vector<float> narrowed(values.begin(), values.end());
    M.values32_ = Array<float>::from_host(target, narrowed);
  } else {
    M.values64_ = Array<double>::from_host(target, values);
  }
  M.source_position_ = Array<index_t>::from_host(target, position);
  M.group_partials_ =
      Array<double>(target, static_cast<std::size_t>(kernels::bsr::num_groups(num_block_rows, B)));
  M.counter_ = Array<unsigned int>::from_host(target, std::vector<unsigned int>(1, 0u));
  return M;
}

CsrMatrix BsrMatrix::to_csr() const {
  // Expanded where the blocks live (kernels::sparse_setup::expand_blocks); float values are
  // widened there first, exactly.
  Array<double> widened;
  const double* values = values64_.data();
  if (precision_ == Precision::float32) {
    widened = Array<double>(backend(), values32_.size());
    kernels::blas::widen_to_double(backend(), values32_.span(), widened.span());
    values = widened.data();
  }
  return CsrMatrix::copy_from_blocks(backend(), num_block_rows_, num_block_cols_, block_size_,
                                     num_blocks(), row_ptr_.data(), col_idx_.data(), values);
}

BsrMatrix BsrMatrix::copy_to(const Backend& target) const {
  BsrMatrix M;
  M.num_block_rows_ = num_block_rows_;
  M.num_block_cols_ = num_block_cols_;
  M.block_size_ = block_size_;
  M.precision_ = precision_;
  M.kernel_ = kernel_;
  M.row_ptr_ = row_ptr_.copy_to(target);
  M.col_idx_ = col_idx_.copy_to(target);
  M.values64_ = values64_.copy_to(target);
  M.values32_ = values32_.copy_to(target);
  M.source_position_ = source_position_.copy_to(target);
  M.group_partials_ = Array<double>(target, group_partials_.size());
  M.counter_ = Array<unsigned int>::from_host(target, std::vector<unsigned int>(1, 0u));
  return M;
}

void BsrMatrix::update_values(const Array<double>& csr_values) {
  if (csr_values.size() != source_position_.size()) {
    throw DimensionMismatch("BsrMatrix::update_values: expected " +
                            std::to_string(source_position_.size()) + " CSR values, got " +
                            std::to_string(csr_values.size()));
  }
  Array<double> local;
  const Array<double>* source = &csr_values;
  if (!(csr_values.backend() == backend())) {
    local = csr_values.copy_to(backend());
    source = &local;
  }
  if (precision_ == Precision::float32) {
    kernels::bsr::bsr_scatter_values(backend(), source_position_.span(), source->span(),
                                     values32_.span());
  } else {
    kernels::bsr::bsr_scatter_values(backend(), source_position_.span(), source->span(),
                                     values64_.span());
  }
}

BsrKernel BsrMatrix::effective_kernel() const noexcept {
  if (kernel_ != BsrKernel::automatic) return kernel_;
  return kernels::bsr::automatic_variant(block_size_, precision_ == Precision::float32) ==
                 kernels::bsr::Variant::coefficient
             ? BsrKernel::coefficient
             : BsrKernel::block_row;
}

double BsrMatrix::fill_ratio() const noexcept {
  return source_nnz() == 0
             ? 1.0
             : static_cast<double>(stored_entries()) / static_cast<double>(source_nnz());
}

template <class V>
kernels::bsr::BsrView<V> BsrMatrix::view() const {
  kernels::bsr::BsrView<V> v;
  v.num_block_rows = num_block_rows_;
  v.num_block_cols = num_block_cols_;
  v.block_size = block_size_;
  v.num_blocks = num_blocks();
  v.row_ptr = row_ptr_.data();
  v.col_idx = col_idx_.data();
  if constexpr (std::is_same_v<V, float>) {
    v.values = values32_.data();
  } else {
    v.values = values64_.data();
  }
  v.group_partials = group_partials_.data();
  v.counter = counter_.data();
  v.stream_values =
      num_blocks() * block_size_ * block_size_ * static_cast<std::int64_t>(sizeof(V)) >
      kernels::bsr::kStreamValuesBytes;
  return v;
}

void BsrMatrix::apply(const Vector& x, Vector& y) const {
  check_apply_shapes(x, y, "BsrMatrix::apply");
  check_distinct(x, y, "BsrMatrix::apply");
  const auto variant = to_variant(effective_kernel());
  if (precision_ == Precision::float32) {
    kernels::bsr::bsr_spmv(backend(), view<float>(), variant, x.span(), y.span());
  } else {
    kernels::bsr::bsr_spmv(backend(), view<double>(), variant, x.span(), y.span());
  }
}

void BsrMatrix::residual(const Vector& b, const Vector& x, Vector& r) const {
  check_apply_shapes(x, r, "BsrMatrix::residual");
  check_distinct(x, r, "BsrMatrix::residual");
  if (b.size() != r.size()) throw DimensionMismatch("BsrMatrix::residual: b and r differ in size");
  if (!(b.backend() == backend())) {
    throw InvalidInput("BsrMatrix::residual: b must live on the matrix's backend (" +
                       backend().name() + ")");
  }
  const auto variant = to_variant(effective_kernel());
  if (precision_ == Precision::float32) {
    kernels::bsr::bsr_residual(backend(), view<float>(), variant, b.span(), x.span(), r.span());
  } else {
    kernels::bsr::bsr_residual(backend(), view<double>(), variant, b.span(), x.span(), r.span());
  }
}

void BsrMatrix::apply_dot(const Vector& x, Vector& y, DeviceScalar xy) const {
  check_apply_shapes(x, y, "BsrMatrix::apply_dot");
  check_distinct(x, y, "BsrMatrix::apply_dot");
  if (num_rows() != num_cols())
    throw DimensionMismatch("BsrMatrix::apply_dot needs a square matrix");
  const auto variant = to_variant(effective_kernel());
  if (precision_ == Precision::float32) {
    kernels::bsr::bsr_spmv_dot(backend(), view<float>(), variant, x.span(), y.span(), xy.address);
    return;
  }
  kernels::bsr::bsr_spmv_dot(backend(), view<double>(), variant, x.span(), y.span(), xy.address);
}

void BsrMatrix::diagonal(Vector& d) const {
  if (d.size() != static_cast<std::size_t>(num_rows())) {
    throw DimensionMismatch("BsrMatrix::diagonal: d must have num_rows entries");
  }
  if (!(d.backend() == backend())) {
    throw InvalidInput("BsrMatrix::diagonal: d must live on the matrix's backend (" +
                       backend().name() + ")");
  }
  if (precision_ == Precision::float32) {
    kernels::bsr::bsr_diagonal(backend(), view<float>(), d.span());
  } else {
    kernels::bsr::bsr_diagonal(backend(), view<double>(), d.span());
  }
}

double BsrMatrix::spmv_bytes() const noexcept {
  return static_cast<double>(value_bytes(precision_)) * static_cast<double>(stored_entries()) +
         4.0 * static_cast<double>(num_blocks()) + 4.0 * (num_block_rows_ + 1) + 8.0 * num_cols() +
         8.0 * num_rows();
}

}  // namespace kryflow
