// OpenMP AMG setup kernels: rows in parallel (each thread with its own row scratch), PMIS rounds
// in two parallel phases; the greedy splitting is sequential by definition.
#include <atomic>
#include <cstdint>
#include <vector>

#include "kernels/amg/amg.hpp"
#include "kernels/amg/amg_rows.hpp"
#include "kernels/backend/parallel.hpp"

namespace kryflow::kernels::amg::cpu {
namespace {

using size_type = std::int64_t;

/// Calls body(i, scratch) for i in [0, n) in parallel, `work` elements in all; each thread owns
/// one default-constructed Scratch.
template <class Scratch, class Body>
void for_each_row(const Backend& backend, size_type work, size_type n, Body body) {
  const int threads = parallel::threads_for(backend, work);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    Scratch scratch;
#pragma omp for schedule(dynamic, parallel::chunk_for(n, threads))
    for (size_type i = 0; i < n; ++i) body(static_cast<index_t>(i), scratch);
  }
}

struct NoScratch {};

size_type entries(const PatternView& p) {
  return p.row_ptr != nullptr ? p.row_ptr[p.num_rows] : 0;  // null: S^T of a symmetric S
}

/// As the reference: whether undecided row i beats its undecided neighbours in `graph`.
bool beats_neighbours(const PatternView& graph, Span<const index_t> cf,
                      const std::vector<double>& w, index_t i) {
  for (index_t q = graph.row_ptr[i]; q < graph.row_ptr[i + 1]; ++q) {
    const index_t j = graph.col_idx[q];
    if (j != i && cf[j] < 0 && (w[j] > w[i] || (w[j] == w[i] && j > i))) return false;
  }
  return true;
}

}  // namespace

void strength_count(const Backend& backend, const MatrixView& a, const StrengthParameters& p,
                    Span<index_t> counts) {
  for_each_row<NoScratch>(backend, entries(a.pattern), a.pattern.num_rows,
                          [&](index_t i, NoScratch&) {
                            index_t count = 0;
                            rows::strong_dependencies(a, p, i, [&](index_t, double) { ++count; });
                            counts[i] = count;
                          });
}

void strength_fill(const Backend& backend, const MatrixView& a, const StrengthParameters& p,
                   const index_t* s_row_ptr, index_t* s_col_idx) {
  for_each_row<NoScratch>(
      backend, entries(a.pattern), a.pattern.num_rows, [&](index_t i, NoScratch&) {
        index_t next = s_row_ptr[i];
        rows::strong_dependencies(a, p, i, [&](index_t j, double) { s_col_idx[next++] = j; });
      });
}

void greedy_splitting(const Backend& backend, const PatternView& s, Span<index_t> cf) {
  reference::greedy_splitting(backend, s, cf);
}

namespace {

/// As the reference's pmis_from: PMIS with the rows of `first` (or none) as its first
/// independent set.
void pmis_from(const Backend& backend, const PatternView& s, const PatternView& st,
               std::uint64_t seed, const unsigned char* first, Span<index_t> cf) {
  const size_type n = s.num_rows;
  const size_type work = entries(s) + entries(st);
  std::vector<double> w(static_cast<std::size_t>(n));
  std::vector<char> selected(static_cast<std::size_t>(n), 0);
  parallel::for_each(backend, work, n, [&](size_type i) {
    const index_t influences = st.row_ptr[i + 1] - st.row_ptr[i];
    w[i] = influences + pmis_random(seed, static_cast<index_t>(i));
    cf[i] = influences == 0 ? kFine : -1;
    if (first != nullptr) selected[i] = static_cast<char>(first[i]);
  });
  std::vector<char> changed(static_cast<std::size_t>(n), 0);
  bool seeded = first != nullptr;
  bool any_undecided = true;
  while (any_undecided) {
    if (!seeded) {
      parallel::for_each(backend, work, n, [&](size_type i) {
        const auto row = static_cast<index_t>(i);
        selected[i] =
            cf[i] < 0 && beats_neighbours(s, cf, w, row) && beats_neighbours(st, cf, w, row);
      });
    }
    seeded = false;
    parallel::for_each(backend, n, n, [&](size_type i) {
      if (selected[i]) cf[i] = kCoarse;
    });
    parallel::for_each(backend, work, n, [&](size_type i) {
      changed[i] = 0;
      if (cf[i] >= 0) return;
      for (index_t q = s.row_ptr[i]; q < s.row_ptr[i + 1]; ++q) {
        if (cf[s.col_idx[q]] == kCoarse) {
          changed[i] = 1;
          return;
        }
      }
    });
    any_undecided = false;
    for (size_type i = 0; i < n; ++i) {
      if (changed[i]) cf[i] = kFine;
      any_undecided = any_undecided || cf[i] < 0;
    }
  }
}

}  // namespace

