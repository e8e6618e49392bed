// The smallest free color of a vertex, shared by the host kernels (the cuda kernel has its own
// loop with the same rule).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/coloring/coloring.hpp"

namespace kryflow::kernels::coloring {

/// The smallest color c >= 0 that no neighbour j of i (rows of g and gt, j != i) has;
/// colors[j] < 0 means uncolored. `taken` is scratch.
inline index_t smallest_free_color(const PatternView& g, const PatternView& gt, index_t i,
                                   const index_t* colors, std::vector<char>& taken) {
  index_t degree = 0;
  for (const PatternView* p : {&g, &gt}) degree += p->row_ptr[i + 1] - p->row_ptr[i];
  // A vertex with d neighbours has a free color among 0..d.
  taken.assign(static_cast<std::size_t>(degree) + 1, 0);
  for (const PatternView* p : {&g, &gt}) {
    for (index_t k = p->row_ptr[i]; k < p->row_ptr[i + 1]; ++k) {
      const index_t j = p->col_idx[k];
      if (j != i && colors[j] >= 0 && colors[j] <= degree) taken[colors[j]] = 1;
    }
  }
  index_t c = 0;
  while (taken[c] != 0) ++c;
  return c;
}

}  // namespace kryflow::kernels::coloring
