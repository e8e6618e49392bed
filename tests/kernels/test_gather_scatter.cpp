// Gather-scatter Q Q^T on the backend under test against a sum computed here from the
// numbering alone, bit for bit, on meshes with elements in every orientation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kryflow/core/error.hpp"
#include "kryflow/linalg/vector.hpp"
#include "kryflow/sem/gather_scatter.hpp"
#include "kryflow/sem/numbering.hpp"
#include "test_support.hpp"

namespace kryflow::sem {
namespace {

TEST(GatherScatter, SumsSharedPointsLikeTheNumberingSays) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const Backend backend = test::backend_under_test();
  for (int p : {1, 3, 7}) {
    SCOPED_TRACE(p);
    std::vector<double> vertices = test::hex_box_vertices(4, 3, 3);
    test::reorient_hex_elements(vertices, seed + static_cast<std::uint64_t>(p));
    const GlobalNumbering numbering = number_gll_points(36, vertices, p);
    const GatherScatter gs(backend, numbering);
    const std::size_t n = numbering.local_to_global.size();
    ASSERT_EQ(gs.num_local(), static_cast<std::int64_t>(n));

    const std::vector<double> u =
        test::random_vector(n, seed + 100 + static_cast<std::uint64_t>(p));
    // Expected: per global point, its locals added in increasing local index.
    std::vector<double> sums(static_cast<std::size_t>(numbering.num_global), 0.0);
    for (std::size_t l = 0; l < n; ++l) {
      sums[static_cast<std::size_t>(numbering.local_to_global[l])] += u[l];
    }
    std::vector<double> expected(n);
    for (std::size_t l = 0; l < n; ++l) {
      const auto g = static_cast<std::size_t>(numbering.local_to_global[l]);
      expected[l] = numbering.multiplicity[g] > 1 ? sums[g] : u[l];
    }

    Vector uv = Vector::from_host(backend, u);
    gs.apply(uv);
    EXPECT_EQ(uv.to_host(), expected);
    // Applying it again multiplies each shared value by its multiplicity.
    gs.apply(uv);
    const std::vector<double> twice = uv.to_host();
    int wrong = 0;
    for (std::size_t l = 0; l < n; ++l) {
      const auto g = static_cast<std::size_t>(numbering.local_to_global[l]);
      const int m = numbering.multiplicity[g];
      if (m > 1 &&
          std::abs(twice[l] - m * expected[l]) > 1e-12 * std::abs(m * expected[l]) + 1e-300)
        ++wrong;
    }
    EXPECT_EQ(wrong, 0);
  }
}

TEST(GatherScatter, RejectsAVectorOfTheWrongSize) {
  const Backend backend = test::backend_under_test();
  const GlobalNumbering numbering = number_gll_points(1, test::hex_box_vertices(1, 1, 1), 2);
  const GatherScatter gs(backend, numbering);
  Vector wrong = Vector::constant(backend, 26, 1.0);
  EXPECT_THROW(gs.apply(wrong), DimensionMismatch);
}

}  // namespace
}  // namespace kryflow::sem