void pmis_splitting(const Backend& backend, const PatternView& s, const PatternView& st,
                    std::uint64_t seed, Span<index_t> cf) {
  pmis_from(backend, s, st, seed, nullptr, cf);
}

void hmis_splitting(const Backend& backend, const PatternView& s, const PatternView& st,
                    std::uint64_t seed, Span<index_t> cf) {
  const size_type n = s.num_rows;
  std::vector<index_t> lambda(static_cast<std::size_t>(n));
  std::vector<signed char> state(static_cast<std::size_t>(n));
  std::vector<unsigned char> first(static_cast<std::size_t>(n));
  const size_type domains = (n + kHmisDomainRows - 1) / kHmisDomainRows;
  // A domain's pass costs about its rows times its coarse rows (each step scans the domain).
  parallel::for_each(backend, n * kHmisDomainRows / 4, domains, [&](size_type d) {
    const auto lo = static_cast<index_t>(d * kHmisDomainRows);
    const index_t hi = n - lo < kHmisDomainRows ? static_cast<index_t>(n) : lo + kHmisDomainRows;
    rows::hmis_domain_pass(s, st, seed, lo, hi, lambda.data() + lo, state.data() + lo,
                           first.data() + lo);
  });
  pmis_from(backend, s, st, seed, first.data(), cf);
}

void coarse_points(const Backend& backend, Span<const index_t> cf, Span<const index_t> coarse_index,
                   Span<index_t> coarse_points) {
  const auto n = static_cast<size_type>(cf.size());
  parallel::for_each(backend, n, n, [&](size_type i) {
    if (cf[i] == kCoarse) coarse_points[coarse_index[i]] = static_cast<index_t>(i);
  });
}

void interpolation_count(const Backend& backend, const MatrixView& a, const PatternView& s,
                         Span<const index_t> cf, const InterpolationParameters& p,
                         Span<index_t> counts) {
  for_each_row<rows::InterpolationRow>(
      backend, entries(a.pattern), a.pattern.num_rows, [&](index_t i, rows::InterpolationRow& row) {
        rows::PointsView points = row.view(rows::point_capacity(s, cf, p.kind, i));
        rows::interpolation_row(a, s, cf, p, i, points, false);
        counts[i] = points.size;
      });
}

void interpolation_fill(const Backend& backend, const MatrixView& a, const PatternView& s,
                        Span<const index_t> cf, Span<const index_t> coarse_index,
                        const InterpolationParameters& p, const index_t* p_row_ptr,
                        index_t* p_col_idx, double* p_values) {
  for_each_row<rows::InterpolationRow>(
      backend, entries(a.pattern), a.pattern.num_rows, [&](index_t i, rows::InterpolationRow& row) {
        rows::PointsView points = row.view(rows::point_capacity(s, cf, p.kind, i));
        rows::interpolation_row(a, s, cf, p, i, points);
        for (index_t k = 0; k < points.size; ++k) {
          p_col_idx[p_row_ptr[i] + k] = coarse_index[points.columns[k]];
          p_values[p_row_ptr[i] + k] = points.weights[k];
        }
      });
}

