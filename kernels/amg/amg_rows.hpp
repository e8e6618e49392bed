// The per-row formulas of the AMG setup kernels, shared by the reference, cpu and cuda kernels
// (which differ only in how rows are distributed and where a row's scratch lives): strong
// dependencies and interpolation weights of a row. Host and device code (KRYFLOW_HOST_DEVICE):
// no allocation inside, a row's points live in storage the caller provides (PointsView).
#pragma once

#include <math.h>

#include <vector>

#include "kernels/amg/amg.hpp"
#include "kernels/backend/host_device.hpp"

namespace kryflow::kernels::amg::rows {

/// The Parallel Toolbox's greedy C/F splitting, sequential by definition: rows in order, an
/// undecided row becomes coarse and its undecided strong dependencies (row i of S) fine.
/// cf has s.num_rows entries (kCoarse or kFine on return).
KRYFLOW_HOST_DEVICE inline void greedy_split(const PatternView& s, index_t* cf) {
  constexpr index_t undecided = -1;
  for (index_t i = 0; i < s.num_rows; ++i) cf[i] = undecided;
  for (index_t i = 0; i < s.num_rows; ++i) {
    if (cf[i] != undecided) continue;
    cf[i] = kCoarse;
    for (index_t q = s.row_ptr[i]; q < s.row_ptr[i + 1]; ++q) {
      if (cf[s.col_idx[q]] == undecided) cf[s.col_idx[q]] = kFine;
    }
  }
}

/// States of the HMIS first pass (hmis_domain_pass).
inline constexpr signed char kHmisUndecided = 0;
inline constexpr signed char kHmisCoarse = 1;
inline constexpr signed char kHmisFine = 2;
inline constexpr signed char kHmisNewFine = 3;  ///< made fine in the current step

/// The Ruge-Stueben first pass (Stueben 2001, sec. 7.1.1; Ruge and Stueben 1987) on the domain
/// of rows [lo, hi), S restricted to it (edges to rows outside are ignored): the measure
/// lambda_i = |S^T_i cap U| + 2 |S^T_i cap F| (U undecided, F fine), then, while an undecided
/// row has lambda > 0, the one of largest hmis_key becomes coarse, its undecided influenced rows
/// (S^T_i) fine (each adds 1 to the lambda of its undecided strong dependencies), and its
/// undecided strong dependencies (S_i) lose 1. Rows left undecided are decided later by PMIS.
/// The measures of coarse and fine rows are never read again, so the order of the updates
/// within a step does not matter: the cuda warp per domain gives the same coarse rows.
/// lambda and state have hi - lo entries; coarse[r] = 1 for the domain's coarse rows, else 0.
inline void hmis_domain_pass(const PatternView& s, const PatternView& st, std::uint64_t seed,
                             index_t lo, index_t hi, index_t* lambda, signed char* state,
                             unsigned char* coarse) {
  const index_t m = hi - lo;
  const auto local = [&](index_t j) { return j >= lo && j < hi; };
  for (index_t r = 0; r < m; ++r) {
    const index_t i = lo + r;
    index_t count = 0;
    for (index_t q = st.row_ptr[i]; q < st.row_ptr[i + 1]; ++q) {
      count += local(st.col_idx[q]) && st.col_idx[q] != i ? 1 : 0;
    }
    lambda[r] = count;
    state[r] = kHmisUndecided;
    coarse[r] = 0;
  }
  for (;;) {
    std::uint64_t best = 0;
    for (index_t r = 0; r < m; ++r) {
      if (state[r] == kHmisUndecided && lambda[r] > 0) {
        const std::uint64_t key = hmis_key(lambda[r], seed, lo + r, r);
        best = key > best ? key : best;
      }
    }
    if (best == 0) return;
    const auto r_i = static_cast<index_t>(best & 0xffff);
    const index_t i = lo + r_i;
    state[r_i] = kHmisCoarse;
    coarse[r_i] = 1;
    for (index_t q = st.row_ptr[i]; q < st.row_ptr[i + 1]; ++q) {
      const index_t j = st.col_idx[q];
      if (local(j) && state[j - lo] == kHmisUndecided) state[j - lo] = kHmisNewFine;
    }
    for (index_t q = st.row_ptr[i]; q < st.row_ptr[i + 1]; ++q) {
      const index_t j = st.col_idx[q];
      if (!local(j) || state[j - lo] != kHmisNewFine) continue;
      state[j - lo] = kHmisFine;
      for (index_t t = s.row_ptr[j]; t < s.row_ptr[j + 1]; ++t) {
        const index_t k = s.col_idx[t];
        if (local(k) && state[k - lo] == kHmisUndecided) ++lambda[k - lo];
      }
    }
    for (index_t q = s.row_ptr[i]; q < s.row_ptr[i + 1]; ++q) {
      const index_t j = s.col_idx[q];
      if (local(j) && state[j - lo] == kHmisUndecided) --lambda[j - lo];
    }
  }
}

KRYFLOW_HOST_DEVICE inline double magnitude(double x) {
  return fabs(x);
}

/// std::max's rule: a unless a < b.
KRYFLOW_HOST_DEVICE inline double larger(double a, double b) {
  return a < b ? b : a;
}

/// The value of the first entry of column j in row i of a (0 when none), by a linear search.
KRYFLOW_HOST_DEVICE inline double entry_value(const MatrixView& a, index_t i, index_t j) {
  for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
    if (a.pattern.col_idx[k] == j) return a.values[k];
  }
  return 0.0;
}

/// a_ii of row i (0 when not stored).
KRYFLOW_HOST_DEVICE inline double diagonal(const MatrixView& a, index_t i) {
  return entry_value(a, i, i);
}

/// The first position q in [begin, end) of sorted columns col_idx with col_idx[q] >= j (end if
/// none), by a binary search.
KRYFLOW_HOST_DEVICE inline index_t sorted_lower_bound(const index_t* col_idx, index_t begin,
                                                      index_t end, index_t j) {
  while (begin < end) {
    const index_t middle = begin + (end - begin) / 2;
    if (col_idx[middle] < j) {
      begin = middle + 1;
    } else {
      end = middle;
    }
  }
  return begin;
}

/// a_ij of row i by a binary search of its sorted columns (0 when not stored).
KRYFLOW_HOST_DEVICE inline double sorted_entry(const MatrixView& a, index_t i, index_t j) {
  const index_t end = a.pattern.row_ptr[i + 1];
  const index_t q = sorted_lower_bound(a.pattern.col_idx, a.pattern.row_ptr[i], end, j);
  return q < end && a.pattern.col_idx[q] == j ? a.values[q] : 0.0;
}

/// a_jj of row j by a binary search of its sorted columns (0 when not stored).
KRYFLOW_HOST_DEVICE inline double sorted_diagonal(const MatrixView& a, index_t j) {
  return sorted_entry(a, j, j);
}

/// What the strength test of row i's entries needs from the whole row: a_ii, and for the
/// classical measure the largest -sign(a_ii) a_ik over k != i (0 when none is positive);
/// `none` when row i has no strong dependency at all (max_row_sum exceeded, or classical with
/// no positive -sign(a_ii) a_ik).
struct StrengthRow {
  double a_ii = 0.0;
  double largest = 0.0;
  bool none = false;
};

