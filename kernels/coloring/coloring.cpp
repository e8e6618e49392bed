// Dispatch of the graph coloring kernels to the backend that owns the data.
#include "kernels/coloring/coloring.hpp"

#include "kernels/backend/dispatch.hpp"

namespace kryflow::kernels::coloring {

index_t greedy_coloring(const Backend& backend, const PatternView& g, const PatternView& gt,
                        Span<index_t> colors) {
  KRYFLOW_DISPATCH(coloring, greedy_coloring, backend, g, gt, colors);
}

index_t jpl_coloring(const Backend& backend, const PatternView& g, const PatternView& gt,
                     std::uint64_t seed, Span<index_t> colors) {
  KRYFLOW_DISPATCH(coloring, jpl_coloring, backend, g, gt, seed, colors);
}

void group_by_color(const Backend& backend, Span<const index_t> colors, index_t num_colors,
                    Span<index_t> offsets, Span<index_t> rows) {
  KRYFLOW_DISPATCH(coloring, group_by_color, backend, colors, num_colors, offsets, rows);
}

void closed_neighbourhood_count(const Backend& backend, const PatternView& g, const PatternView& gt,
                                Span<index_t> counts) {
  KRYFLOW_DISPATCH(coloring, closed_neighbourhood_count, backend, g, gt, counts);
}

void closed_neighbourhood_fill(const Backend& backend, const PatternView& g, const PatternView& gt,
                               const index_t* row_ptr, index_t* col_idx) {
  KRYFLOW_DISPATCH(coloring, closed_neighbourhood_fill, backend, g, gt, row_ptr, col_idx);
}

}  // namespace kryflow::kernels::coloring
