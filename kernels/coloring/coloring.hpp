// Contract of the graph coloring kernels: the multicolor orderings of Gauss-Seidel and ILU
// (rows of one color share no entry, so a color's rows can be updated at once).
//
// Same layout as kernels/sparse_setup: namespaces reference (the oracle), cpu and cuda with
// identical signatures, and unqualified functions that dispatch on the backend. The graph is a
// square CSR pattern g and its transpose gt (pass g twice when g is symmetric): vertices i and
// j are neighbours when g holds (i, j) or (j, i), i != j; the diagonal is ignored. colors has
// g.num_rows entries, 0-based; every kernel returns the number of colors.
#pragma once

#include <cstdint>

#include "kernels/backend/host_device.hpp"
#include "kernels/sparse_setup/sparse_setup.hpp"
#include "kryflow/core/array.hpp"

namespace kryflow::kernels::coloring {

using sparse_setup::PatternView;

/// The priority of vertex i in jpl_coloring: 32 bits of splitmix64 of seed and i above i's
/// own 32 bits, so that no two vertices tie.
KRYFLOW_HOST_DEVICE inline std::uint64_t jpl_key(std::uint64_t seed, index_t i) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(i) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (z & 0xFFFFFFFF00000000ull) | static_cast<std::uint32_t>(i);
}

#define KRYFLOW_COLORING_DECLARATIONS                                                            \
  /** The greedy coloring of the NOISEtte CFD code's block multicolor Gauss-Seidel (Saad,        \
      Iterative Methods, 2nd ed., section 12.4.1): vertices in increasing order, each takes the  \
      smallest color none of its neighbours has yet. Sequential on the host backends; on cuda    \
      in rounds, each coloring every vertex whose smaller neighbours are colored (the same       \
      colors; as many rounds as the longest chain of increasing indices, a wait per batch). */   \
  index_t greedy_coloring(const Backend& backend, const PatternView& g, const PatternView& gt,   \
                          Span<index_t> colors);                                                 \
  /** Jones-Plassmann-Luby coloring (M. Jones, P. Plassmann, SIAM J. Sci. Comput. 14, 1993) with \
      the smallest free color: in rounds, every uncolored vertex whose jpl_key beats those of    \
      all its uncolored neighbours takes the smallest color none of its neighbours has. Such     \
      vertices are never neighbours, so a round is parallel, and the result is the greedy        \
      coloring in decreasing key order: the same on every backend for a seed (the reference      \
      computes it that way). One wait per round on a device. */                                  \
  index_t jpl_coloring(const Backend& backend, const PatternView& g, const PatternView& gt,      \
                       std::uint64_t seed, Span<index_t> colors);                                \
  /** The vertices grouped by color: offsets (num_colors + 1 entries, on the backend) and rows   \
      (n entries): rows[offsets[c] .. offsets[c + 1]) are the vertices of color c in increasing  \
      order (a stable counting sort; cuda: a stable radix sort by color and the offsets from     \
      the color changes, no atomics and no wait). colors holds values in 0 .. num_colors - 1. */ \
  void group_by_color(const Backend& backend, Span<const index_t> colors, index_t num_colors,    \
                      Span<index_t> offsets, Span<index_t> rows);                                \
  /** The closed neighbourhoods of the graph as a pattern (the graph's adjacency plus the        \
      diagonal; its square holds the vertices within distance two): counts[i] = |{i} union the   \
      columns of rows i of g and gt| (counts has g.num_rows entries). */                         \
  void closed_neighbourhood_count(const Backend& backend, const PatternView& g,                  \
                                  const PatternView& gt, Span<index_t> counts);                  \
  /** Writes row i's closed neighbourhood in increasing order to col_idx + row_ptr[i] (row_ptr   \
      from an exclusive scan of closed_neighbourhood_count). Rows of g and gt must list their    \
      columns in increasing order (CSR as kryflow keeps it). No wait on a device. */             \
  void closed_neighbourhood_fill(const Backend& backend, const PatternView& g,                   \
                                 const PatternView& gt, const index_t* row_ptr, index_t* col_idx);

/// Dispatch.
KRYFLOW_COLORING_DECLARATIONS

namespace reference {
KRYFLOW_COLORING_DECLARATIONS
}
namespace cpu {
KRYFLOW_COLORING_DECLARATIONS
}
namespace cuda {
KRYFLOW_COLORING_DECLARATIONS
}

#undef KRYFLOW_COLORING_DECLARATIONS

}  // namespace kryflow::kernels::coloring
