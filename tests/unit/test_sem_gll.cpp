// GLL rules, Legendre polynomials, the derivative and interpolation matrices: known values and
// exactness on random polynomials.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/sem/points.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/sem/gll.hpp"

namespace kryflow::sem {
namespace {

constexpr std::uint64_t seed = 20240611;

/// Random coefficients c_0..c_degree in [-1, 1]; the leading one is pushed away from zero so the
/// polynomial has exactly the requested degree.
std::vector<double> random_coefficients(int degree, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> c(static_cast<std::size_t>(degree) + 1);
  for (auto& v : c) {
    v = dist(rng);
  }
  c.back() = std::copysign(0.5 + std::abs(c.back()), c.back());
  return c;
}

double horner(const std::vector<double>& c, double x) {
  double v = 0.0;
  for (auto it = c.rbegin(); it != c.rend(); ++it) {
    v = v * x + *it;
  }
  return v;
}

double horner_derivative(const std::vector<double>& c, double x) {
  double v = 0.0;
  for (std::size_t k = c.size() - 1; k >= 1; --k) {
    v = v * x + static_cast<double>(k) * c[k];
  }
  return v;
}

/// Exact integral over [-1, 1] of sum c_k x^k.
double exact_integral(const std::vector<double>& c) {
  double s = 0.0;
  for (std::size_t k = 0; k < c.size(); k += 2) {
    s += 2.0 * c[k] / (static_cast<double>(k) + 1.0);
  }
  return s;
}

double quadrature(const GllRule& rule, const std::vector<double>& c) {
  double s = 0.0;
  for (int j = 0; j < rule.num_points(); ++j) {
    s += rule.weights[j] * horner(c, rule.nodes[j]);
  }
  return s;
}

std::vector<double> matvec(const std::vector<double>& a, const std::vector<double>& x) {
  const std::size_t n = x.size();
  const std::size_t m = a.size() / n;
  std::vector<double> y(m, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      y[i] += a[i * n + j] * x[j];
    }
  }
  return y;
}

TEST(Legendre, MatchesClosedFormsUpToDegreeFour) {
  for (double x : {-1.0, -0.73, -0.2, 0.0, 0.31, 0.9, 1.0, 1.7}) {
    const double x2 = x * x;
    EXPECT_DOUBLE_EQ(legendre(0, x), 1.0);
    EXPECT_DOUBLE_EQ(legendre(1, x), x);
    EXPECT_NEAR(legendre(2, x), 0.5 * (3.0 * x2 - 1.0), 1e-15);
    EXPECT_NEAR(legendre(3, x), 0.5 * (5.0 * x2 * x - 3.0 * x), 1e-14);
    EXPECT_NEAR(legendre(4, x), (35.0 * x2 * x2 - 30.0 * x2 + 3.0) / 8.0, 1e-14);
    EXPECT_DOUBLE_EQ(legendre_derivative(0, x), 0.0);
    EXPECT_DOUBLE_EQ(legendre_derivative(1, x), 1.0);
    EXPECT_NEAR(legendre_derivative(2, x), 3.0 * x, 1e-15);
    EXPECT_NEAR(legendre_derivative(3, x), 0.5 * (15.0 * x2 - 3.0), 1e-14);
    EXPECT_NEAR(legendre_derivative(4, x), (140.0 * x2 * x - 60.0 * x) / 8.0, 1e-14);
  }
}

TEST(Legendre, EndpointValues) {
  for (int n = 0; n <= 20; ++n) {
    const double sign = (n % 2 == 0) ? 1.0 : -1.0;
    EXPECT_DOUBLE_EQ(legendre(n, 1.0), 1.0);
    EXPECT_DOUBLE_EQ(legendre(n, -1.0), sign);
    EXPECT_DOUBLE_EQ(legendre_derivative(n, 1.0), 0.5 * n * (n + 1.0));
    EXPECT_DOUBLE_EQ(legendre_derivative(n, -1.0), -sign * 0.5 * n * (n + 1.0));
  }
}

TEST(Legendre, NegativeDegreeThrows) {
  EXPECT_THROW(legendre(-1, 0.5), InvalidInput);
  EXPECT_THROW(legendre_derivative(-1, 0.5), InvalidInput);
}

TEST(GllRule, KnownNodesAndWeights) {
  const GllRule r1 = gll_rule(1);
  EXPECT_EQ(r1.nodes, (std::vector<double>{-1.0, 1.0}));
  EXPECT_EQ(r1.weights, (std::vector<double>{1.0, 1.0}));

  const GllRule r2 = gll_rule(2);
  EXPECT_EQ(r2.nodes, (std::vector<double>{-1.0, 0.0, 1.0}));
  EXPECT_NEAR(r2.weights[0], 1.0 / 3.0, 1e-15);
  EXPECT_NEAR(r2.weights[1], 4.0 / 3.0, 1e-15);
  EXPECT_NEAR(r2.weights[2], 1.0 / 3.0, 1e-15);

  const GllRule r3 = gll_rule(3);
  const double a = 1.0 / std::sqrt(5.0);
  ASSERT_EQ(r3.nodes.size(), 4u);
  EXPECT_EQ(r3.nodes[0], -1.0);
  EXPECT_NEAR(r3.nodes[1], -a, 1e-15);
  EXPECT_NEAR(r3.nodes[2], a, 1e-15);
  EXPECT_EQ(r3.nodes[3], 1.0);
  EXPECT_NEAR(r3.weights[0], 1.0 / 6.0, 1e-15);
  EXPECT_NEAR(r3.weights[1], 5.0 / 6.0, 1e-15);

  const GllRule r4 = gll_rule(4);
  const double b = std::sqrt(3.0 / 7.0);
  ASSERT_EQ(r4.nodes.size(), 5u);
  EXPECT_NEAR(r4.nodes[1], -b, 1e-15);
  EXPECT_EQ(r4.nodes[2], 0.0);
  EXPECT_NEAR(r4.nodes[3], b, 1e-15);
  EXPECT_NEAR(r4.weights[0], 1.0 / 10.0, 1e-15);
  EXPECT_NEAR(r4.weights[1], 49.0 / 90.0, 1e-15);
  EXPECT_NEAR(r4.weights[2], 32.0 / 45.0, 1e-15);
}

TEST(GllRule, NodesAreSymmetricAscendingRootsOfLegendreDerivative) {
  for (int p = min_gll_order; p <= max_gll_order; ++p) {
    SCOPED_TRACE(p);
    const GllRule r = gll_rule(p);
    ASSERT_EQ(r.order, p);
    ASSERT_EQ(r.num_points(), p + 1);
    ASSERT_EQ(r.nodes.size(), static_cast<std::size_t>(p + 1));
    ASSERT_EQ(r.weights.size(), static_cast<std::size_t>(p + 1));
    EXPECT_EQ(r.nodes.front(), -1.0);
    EXPECT_EQ(r.nodes.back(), 1.0);
    EXPECT_TRUE(std::is_sorted(r.nodes.begin(), r.nodes.end()));
    EXPECT_EQ(std::adjacent_find(r.nodes.begin(), r.nodes.end()), r.nodes.end());
    for (int j = 0; j <= p; ++j) {
      EXPECT_EQ(r.nodes[p - j], -r.nodes[j]);
      EXPECT_EQ(r.weights[p - j], r.weights[j]);
      EXPECT_GT(r.weights[j], 0.0);
    }
    if (p % 2 == 0) {
      EXPECT_EQ(r.nodes[p / 2], 0.0);
    }
    // |P_p'(x_j)| relative to its scale max |P_p'| = p (p + 1) / 2 on [-1, 1].
    for (int j = 1; j < p; ++j) {
      EXPECT_LE(std::abs(legendre_derivative(p, r.nodes[j])), 1e-14 * p * (p + 1.0) / 2.0);
    }
  }
}

TEST(GllRule, WeightsSumToTwo) {
  for (int p = min_gll_order; p <= max_gll_order; ++p) {
    const GllRule r = gll_rule(p);
    double s = 0.0;
    for (double w : r.weights) {
      s += w;
    }
    EXPECT_NEAR(s, 2.0, 4e-15) << "p = " << p;
  }
}

TEST(GllRule, QuadratureExactForMonomialsUpToDegreeTwoPMinusOne) {
  for (int p = min_gll_order; p <= max_gll_order; ++p) {
    const GllRule r = gll_rule(p);
    for (int k = 0; k <= 2 * p - 1; ++k) {
      std::vector<double> c(static_cast<std::size_t>(k) + 1, 0.0);
      c.back() = 1.0;
      const double exact = exact_integral(c);  // 2 / (k + 1) for even k, 0 for odd k
      // Relative 1e-14 for even k; odd monomials integrate to 0, compared with absolute 1e-15.
      EXPECT_NEAR(quadrature(r, c), exact, k % 2 == 0 ? 1e-14 * exact : 1e-15)
          << "p = " << p << ", k = " << k;
    }
  }
}

TEST(GllRule, QuadratureExactForRandomPolynomialsOfDegreeTwoPMinusOne) {
  std::mt19937_64 rng(seed);
  for (int p = min_gll_order; p <= max_gll_order; ++p) {
    for (int trial = 0; trial < 5; ++trial) {
      const auto c = random_coefficients(2 * p - 1, rng);
      double scale = 0.0;  // integral of sum |c_k| |x|^k
      for (std::size_t k = 0; k < c.size(); ++k) {
        scale += 2.0 * std::abs(c[k]) / (static_cast<double>(k) + 1.0);
      }
      EXPECT_NEAR(quadrature(gll_rule(p), c), exact_integral(c), 1e-14 * scale)
          << "p = " << p << ", seed " << seed;
    }
  }
}

TEST(GllRule, QuadratureOfDegreeTwoPHasTheKnownLobattoError) {
  // Abramowitz and Stegun 25.4.32 with n = p + 1 points and f = x^(2p), f^(2p) = (2p)!:
  // Q(f) - I(f) = (p + 1) p^3 2^(2p + 1) ((p - 1)!)^4 / ((2p + 1) ((2p)!)^2) > 0.
  for (int p = min_gll_order; p <= max_gll_order; ++p) {
    const GllRule r = gll_rule(p);
    std::vector<double> c(static_cast<std::size_t>(2 * p) + 1, 0.0);
    c.back() = 1.0;
    const double error = quadrature(r, c) - exact_integral(c);
    const double fact_pm1 = std::tgamma(static_cast<double>(p));
    const double fact_2p = std::tgamma(2.0 * p + 1.0);
    const double known = (p + 1.0) * p * p * p * std::pow(2.0, 2 * p + 1) * std::pow(fact_pm1, 4) /
                         ((2.0 * p + 1.0) * fact_2p * fact_2p);
    EXPECT_GT(error, 0.0) << "p = " << p;
    // The quadrature sum has rounding error ~1e-16 on values of size ~1, so the relative check
    // loosens as the true error (about 4^-p) shrinks.
    EXPECT_NEAR(error, known, 1e-12 * known + 4e-16) << "p = " << p;
  }
}

TEST(SemDerivativeMatrix, RowsSumToZero) {
  for (int p = min_gll_order; p <= max_gll_order; ++p) {
    const GllRule r = gll_rule(p);
    const auto d = derivative_matrix(r);
    const auto n = static_cast<std::size_t>(p) + 1;
    ASSERT_EQ(d.size(), n * n);
    for (std::size_t i = 0; i < n; ++i) {
      double s = 0.0;
      double scale = 0.0;
      for (std::size_t j = 0; j < n; ++j) {
        s += d[i * n + j];
        scale += std::abs(d[i * n + j]);
      }
      EXPECT_LE(std::abs(s), 1e-15 * scale) << "p = " << p << ", row " << i;
    }
  }
}

TEST(SemDerivativeMatrix, DiagonalMatchesClosedFormAndIsCentroAntisymmetric) {
  for (int p = min_gll_order; p <= max_gll_order; ++p) {
    const auto d = derivative_matrix(gll_rule(p));
    const auto n = static_cast<std::size_t>(p) + 1;
    const double corner = p * (p + 1.0) / 4.0;
    EXPECT_NEAR(d[0], -corner, 1e-13 * corner) << "p = " << p;
    EXPECT_NEAR(d[n * n - 1], corner, 1e-13 * corner) << "p = " << p;
    for (std::size_t i = 1; i + 1 < n; ++i) {
      EXPECT_NEAR(d[i * n + i], 0.0, 1e-13 * corner) << "p = " << p << ", i = " << i;
    }
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        EXPECT_EQ(d[(n - 1 - i) * n + (n - 1 - j)], -d[i * n + j]);
      }
    }
  }
}

