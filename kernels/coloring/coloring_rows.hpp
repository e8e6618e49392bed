// The smallest free color of a vertex, shared by the host kernels (the cuda kernel has its own
// loop with the same rule), and a vertex's closed neighbourhood, shared by every backend.
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

/// The size of {i} union the columns of rows i of g and gt (each in increasing order); with
/// `out`, that union is written there in increasing order. Host and device.
KRYFLOW_HOST_DEVICE inline index_t closed_neighbourhood_row(const PatternView& g,
                                                            const PatternView& gt, index_t i,
                                                            index_t* out) {
  index_t p = g.row_ptr[i];
  index_t q = gt.row_ptr[i];
  const index_t p_end = g.row_ptr[i + 1];
  const index_t q_end = gt.row_ptr[i + 1];
  bool self = false;  // i written
  index_t count = 0;
  while (p < p_end || q < q_end || !self) {
    // The smallest of the next columns of both rows and i (while not yet written).
    index_t j = self ? -1 : i;
    if (p < p_end && (j < 0 || g.col_idx[p] < j)) j = g.col_idx[p];
    if (q < q_end && (j < 0 || gt.col_idx[q] < j)) j = gt.col_idx[q];
    if (p < p_end && g.col_idx[p] == j) ++p;
    if (q < q_end && gt.col_idx[q] == j) ++q;
    if (j == i) self = true;
    if (out != nullptr) out[count] = j;
    ++count;
  }
  return count;
}

/// Row i of the count or the fill phase of the closed neighbourhoods: with row_ptr null the
/// size of closed_neighbourhood_row goes to out[i]; otherwise the row goes to out + row_ptr[i].
KRYFLOW_HOST_DEVICE inline void closed_neighbourhood_phase(const PatternView& g,
                                                           const PatternView& gt, index_t i,
                                                           const index_t* row_ptr, index_t* out) {
  if (row_ptr == nullptr) {
    out[i] = closed_neighbourhood_row(g, gt, i, nullptr);
  } else {
    closed_neighbourhood_row(g, gt, i, out + row_ptr[i]);
  }
}

}  // namespace kryflow::kernels::coloring
