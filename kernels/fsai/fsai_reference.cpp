// The reference FSAI setup kernels: one row after another on the calling thread.
#include <vector>

#include "kernels/fsai/fsai.hpp"
#include "kernels/fsai/fsai_rows.hpp"

namespace kryflow::kernels::fsai::reference {

index_t pattern_count(const Backend&, const PatternView& s, index_t max_row_entries,
                      Span<index_t> counts) {
  index_t longest = 0;
  for (index_t i = 0; i < s.num_rows; ++i) {
    counts[i] = rows::lower_count(s, i, max_row_entries);
    if (counts[i] > longest) longest = counts[i];
  }
  return longest;
}

void pattern_fill(const Backend&, const PatternView& s, const index_t* g_row_ptr,
                  index_t* g_col_idx) {
  for (index_t i = 0; i < s.num_rows; ++i) {
    rows::lower_fill(s, i, g_row_ptr[i + 1] - g_row_ptr[i], g_col_idx + g_row_ptr[i]);
  }
}

index_t factor_values(const Backend&, const MatrixView& a, double sign, const PatternView& g,
                      index_t longest, double* g_values) {
  std::vector<double> work(static_cast<std::size_t>(rows::work_size(longest)));
  for (index_t i = 0; i < g.num_rows; ++i) {
    const index_t begin = g.row_ptr[i];
    if (!rows::factor_row(a, sign, g.col_idx + begin, g.row_ptr[i + 1] - begin, i, work.data(),
                          g_values + begin)) {
      return i;
    }
  }
  return -1;
}

index_t factor_values_nonsymmetric(const Backend&, const MatrixView& a, const PatternView& g,
                                   index_t longest, double* w_values, double* z_values) {
  std::vector<double> work(static_cast<std::size_t>(rows::full_work_size(longest)));
  for (index_t i = 0; i < g.num_rows; ++i) {
    const index_t begin = g.row_ptr[i];
    if (!rows::factor_row_nonsymmetric(a, g.col_idx + begin, g.row_ptr[i + 1] - begin, i,
                                       work.data(), w_values + begin, z_values + begin)) {
      return i;
    }
  }
  return -1;
}

index_t filter_count(const Backend&, const PatternView& g, const double* g_values,
                     const double* other_values, const double* diagonal, double tolerance,
                     Span<index_t> counts) {
  index_t longest = 0;
  for (index_t i = 0; i < g.num_rows; ++i) {
    counts[i] = rows::filter_row(g, g_values, other_values, diagonal, tolerance, i, nullptr);
    if (counts[i] > longest) longest = counts[i];
  }
  return longest;
}

void filter_fill(const Backend&, const PatternView& g, const double* g_values,
                 const double* other_values, const double* diagonal, double tolerance,
                 const index_t* f_row_ptr, index_t* f_col_idx) {
  for (index_t i = 0; i < g.num_rows; ++i) {
    rows::filter_row(g, g_values, other_values, diagonal, tolerance, i, f_col_idx + f_row_ptr[i]);
  }
}

}  // namespace kryflow::kernels::fsai::reference
