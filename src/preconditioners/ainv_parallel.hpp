// The host biconjugation of AINV (approximate_inverse.hpp), private to the library: the column
// and workspace types and the update step, shared by the sequential form
// (approximate_inverse.cpp) and the parallel form by domain decomposition (ainv_parallel.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <stop_token>
#include <vector>

#include "kryflow/preconditioners/approximate_inverse.hpp"

namespace kryflow::ainv_detail {

struct Entry {
  index_t row;
  double value;
};
using Column = std::vector<Entry>;  // increasing rows; the diagonal (row j of column j) last

/// A sparse matrix by rows on the host (the scaled A or its transpose).
struct HostCsr {
  std::vector<index_t> ptr, col;
  std::vector<double> val;
};

HostCsr transpose(index_t n, const HostCsr& a);

/// One set of columns (Z or W) with the row index that finds the columns j holding row k
/// (rows[k]: may hold columns whose entry in row k was dropped since, and columns already
/// done; both are skipped and pruned when met).
struct Factor {
  std::vector<Column> columns;
  std::vector<std::vector<index_t>> rows;
  Factor() = default;
  explicit Factor(index_t n)
      : columns(static_cast<std::size_t>(n)), rows(static_cast<std::size_t>(n)) {
    for (index_t j = 0; j < n; ++j) {
      columns[j].push_back({j, 1.0});
      rows[j].push_back(j);
    }
  }
};

/// The work of one step on the host: a dense accumulator with its support, and markers.
struct Workspace {
  std::vector<double> dense;
  std::vector<index_t> support;
  std::vector<index_t> mark;
  std::vector<index_t> candidates;
  std::vector<index_t> candidate_mark;
  Column merged;
  explicit Workspace(index_t n)
      : dense(static_cast<std::size_t>(n), 0.0),
        mark(static_cast<std::size_t>(n), -1),
        candidate_mark(static_cast<std::size_t>(n), -1) {}
  /// dense = M x for the sparse column x (M by rows of M^T: column k of M is row k of mt).
  void product(const HostCsr& mt, const Column& x, index_t step) {
    support.clear();
    for (const Entry& e : x) {
      for (index_t q = mt.ptr[e.row]; q < mt.ptr[e.row + 1]; ++q) {
        const index_t m = mt.col[q];
        if (mark[m] != step) {
          mark[m] = step;
          dense[m] = 0.0;
          support.push_back(m);
        }
        dense[m] += mt.val[q] * e.value;
      }
    }
  }
  double dot(const Column& x) const {
    double sum = 0.0;
    for (const Entry& e : x) sum += e.value * dense[e.row];
    return sum;
  }
  void clear() {
    for (index_t m : support) dense[m] = 0.0;
  }
};

/// Keeps the p largest entries of `column` besides its diagonal (the last entry), ties to the
/// lower row; nothing when p < 0 or the column is short enough.
void keep_largest(Column& column, index_t p);

/// Makes the columns j > i of `factor` that meet the support of `dense` conjugate to column i:
/// x_j -= (x_j^T dense / pivot) x_i, then drops x_j's entries below tau and keeps its p largest
/// (limit[j]; -1: all).
void update_columns(Factor& factor, index_t i, Workspace& work, double pivot, double tau,
                    const std::vector<index_t>& limit);

/// The pivot of step i, replaced by `fallback` (a_ii of the scaled matrix, +-1) when it is
/// (numerically) zero, not finite, or (symmetric) of the other sign; i is then listed in
/// `shifted`.
double checked_pivot(double pivot, double fallback, bool symmetric, index_t i,
                     std::vector<index_t>& shifted);

/// Steps of the biconjugation between two looks at the stop token.
inline constexpr index_t kStopPollRows = 1024;

/// Steps first .. last - 1 of the right-looking biconjugation (Benzi, Meyer, Tuma 1996; SAINV,
/// Benzi, Cullum, Tuma 2000, when w is null) on the columns of z (and w): u = A z_i from the
/// rows of `at` (A^T), and for w also y = A^T w_i from the rows of `a`; the pivot z_i^T u (w_i^T
/// u) checked by checked_pivot against fallback(i) and stored in pivots[i]; then the later
/// columns made conjugate to column i by update_columns (w with u and z with y; z with u when
/// symmetric) with drop tolerance tau and the fill limits z_limit (w_limit). Shared by the
/// sequential form, the parallel form's interior blocks and its separator. Returns false when
/// `stop` was requested (looked at every kStopPollRows steps); the columns are then partial.
template <class Fallback>
bool conjugation_steps(const HostCsr& at, const HostCsr* a, Factor& z, Factor* w, index_t first,
                       index_t last, double tau, const std::vector<index_t>& z_limit,
                       const std::vector<index_t>& w_limit, Fallback fallback, double* pivots,
                       std::vector<index_t>& shifted, const std::stop_token& stop) {
  const auto n = static_cast<index_t>(z.columns.size());
  Workspace work(n);
  std::optional<Workspace> work_t;
  if (w != nullptr) work_t.emplace(n);
  for (index_t i = first; i < last; ++i) {
    if ((i - first) % kStopPollRows == 0 && stop.stop_requested()) return false;
    work.product(at, z.columns[i], i);
    if (w == nullptr) {
      const double pivot = checked_pivot(work.dot(z.columns[i]), fallback(i), true, i, shifted);
      pivots[i] = pivot;
      update_columns(z, i, work, pivot, tau, z_limit);
    } else {
      work_t->product(*a, w->columns[i], i);  // A^T w_i: column k of A^T is row k of A
      const double pivot = checked_pivot(work.dot(w->columns[i]), fallback(i), false, i, shifted);
      pivots[i] = pivot;
      update_columns(*w, i, work, pivot, tau, w_limit);
      update_columns(z, i, *work_t, pivot, tau, z_limit);
      work_t->clear();
    }
    work.clear();
  }
  return true;
}

/// The fewest rows for which ainv_factor runs the parallel form (below, the sequential one
/// whatever `threads` says): a smaller matrix factors in milliseconds.
inline constexpr index_t kParallelMinRows = 20000;

/// The threshold ainv_factor applies now: kParallelMinRows unless set_parallel_min_rows changed
/// it (tests of the parallel form on small matrices). Process-wide.
index_t parallel_min_rows() noexcept;
void set_parallel_min_rows(index_t rows) noexcept;

/// The parts (and threads) of AinvParameters::threads: 0: omp_get_max_threads(), 1 without
/// OpenMP; k > 0: k.
int resolve_parts(int threads) noexcept;

/// AINV by domain decomposition in `parts` >= 2 parts (ainv_parallel.cpp, AinvParameters::threads)
/// on ainv_factor's arguments: the factors of P A P^T with `permutation` set, AinvFactors{}
/// when `stop` was requested, and none when A fails one of ainv_factor's checks (a zero,
/// missing or non-finite diagonal entry, a non-finite value, or symmetry `symmetric` on a
/// nonsymmetric A), whose exception ainv_factor's sequential checks then raise.
std::optional<AinvFactors> factor_parallel(index_t n, const std::vector<index_t>& row_ptr,
                                           const std::vector<index_t>& col_idx,
                                           const std::vector<double>& values,
                                           const AinvParameters& parameters, int parts,
                                           std::stop_token stop);

}  // namespace kryflow::ainv_detail