/// The max_row_sum rule (Stueben's, hypre's): a row whose sum exceeds max_row_sum |a_ii| in
/// magnitude is weakly coupled to all (sequential sum in column order).
KRYFLOW_HOST_DEVICE inline bool exceeds_row_sum(const MatrixView& a, const StrengthParameters& p,
                                                index_t i, double a_ii) {
  if (!(p.max_row_sum < 1.0)) return false;
  double row_sum = 0.0;
  for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
    row_sum += a.values[k];
  }
  return magnitude(row_sum) > p.max_row_sum * magnitude(a_ii);
}

/// -sign(a_ii) of the classical measure.
KRYFLOW_HOST_DEVICE inline double classical_sign(double a_ii) {
  return a_ii < 0.0 ? 1.0 : -1.0;
}

/// Whether entry k of row i (column j = col_idx[k]) is a strong dependency, given the row's
/// StrengthRow (row.none false).
KRYFLOW_HOST_DEVICE inline bool strong_entry(const MatrixView& a, const StrengthParameters& p,
                                             index_t i, const StrengthRow& row, index_t k) {
  const index_t j = a.pattern.col_idx[k];
  if (j == i) return false;
  if (p.measure == StrengthMeasure::symmetric) {
    const double a_ij = magnitude(a.values[k]);
    // Threshold 0: every nonzero a_ij is strong (the diagonals are finite, callers check),
    // and row j is not searched for a_jj.
    return a_ij > 0.0 &&
           (p.threshold == 0.0 ||
            a_ij >= p.threshold * sqrt(magnitude(row.a_ii) * magnitude(sorted_diagonal(a, j))));
  }
  if (p.measure == StrengthMeasure::seed) {
    return magnitude(a.values[k]) > p.threshold * magnitude(row.a_ii);
  }
  const double s = classical_sign(row.a_ii) * a.values[k];
  return s > 0.0 && s >= p.threshold * row.largest;
}

/// Row i's StrengthRow, one thread.
KRYFLOW_HOST_DEVICE inline StrengthRow strength_row(const MatrixView& a,
                                                    const StrengthParameters& p, index_t i) {
  StrengthRow row;
  row.a_ii = diagonal(a, i);
  if (exceeds_row_sum(a, p, i, row.a_ii)) {
    row.none = true;
    return row;
  }
  if (p.measure == StrengthMeasure::classical) {
    const double sign = classical_sign(row.a_ii);
    for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
      if (a.pattern.col_idx[k] != i) row.largest = larger(row.largest, sign * a.values[k]);
    }
    row.none = !(row.largest > 0.0);
  }
  return row;
}

/// Calls emit(j, a_ij) for every j row i strongly depends on, in column order (see
/// StrengthParameters).
#ifdef __CUDACC__
#pragma nv_exec_check_disable
#endif
template <class Emit>
KRYFLOW_HOST_DEVICE void strong_dependencies(const MatrixView& a, const StrengthParameters& p,
                                             index_t i, Emit emit) {
  const StrengthRow row = strength_row(a, p, i);
  if (row.none) return;
  for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
    if (strong_entry(a, p, i, row, k)) emit(a.pattern.col_idx[k], a.values[k]);
  }
}

/// One row's interpolatory points in caller-provided storage of at least `capacity()` of the
/// row (see point_capacity): columns (rows of A, increasing), a_ij and w_ij; `size` in use.
struct PointsView {
  index_t* columns = nullptr;
  double* a = nullptr;
  double* weights = nullptr;
  index_t size = 0;
};

/// Storage interpolation_row needs for row i: 1 for a coarse row, else the number of coarse
/// points in S_i (the points it collects before truncation), and for extended_i also the
/// coarse points of S_k for every fine point k of S_i (an upper bound of |C_i^|: repeated
/// points are counted again). fixed_pattern_row needs the length of P's row i.
KRYFLOW_HOST_DEVICE inline index_t point_capacity(const PatternView& s, Span<const index_t> cf,
                                                  InterpolationKind kind, index_t i) {
  if (cf[i] == kCoarse) return 1;
  index_t coarse = 0;
  for (index_t q = s.row_ptr[i]; q < s.row_ptr[i + 1]; ++q) {
    const index_t k = s.col_idx[q];
    if (cf[k] == kCoarse) {
      ++coarse;
    } else if (kind == InterpolationKind::extended_i) {
      for (index_t r = s.row_ptr[k]; r < s.row_ptr[k + 1]; ++r) {
        coarse += cf[s.col_idx[r]] == kCoarse ? 1 : 0;
      }
    }
  }
  return coarse;
}

