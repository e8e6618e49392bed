// GLL nodes, weights, derivative and interpolation against known values and exactness on
// polynomials.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kryflow/core/error.hpp"
#include "kryflow/sem/gll.hpp"

namespace kryflow::sem {
namespace {

TEST(Legendre, MatchesClosedForms) {
  for (double x : {-0.9, -0.3, 0.0, 0.41, 0.77, 1.0}) {
    EXPECT_DOUBLE_EQ(legendre(0, x).value, 1.0);
    EXPECT_DOUBLE_EQ(legendre(1, x).value, x);
    EXPECT_NEAR(legendre(2, x).value, 0.5 * (3 * x * x - 1), 1e-15);
    EXPECT_NEAR(legendre(3, x).value, 0.5 * (5 * x * x * x - 3 * x), 1e-15);
    EXPECT_NEAR(legendre(4, x).value, (35 * std::pow(x, 4) - 30 * x * x + 3) / 8, 1e-15);
    EXPECT_NEAR(legendre(4, x).derivative, (140 * std::pow(x, 3) - 60 * x) / 8, 1e-14);
  }
}

TEST(Gll, KnownNodesAndWeights) {
  const GllRule p1 = gll_rule(1);
  EXPECT_EQ(p1.nodes, (std::vector<double>{-1.0, 1.0}));
  EXPECT_EQ(p1.weights, (std::vector<double>{1.0, 1.0}));
  const GllRule p2 = gll_rule(2);
  EXPECT_EQ(p2.nodes[1], 0.0);
  EXPECT_NEAR(p2.weights[0], 1.0 / 3, 1e-15);
  EXPECT_NEAR(p2.weights[1], 4.0 / 3, 1e-15);
  const GllRule p3 = gll_rule(3);
  EXPECT_NEAR(p3.nodes[1], -1.0 / std::sqrt(5.0), 1e-15);
  EXPECT_NEAR(p3.weights[0], 1.0 / 6, 1e-15);
  EXPECT_NEAR(p3.weights[1], 5.0 / 6, 1e-15);
  const GllRule p4 = gll_rule(4);
  EXPECT_NEAR(p4.nodes[3], std::sqrt(3.0 / 7), 1e-15);
  EXPECT_NEAR(p4.weights[0], 1.0 / 10, 1e-15);
  EXPECT_NEAR(p4.weights[1], 49.0 / 90, 1e-15);
  EXPECT_NEAR(p4.weights[2], 32.0 / 45, 1e-15);
}

TEST(Gll, WeightsIntegrateMonomialsUpToDegree2pMinus1) {
  for (int p = 1; p <= 15; ++p) {
    SCOPED_TRACE(p);
    const GllRule rule = gll_rule(p);
    double sum = 0.0;
    for (double w : rule.weights) sum += w;
    EXPECT_NEAR(sum, 2.0, 1e-14);
    for (int j = 0; j <= p; ++j) EXPECT_EQ(rule.nodes[j], -rule.nodes[p - j]);
    for (int k = 0; k <= 2 * p; ++k) {
      double q = 0.0;
      for (int j = 0; j <= p; ++j) q += rule.weights[j] * std::pow(rule.nodes[j], k);
      const double exact = k % 2 == 1 ? 0.0 : 2.0 / (k + 1);
      if (k <= 2 * p - 1) {
        EXPECT_NEAR(q, exact, 1e-14) << "degree " << k;
      } else {
        EXPECT_GT(std::abs(q - exact), 1e-12) << "degree 2p is not exact for GLL";
      }
    }
  }
}

TEST(Gll, DerivativeIsExactOnRandomPolynomialsOfDegreeP) {
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> coefficient(-1.0, 1.0);
  for (int p = 1; p <= 15; ++p) {
    SCOPED_TRACE(p);
    const GllRule rule = gll_rule(p);
    const std::vector<double> D = derivative_matrix(rule);
    const int N = p + 1;
    std::vector<double> c(static_cast<std::size_t>(N));
    for (double& v : c) v = coefficient(rng);
    auto f = [&](double x, bool derivative) {
      double s = 0.0;
      for (int k = 0; k <= p; ++k) {
        s += derivative ? (k == 0 ? 0.0 : k * c[k] * std::pow(x, k - 1)) : c[k] * std::pow(x, k);
      }
      return s;
    };
    for (int i = 0; i < N; ++i) {
      double row_sum = 0.0;
      double d = 0.0;
      for (int j = 0; j < N; ++j) {
        row_sum += D[i * N + j];
        d += D[i * N + j] * f(rule.nodes[j], false);
      }
      EXPECT_NEAR(row_sum, 0.0, 1e-11 * p * p);
      EXPECT_NEAR(d, f(rule.nodes[i], true), 1e-11 * p * p);
    }
  }
}

TEST(Gll, InterpolationReproducesPolynomials) {
  const GllRule rule = gll_rule(7);
  const std::vector<double> points = {-0.95, -0.2, 0.0, 0.33, 0.999, 1.0};
  const std::vector<double> I = interpolation_matrix(rule, points);
  for (std::size_t q = 0; q < points.size(); ++q) {
    double s = 0.0;
    for (int j = 0; j <= 7; ++j) s += I[q * 8 + j] * std::pow(rule.nodes[j], 7);
    EXPECT_NEAR(s, std::pow(points[q], 7), 1e-13);
  }
}

TEST(Gll, RejectsOrdersOutsideTheRange) {
  EXPECT_THROW(gll_rule(0), InvalidInput);
  EXPECT_THROW(gll_rule(16), InvalidInput);
  EXPECT_THROW(legendre(-1, 0.0), InvalidInput);
}

}  // namespace
}  // namespace kryflow::sem
