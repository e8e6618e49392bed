// Gauss-Lobatto-Legendre rules, derivative and interpolation matrices (see gll.hpp for sources).
#include "kryflow/sem/gll.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <string>

#include "kryflow/core/error.hpp"

namespace kryflow::sem {
namespace {

void check_degree(int n, const char* function) {
  if (n < 0) {
    throw InvalidInput(std::string(function) + ": degree must be >= 0, got " + std::to_string(n));
  }
}

void check_order(int order) {
  if (order < min_gll_order || order > max_gll_order) {
    throw InvalidInput("gll_rule: polynomial order must be in [" + std::to_string(min_gll_order) +
                       ", " + std::to_string(max_gll_order) + "], got " + std::to_string(order));
  }
}

void check_rule(const GllRule& rule, const char* function) {
  if (rule.order < min_gll_order || rule.order > max_gll_order) {
    throw InvalidInput(std::string(function) + ": rule order must be in [" +
                       std::to_string(min_gll_order) + ", " + std::to_string(max_gll_order) +
                       "], got " + std::to_string(rule.order));
  }
  const auto n = static_cast<std::size_t>(rule.order) + 1;
  if (rule.nodes.size() != n || rule.weights.size() != n) {
    throw InvalidInput(std::string(function) + ": a rule of order " + std::to_string(rule.order) +
                       " needs " + std::to_string(n) + " nodes and weights, got " +
                       std::to_string(rule.nodes.size()) + " and " +
                       std::to_string(rule.weights.size()));
  }
}

/// Newton's method for a root of P_p' near x0 in (-1, 0]. P_p'' comes from Legendre's equation
/// (1 - x^2) P'' = 2x P' - p (p + 1) P, valid away from x = +-1 (interior roots only).
double newton_root_of_derivative(int p, double x0) {
  double x = x0;
  constexpr int max_iterations = 100;
  for (int it = 0; it < max_iterations; ++it) {
    const double dp = legendre_derivative(p, x);
    const double ddp = (2.0 * x * dp - p * (p + 1.0) * legendre(p, x)) / (1.0 - x * x);
    const double dx = dp / ddp;
    x -= dx;
    if (std::abs(dx) <= std::numeric_limits<double>::epsilon() * std::abs(x)) {
      break;
    }
  }
  return x;
}

}  // namespace

double legendre(int n, double x) {
  check_degree(n, "legendre");
  if (n == 0) {
    return 1.0;
  }
  double p_prev = 1.0;  // P_{k-1}
  double p = x;         // P_k
  for (int k = 1; k < n; ++k) {
    const double p_next = ((2.0 * k + 1.0) * x * p - k * p_prev) / (k + 1.0);
    p_prev = p;
    p = p_next;
  }
  return p;
}

double legendre_derivative(int n, double x) {
  check_degree(n, "legendre_derivative");
  if (n == 0) {
    return 0.0;
  }
  // Carry P_k together with P'_{k-1}, P'_k; P'_{k+1} = P'_{k-1} + (2k + 1) P_k.
  double p_prev = 1.0;   // P_{k-1}
  double p = x;          // P_k
  double dp_prev = 0.0;  // P'_{k-1}
  double dp = 1.0;       // P'_k
  for (int k = 1; k < n; ++k) {
    const double dp_next = dp_prev + (2.0 * k + 1.0) * p;
    const double p_next = ((2.0 * k + 1.0) * x * p - k * p_prev) / (k + 1.0);
    p_prev = p;
    p = p_next;
    dp_prev = dp;
    dp = dp_next;
  }
  return dp;
}

GllRule gll_rule(int order) {
  check_order(order);
  const int p = order;
  const auto n = static_cast<std::size_t>(p) + 1;
  GllRule rule;
  rule.order = p;
  rule.nodes.assign(n, 0.0);
  rule.weights.assign(n, 0.0);

  rule.nodes[0] = -1.0;
  rule.nodes[n - 1] = 1.0;
  // Left half (x < 0) by Newton from the Chebyshev-Gauss-Lobatto guesses, mirrored to the right.
  for (int j = 1; 2 * j < p; ++j) {
    const double guess = -std::cos(std::numbers::pi * j / p);
    const double x = newton_root_of_derivative(p, guess);
    rule.nodes[static_cast<std::size_t>(j)] = x;
    rule.nodes[static_cast<std::size_t>(p - j)] = -x;
  }
  if (p % 2 == 0) {
    rule.nodes[static_cast<std::size_t>(p / 2)] = 0.0;
  }

  // w_j = 2 / (p (p + 1) P_p(x_j)^2) (DFM eq. (B.2.9)); computed on the left half and mirrored.
  for (int j = 0; 2 * j <= p; ++j) {
    const double pj = legendre(p, rule.nodes[static_cast<std::size_t>(j)]);
    const double w = 2.0 / (p * (p + 1.0) * pj * pj);
    rule.weights[static_cast<std::size_t>(j)] = w;
    rule.weights[static_cast<std::size_t>(p - j)] = w;
  }
  return rule;
}

std::vector<double> derivative_matrix(const GllRule& rule) {
  check_rule(rule, "derivative_matrix");
  const int p = rule.order;
  const auto n = static_cast<std::size_t>(p) + 1;
  std::vector<double> lp(n);
  for (std::size_t j = 0; j < n; ++j) {
    lp[j] = legendre(p, rule.nodes[j]);
  }
  std::vector<double> d(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i != j) {
        d[i * n + j] = lp[i] / (lp[j] * (rule.nodes[i] - rule.nodes[j]));
      }
    }
  }
  // Negative sum trick: D_ii = -sum_{j != i} D_ij, computed for the left half of the rows and
  // mirrored (D_{p-i,p-i} = -D_ii) so that D stays exactly centro-antisymmetric. The middle row of
  // an even order has an exactly antisymmetric off-diagonal part, so its diagonal is 0.
  for (std::size_t i = 0; 2 * i <= static_cast<std::size_t>(p); ++i) {
    const std::size_t mirror = n - 1 - i;
    if (i == mirror) {
      d[i * n + i] = 0.0;
      continue;
    }
    double sum = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      if (j != i) {
        sum += d[i * n + j];
      }
    }
    d[i * n + i] = -sum;
    d[mirror * n + mirror] = sum;
  }
  return d;
}

