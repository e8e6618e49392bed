// CsrMatrix: validation, compression from triplets, copies and the SpMV entry points.
#include "kryflow/linalg/csr_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string>

#include "kernels/blas/blas.hpp"
#include "kernels/sparse_setup/sparse_setup.hpp"
#include "kernels/spmv/spmv.hpp"
#include "kernels/spmv_axpby/spmv_axpby.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow {
namespace {

/// Row-length statistics before the partition fills in the rest (CsrMatrix::build_partition):
/// the mean nnz / num_rows (0 without rows).
RowLengthStats mean_only(index_t num_rows, std::size_t nnz) {
  RowLengthStats s;
  s.mean = num_rows > 0 ? static_cast<double>(nnz) / num_rows : 0.0;
  return s;
}

void check_index_range(std::size_t count, const char* what) {
  if (count > static_cast<std::size_t>(std::numeric_limits<index_t>::max())) {
    throw NotSupported(std::string("CSR matrix with ") + std::to_string(count) + " " + what +
                       " exceeds the 32-bit index range");
  }
}

/// The product kernels read x while they write y: distinct buffers only.
void check_distinct(const Vector& in, const Vector& out, const char* operation) {
  if (in.size() > 0 && in.span().data() == out.span().data()) {
    throw InvalidInput(std::string(operation) + ": input and output are the same vector");
  }
}

}  // namespace

CsrMatrix::CsrMatrix(index_t num_rows, index_t num_cols, Array<index_t> row_ptr,
                     Array<index_t> col_idx, RowLengthStats stats)
    : num_rows_(num_rows),
      num_cols_(num_cols),
      row_ptr_(std::move(row_ptr)),
      col_idx_(std::move(col_idx)),
      values_(row_ptr_.backend(), 0),
      values_f32_(row_ptr_.backend(), 0),
      stats_(stats) {}

void CsrMatrix::throw_float_overflow(std::size_t k, double value) const {
  const std::vector<index_t> row_ptr = row_ptr_.to_host();
  const auto row =
      std::upper_bound(row_ptr.begin(), row_ptr.end(), static_cast<index_t>(k)) - row_ptr.begin();
  index_t column = 0;
  copy_bytes(Backend::reference(), &column, col_idx_.backend(), col_idx_.data() + k,
             sizeof(index_t));
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  throw InvalidInput("CSR value " + std::string(text) + " in row " + std::to_string(row) +
                     ", column " + std::to_string(column + 1) +
                     " overflows float32 (largest finite float: 3.4028235e+38)");
}

std::vector<float> CsrMatrix::round_to_float(const std::vector<double>& values) const {
  std::vector<float> rounded(values.size());
  const index_t first_overflow =
      kernels::blas::round_to_float(Backend::reference(), Span<const double>(values), rounded);
  if (first_overflow >= 0) {
    throw_float_overflow(static_cast<std::size_t>(first_overflow), values[first_overflow]);
  }
  return rounded;
}

Array<float> CsrMatrix::round_to_float(const Array<double>& values) const {
  Array<float> rounded(backend(), values.size());
  const index_t first_overflow =
      kernels::blas::round_to_float(backend(), values.span(), rounded.span());
  if (first_overflow >= 0) {
    double value = 0.0;
    copy_bytes(Backend::reference(), &value, values.backend(), values.data() + first_overflow,
               sizeof(double));
    throw_float_overflow(static_cast<std::size_t>(first_overflow), value);
  }
  return rounded;
}

kernels::spmv::RowPointerFacts CsrMatrix::build_partition(int tile) {
  kernels::spmv::PartitionArrays p =
      kernels::spmv::build_partition(row_ptr_.backend(), row_ptr_.span(), tile);
  const kernels::spmv::RowPointerFacts facts = p.facts;
  if (facts.valid()) install_partition(std::move(p));
  return facts;
}

