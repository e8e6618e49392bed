// Gauss-Lobatto-Legendre (GLL) points, weights and the collocation derivative: the 1D basis of
// kryflow's spectral elements (Deville, Fischer and Mund, High-Order Methods for Incompressible
// Fluid Flow, 2002, sec. 2.4 and appendix B; Canuto, Hussaini, Quarteroni and Zang, Spectral
// Methods, 2006, sec. 2.3).
#pragma once

#include <vector>

namespace kryflow::sem {

/// The Legendre polynomial P_n(x) and its derivative, by the three-term recurrence
/// (n + 1) P_{n+1} = (2n + 1) x P_n - n P_{n-1}. n >= 0; any real x.
struct LegendreValue {
  double value = 0.0;
  double derivative = 0.0;
};
LegendreValue legendre(int n, double x);

/// The N = p + 1 GLL points of polynomial order p: the end points -1 and 1 and the roots of
/// P_p', ascending, with the weights w_j = 2 / (p (p + 1) P_p(x_j)^2) that integrate polynomials
/// of degree <= 2p - 1 exactly on [-1, 1].
struct GllRule {
  int order = 0;                ///< p
  std::vector<double> nodes;    ///< N points, ascending, nodes[0] = -1, nodes[p] = 1
  std::vector<double> weights;  ///< N weights, summing to 2
};

/// The GLL rule of order p = 1..15: interior nodes by Newton's method on P_p' from the
/// Chebyshev-Gauss-Lobatto points -cos(pi j / p), to full double precision, made exactly
/// symmetric (x_{p-j} = -x_j, and 0 in the middle for even p). Throws InvalidInput for another
/// p, naming the valid range.
GllRule gll_rule(int order);

/// The N x N collocation derivative, row-major: D[i * N + j] = l_j'(x_i) for the Lagrange
/// polynomials l_j through the GLL nodes (Deville, Fischer and Mund, eq. (2.4.9)):
/// P_p(x_i) / (P_p(x_j) (x_i - x_j)) for i != j, -p (p + 1) / 4 at (0, 0), p (p + 1) / 4 at
/// (p, p), 0 elsewhere on the diagonal. Exact (to rounding) on polynomials of degree <= p.
std::vector<double> derivative_matrix(const GllRule& rule);

/// The matrix that interpolates nodal values at the rule's nodes to `points` (row-major,
/// points.size() x N; barycentric form with the GLL barycentric weights).
std::vector<double> interpolation_matrix(const GllRule& rule, const std::vector<double>& points);

}  // namespace kryflow::sem