/// The first position p >= from of the row's sorted points with columns[p] >= j (row.size if
/// none): a galloping search, O(log(p - from)), for lookups with increasing j.
KRYFLOW_HOST_DEVICE inline index_t lower_bound_from(const PointsView& row, index_t j,
                                                    index_t from) {
  index_t low = from, step = 1, high = from;
  while (high < row.size && row.columns[high] < j) {
    low = high + 1;
    high += step;
    step *= 2;
  }
  if (high > row.size) high = row.size;
  while (low < high) {
    const index_t middle = low + (high - low) / 2;
    if (row.columns[middle] < j) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return low;
}

/// Heapsort's step: moves columns[root] down the max-heap columns[0, size).
KRYFLOW_HOST_DEVICE inline void sift_down(index_t* columns, index_t root, index_t size) {
  while (true) {
    index_t child = 2 * root + 1;
    if (child >= size) return;
    if (child + 1 < size && columns[child] < columns[child + 1]) ++child;
    if (!(columns[root] < columns[child])) return;
    const index_t t = columns[root];
    columns[root] = columns[child];
    columns[child] = t;
    root = child;
  }
}

/// Sorts columns[0, m) increasingly in place (heapsort: no scratch, no recursion, the same
/// steps on every backend).
KRYFLOW_HOST_DEVICE inline void sort_columns(index_t* columns, index_t m) {
  for (index_t root = m / 2; root-- > 0;) sift_down(columns, root, m);
  for (index_t end = m; end-- > 1;) {
    const index_t t = columns[0];
    columns[0] = columns[end];
    columns[end] = t;
    sift_down(columns, 0, end);
  }
}

/// C_i^ of extended+i for fine row i (see InterpolationKind::extended_i): the coarse points
/// of S_i and of S_k for the fine points k of S_i, sorted, each once (collected with repeats
/// into the point_capacity storage, sorted, then squeezed); row.a[p] = a_ij (0 when not
/// stored).
KRYFLOW_HOST_DEVICE inline void extended_points(const MatrixView& a, const PatternView& s,
                                                Span<const index_t> cf, index_t i,
                                                PointsView& row) {
  index_t m = 0;
  for (index_t q = s.row_ptr[i]; q < s.row_ptr[i + 1]; ++q) {
    const index_t k = s.col_idx[q];
    if (cf[k] == kCoarse) {
      row.columns[m++] = k;
      continue;
    }
    for (index_t r = s.row_ptr[k]; r < s.row_ptr[k + 1]; ++r) {
      if (cf[s.col_idx[r]] == kCoarse) row.columns[m++] = s.col_idx[r];
    }
  }
  sort_columns(row.columns, m);
  row.size = 0;
  for (index_t p = 0; p < m; ++p) {
    if (row.size == 0 || row.columns[row.size - 1] != row.columns[p]) {
      row.columns[row.size++] = row.columns[p];
    }
  }
  index_t k = a.pattern.row_ptr[i];
  const index_t end = a.pattern.row_ptr[i + 1];
  for (index_t p = 0; p < row.size; ++p) {
    while (k < end && a.pattern.col_idx[k] < row.columns[p]) ++k;
    row.a[p] = k < end && a.pattern.col_idx[k] == row.columns[p] ? a.values[k] : 0.0;
  }
}

/// Extended+i weights of fine row i over the sorted points of `row` as C_i^ (the formula of
/// InterpolationKind::extended_i; a truncated row passes its kept points). The sums run over
/// row i of A in column order, each fine point k of S_i over row k of A in column order, so
/// every backend adds in the same order.
KRYFLOW_HOST_DEVICE inline void extended_weights(const MatrixView& a, const PatternView& s,
                                                 Span<const index_t> cf, index_t i,
                                                 PointsView& row) {
  const index_t m = row.size;
  for (index_t p = 0; p < m; ++p) row.weights[p] = 0.0;
  double diagonal_sum = diagonal(a, i);  // a~_ii, from a_ii
  index_t q = s.row_ptr[i];              // walks S_i beside row i of A (both sorted)
  index_t p = 0;                         // walks the points beside row i
  const index_t* cols = a.pattern.col_idx;
  for (index_t e = a.pattern.row_ptr[i]; e < a.pattern.row_ptr[i + 1]; ++e) {
    const index_t n = cols[e];
    const double a_in = a.values[e];
    while (q < s.row_ptr[i + 1] && s.col_idx[q] < n) ++q;
    const bool strong = q < s.row_ptr[i + 1] && s.col_idx[q] == n;
    p = lower_bound_from(row, n, p);
    if (n == i) continue;
    if (p < m && row.columns[p] == n) {
      row.weights[p] += a_in;
    } else if (strong && cf[n] != kCoarse) {
      // n = k, a strong fine neighbour: a_ik distributed over C_i^ + {i} by a^_kl.
      const index_t begin = a.pattern.row_ptr[n], end = a.pattern.row_ptr[n + 1];
      const bool negative_diagonal = diagonal(a, n) < 0.0;
      double d = 0.0;
      index_t l = 0;
      for (index_t f = begin; f < end; ++f) {
        const double v = a.values[f];
        const bool opposite = negative_diagonal ? v > 0.0 : v < 0.0;
        if (!opposite || cols[f] == n) continue;
        l = lower_bound_from(row, cols[f], l);
        if (cols[f] == i || (l < m && row.columns[l] == cols[f])) d += v;
      }
      if (d != 0.0) {
        const double distribute = a_in / d;
        l = 0;
        for (index_t f = begin; f < end; ++f) {
          const double v = a.values[f];
          const bool opposite = negative_diagonal ? v > 0.0 : v < 0.0;
          if (!opposite || cols[f] == n) continue;
          l = lower_bound_from(row, cols[f], l);
          if (cols[f] == i) {
            diagonal_sum += distribute * v;
          } else if (l < m && row.columns[l] == cols[f]) {
            row.weights[l] += distribute * v;
          }
        }
      } else {
        diagonal_sum += a_in;
      }
    } else {
      diagonal_sum += a_in;  // weak, or a coarse point truncation dropped
    }
  }
  for (index_t k = 0; k < m; ++k) {
    row.weights[k] = diagonal_sum != 0.0 ? -row.weights[k] / diagonal_sum : 0.0;
  }
}

/// Direct interpolation's scales of row i (Trottenberg et al. eq. (A.7.7)-(A.7.8)), given the
/// sums of the negative and of the positive a_ik over its interpolatory points P_i: with N_i the
/// off-diagonal entries of row i, alpha = sum_{N_i} a_ik^- / negative_p, beta likewise for
/// positive entries; when P_i has no positive entry, the positive entries of N_i are added to
/// a_ii instead (beta = 0). The sums run over row i of A in column order.
struct DirectScales {
  double a_ii = 0.0;
  double alpha = 0.0;
  double beta = 0.0;
};
KRYFLOW_HOST_DEVICE inline DirectScales direct_scales(const MatrixView& a, index_t i,
                                                      double negative_p, double positive_p) {
  double a_ii = 0.0, negative_n = 0.0, positive_n = 0.0;
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
  DirectScales d;
  d.alpha = negative_p != 0.0 ? negative_n / negative_p : 0.0;
  if (positive_p != 0.0) {
    d.beta = positive_n / positive_p;
  } else {
    a_ii += positive_n;
  }
  d.a_ii = a_ii;
  return d;
}

/// w_ij = -alpha a_ij / a_ii (a_ij < 0) or -beta a_ij / a_ii (a_ij > 0), 0 for a_ij = 0.
KRYFLOW_HOST_DEVICE inline double direct_weight(const DirectScales& d, double a_ij) {
  return a_ij < 0.0 ? -d.alpha * a_ij / d.a_ii : (a_ij > 0.0 ? -d.beta * a_ij / d.a_ii : 0.0);
}

/// The weights of `row` over its points: 1/n_i (seed) or Stüben's direct interpolation
/// (direct_scales and direct_weight with P_i the points).
KRYFLOW_HOST_DEVICE inline void compute_weights(const MatrixView& a, index_t i,
                                                InterpolationKind kind, PointsView& row) {
  const index_t m = row.size;
  if (m == 0) return;
  if (kind == InterpolationKind::seed) {
    for (index_t k = 0; k < m; ++k) row.weights[k] = 1.0 / static_cast<double>(m);
    return;
  }
  double negative_p = 0.0, positive_p = 0.0;
  for (index_t k = 0; k < m; ++k) {
    const double v = row.a[k];
    if (v < 0.0) negative_p += v;
    if (v > 0.0) positive_p += v;
  }
  const DirectScales d = direct_scales(a, i, negative_p, positive_p);
  for (index_t k = 0; k < m; ++k) row.weights[k] = direct_weight(d, row.a[k]);
}

/// The points of a row that truncation keeps, among m points with magnitudes weight(k) and
/// keys key(k): those with weight(k) >= truncation_factor max weight, then at most
/// max_elements_per_row of them by largest key, ties to the smaller k (Stüben 2001, sec.
/// 7.2.4). Calls keep(k) for each kept point in increasing k; keep may overwrite the storage
/// of points before k (the decisions read only weight(k), key(k) and the key of one earlier
/// point, saved before the first call).
///
/// The largest ones are those a stable sort by decreasing key would put first: point l comes
/// before point k when key_l > key_k, or key_l == key_k and l < k (a total order on the
/// points passing the threshold). Without scratch, K = max_elements_per_row passes each find
/// the first point after the last one found, so the K-th point in that order is found in K m
/// comparisons for m points (a rank per point would take m^2: 10^4 for the 100-point rows of
/// extended+i on coarse levels); a passing point is kept when it is not after it.
template <class Weight, class Key, class Keep>
KRYFLOW_HOST_DEVICE void kept_points(const InterpolationParameters& p, index_t m, Weight weight,
                                     Key key, Keep keep) {
  double largest = 0.0;
  for (index_t k = 0; k < m; ++k) largest = larger(largest, weight(k));
  const double cut = p.truncation_factor * largest;
  const auto passes = [&](index_t k) { return weight(k) >= cut; };
  // l (with key kl) before k in the order above (keys compared as the rank formula of a stable
  // sort would: neither larger means equal)
  const auto before = [&](index_t l, double kl, index_t k) {
    const double kk = key(k);
    return kl > kk || (!(kk > kl) && l < k);
  };
  index_t passing = 0;
  for (index_t k = 0; k < m; ++k) passing += passes(k) ? 1 : 0;
  const bool limit = p.max_elements_per_row > 0 && passing > p.max_elements_per_row;
  index_t last = -1;  // the last kept point in the order (limit only)
  double last_key = 0.0;
  for (index_t found = 0; limit && found < p.max_elements_per_row; ++found) {
    index_t next = -1;
    double next_key = 0.0;
    for (index_t k = 0; k < m; ++k) {
      if (!passes(k) || (last >= 0 && !before(last, last_key, k))) continue;  // not after last
      if (next < 0 || before(k, key(k), next)) {
        next = k;
        next_key = key(k);
      }
    }
    last = next;
    last_key = next_key;
  }
  for (index_t k = 0; k < m; ++k) {
    if (passes(k) && (!limit || !before(last, last_key, k))) keep(k);  // not after the K-th
  }
}

/// Keeps the points of `row` that kept_points keeps with weight |w| and key |w| (seed: key
/// |a_ij|), in column order; the caller recomputes the weights over the kept points, which
/// rescales them so that the row sums of negative and positive weights stay.
KRYFLOW_HOST_DEVICE inline void truncate(const InterpolationParameters& p, PointsView& row) {
  const bool seed = p.kind == InterpolationKind::seed;
  index_t kept = 0;
  kept_points(
      p, row.size, [&](index_t k) { return magnitude(row.weights[k]); },
      [&](index_t k) { return seed ? magnitude(row.a[k]) : magnitude(row.weights[k]); },
      [&](index_t k) {
        row.columns[kept] = row.columns[k];
        row.a[kept] = row.a[k];
        ++kept;
      });
  row.size = kept;
}

/// Row i of the prolongation in fine-row numbering: {i} with weight 1 for a coarse row; for a
/// fine row the coarse points of S_i (extended_i: C_i^), truncated, with their weights. `row`
/// has storage for point_capacity(s, cf, p.kind, i) points. weights = false (a count): the
/// points only, row.weights left unspecified (computed only where truncation needs them).
KRYFLOW_HOST_DEVICE inline void interpolation_row(const MatrixView& a, const PatternView& s,
                                                  Span<const index_t> cf,
                                                  const InterpolationParameters& p, index_t i,
                                                  PointsView& row, bool weights = true) {
  row.size = 0;
  if (cf[i] == kCoarse) {
    row.columns[0] = i;
    row.a[0] = diagonal(a, i);
    row.weights[0] = 1.0;
    row.size = 1;
    return;
  }
  const bool extended = p.kind == InterpolationKind::extended_i;
  const bool truncating = p.truncation_factor > 0.0 || p.max_elements_per_row > 0;
  if (extended) {
    extended_points(a, s, cf, i, row);
    if (weights || truncating) extended_weights(a, s, cf, i, row);
  } else {
    index_t k = a.pattern.row_ptr[i];
    for (index_t q = s.row_ptr[i]; q < s.row_ptr[i + 1]; ++q) {
      const index_t j = s.col_idx[q];
      while (a.pattern.col_idx[k] != j) ++k;  // S_i is a subset of row i's columns
      if (cf[j] == kCoarse) {
        row.columns[row.size] = j;
        row.a[row.size] = a.values[k];
        ++row.size;
      }
    }
    if (weights || truncating) compute_weights(a, i, p.kind, row);
  }
  if (row.size == 0 || !truncating) return;
  const index_t before = row.size;
  truncate(p, row);
  if (row.size == before || !weights) return;
  if (extended) {
    extended_weights(a, s, cf, i, row);
  } else {
    compute_weights(a, i, p.kind, row);
  }
}

/// Row i of a prolongation whose pattern is fixed (value-only re-setup): the points are the
/// columns of P's row i mapped through coarse_points; weights as interpolation_row computes
/// them over its kept points (extended_i reads the fine points of S_i from s). `row` has
/// storage for the length of P's row i.
KRYFLOW_HOST_DEVICE inline void fixed_pattern_row(const MatrixView& a, const PatternView& s,
                                                  Span<const index_t> cf,
                                                  Span<const index_t> coarse_points,
                                                  InterpolationKind kind,
                                                  const PatternView& prolongation, index_t i,
                                                  PointsView& row) {
  row.size = 0;
  if (cf[i] == kCoarse) {
    row.weights[0] = 1.0;
    row.size = 1;
    return;
  }
  index_t k = a.pattern.row_ptr[i];
  for (index_t q = prolongation.row_ptr[i]; q < prolongation.row_ptr[i + 1]; ++q) {
    const index_t j = coarse_points[prolongation.col_idx[q]];
    while (k < a.pattern.row_ptr[i + 1] && a.pattern.col_idx[k] < j) ++k;
    const bool stored = k < a.pattern.row_ptr[i + 1] && a.pattern.col_idx[k] == j;
    row.columns[row.size] = j;
    row.a[row.size] = stored ? a.values[k] : 0.0;
    ++row.size;
  }
  if (kind == InterpolationKind::extended_i) {
    extended_weights(a, s, cf, i, row);
  } else {
    compute_weights(a, i, kind, row);
  }
}

/// Host storage of one row's points, reused from row to row by one thread.
struct InterpolationRow {
  std::vector<index_t> columns;
  std::vector<double> a;
  std::vector<double> weights;
  /// A view with room for `capacity` points (at least 1).
  PointsView view(index_t capacity) {
    const auto size = static_cast<std::size_t>(capacity > 1 ? capacity : 1);
    if (columns.size() < size) {
      columns.resize(size);
      a.resize(size);
      weights.resize(size);
    }
    return {columns.data(), a.data(), weights.data(), 0};
  }
};

/// The largest of key(i) and key(j) over the neighbours j of i in G = S + S^T (st: S^T, or a
/// null row_ptr when S is symmetric and G = S) (mis2_roots:
/// key(j) is mis2_key of j's state, or the first propagation's result for the second).
#ifdef __CUDACC__
#pragma nv_exec_check_disable
#endif
template <class Key>
KRYFLOW_HOST_DEVICE std::uint64_t largest_neighbour_key(const PatternView& s, const PatternView& st,
                                                        index_t i, Key key) {
  std::uint64_t largest = key(i);
  for (index_t q = s.row_ptr[i]; q < s.row_ptr[i + 1]; ++q) {
    const std::uint64_t k = key(s.col_idx[q]);
    largest = k > largest ? k : largest;
  }
  if (st.row_ptr == nullptr) return largest;  // S symmetric: G = S
  for (index_t q = st.row_ptr[i]; q < st.row_ptr[i + 1]; ++q) {
    const std::uint64_t k = key(st.col_idx[q]);
    largest = k > largest ? k : largest;
  }
  return largest;
}

/// The aggregate of the neighbour j of i in G = S + S^T of largest mis2_key among those with
/// assigned[j] >= 0, or -1 when none (mis2_aggregates).
KRYFLOW_HOST_DEVICE inline index_t aggregate_of_largest_neighbour(const PatternView& s,
                                                                  const PatternView& st,
                                                                  std::uint64_t seed, index_t i,
                                                                  const index_t* assigned) {
  std::uint64_t best = 0;
  index_t aggregate = -1;
  const PatternView graphs[2] = {s, st};
  for (const PatternView& g : graphs) {
    if (g.row_ptr == nullptr) continue;  // S^T of a symmetric S: G = S
    for (index_t q = g.row_ptr[i]; q < g.row_ptr[i + 1]; ++q) {
      const index_t j = g.col_idx[q];
      if (assigned[j] < 0) continue;
      const std::uint64_t key = mis2_key(0, seed, j);
      if (aggregate < 0 || key > best) {
        best = key;
        aggregate = assigned[j];
      }
    }
  }
  return aggregate;
}

/// sum_j |a_ij| / |a_ii| of row i (0 when a_ii is zero or not stored).
KRYFLOW_HOST_DEVICE inline double gershgorin_row(const MatrixView& a, index_t i) {
  double sum = 0.0, a_ii = 0.0;
  for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
    sum += magnitude(a.values[k]);
    if (a.pattern.col_idx[k] == i) a_ii = a.values[k];
  }
  return a_ii != 0.0 ? sum / magnitude(a_ii) : 0.0;
}