void CsrMatrix::install_partition(kernels::spmv::PartitionArrays&& p) {
  const Backend& target = row_ptr_.backend();
  stats_.min = p.facts.min_length;
  stats_.max = p.facts.max_length;
  stats_.empty_rows = p.facts.empty_rows;
  tile_ = p.tile;
  row_blocks_ = std::move(p.row_blocks);
  long_rows_ = std::move(p.long_rows);
  long_row_chunks_ = std::move(p.long_row_chunks);
  chunk_long_row_ = std::move(p.chunk_long_row);
  const auto row_blocks = static_cast<index_t>(row_blocks_.size() - 1);
  block_partials_ =
      Array<double>(target, kernels::spmv::kMaxFusedDots * static_cast<std::size_t>(row_blocks));
  chunk_partials_ = Array<double>(target, chunk_long_row_.size());
  counters_ = std::move(p.counters);
  partition_deferred_ = false;
}

void CsrMatrix::check_row_pointers(const kernels::spmv::RowPointerFacts& facts) const {
  if (facts.first != 0 || facts.last != static_cast<std::int64_t>(nnz())) {
    throw InvalidInput("CSR row_ptr must run from 0 to nnz");
  }
  if (facts.first_decrease >= 0) {
    throw InvalidInput("CSR row_ptr decreases at row " + std::to_string(facts.first_decrease + 1));
  }
}

void CsrMatrix::build_partitions(const std::vector<CsrMatrix*>& matrices) {
  std::vector<CsrMatrix*> pending;
  for (CsrMatrix* m : matrices) {
    if (m != nullptr && m->partition_deferred_) pending.push_back(m);
  }
  while (!pending.empty()) {
    // The matrices on the first one's backend together; the others in a later round.
    const Backend backend = pending.front()->row_ptr_.backend();
    std::vector<CsrMatrix*> now, later;
    std::vector<kernels::spmv::PartitionRequest> requests;
    for (CsrMatrix* m : pending) {
      if (m->row_ptr_.backend() == backend) {
        now.push_back(m);
        requests.push_back(
            {m->row_ptr_.span(),
             kernels::spmv::default_tile(m->stats_.mean, static_cast<std::int64_t>(m->nnz()))});
      } else {
        later.push_back(m);
      }
    }
    std::vector<kernels::spmv::PartitionArrays> built =
        kernels::spmv::build_partitions(backend, requests);
    for (std::size_t k = 0; k < now.size(); ++k) {
      now[k]->check_row_pointers(built[k].facts);
      now[k]->install_partition(std::move(built[k]));
    }
    pending = std::move(later);
  }
}

void CsrMatrix::set_spmv_tile(int tile) {
  const bool unchecked = partition_deferred_;
  const kernels::spmv::RowPointerFacts facts = build_partition(tile);
  if (unchecked) check_row_pointers(facts);
}

CsrMatrix CsrMatrix::from_host(const Backend& backend, index_t num_rows, index_t num_cols,
                               std::vector<index_t> row_ptr, std::vector<index_t> col_idx,
                               std::vector<double> values, Precision precision) {
  if (num_rows < 0 || num_cols < 0) throw InvalidInput("CSR matrix with negative dimensions");
  check_index_range(values.size(), "stored entries");
  if (row_ptr.size() != static_cast<std::size_t>(num_rows) + 1) {
    throw InvalidInput("CSR row_ptr has " + std::to_string(row_ptr.size()) + " entries, expected " +
                       std::to_string(num_rows + 1));
  }
  if (col_idx.size() != values.size()) {
    throw InvalidInput("CSR col_idx and values differ in length");
  }
  if (row_ptr[0] != 0 || static_cast<std::size_t>(row_ptr[num_rows]) != values.size()) {
    throw InvalidInput("CSR row_ptr must run from 0 to nnz");
  }
  for (index_t i = 0; i < num_rows; ++i) {
    if (row_ptr[i + 1] < row_ptr[i]) {
      throw InvalidInput("CSR row_ptr decreases at row " + std::to_string(i + 1));
    }
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      if (col_idx[k] < 0 || col_idx[k] >= num_cols) {
        throw InvalidInput("CSR column index " + std::to_string(col_idx[k] + 1) + " in row " +
                           std::to_string(i + 1) + " is out of range 1.." +
                           std::to_string(num_cols));
      }
      if (k > row_ptr[i] && col_idx[k] <= col_idx[k - 1]) {
        throw InvalidInput("CSR columns of row " + std::to_string(i + 1) +
                           " are unsorted or duplicated");
      }
    }
  }
  const RowLengthStats stats = mean_only(num_rows, values.size());
  CsrMatrix A(num_rows, num_cols, Array<index_t>::from_host(backend, row_ptr),
              Array<index_t>::from_host(backend, col_idx), stats);
  A.precision_ = precision;
  if (precision == Precision::float32) {
    A.values_f32_ = Array<float>::from_host(backend, A.round_to_float(values));
  } else {
    A.values_ = Array<double>::from_host(backend, values);
  }
  A.build_partition(
      kernels::spmv::default_tile(stats.mean, static_cast<std::int64_t>(values.size())));
  return A;
}

