// Multicolor orderings of a matrix's rows (or block rows): the rows of one color share no entry,
// so Gauss-Seidel and ILU can update a whole color at once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kryflow/core/array.hpp"
#include "kryflow/linalg/linear_operator.hpp"

namespace kryflow {

/// How color_matrix colors the graph.
enum class ColoringAlgorithm {
  /// The NOISEtte CFD code's greedy coloring (Saad, Iterative Methods, 2nd ed., sec. 12.4.1):
  /// rows in increasing order, each takes the smallest color none of its neighbours has.
  /// Sequential on the host backends; on cuda in rounds of one kernel, each coloring the rows
  /// whose smaller neighbours have their colors (about nx + ny + nz rounds on a structured
  /// grid), with the same colors. Two colors on any bipartite graph numbered so that each row after
  /// the
  /// first has a smaller neighbour (5- and 7-point grids in natural order).
  greedy,
  /// Jones-Plassmann-Luby (SIAM J. Sci. Comput. 14, 1993) with the smallest free color: in
  /// rounds, every uncolored row whose random key beats those of its uncolored neighbours takes
  /// the smallest color they leave free. Parallel on the matrix's backend, one host wait per
  /// round; deterministic for a seed (the same colors on every backend).
  jones_plassmann_luby,
  /// Every row its own color, in row order: a sweep over the colors is sequential Gauss-Seidel
  /// in the natural order (n launches per sweep on a device). For comparisons and small systems.
  natural,
};

/// "greedy", "jones_plassmann_luby" or "natural"; parse_coloring_algorithm throws ConfigError
/// naming the valid choices for another name.
const char* to_string(ColoringAlgorithm algorithm) noexcept;
ColoringAlgorithm parse_coloring_algorithm(const std::string& name);

/// A coloring of a square matrix's rows (CsrMatrix) or block rows (BsrMatrix): rows i != j are
/// neighbours when a_ij or a_ji is stored (the diagonal ignored; for BSR, the block pattern).
struct MulticolorOrdering {
  /// 1: no two neighbours share a color; 2: no two vertices within distance two (neighbours,
  /// or with a common neighbour) share one.
  index_t distance = 1;
  index_t num_colors = 0;
  /// num_colors + 1 offsets, on the host: color c holds rows[color_offsets[c] ..
  /// color_offsets[c + 1]).
  std::vector<index_t> color_offsets;
  /// The (block) rows grouped by color, increasing within a color, on the matrix's backend.
  Array<index_t> rows;

  index_t color_size(index_t c) const { return color_offsets[c + 1] - color_offsets[c]; }
  /// "<k> colors, sizes <min>..<max>" for reports.
  std::string summary() const;
};

/// Colors A's graph (rows of a CsrMatrix, block rows of a BsrMatrix, either precision) on A's
/// backend. A nonsymmetric pattern is symmetrized through its transpose (built on the backend).
/// distance 1: no two neighbours share a color (what multicolor Gauss-Seidel, ILU(0) and DILU
/// need: a color's rows read each other's values nowhere). distance 2: no two rows within
/// distance two share a color, i.e. no two rows of a color have an entry in the same column
/// (for updates that scatter into their neighbours, or for compressing a Jacobian by finite
/// differences; Gebremedhin, Manne, Pothen, SIAM Rev. 47, 2005, sec. 3): the algorithm colors
/// the pattern of U U, U the graph's adjacency plus the diagonal, formed on the backend (about
/// the square of the row length per row). Throws ConfigError for a distance other than 1 or 2,
/// NotSupported when A is neither a CsrMatrix nor a BsrMatrix, DimensionMismatch when it is not
/// square; BackendError on device failures.
MulticolorOrdering color_matrix(
    const LinearOperator& A, ColoringAlgorithm algorithm = ColoringAlgorithm::jones_plassmann_luby,
    std::uint64_t seed = 1, index_t distance = 1);

}  // namespace kryflow
