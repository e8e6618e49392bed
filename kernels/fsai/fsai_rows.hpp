// The row functions of the FSAI setup that every backend shares: a row's pattern (count and
// fill), and on the host a row's values (gather, Cholesky, back substitution) in the operation
// order of the cuda kernel's warp form (fsai_cuda.cu).
#pragma once

#include <cmath>

#include "kernels/backend/host_device.hpp"
#include "kernels/fsai/fsai.hpp"

namespace kryflow::kernels::fsai::rows {

/// Position of (r, c), c <= r, in a packed lower triangle stored row by row.
KRYFLOW_HOST_DEVICE constexpr index_t packed(index_t r, index_t c) {
  return r * (r + 1) / 2 + c;
}

/// Doubles of one row's dense work space: the packed triangle of an m x m matrix and m more.
KRYFLOW_HOST_DEVICE constexpr index_t work_size(index_t m) {
  return m * (m + 1) / 2 + m;
}

/// The columns j <= i of row i of s, cut to max_row_entries.
KRYFLOW_HOST_DEVICE inline index_t lower_count(const PatternView& s, index_t i,
                                               index_t max_row_entries) {
  index_t count = 0;
  for (index_t k = s.row_ptr[i]; k < s.row_ptr[i + 1] && s.col_idx[k] <= i; ++k) ++count;
  return count < max_row_entries ? count : max_row_entries;
}

/// Row i of G's columns: the last `count` columns j <= i of row i of s.
KRYFLOW_HOST_DEVICE inline void lower_fill(const PatternView& s, index_t i, index_t count,
                                           index_t* g_col_idx) {
  index_t end = s.row_ptr[i];
  while (end < s.row_ptr[i + 1] && s.col_idx[end] <= i) ++end;
  for (index_t k = 0; k < count; ++k) g_col_idx[k] = s.col_idx[end - count + k];
}

/// Whether entry k of row i of the factor `values` (in g's pattern) passes the test of the
/// post-filtration (filter_count).
KRYFLOW_HOST_DEVICE inline bool passes(const PatternView& g, const double* values,
                                       const double* diagonal, double tolerance, index_t i,
                                       index_t k) {
  const double vii = values[g.row_ptr[i + 1] - 1];  // the diagonal ends the row
  return fabs(values[k]) * sqrt(fabs(diagonal[g.col_idx[k]])) >=
         tolerance * fabs(vii) * sqrt(fabs(diagonal[i]));
}

/// Whether entry k of row i stays: the diagonal always, the others when they pass on g_values or
/// on other_values (when not null).
KRYFLOW_HOST_DEVICE inline bool kept(const PatternView& g, const double* g_values,
                                     const double* other_values, const double* diagonal,
                                     double tolerance, index_t i, index_t k) {
  return g.col_idx[k] == i || passes(g, g_values, diagonal, tolerance, i, k) ||
         (other_values != nullptr && passes(g, other_values, diagonal, tolerance, i, k));
}

/// The kept entries of row i (filter_count); with f_col_idx, written there too.
KRYFLOW_HOST_DEVICE inline index_t filter_row(const PatternView& g, const double* g_values,
                                              const double* other_values, const double* diagonal,
                                              double tolerance, index_t i, index_t* f_col_idx) {
  index_t count = 0;
  for (index_t k = g.row_ptr[i]; k < g.row_ptr[i + 1]; ++k) {
    if (kept(g, g_values, other_values, diagonal, tolerance, i, k)) {
      if (f_col_idx != nullptr) f_col_idx[count] = g.col_idx[k];
      ++count;
    }
  }
  return count;
}

/// Row r of the packed lower triangle of sign A[J, J]: entries (J_r, J_c) for c <= r, from row
/// J_r of a (a merge of two sorted lists; 0 where a stores none).
KRYFLOW_HOST_DEVICE inline void gather_row(const MatrixView& a, double sign, const index_t* J,
                                           index_t r, double* work) {
  const index_t jr = J[r];
  index_t p = a.pattern.row_ptr[jr];
  const index_t end = a.pattern.row_ptr[jr + 1];
  double* row = work + packed(r, 0);
  for (index_t c = 0; c <= r; ++c) {
    const index_t jc = J[c];
    while (p < end && a.pattern.col_idx[p] < jc) ++p;
    row[c] = (p < end && a.pattern.col_idx[p] == jc) ? sign * a.values[p] : 0.0;
  }
}

/// The row pitch of the nonsymmetric factorization's m x m matrix: odd, so that the lanes of a
/// warp walking a column hit distinct shared-memory banks (the host uses it too).
KRYFLOW_HOST_DEVICE constexpr index_t full_pitch(index_t m) {
  return m | 1;
}

/// Doubles of one row's work space for the nonsymmetric factorization: the m x m matrix (row
/// pitch full_pitch(m)) and two vectors.
KRYFLOW_HOST_DEVICE constexpr index_t full_work_size(index_t m) {
  return full_pitch(m) * m + 2 * m;
}

/// Row r of A[J, J] (m columns, row-major with pitch `pitch`): entries (J_r, J_c) from row J_r of
/// a, 0 where a stores none.
KRYFLOW_HOST_DEVICE inline void gather_full_row(const MatrixView& a, const index_t* J, index_t m,
                                                index_t pitch, index_t r, double* work) {
  const index_t jr = J[r];
  index_t p = a.pattern.row_ptr[jr];
  const index_t end = a.pattern.row_ptr[jr + 1];
  double* row = work + r * pitch;
  for (index_t c = 0; c < m; ++c) {
    const index_t jc = J[c];
    while (p < end && a.pattern.col_idx[p] < jc) ++p;
    row[c] = (p < end && a.pattern.col_idx[p] == jc) ? a.values[p] : 0.0;
  }
}

/// Whether an LU pivot can be taken: nonzero and finite.
KRYFLOW_HOST_DEVICE inline bool lu_pivot_ok(double pivot) {
  return pivot != 0.0 && fabs(pivot) <= 1.7976931348623157e308;
}

/// Whether a Cholesky pivot can be taken: positive and finite (NaN fails).
KRYFLOW_HOST_DEVICE inline bool pivot_ok(double pivot) {
  return pivot > 0.0 && pivot <= 1.7976931348623157e308;
}

/// Row i's values g (m of them) on the host: the gather, the right-looking Cholesky
/// factorization of the packed triangle in `work` (work_size(m) doubles) and the back
/// substitution L^T g = e_m, in the order of the cuda kernel (step k: the pivot, column k
/// divided by it, then each row r > k updated c = k + 1..r; back substitution: g_i from the
/// right-hand side, then every entry c < i reduced by L_ic g_i). False (g untouched) when the
/// last column is not i or a pivot fails.
inline bool factor_row(const MatrixView& a, double sign, const index_t* J, index_t m, index_t i,
                       double* work, double* g) {
  if (m == 0 || J[m - 1] != i) return false;
  for (index_t r = 0; r < m; ++r) gather_row(a, sign, J, r, work);
  for (index_t k = 0; k < m; ++k) {
    const double pivot = work[packed(k, k)];
    if (!pivot_ok(pivot)) return false;
    const double d = std::sqrt(pivot);
    for (index_t r = k + 1; r < m; ++r) work[packed(r, k)] /= d;
    work[packed(k, k)] = d;
    for (index_t r = k + 1; r < m; ++r) {
      const double lrk = work[packed(r, k)];
      for (index_t c = k + 1; c <= r; ++c) work[packed(r, c)] -= lrk * work[packed(c, k)];
    }
  }
  double* y = work + packed(m, 0);
  for (index_t r = 0; r < m; ++r) y[r] = r == m - 1 ? 1.0 : 0.0;
  for (index_t k = m - 1; k >= 0; --k) {
    const double gk = y[k] / work[packed(k, k)];
    y[k] = gk;
    for (index_t c = 0; c < k; ++c) y[c] -= work[packed(k, c)] * gk;
  }
  for (index_t r = 0; r < m; ++r) g[r] = y[r];
  return true;
}

/// Row i of the nonsymmetric FSAI on the host (factor_values_nonsymmetric), in the order of the
/// cuda warp form: the gather; the LU steps (the pivot, column k below it divided by it, then
/// each row r > k updated c = k + 1..m-1); Z's column z = U^-1 e_m and W's row w = L^-T e_m by
/// column-oriented substitutions (x_k from the right-hand side, then every entry c < k reduced).
/// False (w and z untouched) when the last column is not i or a pivot fails.
inline bool factor_row_nonsymmetric(const MatrixView& a, const index_t* J, index_t m, index_t i,
                                    double* work, double* w, double* z) {
  if (m == 0 || J[m - 1] != i) return false;
  const index_t p = full_pitch(m);
  for (index_t r = 0; r < m; ++r) gather_full_row(a, J, m, p, r, work);
  for (index_t k = 0; k < m; ++k) {
    const double pivot = work[k * p + k];
    if (!lu_pivot_ok(pivot)) return false;
    for (index_t r = k + 1; r < m; ++r) work[r * p + k] /= pivot;
    for (index_t r = k + 1; r < m; ++r) {
      const double lrk = work[r * p + k];
      for (index_t c = k + 1; c < m; ++c) work[r * p + c] -= lrk * work[k * p + c];
    }
  }
  double* y = work + p * m;  // Z's column
  double* v = y + m;         // W's row
  for (index_t r = 0; r < m; ++r) y[r] = v[r] = r == m - 1 ? 1.0 : 0.0;
  for (index_t k = m - 1; k >= 0; --k) {
    const double zk = y[k] / work[k * p + k];
    y[k] = zk;
    const double wk = v[k];
    for (index_t c = 0; c < k; ++c) {
      y[c] -= work[c * p + k] * zk;  // U's column k
      v[c] -= work[k * p + c] * wk;  // L's row k (L^T's column k)
    }
  }
  for (index_t r = 0; r < m; ++r) {
    z[r] = y[r];
    w[r] = v[r];
  }
  return true;
}

}  // namespace kryflow::kernels::fsai::rows