void interpolation_values(const Backend& backend, const MatrixView& a, const PatternView& s,
                          Span<const index_t> cf, Span<const index_t> coarse_points,
                          InterpolationKind kind, const PatternView& prolongation,
                          double* p_values) {
  for_each_row<rows::InterpolationRow>(
      backend, entries(a.pattern), a.pattern.num_rows, [&](index_t i, rows::InterpolationRow& row) {
        rows::PointsView points = row.view(prolongation.row_ptr[i + 1] - prolongation.row_ptr[i]);
        rows::fixed_pattern_row(a, s, cf, coarse_points, kind, prolongation, i, points);
        for (index_t k = 0; k < points.size; ++k) {
          p_values[prolongation.row_ptr[i] + k] = points.weights[k];
        }
      });
}

void mis2_roots(const Backend& backend, const PatternView& s, const PatternView& st,
                std::uint64_t seed, Span<index_t> roots) {
  const size_type n = s.num_rows;
  const size_type work = entries(s) + entries(st);
  std::vector<std::uint64_t> state(static_cast<std::size_t>(n), kMis2Undecided);
  std::vector<std::uint64_t> first(state.size());
  const auto key = [&](index_t j) { return mis2_key(state[j], seed, j); };
  const auto first_key = [&](index_t j) { return first[j]; };
  for (bool undecided = n > 0; undecided;) {
    parallel::for_each(backend, work, n, [&](size_type i) {
      first[i] = rows::largest_neighbour_key(s, st, static_cast<index_t>(i), key);
    });
    // A row writes only its own state, read by no other row in this pass.
    parallel::for_each(backend, work, n, [&](size_type i) {
      if (state[i] != kMis2Undecided) return;
      const auto row = static_cast<index_t>(i);
      const std::uint64_t largest = rows::largest_neighbour_key(s, st, row, first_key);
      if (largest == key(row)) {
        state[i] = kMis2In;
      } else if ((largest >> 62) == kMis2In) {
        state[i] = kMis2Out;
      }
    });
    undecided = false;
    for (size_type i = 0; i < n && !undecided; ++i) undecided = state[i] == kMis2Undecided;
  }
  parallel::for_each(backend, n, n, [&](size_type i) { roots[i] = state[i] == kMis2In ? 1 : 0; });
}

index_t mis2_aggregates(const Backend& backend, const PatternView& s, const PatternView& st,
                        std::uint64_t seed, Span<const index_t> roots,
                        Span<const index_t> root_index, Span<index_t> aggregate) {
  const size_type n = s.num_rows;
  const size_type work = entries(s) + entries(st);
  std::vector<index_t> first(static_cast<std::size_t>(n)), adjacent(first.size());
  parallel::for_each(backend, n, n,
                     [&](size_type i) { first[i] = roots[i] != 0 ? root_index[i] : -1; });
  parallel::for_each(backend, work, n, [&](size_type i) {
    adjacent[i] = first[i] >= 0 ? first[i]
                                : rows::aggregate_of_largest_neighbour(
                                      s, st, seed, static_cast<index_t>(i), first.data());
  });
  parallel::for_each(backend, work, n, [&](size_type i) {
    aggregate[i] = adjacent[i] >= 0 ? adjacent[i]
                                    : rows::aggregate_of_largest_neighbour(
                                          s, st, seed, static_cast<index_t>(i), adjacent.data());
  });
  index_t left = 0;
  for (size_type i = 0; i < n; ++i) left += aggregate[i] < 0 ? 1 : 0;
  return left;
}

void tentative_prolongation(const Backend& backend, Span<const index_t> aggregate, index_t* row_ptr,
                            index_t* col_idx, double* values) {
  const auto n = static_cast<size_type>(aggregate.size());
  parallel::for_each(backend, n, n, [&](size_type i) {
    row_ptr[i] = static_cast<index_t>(i);
    col_idx[i] = aggregate[i];
    values[i] = 1.0;
  });
  row_ptr[n] = static_cast<index_t>(n);
}

void gershgorin_bound(const Backend& backend, const MatrixView& a, double* bound) {
  const size_type n = a.pattern.num_rows;
  std::vector<double> row(static_cast<std::size_t>(n));
  parallel::for_each(backend, entries(a.pattern), n, [&](size_type i) {
    row[i] = rows::gershgorin_row(a, static_cast<index_t>(i));
  });
  double largest = 0.0;
  for (const double r : row) largest = rows::larger(largest, r);
  *bound = largest;
}

