// AINV (approximate_inverse.hpp): the right-looking biconjugation on the host, the two factors
// on the backend.
#include "kryflow/preconditioners/approximate_inverse.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "kryflow/core/error.hpp"
#include "src/preconditioners/ainv_parallel.hpp"

namespace kryflow {

AinvSymmetry parse_ainv_symmetry(const std::string& name) {
  if (name == "automatic") return AinvSymmetry::automatic;
  if (name == "symmetric") return AinvSymmetry::symmetric;
  if (name == "nonsymmetric") return AinvSymmetry::nonsymmetric;
  throw ConfigError("symmetry",
                    "unknown value '" + name + "' (automatic, symmetric or nonsymmetric)");
}

const char* to_string(AinvSymmetry symmetry) {
  switch (symmetry) {
    case AinvSymmetry::automatic:
      return "automatic";
    case AinvSymmetry::symmetric:
      return "symmetric";
    case AinvSymmetry::nonsymmetric:
      return "nonsymmetric";
  }
  return "automatic";
}

namespace {

void validate(const AinvParameters& parameters) {
  if (!(parameters.drop_tolerance >= 0.0)) throw ConfigError("drop_tolerance", "must be >= 0");
  if (parameters.fill < -1) throw ConfigError("fill", "must be >= -1");
  if (parameters.threads < 0) throw ConfigError("threads", "must be >= 0");
}

}  // namespace

namespace ainv_detail {

HostCsr transpose(index_t n, const HostCsr& a) {
  HostCsr t;
  t.ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (index_t c : a.col) ++t.ptr[c + 1];
  for (index_t i = 0; i < n; ++i) t.ptr[i + 1] += t.ptr[i];
  t.col.resize(a.col.size());
  t.val.resize(a.val.size());
  std::vector<index_t> next(t.ptr.begin(), t.ptr.end() - 1);
  for (index_t i = 0; i < n; ++i) {
    for (index_t k = a.ptr[i]; k < a.ptr[i + 1]; ++k) {
      const index_t s = next[a.col[k]]++;
      t.col[s] = i;
      t.val[s] = a.val[k];
    }
  }
  return t;
}

void keep_largest(Column& column, index_t p) {
  if (p >= 0 && static_cast<index_t>(column.size()) - 1 > p) {
    Entry diagonal = column.back();
    column.pop_back();
    std::nth_element(column.begin(), column.begin() + p, column.end(),
                     [](const Entry& x, const Entry& y) {
                       return std::abs(x.value) > std::abs(y.value) ||
                              (std::abs(x.value) == std::abs(y.value) && x.row < y.row);
                     });
    column.resize(static_cast<std::size_t>(p));
    std::sort(column.begin(), column.end(),
              [](const Entry& x, const Entry& y) { return x.row < y.row; });
    column.push_back(diagonal);
  }
}

void update_columns(Factor& factor, index_t i, Workspace& work, double pivot, double tau,
                    const std::vector<index_t>& limit) {
  std::vector<index_t>& candidates = work.candidates;
  candidates.clear();
  for (index_t m : work.support) {
    std::vector<index_t>& held = factor.rows[m];
    std::size_t kept = 0;
    for (index_t j : held) {
      if (j <= i) continue;  // done columns leave the index
      held[kept++] = j;
      if (work.candidate_mark[j] != i) {
        work.candidate_mark[j] = i;
        candidates.push_back(j);
      }
    }
    held.resize(kept);
  }
  // Increasing j: the updates are independent, the order only fixes where fill is indexed.
  std::sort(candidates.begin(), candidates.end());
  const Column& xi = factor.columns[i];
  for (index_t j : candidates) {
    Column& xj = factor.columns[j];
    const double coefficient = work.dot(xj) / pivot;
    if (coefficient == 0.0) continue;
    Column& merged = work.merged;
    merged.clear();
    std::size_t a = 0, b = 0;
    // Both columns hold rows <= their own index (i < j): merge by row.
    while (a < xj.size() || b < xi.size()) {
      if (b == xi.size() || (a < xj.size() && xj[a].row < xi[b].row)) {
        merged.push_back(xj[a++]);
      } else if (a == xj.size() || xi[b].row < xj[a].row) {
        merged.push_back({xi[b].row, -coefficient * xi[b].value});
        ++b;
      } else {
        merged.push_back({xj[a].row, xj[a].value - coefficient * xi[b].value});
        ++a;
        ++b;
      }
    }
    // Drop by tau (never the diagonal, the last entry), then keep the p largest.
    std::size_t kept = 0;
    for (std::size_t k = 0; k < merged.size(); ++k) {
      if (merged[k].row == j || std::abs(merged[k].value) >= tau) merged[kept++] = merged[k];
    }
    merged.resize(kept);
    keep_largest(merged, limit[j]);
    // New rows of x_j enter the row index (rows it already had are indexed).
    std::size_t old = 0;
    for (const Entry& e : merged) {
      while (old < xj.size() && xj[old].row < e.row) ++old;
      if (old == xj.size() || xj[old].row != e.row) factor.rows[e.row].push_back(j);
    }
    xj.swap(merged);
  }
}

double checked_pivot(double pivot, double fallback, bool symmetric, index_t i,
                     std::vector<index_t>& shifted) {
  constexpr double kTiny = 1e-10;
  const bool bad = !std::isfinite(pivot) || std::abs(pivot) < kTiny ||
                   (symmetric && (pivot > 0.0) != (fallback > 0.0));
  if (!bad) return pivot;
  shifted.push_back(i);
  return fallback;
}

}  // namespace ainv_detail

namespace {

using namespace ainv_detail;

void flatten(const Factor& factor, std::vector<index_t>& ptr, std::vector<index_t>& row,
             std::vector<double>& values) {
  ptr.assign(1, 0);
  row.clear();
  values.clear();
  for (const Column& column : factor.columns) {
    for (const Entry& e : column) {
      row.push_back(e.row);
      values.push_back(e.value);
    }
    ptr.push_back(static_cast<index_t>(row.size()));
  }
}

/// The first entry (i, j) whose transpose differs, as "(i, j)" 1-based; empty when A is
/// symmetric.
std::string first_asymmetry(index_t n, const HostCsr& a, const HostCsr& at) {
  std::vector<std::pair<index_t, double>> row, column;
  for (index_t i = 0; i < n; ++i) {
    if (a.ptr[i + 1] - a.ptr[i] != at.ptr[i + 1] - at.ptr[i]) {
      return "row " + std::to_string(i + 1) + " and column " + std::to_string(i + 1) +
             " have different patterns";
    }
    // Rows of the transpose are sorted; A's may not be: compare as sorted pairs.
    row.clear();
    column.clear();
    for (index_t k = a.ptr[i]; k < a.ptr[i + 1]; ++k) row.emplace_back(a.col[k], a.val[k]);
    for (index_t k = at.ptr[i]; k < at.ptr[i + 1]; ++k) column.emplace_back(at.col[k], at.val[k]);
    std::sort(row.begin(), row.end());
    for (std::size_t k = 0; k < row.size(); ++k) {
      if (row[k] != column[k]) {
        return "entry (" + std::to_string(i + 1) + ", " + std::to_string(row[k].first + 1) +
               ") differs from its transpose";
      }
    }
  }
  return {};
}

/// AINV's host factorization: the factors laid out as J L and U J, ready to upload.
struct AinvFactorization final : HostFactorization {
  AinvFactors factors;
  index_t n = 0;
  std::int64_t a_entries = 0;
  std::vector<index_t> lower_ptr, lower_col, upper_ptr, upper_col;
  std::vector<double> lower_values, upper_values;
};

}  // namespace

AinvFactors ainv_factor(index_t n, const std::vector<index_t>& row_ptr,
                        const std::vector<index_t>& col_idx, const std::vector<double>& values,
                        const AinvParameters& parameters, std::stop_token stop) {
  validate(parameters);
  const int parts = resolve_parts(parameters.threads);
  if (parts > 1 && n >= std::max<index_t>(parallel_min_rows(), 2)) {
    // The parallel form; none when A fails a check, which the sequential checks below report.
    std::optional<AinvFactors> parallel =
        factor_parallel(n, row_ptr, col_idx, values, parameters, parts, stop);
    if (parallel) return std::move(*parallel);
  }
  AinvFactors f;
  f.n = n;
  // The diagonal, checked, and S = |a_ii|^-1/2.
  std::vector<double> diagonal(static_cast<std::size_t>(n), 0.0);
  for (index_t i = 0; i < n; ++i) {
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      if (!std::isfinite(values[k])) {
        throw InvalidInput("ainv: non-finite value in row " + std::to_string(i + 1) + ", column " +
                           std::to_string(col_idx[k] + 1));
      }
      if (col_idx[k] == i) diagonal[i] = values[k];
    }
    if (diagonal[i] == 0.0) {
      throw InvalidInput("ainv: zero or missing diagonal entry in row " + std::to_string(i + 1));
    }
  }
  f.scale.resize(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) f.scale[i] = 1.0 / std::sqrt(std::abs(diagonal[i]));
  HostCsr a{row_ptr, col_idx, values};
  for (index_t i = 0; i < n; ++i) {
    for (index_t k = a.ptr[i]; k < a.ptr[i + 1]; ++k) {
      a.val[k] = (f.scale[i] * f.scale[a.col[k]]) * values[k];  // symmetric A stays symmetric
    }
  }
  const HostCsr at = transpose(n, a);
  bool symmetric = parameters.symmetry == AinvSymmetry::symmetric;
  if (parameters.symmetry != AinvSymmetry::nonsymmetric) {
    const std::string asymmetry = first_asymmetry(n, a, at);
    if (parameters.symmetry == AinvSymmetry::symmetric && !asymmetry.empty()) {
      throw InvalidInput("ainv (symmetric): A is not symmetric: " + asymmetry +
                         " (use symmetry nonsymmetric or automatic)");
    }
    symmetric = asymmetry.empty();
  }
  f.symmetric = symmetric;
  // The fill limit of each column: p, or A's entries above the diagonal in that column (p = 0;
  // the rows of A^T above the diagonal; for W the rows of A).
  std::vector<index_t> z_limit(static_cast<std::size_t>(n), parameters.fill);
  std::vector<index_t> w_limit(static_cast<std::size_t>(n), parameters.fill);
  if (parameters.fill == 0) {
    for (index_t j = 0; j < n; ++j) {
      z_limit[j] = static_cast<index_t>(std::count_if(at.col.begin() + at.ptr[j],
                                                      at.col.begin() + at.ptr[j + 1],
                                                      [j](index_t k) { return k < j; }));
      w_limit[j] =
          static_cast<index_t>(std::count_if(a.col.begin() + a.ptr[j], a.col.begin() + a.ptr[j + 1],
                                             [j](index_t k) { return k < j; }));
    }
  }
  const double tau = parameters.drop_tolerance;
  f.pivots.resize(static_cast<std::size_t>(n));
  // SAINV: u = A z_i, d_i = z_i^T u, z_j -= (z_j^T u / d_i) z_i for j > i; nonsymmetric: also
  // y = A^T w_i, d_i = w_i^T u, w_j -= (w_j^T u / d_i) w_i and z_j -= (z_j^T y / d_i) z_i.
  Factor z(n);
  Factor w(symmetric ? 0 : n);
  const auto fallback = [&](index_t i) { return diagonal[i] > 0 ? 1.0 : -1.0; };
  if (!conjugation_steps(at, &a, z, symmetric ? nullptr : &w, 0, n, tau, z_limit, w_limit, fallback,
                         f.pivots.data(), f.shifted, stop)) {
    return AinvFactors{};
  }
  if (!symmetric) flatten(w, f.w_ptr, f.w_row, f.w_values);
  flatten(z, f.z_ptr, f.z_row, f.z_values);
  return f;
}

