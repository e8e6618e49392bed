// Global numbering of GLL points: counts on boxes, and every local point of one global point at
// one position, whatever the orientation of the elements.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "kryflow/core/error.hpp"
#include "kryflow/sem/numbering.hpp"
#include "test_support.hpp"

namespace kryflow::sem {
namespace {

std::vector<double> box(int nx, int ny, int nz) {
  return test::hex_box_vertices(nx, ny, nz);
}

/// Physical position of local point (i, j, k) of element e under the trilinear map, with
/// equispaced reference points (the numbering does not depend on where the points are).
std::array<double, 3> position(const std::vector<double>& v, std::int64_t e, int p, int i, int j,
                               int k) {
  const double r[3] = {static_cast<double>(i) / p, static_cast<double>(j) / p,
                       static_cast<double>(k) / p};
  std::array<double, 3> x = {0.0, 0.0, 0.0};
  for (int c = 0; c < 8; ++c) {
    double w = 1.0;
    for (int d = 0; d < 3; ++d) w *= ((c >> d) & 1) != 0 ? r[d] : 1.0 - r[d];
    for (int d = 0; d < 3; ++d) x[d] += w * v[e * 24 + c * 3 + d];
  }
  return x;
}

/// Every global point's local points share one position, and distinct global points differ.
void expect_consistent(const std::vector<double>& v, const GlobalNumbering& g) {
  const int p = g.order;
  const int N = p + 1;
  std::vector<std::array<double, 3>> at(static_cast<std::size_t>(g.num_global));
  std::vector<bool> seen(static_cast<std::size_t>(g.num_global), false);
  int mismatches = 0;
  for (std::int64_t e = 0; e < g.num_elements; ++e) {
    for (int k = 0; k < N; ++k) {
      for (int j = 0; j < N; ++j) {
        for (int i = 0; i < N; ++i) {
          const auto global = static_cast<std::size_t>(
              g.local_to_global[static_cast<std::size_t>(((e * N + k) * N + j) * N + i)]);
          ASSERT_LT(global, at.size());
          const auto x = position(v, e, p, i, j, k);
          if (!seen[global]) {
            seen[global] = true;
            at[global] = x;
          } else {
            for (int d = 0; d < 3; ++d) {
              if (std::abs(at[global][d] - x[d]) > 1e-12) ++mismatches;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
  std::map<std::array<long long, 3>, int> distinct;
  for (std::size_t q = 0; q < at.size(); ++q) {
    ASSERT_TRUE(seen[q]) << "global point " << q << " has no local point";
    std::array<long long, 3> key;
    for (int d = 0; d < 3; ++d) key[d] = std::llround(at[q][d] * 1e9);
    ++distinct[key];
  }
  EXPECT_EQ(static_cast<std::int64_t>(distinct.size()), g.num_global);
}

TEST(SemNumbering, BoxCountsAndMultiplicities) {
  for (int p = 1; p <= 5; ++p) {
    SCOPED_TRACE(p);
    const std::vector<double> v = box(3, 2, 4);
    const GlobalNumbering g = number_gll_points(24, v, p);
    EXPECT_EQ(g.num_global, (3LL * p + 1) * (2LL * p + 1) * (4LL * p + 1));
    EXPECT_EQ(g.num_vertices, 4 * 3 * 5);
    EXPECT_EQ(g.num_edges, 3 * 3 * 5 + 4 * 2 * 5 + 4 * 3 * 4);
    EXPECT_EQ(g.num_faces, 4 * 2 * 4 + 3 * 3 * 4 + 3 * 2 * 5);
    std::int64_t total = 0;
    int max_multiplicity = 0;
    for (int count : g.multiplicity) {
      total += count;
      max_multiplicity = std::max(max_multiplicity, count);
    }
    EXPECT_EQ(total, 24LL * (p + 1) * (p + 1) * (p + 1));
    EXPECT_EQ(max_multiplicity, 8);  // an interior vertex of the box
    std::int64_t boundary = 0;
    for (char b : g.on_boundary) boundary += b;
    const std::int64_t interior = (3LL * p - 1) * (2LL * p - 1) * (4LL * p - 1);
    EXPECT_EQ(boundary, g.num_global - interior);
    expect_consistent(v, g);
  }
}

TEST(SemNumbering, AnyRelativeOrientationOfTheElements) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  for (int p = 2; p <= 6; ++p) {
    SCOPED_TRACE(p);
    std::vector<double> v = box(3, 3, 2);
    test::reorient_hex_elements(v, seed + static_cast<std::uint64_t>(p));
    const GlobalNumbering g = number_gll_points(18, v, p);
    EXPECT_EQ(g.num_global, (3LL * p + 1) * (3LL * p + 1) * (2LL * p + 1));
    std::int64_t boundary = 0;
    for (char b : g.on_boundary) boundary += b;
    EXPECT_EQ(boundary, g.num_global - (3LL * p - 1) * (3LL * p - 1) * (2LL * p - 1));
    expect_consistent(v, g);
  }
}

TEST(SemNumbering, RejectsBadInput) {
  const std::vector<double> v = box(1, 1, 1);
  EXPECT_THROW(number_gll_points(1, v, 0), InvalidInput);
  EXPECT_THROW(number_gll_points(2, v, 2), InvalidInput);
  std::vector<double> nan = v;
  nan[5] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(number_gll_points(1, nan, 2), InvalidInput);
  std::vector<double> collapsed = v;
  for (int d = 0; d < 3; ++d) collapsed[7 * 3 + d] = collapsed[d];  // corner 7 onto corner 0
  EXPECT_THROW(number_gll_points(1, collapsed, 2), InvalidInput);
  // Three elements on one face: the same cube three times.
  std::vector<double> three = v;
  three.insert(three.end(), v.begin(), v.end());
  three.insert(three.end(), v.begin(), v.end());
  EXPECT_THROW(number_gll_points(3, three, 2), InvalidInput);
}

TEST(SemNumbering, EmptyMesh) {
  const GlobalNumbering g = number_gll_points(0, {}, 3);
  EXPECT_EQ(g.num_global, 0);
  EXPECT_TRUE(g.local_to_global.empty());
}

}  // namespace
}  // namespace kryflow::sem
