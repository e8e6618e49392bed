// ILUT (Saad, Algorithm 10.6) on the host and its level-scheduled triangular solves on the
// backend (threshold_ilu.hpp).
#include "kryflow/preconditioners/threshold_ilu.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <queue>
#include <string>

#include "kernels/block_relaxation/block_relaxation.hpp"
#include "kernels/triangular/triangular.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/bsr_matrix.hpp"
#include "src/preconditioners/color_split.hpp"

namespace kryflow {

namespace br = kernels::block_relaxation;

namespace {

/// ConfigError naming the field of `parameters` out of range.
void validate(const IlutParameters& parameters) {
  if (!(parameters.drop_tolerance >= 0.0)) throw ConfigError("drop_tolerance", "must be >= 0");
  if (parameters.fill < -1) throw ConfigError("fill", "must be >= -1");
}

}  // namespace

const char* to_string(TriangularSolve solve) noexcept {
  return solve == TriangularSolve::sync_free ? "sync_free" : "level_scheduled";
}

TriangularSolve parse_triangular_solve(const std::string& name) {
  if (name == "level_scheduled") return TriangularSolve::level_scheduled;
  if (name == "sync_free") return TriangularSolve::sync_free;
  throw ConfigError("solve", "unknown choice '" + name + "' (valid: level_scheduled, sync_free)");
}

IlutFactors ilut_factor(index_t n, const std::vector<index_t>& row_ptr,
                        const std::vector<index_t>& col_idx, const std::vector<double>& values,
                        const IlutParameters& parameters) {
  validate(parameters);
  IlutFactors f;
  f.n = n;
  f.lower_ptr.assign(1, 0);
  f.upper_ptr.assign(1, 0);
  f.diagonal.resize(static_cast<std::size_t>(n));
  std::vector<double> w(static_cast<std::size_t>(n), 0.0);
  std::vector<index_t> marker(static_cast<std::size_t>(n), -1);
  std::vector<index_t> nonzeros;
  std::priority_queue<index_t, std::vector<index_t>, std::greater<>> pending;  // lower, increasing
  std::vector<index_t> lower, upper;
  for (index_t i = 0; i < n; ++i) {
    double norm = 0.0;
    index_t lower_in_a = 0;
    index_t upper_in_a = 0;
    nonzeros.clear();
    auto touch = [&](index_t j) {
      if (marker[j] == i) return;
      marker[j] = i;
      w[j] = 0.0;
      nonzeros.push_back(j);
      if (j < i) pending.push(j);
    };
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      const index_t j = col_idx[k];
      touch(j);
      w[j] += values[k];
      norm += values[k] * values[k];
      lower_in_a += j < i ? 1 : 0;
      upper_in_a += j > i ? 1 : 0;
    }
    touch(i);
    const double tau = parameters.drop_tolerance * std::sqrt(norm);
    while (!pending.empty()) {
      const index_t k = pending.top();
      pending.pop();
      if (w[k] == 0.0) continue;
      const double multiplier = w[k] / f.diagonal[k];
      if (std::abs(multiplier) < tau) {
        w[k] = 0.0;  // dropped: row k is not subtracted
        continue;
      }
      w[k] = multiplier;
      for (index_t q = f.upper_ptr[k]; q < f.upper_ptr[k + 1]; ++q) {
        const index_t j = f.upper_col[q];
        touch(j);
        w[j] -= multiplier * f.upper_values[q];
      }
    }
    lower.clear();
    upper.clear();
    for (const index_t j : nonzeros) {
      if (j == i || w[j] == 0.0 || std::abs(w[j]) < tau) continue;
      (j < i ? lower : upper).push_back(j);
    }
    auto keep_largest = [&](std::vector<index_t>& part, index_t in_a) {
      const std::size_t limit = parameters.fill < 0    ? part.size()
                                : parameters.fill == 0 ? static_cast<std::size_t>(in_a)
                                                       : static_cast<std::size_t>(parameters.fill);
      if (part.size() > limit) {
        std::nth_element(part.begin(), part.begin() + static_cast<std::ptrdiff_t>(limit),
                         part.end(), [&](index_t a, index_t b) {
                           const double wa = std::abs(w[a]);
                           const double wb = std::abs(w[b]);
                           return wa > wb || (wa == wb && a < b);
                         });
        part.resize(limit);
      }
      std::sort(part.begin(), part.end());
    };
    keep_largest(lower, lower_in_a);
    keep_largest(upper, upper_in_a);
    const double pivot = w[i];
    if (!(pivot != 0.0) || !std::isfinite(pivot)) {
      throw InvalidInput("ilut: zero or non-finite pivot in row " + std::to_string(i + 1) +
                         " (u_ii = " + std::to_string(pivot) +
                         "): lower drop_tolerance, raise fill, or use another preconditioner");
    }
    f.diagonal[i] = pivot;
    for (const index_t j : lower) {
      f.lower_col.push_back(j);
      f.lower_values.push_back(w[j]);
    }
    for (const index_t j : upper) {
      f.upper_col.push_back(j);
      f.upper_values.push_back(w[j]);
    }
    f.lower_ptr.push_back(static_cast<index_t>(f.lower_col.size()));
    f.upper_ptr.push_back(static_cast<index_t>(f.upper_col.size()));
    if (f.lower_col.size() > static_cast<std::size_t>(std::numeric_limits<index_t>::max()) ||
        f.upper_col.size() > static_cast<std::size_t>(std::numeric_limits<index_t>::max())) {
      throw InvalidInput("ilut: the factors exceed the index range");
    }
  }
  return f;
}

