// Reference coloring kernels: sequential, written for clarity (the oracle).
#include <algorithm>
#include <numeric>
#include <vector>

#include "kernels/coloring/coloring.hpp"
#include "kernels/coloring/coloring_rows.hpp"

namespace kryflow::kernels::coloring::reference {
namespace {

/// Greedy coloring visiting the vertices in `order`.
index_t greedy_in_order(const PatternView& g, const PatternView& gt,
                        const std::vector<index_t>& order, Span<index_t> colors) {
  std::fill(colors.begin(), colors.end(), -1);
  std::vector<char> taken;
  index_t num_colors = 0;
  for (const index_t i : order) {
    colors[i] = smallest_free_color(g, gt, i, colors.data(), taken);
    num_colors = std::max(num_colors, colors[i] + 1);
  }
  return num_colors;
}

}  // namespace

index_t greedy_coloring(const Backend&, const PatternView& g, const PatternView& gt,
                        Span<index_t> colors) {
  std::vector<index_t> order(static_cast<std::size_t>(g.num_rows));
  std::iota(order.begin(), order.end(), 0);
  return greedy_in_order(g, gt, order, colors);
}

index_t jpl_coloring(const Backend&, const PatternView& g, const PatternView& gt,
                     std::uint64_t seed, Span<index_t> colors) {
  // A vertex is colored once every neighbour of larger key is, with the smallest color they
  // leave free: greedy in decreasing key order.
  std::vector<index_t> order(static_cast<std::size_t>(g.num_rows));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [seed](index_t a, index_t b) { return jpl_key(seed, a) > jpl_key(seed, b); });
  return greedy_in_order(g, gt, order, colors);
}

void group_by_color(const Backend&, Span<const index_t> colors, index_t num_colors,
                    Span<index_t> offsets, Span<index_t> rows) {
  std::fill(offsets.begin(), offsets.end(), 0);
  for (const index_t c : colors) ++offsets[c + 1];
  for (index_t c = 0; c < num_colors; ++c) offsets[c + 1] += offsets[c];
  std::vector<index_t> next(offsets.begin(), offsets.end() - 1);
  for (index_t i = 0; i < static_cast<index_t>(colors.size()); ++i) rows[next[colors[i]]++] = i;
}

void closed_neighbourhood_count(const Backend&, const PatternView& g, const PatternView& gt,
                                Span<index_t> counts) {
  for (index_t i = 0; i < g.num_rows; ++i)
    closed_neighbourhood_phase(g, gt, i, nullptr, counts.data());
}

void closed_neighbourhood_fill(const Backend&, const PatternView& g, const PatternView& gt,
                               const index_t* row_ptr, index_t* col_idx) {
  for (index_t i = 0; i < g.num_rows; ++i) closed_neighbourhood_phase(g, gt, i, row_ptr, col_idx);
}

}  // namespace kryflow::kernels::coloring::reference