std::vector<double> lagrange_interpolation_matrix(const GllRule& from,
                                                  const std::vector<double>& points) {
  check_rule(from, "lagrange_interpolation_matrix");
  const auto n = from.nodes.size();
  const auto m = points.size();
  // Barycentric weights lambda_j = 1 / prod_{k != j} (x_j - x_k) (Berrut and Trefethen eq. (3.2)).
  std::vector<double> lambda(n, 1.0);
  for (std::size_t j = 0; j < n; ++j) {
    double prod = 1.0;
    for (std::size_t k = 0; k < n; ++k) {
      if (k != j) {
        prod *= from.nodes[j] - from.nodes[k];
      }
    }
    lambda[j] = 1.0 / prod;
  }
  std::vector<double> interp(m * n, 0.0);
  for (std::size_t r = 0; r < m; ++r) {
    const double y = points[r];
    if (!std::isfinite(y)) {
      throw InvalidInput("lagrange_interpolation_matrix: point " + std::to_string(r) +
                         " is not finite");
    }
    double* row = &interp[r * n];
    std::size_t exact = n;
    for (std::size_t j = 0; j < n; ++j) {
      if (y == from.nodes[j]) {
        exact = j;
        break;
      }
    }
    if (exact < n) {
      row[exact] = 1.0;
      continue;
    }
    double denominator = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      row[j] = lambda[j] / (y - from.nodes[j]);
      denominator += row[j];
    }
    for (std::size_t j = 0; j < n; ++j) {
      row[j] /= denominator;
    }
  }
  return interp;
}

}  // namespace kryflow::sem
