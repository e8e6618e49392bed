// Reference AMG setup kernels: single-threaded loops over the rows (the oracle).
#include <vector>

#include "kernels/amg/amg.hpp"
#include "kernels/amg/amg_rows.hpp"
#include "kernels/coloring/coloring.hpp"

namespace kryflow::kernels::amg::reference {

void strength_count(const Backend&, const MatrixView& a, const StrengthParameters& p,
                    Span<index_t> counts) {
  for (index_t i = 0; i < a.pattern.num_rows; ++i) {
    index_t count = 0;
    rows::strong_dependencies(a, p, i, [&](index_t, double) { ++count; });
    counts[i] = count;
  }
}

void strength_fill(const Backend&, const MatrixView& a, const StrengthParameters& p,
                   const index_t* s_row_ptr, index_t* s_col_idx) {
  for (index_t i = 0; i < a.pattern.num_rows; ++i) {
    index_t next = s_row_ptr[i];
    rows::strong_dependencies(a, p, i, [&](index_t j, double) { s_col_idx[next++] = j; });
  }
}

void greedy_splitting(const Backend&, const PatternView& s, Span<index_t> cf) {
  rows::greedy_split(s, cf.data());
}

namespace {

/// Whether undecided row i's weight beats every undecided neighbour's in `graph` (ties: the
/// larger index wins).
bool beats_neighbours(const PatternView& graph, Span<const index_t> cf,
                      const std::vector<double>& w, index_t i) {
  for (index_t q = graph.row_ptr[i]; q < graph.row_ptr[i + 1]; ++q) {
    const index_t j = graph.col_idx[q];
    if (j != i && cf[j] < 0 && (w[j] > w[i] || (w[j] == w[i] && j > i))) return false;
  }
  return true;
}

}  // namespace

namespace {

/// PMIS with the rows of `first` (n entries, or null) as its first independent set: PMIS's
/// weights and fine rows that influence no one, the rows of first coarse and the undecided rows
/// depending on them fine, then the rounds.
void pmis_from(const PatternView& s, const PatternView& st, std::uint64_t seed,
               const unsigned char* first, Span<index_t> cf) {
  const index_t n = s.num_rows;
  std::vector<double> w(static_cast<std::size_t>(n));
  index_t undecided = 0;
  for (index_t i = 0; i < n; ++i) {
    const index_t influences = st.row_ptr[i + 1] - st.row_ptr[i];
    w[i] = influences + pmis_random(seed, i);
    cf[i] = influences == 0 ? kFine : -1;
    undecided += influences == 0 ? 0 : 1;
  }
  std::vector<char> selected(static_cast<std::size_t>(n), 0);
  if (first != nullptr) {
    for (index_t i = 0; i < n; ++i) selected[i] = first[i];
  }
  bool seeded = first != nullptr;
  while (undecided > 0) {
    if (!seeded) {
      for (index_t i = 0; i < n; ++i) {
        selected[i] = cf[i] < 0 && beats_neighbours(s, cf, w, i) && beats_neighbours(st, cf, w, i);
      }
    }
    seeded = false;
    for (index_t i = 0; i < n; ++i) {
      if (selected[i]) {
        undecided -= cf[i] < 0 ? 1 : 0;
        cf[i] = kCoarse;
      }
    }
    for (index_t i = 0; i < n; ++i) {
      if (cf[i] >= 0) continue;
      for (index_t q = s.row_ptr[i]; q < s.row_ptr[i + 1]; ++q) {
        if (cf[s.col_idx[q]] == kCoarse) {
          cf[i] = kFine;
          --undecided;
          break;
        }
      }
    }
  }
}

}  // namespace

void pmis_splitting(const Backend&, const PatternView& s, const PatternView& st, std::uint64_t seed,
                    Span<index_t> cf) {
  pmis_from(s, st, seed, nullptr, cf);
}

void hmis_splitting(const Backend&, const PatternView& s, const PatternView& st, std::uint64_t seed,
                    Span<index_t> cf) {
  const index_t n = s.num_rows;
  std::vector<index_t> lambda(static_cast<std::size_t>(n));
  std::vector<signed char> state(static_cast<std::size_t>(n));
  std::vector<unsigned char> first(static_cast<std::size_t>(n));
  for (index_t lo = 0; lo < n; lo += kHmisDomainRows) {
    const index_t hi = n - lo < kHmisDomainRows ? n : lo + kHmisDomainRows;
    rows::hmis_domain_pass(s, st, seed, lo, hi, lambda.data() + lo, state.data() + lo,
                           first.data() + lo);
  }
  pmis_from(s, st, seed, first.data(), cf);
}

void coarse_points(const Backend&, Span<const index_t> cf, Span<const index_t> coarse_index,
                   Span<index_t> coarse_points) {
  for (std::size_t i = 0; i < cf.size(); ++i) {
    if (cf[i] == kCoarse) coarse_points[coarse_index[i]] = static_cast<index_t>(i);
  }
}

void interpolation_count(const Backend&, const MatrixView& a, const PatternView& s,
                         Span<const index_t> cf, const InterpolationParameters& p,
                         Span<index_t> counts) {
  rows::InterpolationRow row;
  for (index_t i = 0; i < a.pattern.num_rows; ++i) {
    rows::PointsView points = row.view(rows::point_capacity(s, cf, p.kind, i));
    rows::interpolation_row(a, s, cf, p, i, points, false);
    counts[i] = points.size;
  }
}

void interpolation_fill(const Backend&, const MatrixView& a, const PatternView& s,
                        Span<const index_t> cf, Span<const index_t> coarse_index,
                        const InterpolationParameters& p, const index_t* p_row_ptr,
                        index_t* p_col_idx, double* p_values) {
  rows::InterpolationRow row;
  for (index_t i = 0; i < a.pattern.num_rows; ++i) {
    rows::PointsView points = row.view(rows::point_capacity(s, cf, p.kind, i));
    rows::interpolation_row(a, s, cf, p, i, points);
    for (index_t k = 0; k < points.size; ++k) {
      p_col_idx[p_row_ptr[i] + k] = coarse_index[points.columns[k]];
      p_values[p_row_ptr[i] + k] = points.weights[k];
    }
  }
}

void interpolation_values(const Backend&, const MatrixView& a, const PatternView& s,
                          Span<const index_t> cf, Span<const index_t> coarse_points,
                          InterpolationKind kind, const PatternView& prolongation,
                          double* p_values) {
  rows::InterpolationRow row;
  for (index_t i = 0; i < a.pattern.num_rows; ++i) {
    rows::PointsView points = row.view(prolongation.row_ptr[i + 1] - prolongation.row_ptr[i]);
    rows::fixed_pattern_row(a, s, cf, coarse_points, kind, prolongation, i, points);
    for (index_t k = 0; k < points.size; ++k) {
      p_values[prolongation.row_ptr[i] + k] = points.weights[k];
    }
  }
}

void mis2_roots(const Backend&, const PatternView& s, const PatternView& st, std::uint64_t seed,
                Span<index_t> roots) {
  const index_t n = s.num_rows;
  std::vector<std::uint64_t> state(static_cast<std::size_t>(n), kMis2Undecided);
  std::vector<std::uint64_t> first(state.size());
  const auto key = [&](index_t j) { return mis2_key(state[j], seed, j); };
  const auto first_key = [&](index_t j) { return first[j]; };
  for (index_t undecided = n; undecided > 0;) {
    for (index_t i = 0; i < n; ++i) first[i] = rows::largest_neighbour_key(s, st, i, key);
    for (index_t i = 0; i < n; ++i) {
      if (state[i] != kMis2Undecided) continue;
      const std::uint64_t largest = rows::largest_neighbour_key(s, st, i, first_key);
      if (largest == key(i)) {
        state[i] = kMis2In;
        --undecided;
      } else if ((largest >> 62) == kMis2In) {
        state[i] = kMis2Out;
        --undecided;
      }
    }
  }
  for (index_t i = 0; i < n; ++i) roots[i] = state[i] == kMis2In ? 1 : 0;
}

index_t mis2_aggregates(const Backend&, const PatternView& s, const PatternView& st,
                        std::uint64_t seed, Span<const index_t> roots,
                        Span<const index_t> root_index, Span<index_t> aggregate) {
  const index_t n = s.num_rows;
  std::vector<index_t> first(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) first[i] = roots[i] != 0 ? root_index[i] : -1;
  std::vector<index_t> adjacent(first);
  for (index_t i = 0; i < n; ++i) {
    if (first[i] < 0)
      adjacent[i] = rows::aggregate_of_largest_neighbour(s, st, seed, i, first.data());
  }
  index_t left = 0;
  for (index_t i = 0; i < n; ++i) {
    aggregate[i] = adjacent[i] >= 0
                       ? adjacent[i]
                       : rows::aggregate_of_largest_neighbour(s, st, seed, i, adjacent.data());
    left += aggregate[i] < 0 ? 1 : 0;
  }
  return left;
}

void tentative_prolongation(const Backend&, Span<const index_t> aggregate, index_t* row_ptr,
                            index_t* col_idx, double* values) {
  const auto n = static_cast<index_t>(aggregate.size());
  for (index_t i = 0; i < n; ++i) {
    row_ptr[i] = i;
    col_idx[i] = aggregate[i];
    values[i] = 1.0;
  }
  row_ptr[n] = n;
}

void gershgorin_bound(const Backend&, const MatrixView& a, double* bound) {
  double largest = 0.0;
  for (index_t i = 0; i < a.pattern.num_rows; ++i) {
    largest = rows::larger(largest, rows::gershgorin_row(a, i));
  }
  *bound = largest;
}

void restriction_values(const Backend&, const MatrixView& p, const PatternView& r,
                        double* r_values) {
  for (index_t c = 0; c < r.num_rows; ++c) {
    for (index_t k = r.row_ptr[c]; k < r.row_ptr[c + 1]; ++k) {
      r_values[k] = rows::entry_value(p, r.col_idx[k], c);
    }
  }
}

void smoothed_aggregation_count(const Backend&, const PatternView& a, Span<const index_t> aggregate,
                                Span<index_t> counts) {
  for (index_t i = 0; i < a.num_rows; ++i) {
    counts[i] = rows::distinct_aggregate_count(a, aggregate.data(), i);
  }
}

void smoothed_aggregation_fill(const Backend&, const PatternView& a, Span<const index_t> aggregate,
                               const index_t* row_ptr, index_t* col_idx) {
  for (index_t i = 0; i < a.num_rows; ++i) {
    rows::distinct_aggregate_fill(a, aggregate.data(), i, col_idx + row_ptr[i]);
  }
}

void smoothed_aggregation_values(const Backend&, const MatrixView& a, double factor,
                                 const double* bound, Span<const index_t> aggregate,
                                 const PatternView& p, double* values) {
  const double omega = factor / *bound;
  for (index_t i = 0; i < a.pattern.num_rows; ++i) {
    rows::smoothed_aggregation_row(a, omega, aggregate.data(), p, i, values);
  }
}

void select_pattern_count(const Backend&, const PatternView& a, Span<const index_t> cf,
                          Span<const index_t> coarse_index, bool coarse_rows, bool coarse_columns,
                          Span<index_t> counts) {
  for (index_t i = 0; i < a.num_rows; ++i) {
    if (coarse_rows && cf[i] != kCoarse) continue;
    index_t count = 0;
    rows::select_row(a, cf.data(), coarse_index.data(), coarse_columns, i,
                     [&](index_t) { ++count; });
    counts[coarse_rows ? coarse_index[i] : i] = count;
  }
}

void select_pattern_fill(const Backend&, const PatternView& a, Span<const index_t> cf,
                         Span<const index_t> coarse_index, bool coarse_rows, bool coarse_columns,
                         const index_t* row_ptr, index_t* col_idx) {
  for (index_t i = 0; i < a.num_rows; ++i) {
    if (coarse_rows && cf[i] != kCoarse) continue;
    index_t next = row_ptr[coarse_rows ? coarse_index[i] : i];
    rows::select_row(a, cf.data(), coarse_index.data(), coarse_columns, i,
                     [&](index_t j) { col_idx[next++] = j; });
  }
}

void distance_two_strength_count(const Backend&, const PatternView& s, const PatternView& ss,
                                 Span<const index_t> cf, Span<const index_t> coarse_index,
                                 Span<index_t> counts) {
  for (index_t i = 0; i < s.num_rows; ++i) {
    if (cf[i] != kCoarse) continue;
    index_t count = 0;
    rows::distance_two_coarse_row(s, ss, cf.data(), coarse_index.data(), i,
                                  [&](index_t) { ++count; });
    counts[coarse_index[i]] = count;
  }
}

void distance_two_strength_fill(const Backend&, const PatternView& s, const PatternView& ss,
                                Span<const index_t> cf, Span<const index_t> coarse_index,
                                const index_t* row_ptr, index_t* col_idx) {
  for (index_t i = 0; i < s.num_rows; ++i) {
    if (cf[i] != kCoarse) continue;
    index_t next = row_ptr[coarse_index[i]];
    rows::distance_two_coarse_row(s, ss, cf.data(), coarse_index.data(), i,
                                  [&](index_t c) { col_idx[next++] = c; });
  }
}

void aggressive_splitting(const Backend&, Span<const index_t> first,
                          Span<const index_t> first_index, Span<const index_t> second,
                          Span<index_t> cf) {
  for (std::size_t i = 0; i < first.size(); ++i) {
    cf[i] = first[i] == kCoarse && second[first_index[i]] == kCoarse ? kCoarse : kFine;
  }
}

index_t interpolation_passes(const Backend&, const PatternView& s, Span<const index_t> cf,
                             Span<index_t> pass) {
  const index_t n = s.num_rows;
  for (index_t i = 0; i < n; ++i) pass[i] = cf[i] == kCoarse ? 0 : -1;
  index_t last = 0;
  for (index_t p = 1; p <= n; ++p) {
    bool assigned = false;
    for (index_t i = 0; i < n; ++i) {
      // Rows assigned in this round get p, never p - 1: the round's reads are unaffected.
      if (pass[i] < 0 && rows::reaches_pass(s, pass.data(), i, p - 1)) {
        pass[i] = p;
        assigned = true;
      }
    }
    if (!assigned) break;
    last = p;
  }
  return last;
}

void multipass_count(const Backend&, const PatternView& s, Span<const index_t> pass,
                     Span<index_t> counts) {
  for (index_t i = 0; i < s.num_rows; ++i) counts[i] = rows::multipass_count_row(s, pass.data(), i);
}

void multipass_fill(const Backend&, const MatrixView& a, const PatternView& s,
                    Span<const index_t> pass, InterpolationKind kind, const index_t* row_ptr,
                    index_t* col_idx, double* values) {
  for (index_t i = 0; i < s.num_rows; ++i) {
    index_t next = row_ptr[i];
    rows::multipass_row(a, s, pass.data(), PatternView{}, kind, i, [&](index_t k, double w) {
      col_idx[next] = k;
      if (values != nullptr) values[next] = w;
      ++next;
    });
  }
}

void multipass_order(const Backend& backend, Span<const index_t> pass, index_t passes,
                     Span<index_t> order, Span<index_t> offsets) {
  std::vector<index_t> keys(pass.begin(), pass.end());
  for (index_t& key : keys) ++key;  // pass + 1: 0 for a row without a pass
  coloring::reference::group_by_color(backend, keys, passes + 2, offsets, order);
}

void multipass_prolongation_values(const Backend&, const MatrixView& a, Span<const index_t> pass,
                                   index_t passes, Span<const index_t> order,
                                   Span<const index_t> offsets, InterpolationKind kind,
                                   const PatternView& w, const PatternView& p, double* values) {
  for (index_t t = 0; t <= passes; ++t) {
    for (index_t r = offsets[t + 1]; r < offsets[t + 2]; ++r) {
      rows::multipass_prolongation_row(a, pass.data(), w, kind, p, values, order[r]);
    }
  }
}

bool multipass_prolongation_slots(const Backend&, const MatrixView& a, Span<const index_t> pass,
                                  index_t passes, Span<const index_t> order,
                                  Span<const index_t> offsets, InterpolationKind kind,
                                  const PatternView& w, Span<const index_t> coarse_index,
                                  index_t capacity, index_t* slot_columns, double* slot_values,
                                  Span<index_t> counts) {
  for (index_t t = -1; t <= passes; ++t) {  // t = -1: the rows without a pass, no entries
    for (index_t r = offsets[t + 1]; r < offsets[t + 2]; ++r) {
      const index_t i = order[r];
      counts[i] = rows::multipass_slot_row(a, pass.data(), w, kind, coarse_index.data(), capacity,
                                           slot_columns, slot_values, counts.data(), i);
      if (counts[i] > capacity) return false;
    }
  }
  return true;
}

void multipass_slots_compact(const Backend&, index_t n, index_t capacity,
                             const index_t* slot_columns, const double* slot_values,
                             const index_t* row_ptr, index_t* col_idx, double* values) {
  for (index_t i = 0; i < n; ++i) {
    rows::multipass_slots_compact_row(capacity, slot_columns, slot_values, row_ptr, col_idx, values,
                                      i);
  }
}

void mm_extended_coarse_sums(const Backend&, const MatrixView& a, const PatternView& s,
                             Span<const index_t> cf, Span<double> coarse_sum) {
  for (index_t k = 0; k < s.num_rows; ++k) {
    coarse_sum[k] = rows::strong_coarse_sum(a, s, cf.data(), k);
  }
}

void mm_extended_count(const Backend&, const PatternView& s, Span<const index_t> cf,
                       Span<index_t> left_counts, Span<index_t> right_counts) {
  for (index_t i = 0; i < s.num_rows; ++i) {
    const rows::MmExtendedCounts c = rows::mm_extended_counts(s, cf.data(), i);
    left_counts[i] = c.left;
    right_counts[i] = c.right;
  }
}

void mm_extended_fill(const Backend&, const MatrixView& a, const PatternView& s,
                      Span<const index_t> cf, Span<const index_t> coarse_index,
                      Span<const double> coarse_sum, const index_t* left_row_ptr,
                      index_t* left_col_idx, double* left_values, const index_t* right_row_ptr,
                      index_t* right_col_idx, double* right_values) {
  for (index_t i = 0; i < s.num_rows; ++i) {
    rows::mm_extended_fill_row(a, s, cf.data(), coarse_index.data(), coarse_sum.data(),
                               left_row_ptr, left_col_idx, left_values, right_row_ptr,
                               right_col_idx, right_values, i);
  }
}

void truncation_count(const Backend&, const MatrixView& p, const InterpolationParameters& params,
                      Span<index_t> counts) {
  for (index_t i = 0; i < p.pattern.num_rows; ++i) counts[i] = rows::truncated_count(p, params, i);
}

void truncation_fill(const Backend&, const MatrixView& p, const InterpolationParameters& params,
                     const index_t* row_ptr, index_t* col_idx, double* values) {
  for (index_t i = 0; i < p.pattern.num_rows; ++i) {
    index_t next = row_ptr[i];
    rows::truncated_row(p, params, i, [&](index_t j, double v) {
      col_idx[next] = j;
      values[next++] = v;
    });
  }
}

void truncation_values(const Backend&, const MatrixView& p, const PatternView& t, double* values) {
  for (index_t i = 0; i < t.num_rows; ++i) {
    index_t next = t.row_ptr[i];
    rows::truncated_row_values(p, t, i, [&](double v) { values[next++] = v; });
  }
}

}  // namespace kryflow::kernels::amg::reference