/// Entry (i, j) of I - omega D^-1 A from a_ij, scale = omega / a_ii.
KRYFLOW_HOST_DEVICE inline double jacobi_smoothing_entry(index_t i, index_t j, double scale,
                                                         double a_ij) {
  return (j == i ? 1.0 : 0.0) - scale * a_ij;
}

/// The number of distinct aggregates among the columns of a's row i (entries whose aggregate
/// no earlier entry of the row has). O(m^2) for m entries.
KRYFLOW_HOST_DEVICE inline index_t distinct_aggregate_count(const PatternView& a,
                                                            const index_t* aggregate, index_t i) {
  const index_t begin = a.row_ptr[i], end = a.row_ptr[i + 1];
  index_t count = 0;
  for (index_t k = begin; k < end; ++k) {
    const index_t g = aggregate[a.col_idx[k]];
    bool seen = false;
    for (index_t q = begin; q < k && !seen; ++q) seen = aggregate[a.col_idx[q]] == g;
    count += seen ? 0 : 1;
  }
  return count;
}

/// Writes the distinct aggregates of the columns of a's row i to out, ascending (insertion into
/// the sorted prefix: O(m d) for m entries and d distinct aggregates).
KRYFLOW_HOST_DEVICE inline void distinct_aggregate_fill(const PatternView& a,
                                                        const index_t* aggregate, index_t i,
                                                        index_t* out) {
  index_t d = 0;
  for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
    const index_t g = aggregate[a.col_idx[k]];
    index_t at = d;
    while (at > 0 && out[at - 1] > g) --at;
    if (at > 0 && out[at - 1] == g) continue;
    for (index_t t = d; t > at; --t) out[t] = out[t - 1];
    out[at] = g;
    ++d;
  }
}