TEST(SemDerivativeMatrix, KnownMatrixForOrderTwo) {
  // Nodes -1, 0, 1: l_j' evaluated at the nodes (second-order finite differences).
  const auto d = derivative_matrix(gll_rule(2));
  const std::vector<double> expected{-1.5, 2.0, -0.5, -0.5, 0.0, 0.5, 0.5, -2.0, 1.5};
  for (std::size_t k = 0; k < 9; ++k) {
    EXPECT_NEAR(d[k], expected[k], 1e-15) << "entry " << k;
  }
}

TEST(SemDerivativeMatrix, DifferentiatesMonomialsExactly) {
  // Error bound: 2e-15 * p^2 * (k + 1). ||D||_inf grows like p^2 and |x^k| <= 1, |k x^(k-1)| <= k.
  for (int p = min_gll_order; p <= max_gll_order; ++p) {
    const GllRule r = gll_rule(p);
    const auto d = derivative_matrix(r);
    for (int k = 0; k <= p; ++k) {
      std::vector<double> u(r.nodes.size());
      for (std::size_t j = 0; j < u.size(); ++j) {
        u[j] = std::pow(r.nodes[j], k);
      }
      const auto du = matvec(d, u);
      for (std::size_t i = 0; i < u.size(); ++i) {
        const double exact = k == 0 ? 0.0 : k * std::pow(r.nodes[i], k - 1);
        EXPECT_NEAR(du[i], exact, 2e-15 * p * p * (k + 1.0))
            << "p = " << p << ", k = " << k << ", i = " << i;
      }
    }
  }
}