CsrMatrix CsrMatrix::from_arrays(index_t num_rows, index_t num_cols, Array<index_t> row_ptr,
                                 Array<index_t> col_idx, Array<double> values,
                                 Partition partition) {
  if (num_rows < 0 || num_cols < 0) throw InvalidInput("CSR matrix with negative dimensions");
  check_index_range(values.size(), "stored entries");
  if (row_ptr.size() != static_cast<std::size_t>(num_rows) + 1) {
    throw InvalidInput("CSR row_ptr has " + std::to_string(row_ptr.size()) + " entries, expected " +
                       std::to_string(num_rows + 1));
  }
  if (col_idx.size() != values.size()) {
    throw InvalidInput("CSR col_idx and values differ in length");
  }
  const bool empty_entries = values.size() == 0;
  if (!empty_entries &&
      (!(col_idx.backend() == row_ptr.backend()) || !(values.backend() == row_ptr.backend()))) {
    throw InvalidInput("CSR arrays live on different backends");
  }
  // The partition is built where row_ptr lives; it reports row_ptr's first and last entries,
  // its first decrease and the row-length statistics (one wait on cuda, no copy of row_ptr).
  const Backend backend = row_ptr.backend();
  const std::size_t nnz = values.size();
  const RowLengthStats stats = mean_only(num_rows, nnz);
  CsrMatrix A(num_rows, num_cols, std::move(row_ptr),
              empty_entries ? Array<index_t>(backend, 0) : std::move(col_idx), stats);
  A.values_ = empty_entries ? Array<double>(backend, 0) : std::move(values);
  if (partition == Partition::deferred) {
    A.partition_deferred_ = true;
    return A;
  }
  A.check_row_pointers(
      A.build_partition(kernels::spmv::default_tile(stats.mean, static_cast<std::int64_t>(nnz))));
  return A;
}

CsrMatrix CsrMatrix::copy_from(const Backend& backend, index_t num_rows, index_t num_cols,
                               std::int64_t nnz, const index_t* row_ptr, const index_t* col_idx,
                               const double* values, Precision precision) {
  if (num_rows < 0 || num_cols < 0 || nnz < 0) {
    throw InvalidInput("CSR matrix with negative dimensions or entries");
  }
  check_index_range(static_cast<std::size_t>(nnz), "stored entries");
  if (row_ptr == nullptr || (nnz > 0 && (col_idx == nullptr || values == nullptr))) {
    throw InvalidInput("CSR arrays: a null pointer for an array with entries");
  }
  const auto entries = static_cast<std::size_t>(nnz);
  Array<index_t> rows(backend, static_cast<std::size_t>(num_rows) + 1);
  Array<index_t> cols(backend, entries);
  Array<double> vals(backend, entries);
  copy_bytes(backend, rows.data(), backend, row_ptr, rows.bytes());
  if (entries > 0) {
    copy_bytes(backend, cols.data(), backend, col_idx, cols.bytes());
    copy_bytes(backend, vals.data(), backend, values, vals.bytes());
  }
  CsrMatrix A = from_arrays(num_rows, num_cols, std::move(rows), std::move(cols), std::move(vals));
  const kernels::sparse_setup::PatternView pattern{num_rows, num_cols, A.row_ptr_.data(),
                                                   A.col_idx_.data()};
  const index_t bad = kernels::sparse_setup::first_invalid_row(backend, pattern);
  if (bad >= 0) {
    throw InvalidInput("CSR row " + std::to_string(bad + 1) + " has a column outside 1.." +
                       std::to_string(num_cols) + " or unsorted or duplicate columns");
  }
  if (precision != Precision::float64) A.set_precision(precision);
  return A;
}

