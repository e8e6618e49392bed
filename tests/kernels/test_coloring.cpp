// Graph coloring kernels (kernels/coloring) on the backend under test against the reference
// and against the definitions: a valid coloring (no two neighbours share a color), the greedy
// rule, and Jones-Plassmann-Luby as greedy in decreasing key order, on random graphs (with
// empty rows, a long row, nonsymmetric patterns) and 3D Poisson.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernels/coloring/coloring.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/coloring.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

namespace kc = kernels::coloring;

/// A square pattern on the host and its transpose.
struct Graph {
  index_t n = 0;
  std::vector<index_t> row_ptr, col_idx, t_row_ptr, t_col_idx;
};

Graph graph_of(index_t n, const std::vector<std::set<index_t>>& rows) {
  Graph g;
  g.n = n;
  std::vector<std::set<index_t>> columns(static_cast<std::size_t>(n));
  g.row_ptr.push_back(0);
  for (index_t i = 0; i < n; ++i) {
    g.col_idx.insert(g.col_idx.end(), rows[i].begin(), rows[i].end());
    g.row_ptr.push_back(static_cast<index_t>(g.col_idx.size()));
    for (const index_t j : rows[i]) columns[j].insert(i);
  }
  g.t_row_ptr.push_back(0);
  for (index_t j = 0; j < n; ++j) {
    g.t_col_idx.insert(g.t_col_idx.end(), columns[j].begin(), columns[j].end());
    g.t_row_ptr.push_back(static_cast<index_t>(g.t_col_idx.size()));
  }
  return g;
}

Graph graph_of(const CooMatrix& coo) {
  std::vector<std::set<index_t>> rows(static_cast<std::size_t>(coo.num_rows));
  for (std::size_t k = 0; k < coo.num_entries(); ++k) rows[coo.row_idx[k]].insert(coo.col_idx[k]);
  return graph_of(coo.num_rows, rows);
}

/// Neighbours of every vertex (both directions, no self loops).
std::vector<std::set<index_t>> neighbours(const Graph& g) {
  std::vector<std::set<index_t>> nb(static_cast<std::size_t>(g.n));
  for (index_t i = 0; i < g.n; ++i) {
    for (index_t k = g.row_ptr[i]; k < g.row_ptr[i + 1]; ++k) {
      const index_t j = g.col_idx[k];
      if (j == i) continue;
      nb[i].insert(j);
      nb[j].insert(i);
    }
  }
  return nb;
}

struct Colored {
  index_t num_colors = 0;
  std::vector<index_t> colors;
};

/// kernel "greedy" or "jpl" on `backend`; symmetric: pass the pattern as its own transpose
/// (only valid for symmetric graphs).
Colored color(const Backend& backend, const Graph& g, const std::string& kernel, std::uint64_t seed,
              bool as_symmetric = false) {
  const Array<index_t> rp = Array<index_t>::from_host(backend, g.row_ptr);
  const Array<index_t> ci = Array<index_t>::from_host(backend, g.col_idx);
  const Array<index_t> trp = Array<index_t>::from_host(backend, g.t_row_ptr);
  const Array<index_t> tci = Array<index_t>::from_host(backend, g.t_col_idx);
  const kc::PatternView pg{g.n, g.n, rp.span().data(), ci.span().data()};
  const kc::PatternView pt =
      as_symmetric ? pg : kc::PatternView{g.n, g.n, trp.span().data(), tci.span().data()};
  Array<index_t> colors(backend, static_cast<std::size_t>(g.n));
  Colored out;
  out.num_colors = kernel == "greedy" ? kc::greedy_coloring(backend, pg, pt, colors.span())
                                      : kc::jpl_coloring(backend, pg, pt, seed, colors.span());
  out.colors = colors.to_host();
  return out;
}

/// No two neighbours share a color, colors in [0, num_colors), every color used.
void expect_valid(const Graph& g, const Colored& c) {
  const auto nb = neighbours(g);
  std::vector<index_t> used(static_cast<std::size_t>(c.num_colors), 0);
  for (index_t i = 0; i < g.n; ++i) {
    ASSERT_GE(c.colors[i], 0) << "vertex " << i;
    ASSERT_LT(c.colors[i], c.num_colors) << "vertex " << i;
    ++used[c.colors[i]];
    for (const index_t j : nb[i]) ASSERT_NE(c.colors[i], c.colors[j]) << i << " and " << j;
  }
  for (index_t k = 0; k < c.num_colors; ++k) EXPECT_GT(used[k], 0) << "color " << k;
}

