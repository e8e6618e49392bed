// FSAI (fsai.hpp): the pattern of lower(A^k) and G's rows as kernel calls on A's backend, G^T by
// a transposition whose map is kept for value updates.
#include "kryflow/preconditioners/fsai.hpp"

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

#include "kernels/fsai/fsai.hpp"
#include "kernels/sparse_setup/sparse_setup.hpp"
#include "kryflow/core/error.hpp"
#include "src/multigrid/csr_access.hpp"

namespace kryflow {
namespace {

namespace ss = kernels::sparse_setup;

/// A pattern built on a backend.
struct PatternArrays {
  index_t num_rows = 0, num_cols = 0;
  Array<index_t> row_ptr, col_idx;
  ss::PatternView view() const {
    return {num_rows, num_cols, row_ptr.span().data(), col_idx.span().data()};
  }
};

/// The pattern of the product of two patterns (symbolic SpGEMM; one wait for its size).
PatternArrays product_pattern(const Backend& backend, const ss::PatternView& a,
                              const ss::PatternView& b) {
  PatternArrays c;
  c.num_rows = a.num_rows;
  c.num_cols = b.num_cols;
  Array<index_t> counts(backend, static_cast<std::size_t>(a.num_rows));
  ss::spgemm_count(backend, a, b, counts.span());
  c.row_ptr = Array<index_t>(backend, counts.size() + 1);
  const std::int64_t nnz = ss::exclusive_scan(backend, counts.span(), c.row_ptr.span());
  c.col_idx = Array<index_t>(backend, static_cast<std::size_t>(nnz));
  ss::spgemm_fill(backend, a, b, c.row_ptr.span().data(), c.col_idx.span().data());
  return c;
}

ss::PatternView pattern_of(const CsrMatrix& M) {
  return detail::pattern_view(M);
}

}  // namespace

FsaiPreconditioner::FsaiPreconditioner(Parameters parameters) : parameters_(parameters) {
  if (parameters_.pattern_power < 1 || parameters_.pattern_power > 3) {
    throw ConfigError("pattern_power",
                      "must be 1, 2 or 3, got " + std::to_string(parameters_.pattern_power));
  }
  if (parameters_.max_row_entries < 1 ||
      parameters_.max_row_entries > kernels::fsai::kMaxRowEntries) {
    throw ConfigError("max_row_entries",
                      "must be in 1.." + std::to_string(kernels::fsai::kMaxRowEntries) + ", got " +
                          std::to_string(parameters_.max_row_entries));
  }
}

void FsaiPreconditioner::setup(const LinearOperator& A) {
  const auto start = std::chrono::steady_clock::now();
  const CsrMatrix& csr = detail::require_csr(A, "fsai");
  const Backend& backend = A.backend();
  const index_t n = csr.num_rows();
  // The pattern S of A^k (A's own for k = 1).
  const ss::PatternView a = pattern_of(csr);
  PatternArrays power;
  for (int k = 2; k <= parameters_.pattern_power; ++k) {
    power = product_pattern(backend, k == 2 ? a : power.view(), a);
  }
  const ss::PatternView s = parameters_.pattern_power == 1 ? a : power.view();
  // G's pattern: the lower triangle of S, cut to max_row_entries per row.
  Array<index_t> counts(backend, static_cast<std::size_t>(n));
  const index_t longest =
      kernels::fsai::pattern_count(backend, s, parameters_.max_row_entries, counts.span());
  Array<index_t> g_row_ptr(backend, static_cast<std::size_t>(n) + 1);
  const std::int64_t nnz = ss::exclusive_scan(backend, counts.span(), g_row_ptr.span());
  Array<index_t> g_col_idx(backend, static_cast<std::size_t>(nnz));
  kernels::fsai::pattern_fill(backend, s, g_row_ptr.span().data(), g_col_idx.span().data());
  power = PatternArrays{};
  // G^T's pattern and the map of its entries into G's.
  const ss::PatternView g{n, n, g_row_ptr.span().data(), g_col_idx.span().data()};
  Array<index_t> column_counts(backend, static_cast<std::size_t>(n));
  ss::transpose_count(backend, g, column_counts.span());
  Array<index_t> gt_row_ptr(backend, static_cast<std::size_t>(n) + 1);
  ss::exclusive_scan_bounded(backend, column_counts.span(), gt_row_ptr.span(), nnz);
  Array<index_t> gt_col_idx(backend, static_cast<std::size_t>(nnz));
  Array<index_t> source(backend, static_cast<std::size_t>(nnz));
  ss::transpose_fill(backend, g, nnz, gt_row_ptr.span().data(), gt_col_idx.span().data(),
                     source.span().data());
  // The values arrays are written by compute_values before anything reads them.
  lower_ = CsrMatrix::from_arrays(n, n, std::move(g_row_ptr), std::move(g_col_idx),
                                  Array<double>(backend, static_cast<std::size_t>(nnz)));
  upper_ = CsrMatrix::from_arrays(n, n, std::move(gt_row_ptr), std::move(gt_col_idx),
                                  Array<double>(backend, static_cast<std::size_t>(nnz)));
  transpose_source_ = std::move(source);
  longest_ = longest;
  n_ = n;
  backend_ = backend;
  a_entries_ = csr.nnz();
  compute_values(csr);
  if (parameters_.factor_precision != Precision::float64) {
    lower_.set_precision(parameters_.factor_precision);
    upper_.set_precision(parameters_.factor_precision);
  }
  work_ = Vector(backend, static_cast<std::size_t>(n));
  setup_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void FsaiPreconditioner::compute_values(const CsrMatrix& A) {
  const Backend& backend = A.backend();
  const auto nnz = static_cast<std::size_t>(lower_.nnz());
  // The sign of A's definiteness from the sum of its diagonal (an indefinite A fails below
  // either way).
  Vector diagonal(backend, static_cast<std::size_t>(n_));
  A.diagonal(diagonal);
  const double sign =
      dot(diagonal, Vector::constant(backend, static_cast<std::size_t>(n_), 1.0)) < 0 ? -1.0 : 1.0;
  Vector values(Array<double>(backend, nnz));
  const index_t failed = kernels::fsai::factor_values(
      backend, detail::matrix_view(A), sign, pattern_of(lower_), longest_, values.span().data());
  if (failed >= 0) {
    n_ = 0;  // nothing half-built is applied
    throw InvalidInput("fsai: the submatrix A[J, J] of row " + std::to_string(failed + 1) +
                       " (J: the row's pattern in G) is not " +
                       (sign > 0 ? "positive" : "negative") +
                       " definite: A must be symmetric and definite, its diagonal of one sign");
  }
  // G^T, negated for a negative definite A: M = -(G^T G) with G from -A.
  Vector transposed(backend, nnz);
  gather(values, transpose_source_, transposed);
  if (sign < 0) axpby(0.0, transposed, -1.0, transposed);
  lower_.update_values(values.values());
  upper_.update_values(transposed.values());
}

void FsaiPreconditioner::update_values(const LinearOperator& A) {
  const auto* csr = dynamic_cast<const CsrMatrix*>(&A);
  if (csr == nullptr || n_ == 0 || csr->num_rows() != n_ || csr->num_cols() != n_ ||
      csr->nnz() != a_entries_ || !(A.backend() == backend_) ||
      csr->precision() != Precision::float64) {
    setup(A);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  const index_t n = n_;
  compute_values(*csr);
  n_ = n;
  setup_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void FsaiPreconditioner::apply(const Vector& r, Vector& z) const {
  check_apply_shapes(r, z, "FsaiPreconditioner::apply");
  if (n_ == 0) return;
  lower_.apply(r, work_);  // G r
  upper_.apply(work_, z);  // G^T (G r)
}

std::int64_t FsaiPreconditioner::memory_bytes() const noexcept {
  const std::int64_t value_bytes = parameters_.factor_precision == Precision::float32 ? 4 : 8;
  const std::int64_t entries = lower_.nnz() + upper_.nnz();
  return entries * (4 + value_bytes) + lower_.nnz() * 4 +
         2 * (static_cast<std::int64_t>(n_) + 1) * 4 + static_cast<std::int64_t>(n_) * 8;
}

std::string FsaiPreconditioner::summary() const {
  char text[320];
  std::snprintf(
      text, sizeof text,
      "FSAI (pattern lower(A^%d), at most %d per row, longest %d): nnz(G + G^T) = "
      "%.2f x nnz(A), factors in %s, setup %.4f s on %s, %.1f bytes per row on the "
      "backend",
      parameters_.pattern_power, static_cast<int>(parameters_.max_row_entries),
      static_cast<int>(longest_),
      a_entries_ > 0 ? static_cast<double>(lower_.nnz() + upper_.nnz()) / a_entries_ : 0.0,
      std::string(to_string(parameters_.factor_precision)).c_str(), setup_seconds_,
      backend_.name().c_str(), n_ > 0 ? static_cast<double>(memory_bytes()) / n_ : 0.0);
  return text;
}

}  // namespace kryflow