void restriction_values(const Backend& backend, const MatrixView& p, const PatternView& r,
                        double* r_values) {
  parallel::for_each(backend, entries(r), r.num_rows, [&](size_type c) {
    for (index_t k = r.row_ptr[c]; k < r.row_ptr[c + 1]; ++k) {
      r_values[k] = rows::entry_value(p, r.col_idx[k], static_cast<index_t>(c));
    }
  });
}

void smoothed_aggregation_count(const Backend& backend, const PatternView& a,
                                Span<const index_t> aggregate, Span<index_t> counts) {
  parallel::for_each(backend, entries(a), a.num_rows, [&](size_type i) {
    counts[i] = rows::distinct_aggregate_count(a, aggregate.data(), static_cast<index_t>(i));
  });
}

void smoothed_aggregation_fill(const Backend& backend, const PatternView& a,
                               Span<const index_t> aggregate, const index_t* row_ptr,
                               index_t* col_idx) {
  parallel::for_each(backend, entries(a), a.num_rows, [&](size_type i) {
    rows::distinct_aggregate_fill(a, aggregate.data(), static_cast<index_t>(i),
                                  col_idx + row_ptr[i]);
  });
}

void smoothed_aggregation_values(const Backend& backend, const MatrixView& a, double factor,
                                 const double* bound, Span<const index_t> aggregate,
                                 const PatternView& p, double* values) {
  const double omega = factor / *bound;
  parallel::for_each(backend, entries(a.pattern), a.pattern.num_rows, [&](size_type i) {
    rows::smoothed_aggregation_row(a, omega, aggregate.data(), p, static_cast<index_t>(i), values);
  });
}

void select_pattern_count(const Backend& backend, const PatternView& a, Span<const index_t> cf,
                          Span<const index_t> coarse_index, bool coarse_rows, bool coarse_columns,
                          Span<index_t> counts) {
  parallel::for_each(backend, entries(a), a.num_rows, [&](size_type r) {
    const auto i = static_cast<index_t>(r);
    if (coarse_rows && cf[i] != kCoarse) return;
    index_t count = 0;
    rows::select_row(a, cf.data(), coarse_index.data(), coarse_columns, i,
                     [&](index_t) { ++count; });
    counts[coarse_rows ? coarse_index[i] : i] = count;
  });
}

void select_pattern_fill(const Backend& backend, const PatternView& a, Span<const index_t> cf,
                         Span<const index_t> coarse_index, bool coarse_rows, bool coarse_columns,
                         const index_t* row_ptr, index_t* col_idx) {
  parallel::for_each(backend, entries(a), a.num_rows, [&](size_type r) {
    const auto i = static_cast<index_t>(r);
    if (coarse_rows && cf[i] != kCoarse) return;
    index_t next = row_ptr[coarse_rows ? coarse_index[i] : i];
    rows::select_row(a, cf.data(), coarse_index.data(), coarse_columns, i,
                     [&](index_t j) { col_idx[next++] = j; });
  });
}

void distance_two_strength_count(const Backend& backend, const PatternView& s,
                                 const PatternView& ss, Span<const index_t> cf,
                                 Span<const index_t> coarse_index, Span<index_t> counts) {
  parallel::for_each(backend, entries(s) + entries(ss), s.num_rows, [&](size_type r) {
    const auto i = static_cast<index_t>(r);
    if (cf[i] != kCoarse) return;
    index_t count = 0;
    rows::distance_two_coarse_row(s, ss, cf.data(), coarse_index.data(), i,
                                  [&](index_t) { ++count; });
    counts[coarse_index[i]] = count;
  });
}

