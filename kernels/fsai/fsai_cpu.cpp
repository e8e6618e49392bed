// OpenMP FSAI setup kernels: rows in parallel, each thread with its own dense work space.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/backend/parallel.hpp"
#include "kernels/fsai/fsai.hpp"
#include "kernels/fsai/fsai_rows.hpp"

namespace kryflow::kernels::fsai::cpu {
namespace {
using size_type = std::int64_t;

/// The rows of g in parallel, each thread with `work_size` doubles of work space:
/// body(i, begin, m, work) factors row i and returns false when it fails. Returns the first
/// failing row, or -1.
template <class Body>
index_t first_failing_row(const Backend& backend, const PatternView& g, index_t longest,
                          index_t work_size, Body body) {
  const size_type n = g.num_rows;
  // Work: about m^3 / 6 per row; counted as m^2 per stored entry of G for the threshold.
  const int threads = parallel::threads_for(
      backend, static_cast<std::int64_t>(g.row_ptr[g.num_rows]) * std::max<index_t>(longest, 1));
  index_t first = g.num_rows;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    std::vector<double> work(static_cast<std::size_t>(work_size));
#pragma omp for schedule(dynamic, parallel::chunk_for(n, threads)) reduction(min : first)
    for (size_type i = 0; i < n; ++i) {
      const index_t begin = g.row_ptr[i];
      if (!body(static_cast<index_t>(i), begin, g.row_ptr[i + 1] - begin, work.data())) {
        first = std::min(first, static_cast<index_t>(i));
      }
    }
  }
  return first == g.num_rows ? -1 : first;
}

/// counts[i] = count(i) for the rows of a matrix with `entries` stored entries, in parallel;
/// returns the largest count (0 for no rows).
template <class Count>
index_t count_rows(const Backend& backend, size_type n, std::int64_t entries, Span<index_t> counts,
                   Count count) {
  const int threads = parallel::threads_for(backend, entries);
  index_t longest = 0;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1) \
    reduction(max                                                               \
              : longest)
  for (size_type i = 0; i < n; ++i) {
    counts[i] = count(static_cast<index_t>(i));
    longest = std::max(longest, counts[i]);
  }
  return longest;
}

}  // namespace

index_t pattern_count(const Backend& backend, const PatternView& s, index_t max_row_entries,
                      Span<index_t> counts) {
  return count_rows(backend, s.num_rows, s.row_ptr[s.num_rows], counts,
                    [&](index_t i) { return rows::lower_count(s, i, max_row_entries); });
}

void pattern_fill(const Backend& backend, const PatternView& s, const index_t* g_row_ptr,
                  index_t* g_col_idx) {
  const size_type n = s.num_rows;
  const int threads = parallel::threads_for(backend, s.row_ptr[s.num_rows]);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (size_type i = 0; i < n; ++i) {
    rows::lower_fill(s, static_cast<index_t>(i), g_row_ptr[i + 1] - g_row_ptr[i],
                     g_col_idx + g_row_ptr[i]);
  }
}

index_t factor_values(const Backend& backend, const MatrixView& a, double sign,
                      const PatternView& g, index_t longest, double* g_values) {
  return first_failing_row(backend, g, longest, rows::work_size(longest),
                           [&](index_t i, index_t begin, index_t m, double* work) {
                             return rows::factor_row(a, sign, g.col_idx + begin, m, i, work,
                                                     g_values + begin);
                           });
}

index_t factor_values_nonsymmetric(const Backend& backend, const MatrixView& a,
                                   const PatternView& g, index_t longest, double* w_values,
                                   double* z_values) {
  return first_failing_row(backend, g, longest, rows::full_work_size(longest),
                           [&](index_t i, index_t begin, index_t m, double* work) {
                             return rows::factor_row_nonsymmetric(a, g.col_idx + begin, m, i, work,
                                                                  w_values + begin,
                                                                  z_values + begin);
                           });
}

index_t filter_count(const Backend& backend, const PatternView& g, const double* g_values,
                     const double* other_values, const double* diagonal, double tolerance,
                     Span<index_t> counts) {
  return count_rows(backend, g.num_rows, g.row_ptr[g.num_rows], counts, [&](index_t i) {
    return rows::filter_row(g, g_values, other_values, diagonal, tolerance, i, nullptr);
  });
}

void filter_fill(const Backend& backend, const PatternView& g, const double* g_values,
                 const double* other_values, const double* diagonal, double tolerance,
                 const index_t* f_row_ptr, index_t* f_col_idx) {
  const size_type n = g.num_rows;
  const int threads = parallel::threads_for(backend, g.row_ptr[g.num_rows]);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (size_type i = 0; i < n; ++i) {
    rows::filter_row(g, g_values, other_values, diagonal, tolerance, static_cast<index_t>(i),
                     f_col_idx + f_row_ptr[i]);
  }
}

}  // namespace kryflow::kernels::fsai::cpu