/// The greedy rule for `before(j, i)` (j is colored before i): every color below i's is
/// taken by a neighbour colored before i, and no such neighbour has i's color.
template <class Before>
void expect_greedy(const Graph& g, const Colored& c, Before before) {
  const auto nb = neighbours(g);
  for (index_t i = 0; i < g.n; ++i) {
    std::set<index_t> taken;
    for (const index_t j : nb[i]) {
      if (before(j, i)) taken.insert(c.colors[j]);
    }
    for (index_t k = 0; k < c.colors[i]; ++k) {
      ASSERT_TRUE(taken.count(k) == 1) << "vertex " << i << " could take color " << k;
    }
    ASSERT_EQ(taken.count(c.colors[i]), 0u) << "vertex " << i;
  }
}

/// Random graphs: skewed row lengths with empty rows and a long row (random_sparse), as given
/// (nonsymmetric) and symmetrized.
std::vector<Graph> random_graphs(std::uint64_t seed) {
  std::vector<Graph> graphs;
  for (const index_t n : {1, 2, 37, 1000, 4099}) {
    const CooMatrix coo = test::random_sparse(n, n, 12, n > 100, seed + n);
    graphs.push_back(graph_of(coo));
    std::vector<std::set<index_t>> rows(static_cast<std::size_t>(n));
    for (std::size_t k = 0; k < coo.num_entries(); ++k) {
      rows[coo.row_idx[k]].insert(coo.col_idx[k]);
      rows[coo.col_idx[k]].insert(coo.row_idx[k]);
    }
    graphs.push_back(graph_of(n, rows));
  }
  return graphs;
}

TEST(Coloring, JplIsValidDeterministicAndGreedyInDecreasingKeyOrder) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend& backend = test::backend_under_test();
  for (const Graph& g : random_graphs(seed)) {
    SCOPED_TRACE("n " + std::to_string(g.n));
    const Colored c = color(backend, g, "jpl", seed);
    expect_valid(g, c);
    expect_greedy(
        g, c, [seed](index_t j, index_t i) { return kc::jpl_key(seed, j) > kc::jpl_key(seed, i); });
    const Colored expected = color(Backend::reference(), g, "jpl", seed);
    EXPECT_EQ(c.colors, expected.colors);
    EXPECT_EQ(c.num_colors, expected.num_colors);
    EXPECT_EQ(color(backend, g, "jpl", seed).colors, c.colors);  // deterministic
  }
}

TEST(Coloring, GreedyIsTheSeedsSequentialAlgorithm) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend& backend = test::backend_under_test();
  for (const Graph& g : random_graphs(seed)) {
    SCOPED_TRACE("n " + std::to_string(g.n));
    const Colored c = color(backend, g, "greedy", seed);
    expect_valid(g, c);
    expect_greedy(g, c, [](index_t j, index_t i) { return j < i; });
    EXPECT_EQ(c.colors, color(Backend::reference(), g, "greedy", seed).colors);
  }
}

TEST(Coloring, ThreeDimensionalPoissonIsRedBlackForGreedy) {
  // The 7-point grid graph is bipartite: greedy in natural order colors it by the parity of
  // x + y + z; JPL uses a few more colors (at most degree + 1 = 7).
  const Graph g = graph_of(poisson3d(9));
  const Backend& backend = test::backend_under_test();
  const Colored greedy = color(backend, g, "greedy", 1, true);
  EXPECT_EQ(greedy.num_colors, 2);
  for (index_t i = 0; i < g.n; ++i) {
    const index_t x = i % 9, y = i / 9 % 9, z = i / 81;
    ASSERT_EQ(greedy.colors[i], (x + y + z) % 2) << "vertex " << i;
  }
  const Colored jpl = color(backend, g, "jpl", 7, true);
  expect_valid(g, jpl);
  EXPECT_LE(jpl.num_colors, 7);
  EXPECT_EQ(jpl.colors, color(Backend::reference(), g, "jpl", 7, true).colors);
}

TEST(Coloring, GreedyGivesACliqueOneColorPerVertexBeyondSixtyFourColors) {
  // Every color window of 64 is searched: vertex i of a clique takes color i. Half the edges
  // stored one way only (the transpose supplies the rest).
  const index_t n = 150;
  std::vector<std::set<index_t>> rows(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) {
    for (index_t j = 0; j < n; ++j) {
      if (i != j && ((i + j) % 2 == 0 ? i < j : i > j)) rows[i].insert(j);
    }
  }
  const Graph g = graph_of(n, rows);
  const Colored c = color(test::backend_under_test(), g, "greedy", 1);
  ASSERT_EQ(c.num_colors, n);
  for (index_t i = 0; i < n; ++i) ASSERT_EQ(c.colors[i], i) << "vertex " << i;
}

