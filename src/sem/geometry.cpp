// Metric terms of trilinear hexahedra at GLL points.
#include "kryflow/sem/geometry.hpp"

#include <string>

#include "kryflow/core/error.hpp"

namespace kryflow::sem {

void trilinear_map(const double* corners, const double r[3], double* x, double J[3][3]) {
  for (int a = 0; a < 3; ++a) {
    if (x != nullptr) x[a] = 0.0;
    for (int d = 0; d < 3; ++d) J[a][d] = 0.0;
  }
  for (int v = 0; v < 8; ++v) {
    double h[3];
    double dh[3];
    for (int d = 0; d < 3; ++d) {
      const double sign = ((v >> d) & 1) != 0 ? 1.0 : -1.0;
      h[d] = 0.5 * (1.0 + sign * r[d]);
      dh[d] = 0.5 * sign;
    }
    const double dN[3] = {dh[0] * h[1] * h[2], h[0] * dh[1] * h[2], h[0] * h[1] * dh[2]};
    for (int a = 0; a < 3; ++a) {
      if (x != nullptr) x[a] += h[0] * h[1] * h[2] * corners[v * 3 + a];
      for (int d = 0; d < 3; ++d) J[a][d] += dN[d] * corners[v * 3 + a];
    }
  }
}

GeometricFactors geometric_factors(std::int64_t num_elements, std::span<const double> vertices,
                                   const GllRule& rule) {
  if (num_elements < 0 || vertices.size() != static_cast<std::size_t>(num_elements) * 24) {
    throw InvalidInput("geometric_factors: expected " + std::to_string(num_elements * 24) +
                       " vertex coordinates, got " + std::to_string(vertices.size()));
  }
  const int N = rule.order + 1;
  const std::int64_t n3 = static_cast<std::int64_t>(N) * N * N;
  GeometricFactors f;
  f.order = rule.order;
  f.num_elements = num_elements;
  f.g.resize(static_cast<std::size_t>(num_elements * 6 * n3));
  f.mass.resize(static_cast<std::size_t>(num_elements * n3));
  for (std::int64_t e = 0; e < num_elements; ++e) {
    const double* X = vertices.data() + e * 24;
    for (int k = 0; k < N; ++k) {
      for (int j = 0; j < N; ++j) {
        for (int i = 0; i < N; ++i) {
          const double r[3] = {rule.nodes[i], rule.nodes[j], rule.nodes[k]};
          double J[3][3];
          trilinear_map(X, r, nullptr, J);
          const double det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
                             J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
                             J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
          if (!(det > 0.0)) {
            throw InvalidInput("geometric_factors: element " + std::to_string(e + 1) +
                               " has Jacobian determinant " + std::to_string(det) +
                               " at a GLL point (inverted or degenerate element)");
          }
          // inv[d][a] = dr_d / dx_a: the inverse of J by cofactors.
          double inv[3][3];
          inv[0][0] = (J[1][1] * J[2][2] - J[1][2] * J[2][1]) / det;
          inv[0][1] = (J[0][2] * J[2][1] - J[0][1] * J[2][2]) / det;
          inv[0][2] = (J[0][1] * J[1][2] - J[0][2] * J[1][1]) / det;
          inv[1][0] = (J[1][2] * J[2][0] - J[1][0] * J[2][2]) / det;
          inv[1][1] = (J[0][0] * J[2][2] - J[0][2] * J[2][0]) / det;
          inv[1][2] = (J[0][2] * J[1][0] - J[0][0] * J[1][2]) / det;
          inv[2][0] = (J[1][0] * J[2][1] - J[1][1] * J[2][0]) / det;
          inv[2][1] = (J[0][1] * J[2][0] - J[0][0] * J[2][1]) / det;
          inv[2][2] = (J[0][0] * J[1][1] - J[0][1] * J[1][0]) / det;
          const double w = rule.weights[i] * rule.weights[j] * rule.weights[k] * det;
          const std::int64_t q = (static_cast<std::int64_t>(k) * N + j) * N + i;
          const int pairs[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
          for (int c = 0; c < 6; ++c) {
            const int a = pairs[c][0];
            const int b = pairs[c][1];
            const double s = inv[a][0] * inv[b][0] + inv[a][1] * inv[b][1] + inv[a][2] * inv[b][2];
            f.g[static_cast<std::size_t>((e * 6 + c) * n3 + q)] = w * s;
          }
          f.mass[static_cast<std::size_t>(e * n3 + q)] = w;
        }
      }
    }
  }
  return f;
}

}  // namespace kryflow::sem