/// Entry (i, j) of smoothed aggregation's P = (I - omega D^-1 A) T, scale = omega / a_ii: the
/// smoother's entries of row i whose column lies in aggregate j, added in stored order from 0.
KRYFLOW_HOST_DEVICE inline double smoothed_aggregation_entry(const MatrixView& a, index_t i,
                                                             double scale, const index_t* aggregate,
                                                             index_t j) {
  double sum = 0.0;
  for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
    const index_t m = a.pattern.col_idx[k];
    if (aggregate[m] == j) sum = sum + jacobi_smoothing_entry(i, m, scale, a.values[k]);
  }
  return sum;
}

/// Row i of smoothed aggregation's P on its pattern p.
KRYFLOW_HOST_DEVICE inline void smoothed_aggregation_row(const MatrixView& a, double omega,
                                                         const index_t* aggregate,
                                                         const PatternView& p, index_t i,
                                                         double* values) {
  const double scale = omega / diagonal(a, i);
  for (index_t q = p.row_ptr[i]; q < p.row_ptr[i + 1]; ++q) {
    values[q] = smoothed_aggregation_entry(a, i, scale, aggregate, p.col_idx[q]);
  }
}

// ---------------------------------------------------------------------------------------------
// Aggressive coarsening (Stüben 2001, sec. 7.1.2 "aggressive coarsening" with multi-pass
// interpolation, sec. 7.2.3; hypre BoomerAMG's agg_num_levels with agg_interp_type 4).

/// The coarse points j != i of the distance-two strength of coarse row i: j in S_i, or j in S_k
/// for some k in S_i (a path of length at most two in S). ss is the pattern of
/// S[C, :] S[:, C] in coarse numbering (select_pattern_* and a sparse product): row
/// coarse_index[i] holds the coarse j reached in two steps. Calls emit(coarse_index[j]) for
/// each such j once, in increasing order (a merge of S_i's coarse points with that row).
template <class Emit>
KRYFLOW_HOST_DEVICE void distance_two_coarse_row(const PatternView& s, const PatternView& ss,
                                                 const index_t* cf, const index_t* coarse_index,
                                                 index_t i, Emit emit) {
  constexpr index_t kPast = 0x7fffffff;
  const index_t c = coarse_index[i];
  index_t p = s.row_ptr[i];
  index_t q = ss.row_ptr[c];
  const index_t p_end = s.row_ptr[i + 1];
  const index_t q_end = ss.row_ptr[c + 1];
  while (p < p_end && cf[s.col_idx[p]] != kCoarse) ++p;
  while (p < p_end || q < q_end) {
    const index_t js = p < p_end ? coarse_index[s.col_idx[p]] : kPast;
    const index_t jq = q < q_end ? ss.col_idx[q] : kPast;
    const index_t j = js < jq ? js : jq;
    if (js == j) {
      ++p;
      while (p < p_end && cf[s.col_idx[p]] != kCoarse) ++p;
    }
    if (jq == j) ++q;
    if (j != c) emit(j);
  }
}

/// The entries of row i of a kept by select_pattern: every column, or (coarse_columns) the
/// coarse ones renumbered by coarse_index; emit(column) in increasing order.
template <class Emit>
KRYFLOW_HOST_DEVICE void select_row(const PatternView& a, const index_t* cf,
                                    const index_t* coarse_index, bool coarse_columns, index_t i,
                                    Emit emit) {
  for (index_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; ++q) {
    const index_t j = a.col_idx[q];
    if (!coarse_columns) {
      emit(j);
    } else if (cf[j] == kCoarse) {
      emit(coarse_index[j]);
    }
  }
}

/// Whether row i (pass[i] < 0: not yet assigned) depends strongly on a row of pass `previous`.
KRYFLOW_HOST_DEVICE inline bool reaches_pass(const PatternView& s, const index_t* pass, index_t i,
                                             index_t previous) {
  for (index_t q = s.row_ptr[i]; q < s.row_ptr[i + 1]; ++q) {
    if (pass[s.col_idx[q]] == previous) return true;
  }
  return false;
}