TEST(Coloring, GreedyColorsALargeFivePointGridRedBlack) {
  // A 300 x 300 5-point grid (the block graph of a 2D star stencil): a dependency chain of
  // about 600 vertices on a device, two colors by the parity of x + y.
  const index_t m = 300;
  std::vector<std::set<index_t>> rows(static_cast<std::size_t>(m * m));
  for (index_t y = 0; y < m; ++y) {
    for (index_t x = 0; x < m; ++x) {
      const index_t i = y * m + x;
      rows[i].insert(i);
      if (x > 0) rows[i].insert(i - 1);
      if (x + 1 < m) rows[i].insert(i + 1);
      if (y > 0) rows[i].insert(i - m);
      if (y + 1 < m) rows[i].insert(i + m);
    }
  }
  const Graph g = graph_of(m * m, rows);
  const Colored c = color(test::backend_under_test(), g, "greedy", 1, true);
  ASSERT_EQ(c.num_colors, 2);
  for (index_t i = 0; i < m * m; ++i) ASSERT_EQ(c.colors[i], (i % m + i / m) % 2) << "vertex " << i;
}

/// The closed neighbourhoods of g (closed_neighbourhood_count / _fill) on `backend`.
Graph closed_neighbourhoods(const Backend& backend, const Graph& g) {
  const Array<index_t> rp = Array<index_t>::from_host(backend, g.row_ptr);
  const Array<index_t> ci = Array<index_t>::from_host(backend, g.col_idx);
  const Array<index_t> trp = Array<index_t>::from_host(backend, g.t_row_ptr);
  const Array<index_t> tci = Array<index_t>::from_host(backend, g.t_col_idx);
  const kc::PatternView pg{g.n, g.n, rp.span().data(), ci.span().data()};
  const kc::PatternView pt{g.n, g.n, trp.span().data(), tci.span().data()};
  Array<index_t> counts(backend, static_cast<std::size_t>(g.n));
  kc::closed_neighbourhood_count(backend, pg, pt, counts.span());
  const std::vector<index_t> host_counts = counts.to_host();
  Graph u;
  u.n = g.n;
  u.row_ptr.assign(1, 0);
  for (const index_t c : host_counts) u.row_ptr.push_back(u.row_ptr.back() + c);
  const Array<index_t> row_ptr = Array<index_t>::from_host(backend, u.row_ptr);
  Array<index_t> col_idx(backend, static_cast<std::size_t>(u.row_ptr.back()));
  kc::closed_neighbourhood_fill(backend, pg, pt, row_ptr.span().data(), col_idx.span().data());
  u.col_idx = col_idx.to_host();
  return u;
}

TEST(Coloring, ClosedNeighbourhoodsAreTheAdjacencyPlusTheDiagonal) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const Graph& g : random_graphs(seed)) {
    SCOPED_TRACE("n " + std::to_string(g.n));
    const Graph u = closed_neighbourhoods(test::backend_under_test(), g);
    const Graph expected = closed_neighbourhoods(Backend::reference(), g);
    EXPECT_EQ(u.row_ptr, expected.row_ptr);
    EXPECT_EQ(u.col_idx, expected.col_idx);
    // The definition: row i is {i} and i's neighbours in both directions, in increasing order.
    const auto nb = neighbours(g);
    for (index_t i = 0; i < g.n; ++i) {
      std::set<index_t> row = nb[i];
      row.insert(i);
      ASSERT_EQ(std::vector<index_t>(u.col_idx.begin() + u.row_ptr[i],
                                     u.col_idx.begin() + u.row_ptr[i + 1]),
                std::vector<index_t>(row.begin(), row.end()))
          << "vertex " << i;
    }
  }
}

/// Colors of color_matrix's ordering, vertex by vertex.
std::vector<index_t> colors_of(const MulticolorOrdering& ordering, index_t n) {
  std::vector<index_t> colors(static_cast<std::size_t>(n), -1);
  const std::vector<index_t> rows = ordering.rows.to_host();
  for (index_t c = 0; c < ordering.num_colors; ++c) {
    for (index_t q = ordering.color_offsets[c]; q < ordering.color_offsets[c + 1]; ++q) {
      colors[rows[q]] = c;
    }
  }
  return colors;
}