TEST(SemDerivativeMatrix, DifferentiatesRandomPolynomialsOfDegreeP) {
  std::mt19937_64 rng(seed);
  for (int p = min_gll_order; p <= max_gll_order; ++p) {
    const GllRule r = gll_rule(p);
    const auto d = derivative_matrix(r);
    for (int trial = 0; trial < 5; ++trial) {
      const auto c = random_coefficients(p, rng);
      double scale = 0.0;  // sum_k k |c_k| bounds |u'| on [-1, 1]
      for (std::size_t k = 1; k < c.size(); ++k) {
        scale += static_cast<double>(k) * std::abs(c[k]);
      }
      std::vector<double> u(r.nodes.size());
      for (std::size_t j = 0; j < u.size(); ++j) {
        u[j] = horner(c, r.nodes[j]);
      }
      const auto du = matvec(d, u);
      for (std::size_t i = 0; i < u.size(); ++i) {
        EXPECT_NEAR(du[i], horner_derivative(c, r.nodes[i]), 1e-14 * p * scale)
            << "p = " << p << ", i = " << i << ", seed " << seed;
      }
    }
  }
}

TEST(SemDerivativeMatrix, OrderFifteenDifferentiatesXToTheFifteen) {
  const GllRule r = gll_rule(15);
  const auto d = derivative_matrix(r);
  std::vector<double> u(r.nodes.size());
  for (std::size_t j = 0; j < u.size(); ++j) {
    u[j] = std::pow(r.nodes[j], 15);
  }
  const auto du = matvec(d, u);
  for (std::size_t i = 0; i < u.size(); ++i) {
    EXPECT_NEAR(du[i], 15.0 * std::pow(r.nodes[i], 14), 1e-12) << "i = " << i;
  }
}