/// Row i of multi-pass interpolation's one-step operator W (n x n): a coarse row (pass 0) is
/// {i} with weight 1; a row of pass p >= 1 holds the points Q_i = {k in S_i : pass[k] = p - 1}
/// (when `s` is given; with s.row_ptr null, the columns of row i of the fixed pattern `w`)
/// with direct interpolation's weights over them (compute_weights with P_i = Q_i:
/// w_ik = -alpha a_ik / a_ii for a_ik < 0, -beta a_ik / a_ii for a_ik > 0, alpha =
/// sum_{N_i} a^- / sum_{Q_i} a^-, beta likewise, positive entries lumped into a_ii when Q_i has
/// none; kind seed: 1 / |Q_i|); a row without a pass (pass < 0) is empty. Calls emit(k, w_ik)
/// in increasing k. The sums run over row i of A and Q_i in column order on every backend.
template <class Emit>
KRYFLOW_HOST_DEVICE void multipass_row(const MatrixView& a, const PatternView& s,
                                       const index_t* pass, const PatternView& w,
                                       InterpolationKind kind, index_t i, Emit emit) {
  if (pass[i] == 0) {
    emit(i, 1.0);
    return;
  }
  if (pass[i] < 0) return;
  const index_t previous = pass[i] - 1;
  const bool from_s = s.row_ptr != nullptr;
  const PatternView& points = from_s ? s : w;
  const index_t a_begin = a.pattern.row_ptr[i];
  const index_t a_end = a.pattern.row_ptr[i + 1];
  // for_point(f): f(k, a_ik) over Q_i in column order (Q_i is within row i's columns).
  const auto for_point = [&](auto f) {
    index_t e = a_begin;
    for (index_t q = points.row_ptr[i]; q < points.row_ptr[i + 1]; ++q) {
      const index_t k = points.col_idx[q];
      if (from_s && pass[k] != previous) continue;
      while (e < a_end && a.pattern.col_idx[e] < k) ++e;
      f(k, e < a_end && a.pattern.col_idx[e] == k ? a.values[e] : 0.0);
    }
  };
  index_t m = 0;
  double negative_p = 0.0, positive_p = 0.0;
  for_point([&](index_t, double v) {
    ++m;
    if (v < 0.0) negative_p += v;
    if (v > 0.0) positive_p += v;
  });
  if (m == 0) return;
  if (kind == InterpolationKind::seed) {
    for_point([&](index_t k, double) { emit(k, 1.0 / static_cast<double>(m)); });
    return;
  }
  const DirectScales d = direct_scales(a, i, negative_p, positive_p);
  for_point([&](index_t k, double v) { emit(k, direct_weight(d, v)); });
}

/// Entries of row i of W (multipass_row with s): 1 for a coarse row, |Q_i| for pass >= 1, 0
/// without a pass.
KRYFLOW_HOST_DEVICE inline index_t multipass_count_row(const PatternView& s, const index_t* pass,
                                                       index_t i) {
  if (pass[i] == 0) return 1;
  if (pass[i] < 0) return 0;
  index_t m = 0;
  for (index_t q = s.row_ptr[i]; q < s.row_ptr[i + 1]; ++q) m += pass[s.col_idx[q]] == pass[i] - 1;
  return m;
}

/// Row i of multi-pass interpolation's P = W^(m-1) X_1 from the rows of the passes before it.
/// P is the fixed point P = W P: a coarse row (pass 0) is its single entry 1, and a row of pass
/// p >= 1 is sum_{k in Q_i} w_ik P_k over the rows k of pass p - 1 (multipass_row on W's
/// pattern w), each P_k complete in `values` (P's values on its pattern p). Entry c of row i
/// starts at 0 and adds w_ik p_kc for k in increasing order: the order of Gustavson's product
/// W X_(m-1) (spgemm_numeric), whose rows k of pass p - 1 <= m - 1 are already P's, so the
/// bits are the product's. P_k's columns are a subset of P_i's (both sorted). A row without a
/// pass (pass < 0) is empty.
KRYFLOW_HOST_DEVICE inline void multipass_prolongation_row(const MatrixView& a, const index_t* pass,
                                                           const PatternView& w,
                                                           InterpolationKind kind,
                                                           const PatternView& p, double* values,
                                                           index_t i) {
  const index_t begin = p.row_ptr[i];
  const index_t end = p.row_ptr[i + 1];
  if (pass[i] == 0) {
    for (index_t q = begin; q < end; ++q) values[q] = 1.0;
    return;
  }
  for (index_t q = begin; q < end; ++q) values[q] = 0.0;
  multipass_row(a, PatternView{}, pass, w, kind, i, [&](index_t k, double weight) {
    index_t q = begin;
    for (index_t e = p.row_ptr[k]; e < p.row_ptr[k + 1]; ++e) {
      const index_t c = p.col_idx[e];
      while (p.col_idx[q] != c) ++q;
      values[q] += weight * values[e];
    }
  });
}

/// Row i of multi-pass interpolation's P (multipass_prolongation_row's values) held in
/// `capacity` slots per row instead of on P's pattern: row r's columns (sorted) and values at
/// slot_columns / slot_values [r capacity, r capacity + counts[r]). A coarse row is its coarse
/// point (coarse_index[i]) with weight 1; a row of pass p >= 1 is sum_{k in Q_i} w_ik P_k over
/// the rows of pass p - 1, already in their slots: its columns are the union of theirs (P's
/// pattern, the Boolean product's), and entry c starts at 0 and adds w_ik p_kc for k in
/// increasing order, as multipass_prolongation_row: the same bits. Returns the row's entries,
/// or capacity + 1 when the union does not fit (or a row it reads did not): then its slots are
/// unspecified, and the caller takes the product path.
KRYFLOW_HOST_DEVICE inline index_t multipass_slot_row(const MatrixView& a, const index_t* pass,
                                                      const PatternView& w, InterpolationKind kind,
                                                      const index_t* coarse_index, index_t capacity,
                                                      index_t* slot_columns, double* slot_values,
                                                      const index_t* counts, index_t i) {
  index_t* columns = slot_columns + static_cast<std::int64_t>(i) * capacity;
  double* values = slot_values + static_cast<std::int64_t>(i) * capacity;
  if (pass[i] < 0) return 0;
  if (pass[i] == 0) {
    if (capacity < 1) return capacity + 1;
    columns[0] = coarse_index[i];
    values[0] = 1.0;
    return 1;
  }
  // The row's points and weights from one walk (multipass_row walks Q_i twice), kept for the
  // values when there are at most kSlotPoints of them, else walked again.
  constexpr int kSlotPoints = 16;
  index_t points[kSlotPoints];
  double weights[kSlotPoints];
  index_t m = 0;
  index_t size = 0;
  bool fits = true;
  multipass_row(a, PatternView{}, pass, w, kind, i, [&](index_t k, double weight) {
    if (m < kSlotPoints) {
      points[m] = k;
      weights[m] = weight;
    }
    ++m;
    const index_t count = counts[k];
    if (!fits || count > capacity) {
      fits = false;
      return;
    }
    const index_t* from = slot_columns + static_cast<std::int64_t>(k) * capacity;
    for (index_t e = 0; e < count && fits; ++e) {
      // insert from[e] into the sorted columns[0, size) unless present
      const index_t c = from[e];
      index_t at = size;
      while (at > 0 && columns[at - 1] > c) --at;
      if (at > 0 && columns[at - 1] == c) continue;
      if (size == capacity) {
        fits = false;
        break;
      }
      for (index_t t = size; t > at; --t) columns[t] = columns[t - 1];
      columns[at] = c;
      ++size;
    }
  });
  if (!fits) return capacity + 1;
  for (index_t q = 0; q < size; ++q) values[q] = 0.0;
  const auto add = [&](index_t k, double weight) {
    const index_t* from = slot_columns + static_cast<std::int64_t>(k) * capacity;
    const double* from_values = slot_values + static_cast<std::int64_t>(k) * capacity;
    index_t q = 0;
    for (index_t e = 0; e < counts[k]; ++e) {
      while (columns[q] != from[e]) ++q;
      values[q] += weight * from_values[e];
    }
  };
  if (m <= kSlotPoints) {
    for (index_t t = 0; t < m; ++t) add(points[t], weights[t]);
  } else {
    multipass_row(a, PatternView{}, pass, w, kind, i, add);
  }
  return size;
}