AinvPreconditioner::AinvPreconditioner(Parameters parameters) : parameters_(parameters) {
  validate(parameters_.ainv);
}

AinvPreconditioner::~AinvPreconditioner() = default;

void AinvPreconditioner::setup(const LinearOperator& A) {
  if (A.num_rows() != A.num_cols()) {
    throw DimensionMismatch("ainv needs a square matrix, got " + std::to_string(A.num_rows()) +
                            " x " + std::to_string(A.num_cols()));
  }
  const auto* csr = dynamic_cast<const CsrMatrix*>(&A);
  if (csr == nullptr) throw NotSupported("ainv needs the matrix entries: pass a CsrMatrix");
  install(factor_on_host(csr->to_host_csr(), {}), A.backend());
}

std::unique_ptr<HostFactorization> AinvPreconditioner::factor_on_host(const HostCsrMatrix& A,
                                                                      std::stop_token stop) const {
  const auto start = std::chrono::steady_clock::now();
  const index_t n = A.n;
  if (A.row_ptr.size() != static_cast<std::size_t>(n) + 1 || A.col_idx.size() != A.values.size()) {
    throw InvalidInput("ainv: the host matrix's arrays do not match its size");
  }
  auto result = std::make_unique<AinvFactorization>();
  result->factors = ainv_factor(n, A.row_ptr, A.col_idx, A.values, parameters_.ainv, stop);
  if (stop.stop_requested()) return nullptr;
  const AinvFactors& f = result->factors;
  result->n = n;
  result->a_entries = static_cast<std::int64_t>(A.values.size());
  // L (rows j: column j of W, or of Z when symmetric, times 1/d_j or |d_j|^-1/2, times S by
  // column) stored with its rows reversed (J L); U (rows k: row k of Z times S_k, times 1 or
  // |d_j|^-1/2 by column) stored with its columns reversed (U J).
  const std::vector<index_t>& l_ptr = f.symmetric ? f.z_ptr : f.w_ptr;
  const std::vector<index_t>& l_row = f.symmetric ? f.z_row : f.w_row;
  const std::vector<double>& l_values = f.symmetric ? f.z_values : f.w_values;
  // Symmetric: M = (S Z |D|^-1/2) (sign(D) |D|^-1/2 Z^T S), L's row j scaled by |d_j|^-1/2 and
  // its sign, like U's column j (so L = sign(D) U^T bit for bit). Nonsymmetric: M = (S Z)
  // (D^-1 W^T S), L's row j scaled by 1/d_j, U's columns not at all.
  std::vector<double> row_factor(static_cast<std::size_t>(n));     // L's row j, magnitude
  std::vector<double> column_factor(static_cast<std::size_t>(n));  // U's column j
  for (index_t j = 0; j < n; ++j) {
    const double d = f.pivots[j];
    row_factor[j] = f.symmetric ? 1.0 / std::sqrt(std::abs(d)) : 1.0 / d;
    column_factor[j] = f.symmetric ? row_factor[j] : 1.0;
  }
  std::vector<index_t>& lower_ptr = result->lower_ptr;
  std::vector<index_t>& lower_col = result->lower_col;
  std::vector<double>& lower_values = result->lower_values;
  lower_ptr.assign(1, 0);
  lower_col.reserve(l_row.size());
  lower_values.reserve(l_row.size());
  // Factors of P A P^T (f.permutation set): L's columns and U's rows are those of A, so M = P^T
  // (S Z D^-1 W^T S) P; L's rows then sort by A's numbering.
  const std::vector<index_t>& permutation = f.permutation;
  const bool permuted = !permutation.empty();
  std::vector<std::pair<index_t, double>> sorted_row;
  for (index_t s = 0; s < n; ++s) {
    const index_t j = n - 1 - s;
    for (index_t k = l_ptr[j]; k < l_ptr[j + 1]; ++k) {
      lower_col.push_back(permuted ? permutation[l_row[k]] : l_row[k]);
      const double value = (f.scale[l_row[k]] * l_values[k]) * row_factor[j];
      lower_values.push_back(f.symmetric && f.pivots[j] < 0 ? -value : value);
    }
    if (permuted) {
      const std::size_t begin = static_cast<std::size_t>(lower_ptr.back());
      sorted_row.clear();
      for (std::size_t k = begin; k < lower_col.size(); ++k) {
        sorted_row.emplace_back(lower_col[k], lower_values[k]);
      }
      std::sort(sorted_row.begin(), sorted_row.end());
      for (std::size_t k = begin; k < lower_col.size(); ++k) {
        lower_col[k] = sorted_row[k - begin].first;
        lower_values[k] = sorted_row[k - begin].second;
      }
    }
    lower_ptr.push_back(static_cast<index_t>(lower_col.size()));
  }
  // U J by rows: row k of Z holds z_kj for the columns j >= k; stored column n - 1 - j, so a
  // row's columns increase as j decreases (row permutation[k] of A when permuted).
  std::vector<index_t>& upper_ptr = result->upper_ptr;
  upper_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (index_t r : f.z_row) ++upper_ptr[(permuted ? permutation[r] : r) + 1];
  for (index_t k = 0; k < n; ++k) upper_ptr[k + 1] += upper_ptr[k];
  std::vector<index_t>& upper_col = result->upper_col;
  std::vector<double>& upper_values = result->upper_values;
  upper_col.resize(f.z_row.size());
  upper_values.resize(f.z_row.size());
  std::vector<index_t> next(upper_ptr.begin(), upper_ptr.end() - 1);
  for (index_t j = n - 1; j >= 0; --j) {  // decreasing j: increasing stored columns
    for (index_t k = f.z_ptr[j]; k < f.z_ptr[j + 1]; ++k) {
      const index_t r = f.z_row[k];
      const index_t slot = next[permuted ? permutation[r] : r]++;
      upper_col[slot] = n - 1 - j;
      upper_values[slot] = (f.scale[r] * f.z_values[k]) * column_factor[j];
    }
  }
  result->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

void AinvPreconditioner::install(std::unique_ptr<HostFactorization> factorization,
                                 const Backend& backend) {
  auto* f = dynamic_cast<AinvFactorization*>(factorization.get());
  if (f == nullptr) {
    throw InvalidInput(
        "AinvPreconditioner::install: not an AINV factorization (null, or made by "
        "another preconditioner)");
  }
  const index_t n = f->n;
  lower_ = CsrMatrix::from_host(backend, n, n, std::move(f->lower_ptr), std::move(f->lower_col),
                                std::move(f->lower_values), parameters_.factor_precision);
  upper_ = CsrMatrix::from_host(backend, n, n, std::move(f->upper_ptr), std::move(f->upper_col),
                                std::move(f->upper_values), parameters_.factor_precision);
  work_ = Vector(backend, static_cast<std::size_t>(n));
  factors_ = std::move(f->factors);
  factor_seconds_ = f->seconds;
  a_entries_ = f->a_entries;
  n_ = n;
  backend_ = backend;
}

void AinvPreconditioner::apply(const Vector& r, Vector& z) const {
  check_apply_shapes(r, z, "AinvPreconditioner::apply");
  if (n_ == 0) return;
  lower_.apply(r, work_);  // J L r
  upper_.apply(work_, z);  // U J (J L r) = U L r
}

std::int64_t AinvPreconditioner::memory_bytes() const noexcept {
  const std::int64_t value_bytes = parameters_.factor_precision == Precision::float32 ? 4 : 8;
  const std::int64_t entries = lower_.nnz() + upper_.nnz();
  return entries * (4 + value_bytes) + 2 * (static_cast<std::int64_t>(n_) + 1) * 4 +
         static_cast<std::int64_t>(n_) * 8;
}

std::string AinvPreconditioner::summary() const {
  char text[320];
  std::snprintf(
      text, sizeof text,
      "AINV (%s, tau = %.2g, fill %d): nnz(L + U) = %.2f x nnz(A), factors in %s, %zu "
      "pivots shifted, host factorization %.3f s, %.1f bytes per row on the backend",
      factors_.symmetric ? "symmetric" : "nonsymmetric", parameters_.ainv.drop_tolerance,
      parameters_.ainv.fill,
      a_entries_ > 0 ? static_cast<double>(lower_.nnz() + upper_.nnz()) / a_entries_ : 0.0,
      std::string(to_string(parameters_.factor_precision)).c_str(), factors_.shifted.size(),
      factor_seconds_, n_ > 0 ? static_cast<double>(memory_bytes()) / n_ : 0.0);
  return text;
}

}  // namespace kryflow