TEST(Coloring, DistanceTwoColoringsOfMatricesAreValidAndEqualOnEveryBackend) {
  // color_matrix at distance 2 on nonsymmetric random patterns, block and scalar: no two
  // vertices with a path of at most two edges between them (either direction) share a color,
  // every color is used, and the colors are the reference backend's.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  for (const index_t n : {1, 37, 1000, 4099}) {
    SCOPED_TRACE("n " + std::to_string(n));
    // No long row: one would put every vertex within distance two of every other (a clique,
    // n colors, n sequential rounds on a device).
    CooMatrix coo = test::random_sparse(n, n, 9, false, seed + n);
    for (index_t i = 0; i < n; ++i) coo.push_back(i, i, 4.0);  // duplicates are summed
    const auto csr = CsrMatrix::from_coo(backend, coo);
    const auto csr_oracle = CsrMatrix::from_coo(Backend::reference(), coo);
    const Graph g = graph_of(coo);
    const auto nb = neighbours(g);
    for (const auto algorithm :
         {ColoringAlgorithm::greedy, ColoringAlgorithm::jones_plassmann_luby}) {
      SCOPED_TRACE(to_string(algorithm));
      const MulticolorOrdering ordering = color_matrix(csr, algorithm, seed, 2);
      const MulticolorOrdering oracle = color_matrix(csr_oracle, algorithm, seed, 2);
      EXPECT_EQ(ordering.distance, 2);
      EXPECT_EQ(ordering.color_offsets, oracle.color_offsets);
      EXPECT_EQ(ordering.rows.to_host(), oracle.rows.to_host());
      const std::vector<index_t> colors = colors_of(ordering, n);
      std::vector<index_t> used(static_cast<std::size_t>(ordering.num_colors), 0);
      index_t largest_degree = 0;
      for (index_t i = 0; i < n; ++i) {
        ASSERT_GE(colors[i], 0) << "vertex " << i;
        ++used[colors[i]];
        largest_degree = std::max(largest_degree, static_cast<index_t>(nb[i].size()));
        for (const index_t j : nb[i]) {
          ASSERT_NE(colors[i], colors[j]) << i << " and " << j;
          for (const index_t k : nb[j]) {
            if (k != i) ASSERT_NE(colors[i], colors[k]) << i << " and " << k << " via " << j;
          }
        }
      }
      for (index_t k = 0; k < ordering.num_colors; ++k) EXPECT_GT(used[k], 0) << "color " << k;
      // A vertex and its neighbours are pairwise within distance two.
      EXPECT_GE(ordering.num_colors, largest_degree + 1);
    }
  }
  const auto small = CsrMatrix::from_coo(backend, test::random_sparse(5, 5, 2, false, seed));
  EXPECT_THROW(color_matrix(small, ColoringAlgorithm::greedy, 1, 3), ConfigError);
}

TEST(Coloring, DistanceTwoGreedyColorsAFivePointGridWithSevenColors) {
  // The block graph of a 2D star stencil. Distance-2 greedy in natural order takes 7 colors
  // (counted by hand with the same rule; the optimum is 5, x + 2 y mod 5, and no coloring has
  // fewer: a vertex and its four neighbours are pairwise within distance two), red-black 2 at
  // distance 1.
  const index_t m = 40;
  CooMatrix coo;
  coo.num_rows = coo.num_cols = m * m;
  for (index_t y = 0; y < m; ++y) {
    for (index_t x = 0; x < m; ++x) {
      const index_t i = y * m + x;
      coo.push_back(i, i, 4.0);
      if (x > 0) coo.push_back(i, i - 1, -1.0);
      if (x + 1 < m) coo.push_back(i, i + 1, -1.0);
      if (y > 0) coo.push_back(i, i - m, -1.0);
      if (y + 1 < m) coo.push_back(i, i + m, -1.0);
    }
  }
  const auto A = CsrMatrix::from_coo(test::backend_under_test(), coo);
  const MulticolorOrdering ordering = color_matrix(A, ColoringAlgorithm::greedy, 1, 2);
  EXPECT_EQ(ordering.num_colors, 7) << ordering.summary();
  EXPECT_NE(ordering.summary().find("at distance 2"), std::string::npos);
  EXPECT_EQ(color_matrix(A, ColoringAlgorithm::greedy, 1, 1).num_colors, 2);
}

TEST(Coloring, EmptyGraphHasNoColors) {
  const Graph g = graph_of(0, {});
  for (const std::string kernel : {"greedy", "jpl"}) {
    EXPECT_EQ(color(test::backend_under_test(), g, kernel, 3).num_colors, 0);
  }
}

}  // namespace
}  // namespace kryflow
