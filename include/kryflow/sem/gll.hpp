// Gauss-Lobatto-Legendre (GLL) points, weights, derivative and interpolation matrices for the
// spectral-element method.
//
// Sources: Deville, Fischer and Mund, High-Order Methods for Incompressible Fluid Flow (2002),
// sec. 2.4 and Appendix B (DFM); Abramowitz and Stegun, Handbook of Mathematical Functions,
// 25.4.32 (Lobatto quadrature); Berrut and Trefethen, Barycentric Lagrange Interpolation,
// SIAM Review 46(3), 2004.
#pragma once

#include <vector>

namespace kryflow::sem {

/// Smallest and largest supported polynomial order p of a GLL rule (N = p + 1 points).
inline constexpr int min_gll_order = 1;
inline constexpr int max_gll_order = 15;

/// The Legendre polynomial P_n(x) by the three-term recurrence
/// (k + 1) P_{k+1} = (2k + 1) x P_k - k P_{k-1}, P_0 = 1, P_1 = x (DFM Appendix B.1.1).
/// Any finite x is accepted (not only [-1, 1]). Throws InvalidInput when n < 0.
double legendre(int n, double x);

/// The derivative P_n'(x) by the recurrence P'_{k+1} = P'_{k-1} + (2k + 1) P_k, P'_0 = 0,
/// P'_1 = 1, which stays accurate at x = +-1 (where P_n'(+-1) = (+-1)^(n+1) n (n + 1) / 2).
/// Throws InvalidInput when n < 0.
double legendre_derivative(int n, double x);

/// A GLL rule of polynomial order `order` = p: N = p + 1 nodes in ascending order with
/// nodes[0] = -1 and nodes[p] = 1 exactly, and their quadrature weights. The rule integrates
/// polynomials of degree <= 2p - 1 exactly over [-1, 1]. Nodes and weights are exactly symmetric:
/// nodes[p - j] == -nodes[j], weights[p - j] == weights[j], and nodes[p / 2] == 0 for even p.
struct GllRule {
  int order = 0;                ///< polynomial order p
  std::vector<double> nodes;    ///< N = p + 1 GLL points x_j, ascending, in [-1, 1]
  std::vector<double> weights;  ///< N quadrature weights w_j > 0, summing to 2
  int num_points() const { return order + 1; }
};

/// The GLL rule of order p (DFM sec. 2.4.1 and Appendix B.2): the interior nodes are the roots of
/// P_p', found by Newton's method on P_p' (with P_p'' from Legendre's differential equation) from
/// the Chebyshev-Gauss-Lobatto guesses -cos(pi j / p), iterated to full double precision; the
/// left half is computed and mirrored. Weights w_j = 2 / (p (p + 1) P_p(x_j)^2).
/// Throws InvalidInput when p is outside [min_gll_order, max_gll_order] = [1, 15].
GllRule gll_rule(int order);

/// The N x N collocation derivative matrix D, row-major, D[i * N + j] = l_j'(x_i), where l_j is
/// the Lagrange polynomial of node j: for nodal values u_j of a polynomial u of degree <= p,
/// (D u)_i = u'(x_i). Off-diagonal entries use the closed form (DFM eq. (2.4.9), Appendix B)
/// D_ij = P_p(x_i) / (P_p(x_j) (x_i - x_j)). The closed-form diagonal is D_00 = -p (p + 1) / 4,
/// D_pp = p (p + 1) / 4 and 0 otherwise; this function instead sets every diagonal entry to minus
/// the sum of the off-diagonal entries of its row (the "negative sum trick": Baltensperger and
/// Trummer, SIAM J. Sci. Comput. 24(5), 2003), so that D maps constants to zero up to one
/// rounding per row and derivatives are more accurate. The entries agree with the closed-form
/// diagonal to about 1e-13 relative for p <= 15. D is exactly centro-antisymmetric:
/// D[(p - i) * N + (p - j)] == -D[i * N + j].
/// Throws InvalidInput when `rule` is not a rule gll_rule() could have returned (order out of
/// range, or node/weight counts differ from order + 1).
std::vector<double> derivative_matrix(const GllRule& rule);

/// The M x N interpolation matrix, row-major, from nodal values on the N nodes of `from` to the
/// M = points.size() `points`: I[k * N + j] = l_j(points[k]), so (I u)_k is the degree-p
/// interpolant of u evaluated at points[k]. Uses the second (true) barycentric formula
/// (Berrut and Trefethen 2004, eq. (4.2)); a point that equals a node exactly gets the unit row.
/// Points outside [-1, 1] are accepted (extrapolation; its accuracy degrades quickly).
/// Throws InvalidInput when a point is not finite or `rule` is malformed (as derivative_matrix).
std::vector<double> lagrange_interpolation_matrix(const GllRule& from,
                                                  const std::vector<double>& points);

}  // namespace kryflow::sem
