// Multicolor orderings: the coloring kernels on a matrix's (block) pattern and its transpose,
// then the rows grouped by color, all on the matrix's backend.
#include "kryflow/linalg/coloring.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "kernels/coloring/coloring.hpp"
#include "kernels/sparse_setup/sparse_setup.hpp"
#include "kryflow/core/error.hpp"
#include "src/amg/amg_hierarchy.hpp"
#include "src/preconditioners/block_view.hpp"

namespace kryflow {

namespace ss = kernels::sparse_setup;

const char* to_string(ColoringAlgorithm algorithm) noexcept {
  switch (algorithm) {
    case ColoringAlgorithm::greedy:
      return "greedy";
    case ColoringAlgorithm::jones_plassmann_luby:
      return "jones_plassmann_luby";
    case ColoringAlgorithm::natural:
      break;
  }
  return "natural";
}

ColoringAlgorithm parse_coloring_algorithm(const std::string& name) {
  if (name == "greedy") return ColoringAlgorithm::greedy;
  if (name == "jones_plassmann_luby") return ColoringAlgorithm::jones_plassmann_luby;
  if (name == "natural") return ColoringAlgorithm::natural;
  throw ConfigError("coloring",
                    "unknown choice '" + name + "' (valid: greedy, jones_plassmann_luby, natural)");
}

std::string MulticolorOrdering::summary() const {
  if (num_colors == 0) return "0 colors";
  index_t smallest = color_size(0);
  index_t largest = smallest;
  for (index_t c = 1; c < num_colors; ++c) {
    smallest = std::min(smallest, color_size(c));
    largest = std::max(largest, color_size(c));
  }
  return std::to_string(num_colors) + (num_colors == 1 ? " color" : " colors") +
         (distance == 2 ? " at distance 2" : "") + ", sizes " + std::to_string(smallest) + ".." +
         std::to_string(largest);
}

namespace {

/// The pattern of U U, U = the closed neighbourhoods of (g, gt) (adjacency plus diagonal): row i
/// holds every vertex within distance two of i, and the pattern is symmetric.
CsrArrays distance_two_graph(const Backend& backend, const ss::PatternView& g,
                             const ss::PatternView& gt) {
  const auto n = static_cast<std::size_t>(g.num_rows);
  CsrArrays U;
  U.num_rows = U.num_cols = g.num_rows;
  Array<index_t> counts(backend, n);
  kernels::coloring::closed_neighbourhood_count(backend, g, gt, counts.span());
  U.row_ptr = Array<index_t>(backend, n + 1);
  const std::int64_t nnz = ss::exclusive_scan(backend, counts.span(), U.row_ptr.span());
  U.col_idx = Array<index_t>(backend, static_cast<std::size_t>(nnz));
  kernels::coloring::closed_neighbourhood_fill(backend, g, gt, U.row_ptr.span().data(),
                                               U.col_idx.span().data());
  return amg_setup::spgemm_pattern(backend, U.pattern(), U.pattern());
}

}  // namespace

MulticolorOrdering color_matrix(const LinearOperator& A, ColoringAlgorithm algorithm,
                                std::uint64_t seed, index_t distance) {
  if (distance != 1 && distance != 2) {
    throw ConfigError("coloring distance", "must be 1 or 2, got " + std::to_string(distance));
  }
  const detail::BlockMatrix m = detail::block_matrix_of(A, "color_matrix");
  const Backend& backend = A.backend();
  const index_t n = m.num_block_rows;
  MulticolorOrdering ordering;
  ordering.distance = distance;
  if (algorithm == ColoringAlgorithm::natural) {
    ordering.num_colors = n;
    ordering.color_offsets.resize(static_cast<std::size_t>(n) + 1);
    std::iota(ordering.color_offsets.begin(), ordering.color_offsets.end(), 0);
    ordering.rows = Array<index_t>::from_host(
        backend,
        std::vector<index_t>(ordering.color_offsets.begin(), ordering.color_offsets.end() - 1));
    return ordering;
  }
  const ss::PatternView g = m.pattern();
  // The transpose, unless the pattern is symmetric (then g serves as its own).
  CsrArrays transpose;
  ss::PatternView gt = g;
  if (n > 0 && !ss::pattern_symmetric(backend, g)) {
    transpose = amg_setup::transpose(backend, g, m.num_blocks, nullptr);
    gt = transpose.pattern();
  }
  CsrArrays within_two;
  ss::PatternView graph = g;
  if (distance == 2 && n > 0) {
    within_two = distance_two_graph(backend, g, gt);
    graph = gt = within_two.pattern();
  }
  Array<index_t> colors(backend, static_cast<std::size_t>(n));
  ordering.num_colors =
      algorithm == ColoringAlgorithm::greedy
          ? kernels::coloring::greedy_coloring(backend, graph, gt, colors.span())
          : kernels::coloring::jpl_coloring(backend, graph, gt, seed, colors.span());
  Array<index_t> offsets(backend, static_cast<std::size_t>(ordering.num_colors) + 1);
  ordering.rows = Array<index_t>(backend, static_cast<std::size_t>(n));
  kernels::coloring::group_by_color(backend, colors.span(), ordering.num_colors, offsets.span(),
                                    ordering.rows.span());
  ordering.color_offsets = offsets.to_host();
  return ordering;
}

}  // namespace kryflow