/// Row i of P in CSR (row_ptr from the scan of the counts) copied from its slots
/// (multipass_slot_row).
KRYFLOW_HOST_DEVICE inline void multipass_slots_compact_row(
    index_t capacity, const index_t* slot_columns, const double* slot_values,
    const index_t* row_ptr, index_t* col_idx, double* values, index_t i) {
  const std::int64_t from = static_cast<std::int64_t>(i) * capacity - row_ptr[i];
  for (index_t q = row_ptr[i]; q < row_ptr[i + 1]; ++q) {
    col_idx[q] = slot_columns[from + q];
    values[q] = slot_values[from + q];
  }
}

/// Calls f(l, a_kl) for the coarse points l of S_k in column order.
template <class F>
KRYFLOW_HOST_DEVICE void for_strong_coarse(const MatrixView& a, const PatternView& s,
                                           const index_t* cf, index_t k, F f) {
  index_t e = a.pattern.row_ptr[k];
  for (index_t q = s.row_ptr[k]; q < s.row_ptr[k + 1]; ++q) {
    const index_t l = s.col_idx[q];
    while (a.pattern.col_idx[e] != l) ++e;  // S_k is a subset of row k's columns
    if (cf[l] == kCoarse) f(l, a.values[e]);
  }
}

/// Matrix-product extended+i (InterpolationKind::mm_extended_i): beta_k, the sum of a_kl over
/// the coarse points l of S_k in column order (0 for a coarse row k).
KRYFLOW_HOST_DEVICE inline double strong_coarse_sum(const MatrixView& a, const PatternView& s,
                                                    const index_t* cf, index_t k) {
  double sum = 0.0;
  if (cf[k] != kCoarse) for_strong_coarse(a, s, cf, k, [&](index_t, double v) { sum += v; });
  return sum;
}

/// For a fine point k of S_i in matrix-product extended+i (mm_extended_left_row): a_ki when i
/// is in S_k (else 0) and d_ik = beta_k + that a_ki, beta_k = coarse_sum[k].
struct MmExtendedCoupling {
  double a_ki = 0.0;
  double d = 0.0;
};
KRYFLOW_HOST_DEVICE inline MmExtendedCoupling mm_extended_coupling(const MatrixView& a,
                                                                   const PatternView& s,
                                                                   const double* coarse_sum,
                                                                   index_t i, index_t k) {
  const index_t r = sorted_lower_bound(s.col_idx, s.row_ptr[k], s.row_ptr[k + 1], i);
  const bool influences = r < s.row_ptr[k + 1] && s.col_idx[r] == i;
  const double a_ki = influences ? sorted_entry(a, k, i) : 0.0;
  return {a_ki, coarse_sum[k] + a_ki};
}

/// Row i of the left factor L (n x n) of matrix-product extended+i, P = L B
/// (InterpolationKind::mm_extended_i): a coarse row is {i} with 1; a fine row holds i and the
/// fine points k of S_i, in increasing column order, with
///   l_ii = -1 / t_i,   l_ik = -(a_ik / d_ik) / t_i  (0 when d_ik = 0),
///   d_ik = beta_k + a_ki [i in S_k],   t_i = (a_ii + sum of the weak a_in, n not in S_i, in
///   column order) + sum over k in column order of (a_ki [i in S_k] a_ik / d_ik, or a_ik when
///   d_ik = 0),
/// beta_k = coarse_sum[k] (strong_coarse_sum); l = 0 when t_i = 0. The pattern depends on S
/// and cf only (an entry whose d_ik = 0 is kept with 0). Calls emit(column, value) in
/// increasing column order.
template <class Emit>
KRYFLOW_HOST_DEVICE void mm_extended_left_row(const MatrixView& a, const PatternView& s,
                                              const index_t* cf, const double* coarse_sum,
                                              index_t i, Emit emit) {
  if (cf[i] == kCoarse) {
    emit(i, 1.0);
    return;
  }
  const index_t a_begin = a.pattern.row_ptr[i], a_end = a.pattern.row_ptr[i + 1];
  const index_t s_begin = s.row_ptr[i], s_end = s.row_ptr[i + 1];
  double t = 0.0;  // a_ii and the weak couplings
  for (index_t e = a_begin, q = s_begin; e < a_end; ++e) {
    const index_t j = a.pattern.col_idx[e];
    while (q < s_end && s.col_idx[q] < j) ++q;
    if (!(q < s_end && s.col_idx[q] == j)) t += a.values[e];
  }
  // f(k, a_ik, a_ki [i in S_k], d_ik) over the fine points k of S_i in column order
  const auto for_fine = [&](auto f) {
    index_t e = a_begin;
    for (index_t q = s_begin; q < s_end; ++q) {
      const index_t k = s.col_idx[q];
      while (a.pattern.col_idx[e] != k) ++e;  // S_i is a subset of row i's columns
      if (cf[k] == kCoarse) continue;
      const MmExtendedCoupling c = mm_extended_coupling(a, s, coarse_sum, i, k);
      f(k, a.values[e], c.a_ki, c.d);
    }
  };
  for_fine([&](index_t, double a_ik, double a_ki, double d) {
    t += d != 0.0 ? a_ki * (a_ik / d) : a_ik;
  });
  const double scale = t != 0.0 ? -1.0 / t : 0.0;
  bool diagonal = false;
  for_fine([&](index_t k, double a_ik, double, double d) {
    if (!diagonal && k > i) {
      emit(i, scale);
      diagonal = true;
    }
    emit(k, d != 0.0 ? scale * (a_ik / d) : 0.0);
  });
  if (!diagonal) emit(i, scale);
}

/// Entries of row i of L (mm_extended_left_row) and of B (mm_extended_right_row), from one walk
/// of S_i: 1 and 1 for a coarse row; 1 + the fine points of S_i and the coarse points of S_i for
/// a fine row.
struct MmExtendedCounts {
  index_t left = 1;
  index_t right = 1;
};
KRYFLOW_HOST_DEVICE inline MmExtendedCounts mm_extended_counts(const PatternView& s,
                                                               const index_t* cf, index_t i) {
  MmExtendedCounts c;
  if (cf[i] == kCoarse) return c;
  c.right = 0;
  for (index_t q = s.row_ptr[i]; q < s.row_ptr[i + 1]; ++q) {
    if (cf[s.col_idx[q]] == kCoarse) {
      ++c.right;
    } else {
      ++c.left;
    }
  }
  return c;
}

/// Row k of the right factor B (n x n_c) of matrix-product extended+i: a coarse row is
/// {coarse_index[k]} with 1; a fine row holds the coarse points l of S_k as coarse_index[l]
/// with a_kl. Calls emit(column, value) in increasing column order.
template <class Emit>
KRYFLOW_HOST_DEVICE void mm_extended_right_row(const MatrixView& a, const PatternView& s,
                                               const index_t* cf, const index_t* coarse_index,
                                               index_t k, Emit emit) {
  if (cf[k] == kCoarse) {
    emit(coarse_index[k], 1.0);
    return;
  }
  for_strong_coarse(a, s, cf, k, [&](index_t l, double v) { emit(coarse_index[l], v); });
}