void distance_two_strength_fill(const Backend& backend, const PatternView& s, const PatternView& ss,
                                Span<const index_t> cf, Span<const index_t> coarse_index,
                                const index_t* row_ptr, index_t* col_idx) {
  parallel::for_each(backend, entries(s) + entries(ss), s.num_rows, [&](size_type r) {
    const auto i = static_cast<index_t>(r);
    if (cf[i] != kCoarse) return;
    index_t next = row_ptr[coarse_index[i]];
    rows::distance_two_coarse_row(s, ss, cf.data(), coarse_index.data(), i,
                                  [&](index_t c) { col_idx[next++] = c; });
  });
}

void aggressive_splitting(const Backend& backend, Span<const index_t> first,
                          Span<const index_t> first_index, Span<const index_t> second,
                          Span<index_t> cf) {
  const auto n = static_cast<size_type>(first.size());
  parallel::for_each(backend, n, n, [&](size_type i) {
    cf[i] = first[i] == kCoarse && second[first_index[i]] == kCoarse ? kCoarse : kFine;
  });
}

index_t interpolation_passes(const Backend& backend, const PatternView& s, Span<const index_t> cf,
                             Span<index_t> pass) {
  const size_type n = s.num_rows;
  parallel::for_each(backend, n, n, [&](size_type i) { pass[i] = cf[i] == kCoarse ? 0 : -1; });
  std::vector<char> reached(static_cast<std::size_t>(n), 0);
  index_t last = 0;
  for (index_t p = 1; p <= s.num_rows; ++p) {
    parallel::for_each(backend, entries(s), n, [&](size_type i) {
      reached[i] =
          pass[i] < 0 && rows::reaches_pass(s, pass.data(), static_cast<index_t>(i), p - 1);
    });
    bool assigned = false;
    for (size_type i = 0; i < n; ++i) {
      if (!reached[i]) continue;
      pass[i] = p;
      assigned = true;
    }
    if (!assigned) break;
    last = p;
  }
  return last;
}

void multipass_count(const Backend& backend, const PatternView& s, Span<const index_t> pass,
                     Span<index_t> counts) {
  parallel::for_each(backend, entries(s), s.num_rows, [&](size_type i) {
    counts[i] = rows::multipass_count_row(s, pass.data(), static_cast<index_t>(i));
  });
}

void multipass_fill(const Backend& backend, const MatrixView& a, const PatternView& s,
                    Span<const index_t> pass, InterpolationKind kind, const index_t* row_ptr,
                    index_t* col_idx, double* values) {
  parallel::for_each(backend, entries(a.pattern), s.num_rows, [&](size_type r) {
    index_t next = row_ptr[r];
    rows::multipass_row(a, s, pass.data(), PatternView{}, kind, static_cast<index_t>(r),
                        [&](index_t k, double w) {
                          col_idx[next] = k;
                          if (values != nullptr) values[next] = w;
                          ++next;
                        });
  });
}

void multipass_order(const Backend& backend, Span<const index_t> pass, index_t passes,
                     Span<index_t> order, Span<index_t> offsets) {
  reference::multipass_order(backend, pass, passes, order, offsets);  // O(n), sequential
}

void multipass_prolongation_values(const Backend& backend, const MatrixView& a,
                                   Span<const index_t> pass, index_t passes,
                                   Span<const index_t> order, Span<const index_t> offsets,
                                   InterpolationKind kind, const PatternView& w,
                                   const PatternView& p, double* values) {
  for (index_t t = 0; t <= passes; ++t) {
    const index_t begin = offsets[t + 1];
    const auto rows = static_cast<size_type>(offsets[t + 2] - begin);
    parallel::for_each(backend, rows * 8, rows, [&](size_type r) {
      rows::multipass_prolongation_row(a, pass.data(), w, kind, p, values,
                                       order[begin + static_cast<index_t>(r)]);
    });
  }
}