namespace {

/// One triangular factor stored level by level on the backend (threshold_ilu.hpp): storage row
/// s is row order[s], columns renamed by the position of the same order.
struct LevelPart {
  std::vector<index_t> offsets;  // on the host: level l holds storage rows offsets[l] ..
  Array<index_t> order;          // storage row -> row
  Array<index_t> row_ptr, col_idx;
  Array<double> values;
  kernels::bsr::BsrView<double> view() const {
    kernels::bsr::BsrView<double> v;
    v.num_block_rows = static_cast<index_t>(order.size());
    v.num_block_cols = v.num_block_rows;
    v.block_size = 1;
    v.num_blocks = static_cast<std::int64_t>(col_idx.size());
    v.row_ptr = row_ptr.span().data();
    v.col_idx = col_idx.span().data();
    v.values = values.span().data();
    v.stream_values =
        v.num_blocks * static_cast<std::int64_t>(sizeof(double)) > kernels::bsr::kStreamValuesBytes;
    return v;
  }
};

/// The levels of a triangular part (rows visited in `forward` or reverse order) and its
/// level-ordered copy; position receives the row -> storage row map.
LevelPart level_part(const Backend& backend, index_t n, const std::vector<index_t>& ptr,
                     const std::vector<index_t>& col, const std::vector<double>& values,
                     bool forward, std::vector<index_t>& position) {
  std::vector<index_t> level(static_cast<std::size_t>(n), 0);
  index_t levels = 0;
  for (index_t step = 0; step < n; ++step) {
    const index_t i = forward ? step : n - 1 - step;
    index_t l = 0;
    for (index_t k = ptr[i]; k < ptr[i + 1]; ++k) l = std::max(l, level[col[k]] + 1);
    level[i] = l;
    levels = std::max(levels, l + 1);
  }
  LevelPart part;
  part.offsets.assign(static_cast<std::size_t>(levels) + 1, 0);
  for (index_t i = 0; i < n; ++i) ++part.offsets[level[i] + 1];
  for (index_t l = 0; l < levels; ++l) part.offsets[l + 1] += part.offsets[l];
  std::vector<index_t> order(static_cast<std::size_t>(n));
  std::vector<index_t> next(part.offsets.begin(), part.offsets.end() - 1);
  for (index_t i = 0; i < n; ++i) order[next[level[i]]++] = i;  // increasing rows per level
  position.assign(static_cast<std::size_t>(n), 0);
  for (index_t s = 0; s < n; ++s) position[order[s]] = s;
  std::vector<index_t> row_ptr(1, 0), col_idx;
  std::vector<double> stored;
  col_idx.reserve(col.size());
  stored.reserve(col.size());
  for (index_t s = 0; s < n; ++s) {
    const index_t i = order[s];
    for (index_t k = ptr[i]; k < ptr[i + 1]; ++k) {
      col_idx.push_back(position[col[k]]);
      stored.push_back(values[k]);
    }
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  part.order = Array<index_t>::from_host(backend, order);
  part.row_ptr = Array<index_t>::from_host(backend, row_ptr);
  part.col_idx = Array<index_t>::from_host(backend, col_idx);
  part.values = Array<double>::from_host(backend, stored);
  return part;
}

}  // namespace

/// One factor in the natural order on the backend (the sync_free solves).
struct NaturalPart {
  Array<index_t> row_ptr, col_idx;
  Array<double> values;
  NaturalPart() = default;
  NaturalPart(const Backend& backend, const std::vector<index_t>& ptr,
              const std::vector<index_t>& col, const std::vector<double>& stored)
      : row_ptr(Array<index_t>::from_host(backend, ptr)),
        col_idx(Array<index_t>::from_host(backend, col)),
        values(Array<double>::from_host(backend, stored)) {}
  kernels::triangular::FactorView view() const {
    return {static_cast<index_t>(row_ptr.size()) - 1, row_ptr.span().data(), col_idx.span().data(),
            values.span().data()};
  }
};

struct IlutPreconditioner::State {
  LevelPart lower, upper;
  // sync_free: the factors in the natural order, 1 / u_ii by row, the ready flags.
  NaturalPart natural_lower, natural_upper;
  Array<double> natural_inverse;
  mutable Array<unsigned int> ready;
  Array<double> upper_inverse;    // 1 / u_ii in the upper part's storage order
  Array<index_t> lower_to_upper;  // y_upper[s] = y_lower[lower_to_upper[s]]
  br::SweepVariant variant = br::SweepVariant::coefficient;
  mutable Vector y_lower, y_upper;
};

IlutPreconditioner::IlutPreconditioner() : IlutPreconditioner(Parameters{}) {}

IlutPreconditioner::IlutPreconditioner(Parameters parameters)
    : parameters_(parameters), state_(std::make_unique<State>()) {
  validate(parameters_.ilut);
}

IlutPreconditioner::~IlutPreconditioner() = default;

index_t IlutPreconditioner::lower_levels() const noexcept {
  return std::max<index_t>(0, static_cast<index_t>(state_->lower.offsets.size()) - 1);
}

index_t IlutPreconditioner::upper_levels() const noexcept {
  return std::max<index_t>(0, static_cast<index_t>(state_->upper.offsets.size()) - 1);
}

void IlutPreconditioner::setup(const LinearOperator& A) {
  if (A.num_rows() != A.num_cols()) {
    throw DimensionMismatch("ilut needs a square matrix, got " + std::to_string(A.num_rows()) +
                            " x " + std::to_string(A.num_cols()));
  }
  CsrMatrix point;
  const CsrMatrix* csr = dynamic_cast<const CsrMatrix*>(&A);
  if (csr == nullptr) {
    const auto* bsr = dynamic_cast<const BsrMatrix*>(&A);
    if (bsr == nullptr) {
      throw NotSupported("ilut needs the matrix entries: pass a CsrMatrix or a BsrMatrix");
    }
    point = bsr->to_csr();
    csr = &point;
  }
  const index_t n = A.num_rows();
  const std::vector<index_t> row_ptr = csr->row_ptr().to_host();
  const std::vector<index_t> col_idx = csr->col_idx().to_host();
  IlutFactors factors = ilut_factor(n, row_ptr, col_idx, csr->values_to_host(), parameters_.ilut);
  const Backend& backend = A.backend();
  auto state = std::make_unique<State>();
  if (parameters_.solve == TriangularSolve::sync_free) {
    state->natural_lower =
        NaturalPart(backend, factors.lower_ptr, factors.lower_col, factors.lower_values);
    state->natural_upper =
        NaturalPart(backend, factors.upper_ptr, factors.upper_col, factors.upper_values);
    std::vector<double> inverse(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) inverse[i] = 1.0 / factors.diagonal[i];
    state->natural_inverse = Array<double>::from_host(backend, inverse);
    state->ready = Array<unsigned int>(backend, static_cast<std::size_t>(n) + 1);
  } else {
    std::vector<index_t> lower_position, upper_position;
    state->lower = level_part(backend, n, factors.lower_ptr, factors.lower_col,
                              factors.lower_values, true, lower_position);
    state->upper = level_part(backend, n, factors.upper_ptr, factors.upper_col,
                              factors.upper_values, false, upper_position);
    const std::vector<index_t> upper_order = state->upper.order.to_host();
    std::vector<double> inverse(static_cast<std::size_t>(n));
    std::vector<index_t> map(static_cast<std::size_t>(n));
    for (index_t s = 0; s < n; ++s) {
      inverse[s] = 1.0 / factors.diagonal[upper_order[s]];
      map[s] = lower_position[upper_order[s]];
    }
    state->upper_inverse = Array<double>::from_host(backend, inverse);
    state->lower_to_upper = Array<index_t>::from_host(backend, map);
    state->variant = detail::sweep_variant_of(parameters_.kernel, 1, false);
    state->y_upper = Vector(backend, static_cast<std::size_t>(n));
  }
  state->y_lower = Vector(backend, static_cast<std::size_t>(n));
  state_ = std::move(state);
  factors_ = std::move(factors);
  a_entries_ = static_cast<std::int64_t>(col_idx.size());
  n_ = n;
  backend_ = backend;
}

void IlutPreconditioner::apply(const Vector& r, Vector& z) const {
  check_apply_shapes(r, z, "IlutPreconditioner::apply");
  if (n_ == 0) return;
  const State& s = *state_;
  if (parameters_.solve == TriangularSolve::sync_free) {
    namespace kt = kernels::triangular;
    kt::solve(backend_, s.natural_lower.view(), true, nullptr, r.span().data(),
              s.y_lower.span().data(), s.ready.span().data());
    kt::solve(backend_, s.natural_upper.view(), false, s.natural_inverse.span().data(),
              s.y_lower.span().data(), z.span().data(), s.ready.span().data());
    return;
  }
  const auto lower = s.lower.view();
  const auto upper = s.upper.view();
  const kernels::bsr::BsrView<double>* none = nullptr;
  // Forward, level by level: y_i = r_i - (L y)_i (L unit lower).
  br::SweepVectors forward;
  forward.b = r.span().data();
  forward.b_map = s.lower.order.span().data();
  forward.x = s.y_lower.span().data();
  for (std::size_t l = 0; l + 1 < s.lower.offsets.size(); ++l) {
    const br::ColorRange level{s.lower.offsets[l], s.lower.offsets[l + 1] - s.lower.offsets[l]};
    br::triangular_sweep(backend_, lower, none, s.variant, static_cast<const double*>(nullptr),
                         level, br::SweepUpdate{0.0, 1.0, 0.0, 1.0}, forward);
  }
  br::gather_blocks(backend_, 1, s.lower_to_upper.span(), s.y_lower.span(), s.y_upper.span());
  // Backward, level by level from the last row: z_i = (y_i - (U z)_i) / u_ii.
  br::SweepVectors backward;
  backward.x = s.y_upper.span().data();
  backward.x_out = z.span().data();
  backward.out_map = s.upper.order.span().data();
  for (std::size_t l = 0; l + 1 < s.upper.offsets.size(); ++l) {
    const br::ColorRange level{s.upper.offsets[l], s.upper.offsets[l + 1] - s.upper.offsets[l]};
    br::triangular_sweep(backend_, upper, none, s.variant, s.upper_inverse.span().data(), level,
                         br::SweepUpdate{0.0, 0.0, 1.0, 1.0}, backward);
  }
}

std::string IlutPreconditioner::summary() const {
  char text[256];
  const double fill = a_entries_ > 0 ? static_cast<double>(factors_.stored()) / a_entries_ : 0.0;
  if (parameters_.solve == TriangularSolve::sync_free) {
    std::snprintf(text, sizeof text,
                  "ILUT(p = %d, tau = %.1e): nnz(L + U) = %.2f x nnz(A), synchronization-free "
                  "solves (one launch per factor)",
                  parameters_.ilut.fill, parameters_.ilut.drop_tolerance, fill);
    return text;
  }
  std::snprintf(text, sizeof text,
                "ILUT(p = %d, tau = %.1e): nnz(L + U) = %.2f x nnz(A), %d + %d levels (one "
                "launch each per application)",
                parameters_.ilut.fill, parameters_.ilut.drop_tolerance, fill, lower_levels(),
                upper_levels());
  return text;
}

}  // namespace kryflow
