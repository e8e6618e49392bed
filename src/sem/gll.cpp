// GLL nodes and weights, the collocation derivative and interpolation.
#include "kryflow/sem/gll.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include "kryflow/core/error.hpp"

namespace kryflow::sem {

LegendreValue legendre(int n, double x) {
  if (n < 0) throw InvalidInput("legendre: degree must be >= 0, got " + std::to_string(n));
  double previous = 1.0;  // P_0
  double current = x;     // P_1
  double d_previous = 0.0;
  double d_current = 1.0;
  if (n == 0) return {1.0, 0.0};
  for (int k = 1; k < n; ++k) {
    const double next = ((2.0 * k + 1.0) * x * current - k * previous) / (k + 1.0);
    // P'_{k+1} = P'_{k-1} + (2k + 1) P_k
    const double d_next = d_previous + (2.0 * k + 1.0) * current;
    previous = current;
    current = next;
    d_previous = d_current;
    d_current = d_next;
  }
  return {current, d_current};
}

GllRule gll_rule(int order) {
  if (order < 1 || order > 15) {
    throw InvalidInput("gll_rule: polynomial order must be 1..15, got " + std::to_string(order));
  }
  const int p = order;
  GllRule rule;
  rule.order = p;
  rule.nodes.assign(static_cast<std::size_t>(p + 1), 0.0);
  rule.weights.assign(static_cast<std::size_t>(p + 1), 0.0);
  rule.nodes[0] = -1.0;
  rule.nodes[static_cast<std::size_t>(p)] = 1.0;
  for (int j = 1; j <= p / 2; ++j) {
    // Newton on P_p'(x) = 0; P_p'' from the Legendre equation (1 - x^2) P'' = 2x P' - p(p+1) P.
    double x = -std::cos(std::numbers::pi * j / p);
    for (int iteration = 0; iteration < 100; ++iteration) {
      const LegendreValue l = legendre(p, x);
      const double second = (2.0 * x * l.derivative - p * (p + 1.0) * l.value) / (1.0 - x * x);
      const double step = l.derivative / second;
      x -= step;
      if (std::abs(step) <= 1e-16) break;
    }
    rule.nodes[static_cast<std::size_t>(j)] = x;
    rule.nodes[static_cast<std::size_t>(p - j)] = -x;
  }
  if (p % 2 == 0) rule.nodes[static_cast<std::size_t>(p / 2)] = 0.0;
  for (int j = 0; j <= p; ++j) {
    const double value = legendre(p, rule.nodes[static_cast<std::size_t>(j)]).value;
    rule.weights[static_cast<std::size_t>(j)] = 2.0 / (p * (p + 1.0) * value * value);
  }
  return rule;
}

std::vector<double> derivative_matrix(const GllRule& rule) {
  const int p = rule.order;
  const int N = p + 1;
  std::vector<double> values(static_cast<std::size_t>(N));
  for (int j = 0; j < N; ++j) values[j] = legendre(p, rule.nodes[j]).value;
  std::vector<double> D(static_cast<std::size_t>(N) * N, 0.0);
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < N; ++j) {
      if (i != j) D[i * N + j] = values[i] / (values[j] * (rule.nodes[i] - rule.nodes[j]));
    }
  }
  D[0] = -p * (p + 1.0) / 4.0;
  D[static_cast<std::size_t>(N) * N - 1] = p * (p + 1.0) / 4.0;
  return D;
}

std::vector<double> interpolation_matrix(const GllRule& rule, const std::vector<double>& points) {
  const int N = rule.order + 1;
  // Barycentric weights lambda_j = 1 / prod_{k != j} (x_j - x_k).
  std::vector<double> lambda(static_cast<std::size_t>(N), 1.0);
  for (int j = 0; j < N; ++j) {
    for (int k = 0; k < N; ++k) {
      if (k != j) lambda[j] /= rule.nodes[j] - rule.nodes[k];
    }
  }
  std::vector<double> I(points.size() * static_cast<std::size_t>(N), 0.0);
  for (std::size_t q = 0; q < points.size(); ++q) {
    const double x = points[q];
    int exact = -1;
    for (int j = 0; j < N; ++j) {
      if (x == rule.nodes[j]) exact = j;
    }
    if (exact >= 0) {
      I[q * N + static_cast<std::size_t>(exact)] = 1.0;
      continue;
    }
    double total = 0.0;
    for (int j = 0; j < N; ++j) total += lambda[j] / (x - rule.nodes[j]);
    for (int j = 0; j < N; ++j) I[q * N + j] = lambda[j] / (x - rule.nodes[j]) / total;
  }
  return I;
}

}  // namespace kryflow::sem