CsrMatrix CsrMatrix::copy_from_blocks(const Backend& backend, index_t num_block_rows,
                                      index_t num_block_cols, index_t block_size,
                                      std::int64_t num_blocks, const index_t* block_row_ptr,
                                      const index_t* block_col_idx, const double* block_values,
                                      Array<index_t>* block_position, Precision precision) {
  if (block_size < 1 || block_size > 32) {
    throw InvalidInput("BSR block size " + std::to_string(block_size) + " is outside 1..32");
  }
  if (num_block_rows < 0 || num_block_cols < 0 || num_blocks < 0) {
    throw InvalidInput("BSR matrix with negative dimensions or blocks");
  }
  const std::int64_t B = block_size;
  const std::int64_t nnz = num_blocks * B * B;
  check_index_range(static_cast<std::size_t>(nnz), "stored entries");
  check_index_range(static_cast<std::size_t>(std::max(num_block_rows, num_block_cols) * B),
                    "rows and columns");
  // The block pattern is checked as a CSR pattern of the blocks; its "values" are the first
  // num_blocks block values, never read.
  CsrMatrix blocks;
  try {
    blocks = copy_from(backend, num_block_rows, num_block_cols, num_blocks, block_row_ptr,
                       block_col_idx, block_values);
  } catch (const InvalidInput& e) {
    std::string message = e.what();
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"CSR row", "block row"},
                                   {"CSR arrays", "BSR arrays"},
                                   {"CSR matrix", "BSR matrix"}}) {
      for (std::size_t at = message.find(from); at != std::string::npos;
           at = message.find(from, at + to.size())) {
        message.replace(at, from.size(), to);
      }
    }
    throw InvalidInput("BSR block pattern: " + message);
  }
  const auto entries = static_cast<std::size_t>(nnz);
  Array<index_t> rows(backend, static_cast<std::size_t>(num_block_rows * B) + 1);
  Array<index_t> cols(backend, entries);
  Array<index_t> position(backend, entries);
  kernels::sparse_setup::expand_blocks(
      backend, {num_block_rows, num_block_cols, blocks.row_ptr_.data(), blocks.col_idx_.data()},
      block_size, rows.data(), cols.data(), position.data());
  Array<double> vals(backend, entries);
  if (entries > 0) {  // gathered straight from the caller's block values: one pass, no copy
    kernels::sparse_setup::gather(backend, Span<const double>(block_values, entries),
                                  position.span(), vals.span());
  }
  CsrMatrix A = from_arrays(static_cast<index_t>(num_block_rows * B),
                            static_cast<index_t>(num_block_cols * B), std::move(rows),
                            std::move(cols), std::move(vals));
  if (precision != Precision::float64) A.set_precision(precision);
  if (block_position != nullptr) *block_position = std::move(position);
  return A;
}