TEST(SemDerivativeMatrix, MalformedRuleThrows) {
  GllRule r = gll_rule(3);
  r.nodes.pop_back();
  EXPECT_THROW(derivative_matrix(r), InvalidInput);
  GllRule bad_order = gll_rule(3);
  bad_order.order = 16;
  EXPECT_THROW(derivative_matrix(bad_order), InvalidInput);
}

TEST(SemInterpolation, ReproducesPolynomialsOfDegreeAtMostP) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> in_interval(-1.0, 1.0);
  for (int p = min_gll_order; p <= max_gll_order; ++p) {
    const GllRule r = gll_rule(p);
    std::vector<double> points(23);
    for (auto& y : points) {
      y = in_interval(rng);
    }
    points[0] = -1.0;  // a node exactly: the unit-row branch
    points[1] = r.nodes[static_cast<std::size_t>(p / 2)];
    const auto interp = lagrange_interpolation_matrix(r, points);
    ASSERT_EQ(interp.size(), points.size() * r.nodes.size());
    for (int degree = 0; degree <= p; ++degree) {
      const auto c = random_coefficients(degree, rng);
      double scale = 0.0;
      for (double ck : c) {
        scale += std::abs(ck);
      }
      std::vector<double> u(r.nodes.size());
      for (std::size_t j = 0; j < u.size(); ++j) {
        u[j] = horner(c, r.nodes[j]);
      }
      const auto v = matvec(interp, u);
      for (std::size_t k = 0; k < points.size(); ++k) {
        EXPECT_NEAR(v[k], horner(c, points[k]), 1e-14 * p * scale)
            << "p = " << p << ", degree " << degree << ", y = " << points[k] << ", seed " << seed;
      }
    }
  }
}

