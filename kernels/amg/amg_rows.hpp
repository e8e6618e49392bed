// The per-row formulas of the AMG setup kernels, shared by the reference and cpu kernels (which
// differ in how rows are distributed): strong dependencies and interpolation weights of a row.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/amg/amg.hpp"

namespace kryflow::kernels::amg::rows {

/// a_ii of row i (0 when not stored).
inline double diagonal(const MatrixView& a, index_t i) {
  for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
    if (a.pattern.col_idx[k] == i) return a.values[k];
  }
  return 0.0;
}

/// Calls emit(j, a_ij) for every j row i strongly depends on, in column order (see
/// StrengthParameters).
template <class Emit>
void strong_dependencies(const MatrixView& a, const StrengthParameters& p, index_t i, Emit emit) {
  const index_t begin = a.pattern.row_ptr[i];
  const index_t end = a.pattern.row_ptr[i + 1];
  const double a_ii = diagonal(a, i);
  if (p.max_row_sum < 1.0) {
    double row_sum = 0.0;
    for (index_t k = begin; k < end; ++k) row_sum += a.values[k];
    if (std::abs(row_sum) > p.max_row_sum * std::abs(a_ii)) return;
  }
  if (p.measure == StrengthMeasure::seed) {
    for (index_t k = begin; k < end; ++k) {
      const index_t j = a.pattern.col_idx[k];
      if (j != i && std::abs(a.values[k]) > p.threshold * std::abs(a_ii)) emit(j, a.values[k]);
    }
    return;
  }
  const double sign = a_ii < 0.0 ? 1.0 : -1.0;  // s = -sign(a_ii)
  double largest = 0.0;
  for (index_t k = begin; k < end; ++k) {
    if (a.pattern.col_idx[k] != i) largest = std::max(largest, sign * a.values[k]);
  }
  if (!(largest > 0.0)) return;
  for (index_t k = begin; k < end; ++k) {
    const double s = sign * a.values[k];
    if (a.pattern.col_idx[k] != i && s > 0.0 && s >= p.threshold * largest) {
      emit(a.pattern.col_idx[k], a.values[k]);
    }
  }
}

/// Work arrays of one row's interpolation (reused from row to row by one thread).
struct InterpolationRow {
  std::vector<index_t> columns;  ///< interpolatory points (rows of A), increasing
  std::vector<double> a;         ///< a_ij for each of them
  std::vector<double> weights;   ///< w_ij for each of them
  std::vector<int> order;        ///< scratch of the truncation
};

/// The weights of `row` over its points: 1/n_i (seed) or Stüben's direct interpolation
/// (Trottenberg et al. eq. (A.7.7)-(A.7.8)): with N_i the off-diagonal entries of row i and P_i
/// the interpolatory points, alpha = sum_{N_i} a_ik^- / sum_{P_i} a_ik^-, beta likewise for
/// positive entries, w_ij = -alpha a_ij / a_ii (a_ij < 0) or -beta a_ij / a_ii (a_ij > 0); when
/// P_i has no positive entry, the positive entries of N_i are added to a_ii instead (beta = 0).
inline void compute_weights(const MatrixView& a, index_t i, InterpolationKind kind,
                            InterpolationRow& row) {
  const std::size_t m = row.columns.size();
  row.weights.assign(m, 0.0);
  if (m == 0) return;
  if (kind == InterpolationKind::seed) {
    for (double& w : row.weights) w = 1.0 / static_cast<double>(m);
    return;
  }
  double a_ii = 0.0, negative_n = 0.0, positive_n = 0.0, negative_p = 0.0, positive_p = 0.0;
  for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
    const double v = a.values[k];
    if (a.pattern.col_idx[k] == i) {
      a_ii = v;
    } else if (v < 0.0) {
      negative_n += v;
    } else {
      positive_n += v;
    }
  }
  for (const double v : row.a) {
    if (v < 0.0) negative_p += v;
    if (v > 0.0) positive_p += v;
  }
  const double alpha = negative_p != 0.0 ? negative_n / negative_p : 0.0;
  double beta = 0.0;
  if (positive_p != 0.0) {
    beta = positive_n / positive_p;
  } else {
    a_ii += positive_n;
  }
  for (std::size_t k = 0; k < m; ++k) {
    const double v = row.a[k];
    row.weights[k] = v < 0.0 ? -alpha * v / a_ii : (v > 0.0 ? -beta * v / a_ii : 0.0);
  }
}

