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

TEST(Coloring, EmptyGraphHasNoColors) {
  const Graph g = graph_of(0, {});
  for (const std::string kernel : {"greedy", "jpl"}) {
    EXPECT_EQ(color(test::backend_under_test(), g, kernel, 3).num_colors, 0);
  }
}

}  // namespace
}  // namespace kryflow
