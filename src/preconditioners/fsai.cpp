// FSAI (fsai.hpp): the pattern of lower(A^k) and G's rows as kernel calls on A's backend, G^T by
// a transposition whose map is kept for value updates.
#include "kryflow/preconditioners/fsai.hpp"

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

#include "kernels/blas/blas.hpp"
#include "kernels/fsai/fsai.hpp"
#include "kernels/sparse_setup/sparse_setup.hpp"
#include "kryflow/core/error.hpp"
#include "src/amg/amg_hierarchy.hpp"
#include "src/multigrid/csr_access.hpp"

namespace kryflow {
namespace {

namespace ss = kernels::sparse_setup;

/// diag(A), and the sign of A's definiteness: +1, or -1 when the diagonal sums below 0 (A is then
/// factored as -A). Throws InvalidInput naming the first row whose diagonal entry is zero,
/// missing or not finite.
struct Definiteness {
  Vector diagonal;
  double sign;
};

Definiteness definiteness_of(const CsrMatrix& A) {
  const auto n = static_cast<std::size_t>(A.num_rows());
  Definiteness d{Vector(A.backend(), n), 1.0};
  A.diagonal(d.diagonal);
  Vector inverse(A.backend(), n);
  const index_t bad =
      kernels::blas::invert_diagonal(A.backend(), d.diagonal.span(), inverse.span());
  if (bad >= 0) {
    throw InvalidInput("fsai: the diagonal entry of row " + std::to_string(bad + 1) +
                       " is zero, missing or not finite");
  }
  if (n > 0 && dot(d.diagonal, Vector::constant(A.backend(), n, 1.0)) < 0) d.sign = -1.0;
  return d;
}

/// The factors' values in double on the pattern g of nnz entries (at most `longest` per row):
/// `lower` the rows of G (symmetric: for sign A) or of W' (nonsymmetric); `upper` the rows of
/// Z^T (nonsymmetric; in g's pattern), empty for the symmetric form (its upper factor is G^T).
struct FactorValues {
  Vector lower, upper;
};

/// Throws InvalidInput naming the first row whose submatrix is not definite (symmetric) or
/// meets a zero pivot (nonsymmetric).
FactorValues factor(const CsrMatrix& A, bool symmetric, double sign, const ss::PatternView& g,
                    std::int64_t nnz, index_t longest) {
  const auto size = static_cast<std::size_t>(nnz);
  FactorValues f{Vector(A.backend(), size), Vector()};
  index_t failed = -1;
  if (symmetric) {
    failed = kernels::fsai::factor_values(A.backend(), detail::matrix_view(A), sign, g, longest,
                                          f.lower.span().data());
  } else {
    f.upper = Vector(A.backend(), size);
    failed =
        kernels::fsai::factor_values_nonsymmetric(A.backend(), detail::matrix_view(A), g, longest,
                                                  f.lower.span().data(), f.upper.span().data());
  }
  if (failed >= 0 && symmetric) {
    throw InvalidInput("fsai: the submatrix A[J, J] of row " + std::to_string(failed + 1) +
                       " (J: the row's pattern in G) is not " +
                       (sign > 0 ? "positive" : "negative") +
                       " definite: A must be symmetric and definite, its diagonal of one sign");
  }
  if (failed >= 0) {
    throw InvalidInput(
        "fsai (nonsymmetric): the LU factorization without pivoting of the "
        "submatrix A[J, J] of row " +
        std::to_string(failed + 1) +
        " (J: the row's pattern in W) meets a zero or non-finite pivot");
  }
  return f;
}

}  // namespace

FsaiSymmetry parse_fsai_symmetry(const std::string& name) {
  if (name == "symmetric") return FsaiSymmetry::symmetric;
  if (name == "nonsymmetric") return FsaiSymmetry::nonsymmetric;
  throw ConfigError("symmetry", "unknown '" + name + "' (symmetric, nonsymmetric)");
}

const char* to_string(FsaiSymmetry symmetry) {
  return symmetry == FsaiSymmetry::symmetric ? "symmetric" : "nonsymmetric";
}

FsaiPreconditioner::FsaiPreconditioner(Parameters parameters) : parameters_(parameters) {
  if (parameters_.pattern_power < 1 || parameters_.pattern_power > 3) {
    throw ConfigError("pattern_power",
                      "must be 1, 2 or 3, got " + std::to_string(parameters_.pattern_power));
  }
  if (!(parameters_.filter_tolerance >= 0.0)) {
    throw ConfigError("filter_tolerance",
                      "must be >= 0, got " + std::to_string(parameters_.filter_tolerance));
  }
  static_assert(kMaxRowEntries == kernels::fsai::kMaxRowEntries);
  if (parameters_.max_row_entries < 1 || parameters_.max_row_entries > kMaxRowEntries) {
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
  n_ = 0;  // nothing half-built is applied if a step throws
  // The pattern S of A^k (A's own for k = 1).
  const ss::PatternView a = detail::pattern_view(csr);
  CsrArrays power;
  for (int k = 2; k <= parameters_.pattern_power; ++k) {
    power = amg_setup::spgemm_pattern(backend, k == 2 ? a : power.pattern(), a);
  }
  const ss::PatternView s = parameters_.pattern_power == 1 ? a : power.pattern();
  // G's pattern: the lower triangle of S, cut to max_row_entries per row.
  CsrArrays g{n, n, Array<index_t>(backend, static_cast<std::size_t>(n) + 1), {}, {}};
  Array<index_t> counts(backend, static_cast<std::size_t>(n));
  longest_ = kernels::fsai::pattern_count(backend, s, parameters_.max_row_entries, counts.span());
  std::int64_t nnz = ss::exclusive_scan(backend, counts.span(), g.row_ptr.span());
  g.col_idx = Array<index_t>(backend, static_cast<std::size_t>(nnz));
  kernels::fsai::pattern_fill(backend, s, g.row_ptr.span().data(), g.col_idx.span().data());
  power = CsrArrays{};
  const Definiteness definiteness = definiteness_of(csr);
  const bool symmetric = parameters_.symmetry == FsaiSymmetry::symmetric;
  if (parameters_.filter_tolerance > 0.0) {
    // Post-filtration: G on the whole pattern, its small entries dropped, G again on the rest.
    // The nonsymmetric form keeps an entry that is large in W' or in Z.
    const FactorValues values =
        factor(csr, symmetric, definiteness.sign, g.pattern(), nnz, longest_);
    const double* other = symmetric ? nullptr : values.upper.span().data();
    CsrArrays f{n, n, Array<index_t>(backend, static_cast<std::size_t>(n) + 1), {}, {}};
    longest_ = kernels::fsai::filter_count(backend, g.pattern(), values.lower.span().data(), other,
                                           definiteness.diagonal.span().data(),
                                           parameters_.filter_tolerance, counts.span());
    nnz = ss::exclusive_scan(backend, counts.span(), f.row_ptr.span());
    f.col_idx = Array<index_t>(backend, static_cast<std::size_t>(nnz));
    kernels::fsai::filter_fill(backend, g.pattern(), values.lower.span().data(), other,
                               definiteness.diagonal.span().data(), parameters_.filter_tolerance,
                               f.row_ptr.span().data(), f.col_idx.span().data());
    g = std::move(f);
  }
  // G^T's pattern and the map of its entries into G's.
  Array<index_t> column_counts(backend, static_cast<std::size_t>(n));
  ss::transpose_count(backend, g.pattern(), column_counts.span());
  Array<index_t> gt_row_ptr(backend, static_cast<std::size_t>(n) + 1);
  ss::exclusive_scan_bounded(backend, column_counts.span(), gt_row_ptr.span(), nnz);
  Array<index_t> gt_col_idx(backend, static_cast<std::size_t>(nnz));
  Array<index_t> source(backend, static_cast<std::size_t>(nnz));
  ss::transpose_fill(backend, g.pattern(), nnz, gt_row_ptr.span().data(), gt_col_idx.span().data(),
                     source.span().data());
  // The values arrays are written by install_values before anything reads them.
  lower_ = CsrMatrix::from_arrays(n, n, std::move(g.row_ptr), std::move(g.col_idx),
                                  Array<double>(backend, static_cast<std::size_t>(nnz)));
  upper_ = CsrMatrix::from_arrays(n, n, std::move(gt_row_ptr), std::move(gt_col_idx),
                                  Array<double>(backend, static_cast<std::size_t>(nnz)));
  transpose_source_ = std::move(source);
  backend_ = backend;
  a_entries_ = csr.nnz();
  const FactorValues values = factor(csr, symmetric, definiteness.sign,
                                     detail::pattern_view(lower_), lower_.nnz(), longest_);
  install_values(values.lower, values.upper, definiteness.sign);
  if (parameters_.factor_precision != Precision::float64) {
    lower_.set_precision(parameters_.factor_precision);
    upper_.set_precision(parameters_.factor_precision);
  }
  work_ = Vector(backend, static_cast<std::size_t>(n));
  n_ = n;
  setup_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void FsaiPreconditioner::install_values(const Vector& lower, const Vector& upper_rows,
                                        double sign) {
  // The upper factor by columns: Z, or G^T (negated for a negative definite A: M = -(G^T G)).
  const bool symmetric = parameters_.symmetry == FsaiSymmetry::symmetric;
  Vector transposed(lower.backend(), lower.size());
  gather(symmetric ? lower : upper_rows, transpose_source_, transposed);
  if (symmetric && sign < 0) axpby(0.0, transposed, -1.0, transposed);
  lower_.update_values(lower.values());
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
  n_ = 0;  // nothing half-updated is applied if factor throws
  const Definiteness definiteness = definiteness_of(*csr);
  const FactorValues values =
      factor(*csr, parameters_.symmetry == FsaiSymmetry::symmetric, definiteness.sign,
             detail::pattern_view(lower_), lower_.nnz(), longest_);
  install_values(values.lower, values.upper, definiteness.sign);
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
  const bool symmetric = parameters_.symmetry == FsaiSymmetry::symmetric;
  char text[320];
  std::snprintf(
      text, sizeof text,
      "FSAI (%spattern lower(A^%d), at most %d per row, longest %d, filter %.3g): nnz(%s) "
      "= %.2f x nnz(A), factors in %s, setup %.4f s on %s, %.1f bytes per row on the "
      "backend",
      symmetric ? "" : "nonsymmetric, ", parameters_.pattern_power,
      static_cast<int>(parameters_.max_row_entries), static_cast<int>(longest_),
      parameters_.filter_tolerance, symmetric ? "G + G^T" : "W + Z",
      a_entries_ > 0 ? static_cast<double>(lower_.nnz() + upper_.nnz()) / a_entries_ : 0.0,
      std::string(to_string(parameters_.factor_precision)).c_str(), setup_seconds_,
      backend_.name().c_str(), n_ > 0 ? static_cast<double>(memory_bytes()) / n_ : 0.0);
  return text;
}

}  // namespace kryflow