TEST(SemInterpolation, BetweenGllRulesOfDifferentOrder) {
  // Prolongation from order 3 to order 7 nodes reproduces a cubic; rows sum to one.
  std::mt19937_64 rng(seed);
  const GllRule coarse = gll_rule(3);
  const GllRule fine = gll_rule(7);
  const auto interp = lagrange_interpolation_matrix(coarse, fine.nodes);
  const auto c = random_coefficients(3, rng);
  std::vector<double> u(coarse.nodes.size());
  for (std::size_t j = 0; j < u.size(); ++j) {
    u[j] = horner(c, coarse.nodes[j]);
  }
  const auto v = matvec(interp, u);
  for (std::size_t k = 0; k < fine.nodes.size(); ++k) {
    EXPECT_NEAR(v[k], horner(c, fine.nodes[k]), 1e-14);
    double row_sum = 0.0;
    for (std::size_t j = 0; j < u.size(); ++j) {
      row_sum += interp[k * u.size() + j];
    }
    EXPECT_NEAR(row_sum, 1.0, 1e-15);
  }
}

TEST(SemInterpolation, NonFinitePointThrows) {
  EXPECT_THROW(lagrange_interpolation_matrix(gll_rule(2), {0.5, std::nan("")}), InvalidInput);
  EXPECT_THROW(
      lagrange_interpolation_matrix(gll_rule(2), {std::numeric_limits<double>::infinity()}),
      InvalidInput);
}

TEST(GllRule, OrderOutsideOneToFifteenThrowsNamingTheRange) {
  for (int p : {-1, 0, 16, 100}) {
    try {
      (void)gll_rule(p);
      ADD_FAILURE() << "no exception for p = " << p;
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("[1, 15]"), std::string::npos) << e.what();
    }
  }
}

/// with_points calls the instantiation for each count of its range, and nothing outside it.
TEST(SemPoints, DispatchesEveryCountOfItsRangeOnly) {
  for (int points = 0; points <= 19; ++points) {
    int seen = -1;
    const bool called =
        kernels::sem::with_points<2, 17>(points, [&](auto n) { seen = decltype(n)::value; });
    EXPECT_EQ(called, points >= 2 && points <= 17) << points;
    EXPECT_EQ(seen, called ? points : -1) << points;
  }
}

}  // namespace
}  // namespace kryflow::sem