/// Keeps the points whose |w| >= truncation_factor max|w|, then at most max_elements_per_row of
/// them by largest |w| (seed: largest |a_ij|), ties to the smaller column; column order is
/// kept. Stüben (2001) sec. 7.2.4; the caller recomputes the weights over the kept points,
/// which rescales them so that the row sums of negative and positive weights stay.
inline void truncate(const InterpolationParameters& p, InterpolationRow& row) {
  const std::size_t m = row.columns.size();
  double largest = 0.0;
  for (const double w : row.weights) largest = std::max(largest, std::abs(w));
  row.order.clear();
  for (std::size_t k = 0; k < m; ++k) {
    if (std::abs(row.weights[k]) >= p.truncation_factor * largest) {
      row.order.push_back(static_cast<int>(k));
    }
  }
  if (p.max_elements_per_row > 0 && row.order.size() > std::size_t(p.max_elements_per_row)) {
    const auto key = [&](int k) {
      return p.kind == InterpolationKind::seed ? std::abs(row.a[k]) : std::abs(row.weights[k]);
    };
    std::stable_sort(row.order.begin(), row.order.end(),
                     [&](int x, int y) { return key(x) > key(y); });
    row.order.resize(static_cast<std::size_t>(p.max_elements_per_row));
    std::sort(row.order.begin(), row.order.end());
  }
  if (row.order.size() == m) return;
  for (std::size_t k = 0; k < row.order.size(); ++k) {
    row.columns[k] = row.columns[row.order[k]];
    row.a[k] = row.a[row.order[k]];
  }
  row.columns.resize(row.order.size());
  row.a.resize(row.order.size());
}

/// Row i of the prolongation in fine-row numbering: {i} with weight 1 for a coarse row; for a
/// fine row the coarse points of S_i, truncated, with their weights.
inline void interpolation_row(const MatrixView& a, const PatternView& s, Span<const index_t> cf,
                              const InterpolationParameters& p, index_t i, InterpolationRow& row) {
  row.columns.clear();
  row.a.clear();
  if (cf[i] == kCoarse) {
    row.columns.push_back(i);
    row.a.push_back(diagonal(a, i));
    row.weights.assign(1, 1.0);
    return;
  }
  index_t k = a.pattern.row_ptr[i];
  for (index_t q = s.row_ptr[i]; q < s.row_ptr[i + 1]; ++q) {
    const index_t j = s.col_idx[q];
    while (a.pattern.col_idx[k] != j) ++k;  // S_i is a subset of row i's columns
    if (cf[j] == kCoarse) {
      row.columns.push_back(j);
      row.a.push_back(a.values[k]);
    }
  }
  compute_weights(a, i, p.kind, row);
  if (row.columns.empty() || (p.truncation_factor <= 0.0 && p.max_elements_per_row <= 0)) return;
  const std::size_t before = row.columns.size();
  truncate(p, row);
  if (row.columns.size() != before) compute_weights(a, i, p.kind, row);
}

/// Row i of a prolongation whose pattern is fixed (value-only re-setup): the points are the
/// columns of P's row i mapped through coarse_points; weights as interpolation_row computes
/// them over its kept points.
inline void fixed_pattern_row(const MatrixView& a, Span<const index_t> cf,
                              Span<const index_t> coarse_points, InterpolationKind kind,
                              const PatternView& prolongation, index_t i, InterpolationRow& row) {
  row.columns.clear();
  row.a.clear();
  if (cf[i] == kCoarse) {
    row.weights.assign(1, 1.0);
    return;
  }
  index_t k = a.pattern.row_ptr[i];
  for (index_t q = prolongation.row_ptr[i]; q < prolongation.row_ptr[i + 1]; ++q) {
    const index_t j = coarse_points[prolongation.col_idx[q]];
    while (k < a.pattern.row_ptr[i + 1] && a.pattern.col_idx[k] < j) ++k;
    const bool stored = k < a.pattern.row_ptr[i + 1] && a.pattern.col_idx[k] == j;
    row.columns.push_back(j);
    row.a.push_back(stored ? a.values[k] : 0.0);
  }
  compute_weights(a, i, kind, row);
}

}  // namespace kryflow::kernels::amg::rows
