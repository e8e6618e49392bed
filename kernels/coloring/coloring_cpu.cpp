// OpenMP coloring kernels: greedy is sequential (the reference's loop); the rounds of
// Jones-Plassmann-Luby run their vertices in parallel, a selection pass then a coloring pass.
#include <vector>

#include "kernels/backend/parallel.hpp"
#include "kernels/coloring/coloring.hpp"
#include "kernels/coloring/coloring_rows.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::coloring::cpu {

index_t greedy_coloring(const Backend& backend, const PatternView& g, const PatternView& gt,
                        Span<index_t> colors) {
  return reference::greedy_coloring(backend, g, gt, colors);
}

index_t jpl_coloring(const Backend& backend, const PatternView& g, const PatternView& gt,
                     std::uint64_t seed, Span<index_t> colors) {
  const index_t n = g.num_rows;
  const std::int64_t work = std::int64_t{g.row_ptr[n]} + gt.row_ptr[n];
  std::vector<char> selected(static_cast<std::size_t>(n), 0);
  parallel::for_each(backend, n, n, [&](std::int64_t i) { colors[i] = -1; });
  index_t left = n;
  for (index_t round = 0; left > 0; ++round) {
    if (round > n) throw BackendError("coloring::jpl_coloring: vertices left uncolored");
    // Selection reads colors only; the coloring pass writes the colors of selected vertices,
    // which are never neighbours of each other.
    parallel::for_each(backend, work, n, [&](std::int64_t row) {
      const auto i = static_cast<index_t>(row);
      selected[i] = 0;
      if (colors[i] >= 0) return;
      const std::uint64_t key = jpl_key(seed, i);
      for (const PatternView* p : {&g, &gt}) {
        for (index_t k = p->row_ptr[i]; k < p->row_ptr[i + 1]; ++k) {
          const index_t j = p->col_idx[k];
          if (j != i && colors[j] < 0 && jpl_key(seed, j) > key) return;
        }
      }
      selected[i] = 1;
    });
    parallel::for_each(backend, work, n, [&](std::int64_t row) {
      thread_local std::vector<char> taken;
      const auto i = static_cast<index_t>(row);
      if (selected[i] != 0) colors[i] = smallest_free_color(g, gt, i, colors.data(), taken);
    });
    left = 0;
    for (index_t i = 0; i < n; ++i) left += colors[i] < 0 ? 1 : 0;
  }
  index_t num_colors = 0;
  for (index_t i = 0; i < n; ++i)
    num_colors = colors[i] + 1 > num_colors ? colors[i] + 1 : num_colors;
  return num_colors;
}

void group_by_color(const Backend& backend, Span<const index_t> colors, index_t num_colors,
                    Span<index_t> offsets, Span<index_t> rows) {
  reference::group_by_color(backend, colors, num_colors, offsets, rows);  // O(n), one pass
}

namespace {

/// closed_neighbourhood_phase of every row in parallel.
void closed_neighbourhoods(const Backend& backend, const PatternView& g, const PatternView& gt,
                           const index_t* row_ptr, index_t* out) {
  const index_t n = g.num_rows;
  const std::int64_t work = std::int64_t{g.row_ptr[n]} + gt.row_ptr[n] + n;
  parallel::for_each(backend, work, n, [&](std::int64_t row) {
    closed_neighbourhood_phase(g, gt, static_cast<index_t>(row), row_ptr, out);
  });
}

}  // namespace

void closed_neighbourhood_count(const Backend& backend, const PatternView& g, const PatternView& gt,
                                Span<index_t> counts) {
  closed_neighbourhoods(backend, g, gt, nullptr, counts.data());
}

void closed_neighbourhood_fill(const Backend& backend, const PatternView& g, const PatternView& gt,
                               const index_t* row_ptr, index_t* col_idx) {
  closed_neighbourhoods(backend, g, gt, row_ptr, col_idx);
}

}  // namespace kryflow::kernels::coloring::cpu