/// Row i of L and of B of matrix-product extended+i (mm_extended_left_row,
/// mm_extended_right_row) written from their row pointers.
KRYFLOW_HOST_DEVICE inline void mm_extended_fill_row(
    const MatrixView& a, const PatternView& s, const index_t* cf, const index_t* coarse_index,
    const double* coarse_sum, const index_t* left_row_ptr, index_t* left_col_idx,
    double* left_values, const index_t* right_row_ptr, index_t* right_col_idx, double* right_values,
    index_t i) {
  index_t next = left_row_ptr[i];
  mm_extended_left_row(a, s, cf, coarse_sum, i, [&](index_t k, double v) {
    left_col_idx[next] = k;
    left_values[next++] = v;
  });
  next = right_row_ptr[i];
  mm_extended_right_row(a, s, cf, coarse_index, i, [&](index_t l, double v) {
    right_col_idx[next] = l;
    right_values[next++] = v;
  });
}

/// Most interpolatory points per row that the truncation of a computed prolongation selects in
/// registers (truncated_row, truncated_count); a larger max_elements_per_row takes kept_points.
inline constexpr int kRegisterKept = 8;

/// The max_elements_per_row largest points of a row that pass the cut, in kept_points' order
/// (larger |w| first, ties to the smaller k), found in one pass over the row for
/// max_elements_per_row <= kRegisterKept: a point joins a list sorted in that order before the
/// first entry of smaller magnitude (the points come in increasing k, so an equal magnitude
/// stays after the earlier point, and a NaN, which no comparison finds larger, goes last), and
/// the list keeps its first max_elements_per_row. `passing` counts the points that pass and
/// `passing_sum` sums their weights in column order. The kept set is kept_points' (its K-th
/// point in the same total order), so the kernels' bits are unchanged.
struct RegisterKept {
  index_t passing = 0;
  double passing_sum = 0.0;
  int size = 0;              // entries of the list
  index_t k[kRegisterKept];  // the points, best first
  double key[kRegisterKept];
};

KRYFLOW_HOST_DEVICE inline void collect_kept(const double* w, index_t m, double cut, int limit,
                                             RegisterKept& r) {
  for (index_t q = 0; q < m; ++q) {
    const double weight = magnitude(w[q]);
    if (!(weight >= cut)) continue;
    ++r.passing;
    r.passing_sum += w[q];
    if (limit <= 0) continue;
    int at = r.size;
    while (at > 0 && weight > r.key[at - 1]) --at;
    if (at >= limit) continue;
    for (int t = (r.size < limit ? r.size : limit - 1); t > at; --t) {
      r.k[t] = r.k[t - 1];
      r.key[t] = r.key[t - 1];
    }
    r.k[at] = q;
    r.key[at] = weight;
    if (r.size < limit) ++r.size;
  }
}

/// Row i of a computed prolongation p truncated: the entries kept_points keeps (weight and key
/// |w|; p.kind is not read), scaled by sum_all / sum_kept of the row's weights (both in column
/// order; no scaling when sum_kept = 0), so that the row sum stays (the rule of hypre's
/// truncation of its matrix-product interpolations). Calls emit(column, value) in column order.
/// Up to kRegisterKept points per row in two passes over the row (RegisterKept), else by
/// kept_points: the same bits.
template <class Emit>
KRYFLOW_HOST_DEVICE void truncated_row(const MatrixView& p, const InterpolationParameters& params,
                                       index_t i, Emit emit) {
  const index_t begin = p.pattern.row_ptr[i];
  const index_t m = p.pattern.row_ptr[i + 1] - begin;
  const double* w = p.values + begin;
  const index_t* columns = p.pattern.col_idx + begin;
  if (params.max_elements_per_row > kRegisterKept) {
    const auto weight = [&](index_t k) { return magnitude(w[k]); };
    double total = 0.0, kept = 0.0;
    for (index_t k = 0; k < m; ++k) total += w[k];
    kept_points(params, m, weight, weight, [&](index_t k) { kept += w[k]; });
    const double scale = kept != 0.0 ? total / kept : 1.0;
    kept_points(params, m, weight, weight, [&](index_t k) { emit(columns[k], w[k] * scale); });
    return;
  }
  double total = 0.0, largest = 0.0;
  for (index_t k = 0; k < m; ++k) {
    total += w[k];
    largest = larger(largest, magnitude(w[k]));
  }
  const double cut = params.truncation_factor * largest;
  RegisterKept r;
  collect_kept(w, m, cut, params.max_elements_per_row, r);
  if (params.max_elements_per_row > 0 && r.passing > params.max_elements_per_row) {
    // The list in column order (insertion sort of at most kRegisterKept points).
    for (int t = 1; t < r.size; ++t) {
      const index_t q = r.k[t];
      int u = t;
      for (; u > 0 && r.k[u - 1] > q; --u) r.k[u] = r.k[u - 1];
      r.k[u] = q;
    }
    double kept = 0.0;
    for (int t = 0; t < r.size; ++t) kept += w[r.k[t]];
    const double scale = kept != 0.0 ? total / kept : 1.0;
    for (int t = 0; t < r.size; ++t) emit(columns[r.k[t]], w[r.k[t]] * scale);
    return;
  }
  const double scale = r.passing_sum != 0.0 ? total / r.passing_sum : 1.0;
  for (index_t k = 0; k < m; ++k) {
    if (magnitude(w[k]) >= cut) emit(columns[k], w[k] * scale);
  }
}

/// Entries of row i that truncated_row keeps: the points passing the cut, at most
/// max_elements_per_row of them (kept_points keeps exactly that many when more pass).
KRYFLOW_HOST_DEVICE inline index_t truncated_count(const MatrixView& p,
                                                   const InterpolationParameters& params,
                                                   index_t i) {
  const index_t begin = p.pattern.row_ptr[i];
  const index_t m = p.pattern.row_ptr[i + 1] - begin;
  const double* w = p.values + begin;
  double largest = 0.0;
  for (index_t k = 0; k < m; ++k) largest = larger(largest, magnitude(w[k]));
  const double cut = params.truncation_factor * largest;
  index_t passing = 0;
  for (index_t k = 0; k < m; ++k) passing += magnitude(w[k]) >= cut ? 1 : 0;
  return params.max_elements_per_row > 0 && passing > params.max_elements_per_row
             ? static_cast<index_t>(params.max_elements_per_row)
             : passing;
}

/// truncated_row's values on the fixed pattern t (value-only re-setup): row i of t lists the
/// columns truncated_row kept from row i of p; the same sums in the same order, so the same bits
/// when p is the one t was truncated from. emit(value) in t's order.
template <class Emit>
KRYFLOW_HOST_DEVICE void truncated_row_values(const MatrixView& p, const PatternView& t, index_t i,
                                              Emit emit) {
  const index_t begin = p.pattern.row_ptr[i], end = p.pattern.row_ptr[i + 1];
  const auto value = [&](index_t j) {
    const index_t q = sorted_lower_bound(p.pattern.col_idx, begin, end, j);
    return q < end && p.pattern.col_idx[q] == j ? p.values[q] : 0.0;
  };
  double total = 0.0, kept = 0.0;
  for (index_t q = begin; q < end; ++q) total += p.values[q];
  for (index_t q = t.row_ptr[i]; q < t.row_ptr[i + 1]; ++q) kept += value(t.col_idx[q]);
  const double scale = kept != 0.0 ? total / kept : 1.0;
  for (index_t q = t.row_ptr[i]; q < t.row_ptr[i + 1]; ++q) emit(value(t.col_idx[q]) * scale);
}

}  // namespace kryflow::kernels::amg::rows