bool multipass_prolongation_slots(const Backend& backend, const MatrixView& a,
                                  Span<const index_t> pass, index_t passes,
                                  Span<const index_t> order, Span<const index_t> offsets,
                                  InterpolationKind kind, const PatternView& w,
                                  Span<const index_t> coarse_index, index_t capacity,
                                  index_t* slot_columns, double* slot_values,
                                  Span<index_t> counts) {
  for (index_t t = -1; t <= passes; ++t) {  // t = -1: the rows without a pass, no entries
    const index_t begin = offsets[t + 1];
    const auto rows = static_cast<size_type>(offsets[t + 2] - begin);
    std::atomic<bool> fits{true};
    parallel::for_each(backend, rows * 8, rows, [&](size_type r) {
      const index_t i = order[begin + static_cast<index_t>(r)];
      counts[i] = rows::multipass_slot_row(a, pass.data(), w, kind, coarse_index.data(), capacity,
                                           slot_columns, slot_values, counts.data(), i);
      if (counts[i] > capacity) fits.store(false, std::memory_order_relaxed);
    });
    if (!fits.load()) return false;
  }
  return true;
}

void multipass_slots_compact(const Backend& backend, index_t n, index_t capacity,
                             const index_t* slot_columns, const double* slot_values,
                             const index_t* row_ptr, index_t* col_idx, double* values) {
  parallel::for_each(
      backend, static_cast<size_type>(n) * 4, static_cast<size_type>(n), [&](size_type r) {
        rows::multipass_slots_compact_row(capacity, slot_columns, slot_values, row_ptr, col_idx,
                                          values, static_cast<index_t>(r));
      });
}

void mm_extended_coarse_sums(const Backend& backend, const MatrixView& a, const PatternView& s,
                             Span<const index_t> cf, Span<double> coarse_sum) {
  parallel::for_each(backend, entries(s), s.num_rows, [&](size_type k) {
    coarse_sum[k] = rows::strong_coarse_sum(a, s, cf.data(), static_cast<index_t>(k));
  });
}

void mm_extended_count(const Backend& backend, const PatternView& s, Span<const index_t> cf,
                       Span<index_t> left_counts, Span<index_t> right_counts) {
  parallel::for_each(backend, entries(s), s.num_rows, [&](size_type r) {
    const auto i = static_cast<index_t>(r);
    const rows::MmExtendedCounts c = rows::mm_extended_counts(s, cf.data(), i);
    left_counts[i] = c.left;
    right_counts[i] = c.right;
  });
}

void mm_extended_fill(const Backend& backend, const MatrixView& a, const PatternView& s,
                      Span<const index_t> cf, Span<const index_t> coarse_index,
                      Span<const double> coarse_sum, const index_t* left_row_ptr,
                      index_t* left_col_idx, double* left_values, const index_t* right_row_ptr,
                      index_t* right_col_idx, double* right_values) {
  parallel::for_each(backend, entries(a.pattern), s.num_rows, [&](size_type r) {
    rows::mm_extended_fill_row(a, s, cf.data(), coarse_index.data(), coarse_sum.data(),
                               left_row_ptr, left_col_idx, left_values, right_row_ptr,
                               right_col_idx, right_values, static_cast<index_t>(r));
  });
}

void truncation_count(const Backend& backend, const MatrixView& p,
                      const InterpolationParameters& params, Span<index_t> counts) {
  parallel::for_each(backend, entries(p.pattern), p.pattern.num_rows, [&](size_type i) {
    counts[i] = rows::truncated_count(p, params, static_cast<index_t>(i));
  });
}

void truncation_fill(const Backend& backend, const MatrixView& p,
                     const InterpolationParameters& params, const index_t* row_ptr,
                     index_t* col_idx, double* values) {
  parallel::for_each(backend, entries(p.pattern), p.pattern.num_rows, [&](size_type r) {
    index_t next = row_ptr[r];
    rows::truncated_row(p, params, static_cast<index_t>(r), [&](index_t j, double v) {
      col_idx[next] = j;
      values[next++] = v;
    });
  });
}

void truncation_values(const Backend& backend, const MatrixView& p, const PatternView& t,
                       double* values) {
  parallel::for_each(backend, entries(p.pattern), t.num_rows, [&](size_type r) {
    index_t next = t.row_ptr[r];
    rows::truncated_row_values(p, t, static_cast<index_t>(r),
                               [&](double v) { values[next++] = v; });
  });
}

}  // namespace kryflow::kernels::amg::cpu