CsrMatrix CsrMatrix::from_coo(const Backend& backend, const CooMatrix& coo, Precision precision) {
  if (coo.num_rows < 0 || coo.num_cols < 0)
    throw InvalidInput("COO matrix with negative dimensions");
  const std::size_t n = coo.num_entries();
  if (coo.row_idx.size() != n || coo.col_idx.size() != n) {
    throw InvalidInput("COO arrays differ in length");
  }
  // Counting sort by row, then sort each row by column and sum duplicates.
  std::vector<std::size_t> count(static_cast<std::size_t>(coo.num_rows) + 1, 0);
  for (std::size_t k = 0; k < n; ++k) {
    const index_t i = coo.row_idx[k];
    const index_t j = coo.col_idx[k];
    if (i < 0 || i >= coo.num_rows || j < 0 || j >= coo.num_cols) {
      throw InvalidInput("COO entry " + std::to_string(k + 1) + " (" + std::to_string(i + 1) +
                         ", " + std::to_string(j + 1) + ") is outside the " +
                         std::to_string(coo.num_rows) + " x " + std::to_string(coo.num_cols) +
                         " matrix");
    }
    ++count[static_cast<std::size_t>(i) + 1];
  }
  std::partial_sum(count.begin(), count.end(), count.begin());
  std::vector<std::pair<index_t, double>> entries(n);
  {
    std::vector<std::size_t> next(count.begin(), count.end() - 1);
    for (std::size_t k = 0; k < n; ++k) {
      entries[next[coo.row_idx[k]]++] = {coo.col_idx[k], coo.values[k]};
    }
  }
  std::vector<index_t> row_ptr(static_cast<std::size_t>(coo.num_rows) + 1, 0);
  std::vector<index_t> col_idx;
  std::vector<double> values;
  col_idx.reserve(n);
  values.reserve(n);
  for (index_t i = 0; i < coo.num_rows; ++i) {
    auto first = entries.begin() + static_cast<std::ptrdiff_t>(count[i]);
    auto last = entries.begin() + static_cast<std::ptrdiff_t>(count[i + 1]);
    std::stable_sort(first, last, [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto it = first; it != last; ++it) {
      if (!col_idx.empty() && static_cast<index_t>(col_idx.size()) > row_ptr[i] &&
          col_idx.back() == it->first) {
        values.back() += it->second;
      } else {
        col_idx.push_back(it->first);
        values.push_back(it->second);
      }
    }
    check_index_range(values.size(), "stored entries");
    row_ptr[i + 1] = static_cast<index_t>(values.size());
  }
  return from_host(backend, coo.num_rows, coo.num_cols, std::move(row_ptr), std::move(col_idx),
                   std::move(values), precision);
}

CsrMatrix CsrMatrix::copy_pattern_to(const Backend& target) const {
  CsrMatrix A(num_rows_, num_cols_, row_ptr_.copy_to(target), col_idx_.copy_to(target), stats_);
  A.tile_ = tile_;
  A.partition_deferred_ = partition_deferred_;
  A.row_blocks_ = row_blocks_.copy_to(target);
  A.long_rows_ = long_rows_.copy_to(target);
  A.long_row_chunks_ = long_row_chunks_.copy_to(target);
  A.chunk_long_row_ = chunk_long_row_.copy_to(target);
  A.block_partials_ = Array<double>(target, block_partials_.size());
  A.chunk_partials_ = Array<double>(target, chunk_partials_.size());
  A.counters_ =
      Array<unsigned int>::from_host(target, std::vector<unsigned int>(counters_.size(), 0u));
  return A;
}

CsrMatrix CsrMatrix::copy_to(const Backend& target) const {
  CsrMatrix A = copy_pattern_to(target);
  A.precision_ = precision_;
  A.values_ = values_.copy_to(target);
  A.values_f32_ = values_f32_.copy_to(target);
  return A;
}

CsrMatrix CsrMatrix::with_precision(Precision precision) const {
  if (precision == precision_) return copy_to(backend());
  CsrMatrix A = copy_pattern_to(backend());
  A.precision_ = precision;
  if (precision == Precision::float32) {
    A.values_f32_ = round_to_float(values_);
  } else {
    A.values_ = Array<double>(backend(), values_f32_.size());
    kernels::blas::widen_to_double(backend(), values_f32_.span(), A.values_.span());
  }
  return A;
}

void CsrMatrix::set_precision(Precision precision) {
  if (precision == precision_) return;
  if (precision == Precision::float32) {
    values_f32_ = round_to_float(values_);
    values_ = Array<double>();
  } else {
    Array<double> widened(backend(), values_f32_.size());
    kernels::blas::widen_to_double(backend(), values_f32_.span(), widened.span());
    values_ = std::move(widened);
    values_f32_ = Array<float>();
  }
  precision_ = precision;
}

void CsrMatrix::set_precision(Precision precision, unsigned int* first_overflow) {
  if (precision == precision_ || precision != Precision::float32) {
    // Nothing can overflow: the slot gets "none" all the same (an empty rounding writes it).
    kernels::blas::round_to_float(backend(), Span<const double>(), Span<float>(), first_overflow);
    set_precision(precision);
    return;
  }
  Array<float> rounded(backend(), values_.size());
  kernels::blas::round_to_float(backend(), values_.span(), rounded.span(), first_overflow);
  values_f32_ = std::move(rounded);
  values_ = Array<double>();
  precision_ = precision;
}

void CsrMatrix::update_values(const Array<double>& values) {
  const auto expected = static_cast<std::size_t>(nnz());
  if (values.size() != expected) {
    throw DimensionMismatch("CsrMatrix::update_values: expected " + std::to_string(expected) +
                            " values, got " + std::to_string(values.size()));
  }
  if (precision_ == Precision::float32) {
    if (values.backend() == backend()) {
      values_f32_ = round_to_float(values);
    } else {
      values_f32_ = round_to_float(values.copy_to(backend()));
    }
  } else {
    copy_bytes(values_.backend(), values_.data(), values.backend(), values.data(), values.bytes());
  }
}

HostCsrMatrix CsrMatrix::to_host_csr() const {
  if (num_rows_ != num_cols_) {
    throw DimensionMismatch("CsrMatrix::to_host_csr: the matrix is " + std::to_string(num_rows_) +
                            " x " + std::to_string(num_cols_) + ", not square");
  }
  return {num_rows_, row_ptr_.to_host(), col_idx_.to_host(), values_to_host()};
}

void CsrMatrix::update_values(const Array<double>& values, unsigned int* first_overflow) {
  const auto expected = static_cast<std::size_t>(nnz());
  if (values.size() != expected) {
    throw DimensionMismatch("CsrMatrix::update_values: expected " + std::to_string(expected) +
                            " values, got " + std::to_string(values.size()));
  }
  if (!(values.backend() == backend())) {
    throw InvalidInput(
        "CsrMatrix::update_values with a deferred check: the values must live on "
        "the matrix's backend");
  }
  if (precision_ == Precision::float32) {
    Array<float> rounded(backend(), values.size());
    kernels::blas::round_to_float(backend(), values.span(), rounded.span(), first_overflow);
    values_f32_ = std::move(rounded);
  } else {
    kernels::blas::copy(backend(), values.span(), values_.span());
    // Nothing can overflow: the slot gets "none" all the same (an empty rounding writes it).
    kernels::blas::round_to_float(backend(), Span<const double>(), Span<float>(), first_overflow);
  }
}

const Array<double>& CsrMatrix::values() const {
  if (precision_ != Precision::float64) {
    throw NotSupported(
        "CsrMatrix::values: the matrix stores float32 values; use values_float32() or "
        "values_to_host()");
  }
  return values_;
}

const Array<float>& CsrMatrix::values_float32() const {
  if (precision_ != Precision::float32) {
    throw NotSupported(
        "CsrMatrix::values_float32: the matrix stores float64 values; use values() or "
        "values_to_host()");
  }
  return values_f32_;
}

std::vector<double> CsrMatrix::values_to_host() const {
  if (precision_ == Precision::float64) return values_.to_host();
  const std::vector<float> stored = values_f32_.to_host();
  return std::vector<double>(stored.begin(), stored.end());
}

kernels::spmv::CsrView CsrMatrix::view() const {
  if (partition_deferred_) {
    throw InvalidInput(
        "CsrMatrix: applied before its deferred row-block partition was built "
        "(CsrMatrix::build_partitions)");
  }
  kernels::spmv::CsrView v;
  v.num_rows = num_rows_;
  v.num_cols = num_cols_;
  v.nnz = nnz();
  v.row_ptr = row_ptr_.data();
  v.col_idx = col_idx_.data();
  v.values = precision_ == Precision::float64 ? values_.data() : nullptr;
  v.values_f32 = precision_ == Precision::float32 ? values_f32_.data() : nullptr;
  v.tile = tile_;
  v.num_row_blocks = num_row_blocks();
  v.row_blocks = row_blocks_.data();
  v.num_long_rows = static_cast<index_t>(long_rows_.size());
  v.long_rows = long_rows_.data();
  v.long_row_chunks = long_row_chunks_.data();
  v.num_chunks = static_cast<index_t>(chunk_long_row_.size());
  v.chunk_long_row = chunk_long_row_.data();
  v.block_partials = block_partials_.data();
  v.chunk_partials = chunk_partials_.data();
  v.counters = counters_.data();
  return v;
}

void CsrMatrix::apply(const Vector& x, Vector& y) const {
  check_apply_shapes(x, y, "CsrMatrix::apply");
  check_distinct(x, y, "CsrMatrix::apply");
  kernels::spmv::csr_spmv(backend(), view(), x.span(), y.span());
}

void CsrMatrix::apply(double alpha, const Vector& x, double beta, Vector& y) const {
  check_apply_shapes(x, y, "CsrMatrix::apply(alpha, x, beta, y)");
  check_distinct(x, y, "CsrMatrix::apply(alpha, x, beta, y)");
  kernels::spmv_axpby::csr_spmv_axpby(backend(), view(), alpha, x.span(), beta, y.span());
}

void CsrMatrix::residual(const Vector& b, const Vector& x, Vector& r) const {
  check_apply_shapes(x, r, "CsrMatrix::residual");
  check_distinct(x, r, "CsrMatrix::residual");
  if (b.size() != r.size()) throw DimensionMismatch("CsrMatrix::residual: b and r differ in size");
  if (!(b.backend() == backend())) {
    throw InvalidInput("CsrMatrix::residual: b must live on the matrix's backend (" +
                       backend().name() + ")");
  }
  kernels::spmv::csr_residual(backend(), view(), b.span(), x.span(), r.span());
}

void CsrMatrix::chebyshev_step(const Vector& b, const Vector& x, const Vector& dinv, double alpha,
                               double beta, Vector& d, Vector& y) const {
  check_chebyshev_step(b, x, dinv, d, y);
  kernels::spmv::csr_chebyshev_step(backend(), view(), b.span(), x.span(), dinv.span(), alpha, beta,
                                    d.span(), y.span());
}

void CsrMatrix::chebyshev_first_steps(const Vector& b, const Vector& dinv, double alpha0,
                                      double alpha, double beta, Vector& d, Vector& y) const {
  check_chebyshev_step(b, b, dinv, d, y);
  if (d.size() > 0 &&
      (d.span().data() == b.span().data() || d.span().data() == dinv.span().data())) {
    throw InvalidInput("chebyshev_first_steps: d must be distinct from b and dinv");
  }
  kernels::spmv::csr_chebyshev_first_steps(backend(), view(), b.span(), dinv.span(), alpha0, alpha,
                                           beta, d.span(), y.span());
}

void CsrMatrix::apply_dot(const Vector& x, Vector& y, DeviceScalar xy) const {
  check_apply_shapes(x, y, "CsrMatrix::apply_dot");
  check_distinct(x, y, "CsrMatrix::apply_dot");
  if (num_rows_ != num_cols_) throw DimensionMismatch("CsrMatrix::apply_dot needs a square matrix");
  kernels::spmv::csr_spmv_dot(backend(), view(), x.span(), y.span(), xy.address);
}

static_assert(kernels::spmv::kMaxProductDots == LinearOperator::kMaxProductDots);

void CsrMatrix::apply_dots(const Vector& x, Vector& y, std::span<const Vector* const> with,
                           DeviceScalar first) const {
  constexpr const char* kName = "CsrMatrix::apply_dots";
  check_apply_shapes(x, y, kName);
  check_distinct(x, y, kName);
  if (num_rows_ != num_cols_)
    throw DimensionMismatch(std::string(kName) + " needs a square matrix");
  if (with.empty() || with.size() > static_cast<std::size_t>(kMaxProductDots)) {
    throw InvalidInput(std::string(kName) + ": 1 to " + std::to_string(kMaxProductDots) +
                       " inner products, got " + std::to_string(with.size()));
  }
  kernels::spmv::ProductDots dots;
  dots.count = static_cast<int>(with.size());
  for (std::size_t k = 0; k < with.size(); ++k) {
    if (with[k] == nullptr) continue;  // y·y
    check_apply_shapes(x, *with[k], kName);
    check_distinct(*with[k], y, kName);
    dots.with[k] = with[k]->span().data();
  }
  kernels::spmv::csr_spmv_dots(backend(), view(), x.span(), y.span(), dots, first.address);
}

bool CsrMatrix::fuses_combination() const {
  return num_row_blocks() <= kernels::spmv::kLatencyBoundRowBlocks;
}

DeviceSum CsrMatrix::apply_combination_dot(const Vector* scale, const Vector& u, DeviceScalar c,
                                           const Vector& w, Vector& y, DeviceScalar vy,
                                           bool partials_ok) const {
  constexpr const char* kName = "CsrMatrix::apply_combination_dot";
  if (num_rows_ != num_cols_)
    throw DimensionMismatch(std::string(kName) + " needs a square matrix");
  check_apply_shapes(u, y, kName);
  check_apply_shapes(w, y, kName);
  check_distinct(u, y, kName);
  check_distinct(w, y, kName);
  if (scale != nullptr) {
    check_apply_shapes(*scale, y, kName);
    check_distinct(*scale, y, kName);
  }
  kernels::spmv::Combination v;
  v.u = u.span().data();
  v.scale = scale != nullptr ? scale->span().data() : nullptr;
  v.w = w.span().data();
  v.coefficient = c.address;
  const int partials = kernels::spmv::csr_spmv_combination_dot(backend(), view(), v, y.span(),
                                                               vy.address, partials_ok);
  if (partials == 0) return {vy.address, 0};
  return {block_partials_.data(), partials};
}

bool CsrMatrix::fuses_shifted_product() const {
  return num_row_blocks() <= kernels::spmv::kLatencyBoundRowBlocks;
}

DeviceSum CsrMatrix::apply_shifted_dots(const Vector& d, const Vector& u, DeviceScalar numerator,
                                        DeviceScalar denominator, const Vector& w, Vector& s,
                                        Vector& z, Vector& y, DeviceScalar sums,
                                        bool partials_ok) const {
  constexpr const char* kName = "CsrMatrix::apply_shifted_dots";
  if (num_rows_ != num_cols_)
    throw DimensionMismatch(std::string(kName) + " needs a square matrix");
  const Vector* operands[] = {&s, &z, &y, &d, &u, &w};  // outputs first
  for (const Vector* operand : operands) check_apply_shapes(*operand, y, kName);
  for (std::size_t o = 0; o < 3; ++o) {
    for (std::size_t k = 0; k < std::size(operands); ++k) {
      if (k != o) check_distinct(*operands[k], *operands[o], kName);
    }
  }
  kernels::spmv::ShiftedStep v;
  v.u = u.span().data();
  v.w = w.span().data();
  v.scale = d.span().data();
  v.numerator = numerator.address;
  v.denominator = denominator.address;
  v.s = s.span().data();
  v.z = z.span().data();
  const int partials = kernels::spmv::csr_spmv_shifted_dots(backend(), view(), v, y.span(),
                                                            sums.address, partials_ok);
  if (partials == 0) return {sums.address, 0};
  return {block_partials_.data(), partials};
}

void CsrMatrix::diagonal(Vector& d) const {
  if (d.size() != static_cast<std::size_t>(num_rows_)) {
    throw DimensionMismatch("CsrMatrix::diagonal: d must have num_rows entries");
  }
  if (!(d.backend() == backend())) {
    throw InvalidInput("CsrMatrix::diagonal: d must live on the matrix's backend (" +
                       backend().name() + ")");
  }
  kernels::spmv::csr_diagonal(backend(), view(), d.span());
}

double CsrMatrix::spmv_bytes() const noexcept {
  const double entry_bytes = 4.0 + static_cast<double>(value_bytes(precision_));
  return entry_bytes * static_cast<double>(nnz()) + 4.0 * (num_rows_ + 1) + 8.0 * num_cols_ +
         8.0 * num_rows_;
}

}  // namespace kryflow
