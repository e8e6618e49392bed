// Geometric factors of trilinear hexahedral spectral elements at their GLL points (Deville,
// Fischer and Mund, High-Order Methods for Incompressible Fluid Flow, 2002, sec. 4.4).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kryflow/sem/gll.hpp"

namespace kryflow::sem {

/// Per element and GLL point (i, j, k) (N = p + 1 per direction, point index (k N + j) N + i):
/// the six metric terms G_ab = w_i w_j w_k |J| sum_c (dr_a/dx_c)(dr_b/dx_c), a <= b, of the
/// Laplacian a(u, v) = sum over points of grad_r(u)^T G grad_r(v), and the mass (the diagonal of
/// the GLL mass matrix) w_i w_j w_k |J|. J = dx/dr is the Jacobian of the trilinear map of the
/// element's corners.
struct GeometricFactors {
  int order = 0;
  std::int64_t num_elements = 0;
  /// num_elements x 6 x N^3: term c (0: G11, 1: G12, 2: G13, 3: G22, 4: G23, 5: G33) of point q
  /// of element e at (e * 6 + c) * N^3 + q.
  std::vector<double> g;
  /// num_elements x N^3: w_i w_j w_k |J| at (e * N^3 + q).
  std::vector<double> mass;
};

/// The trilinear map of one hexahedron at the reference point r in [-1, 1]^3:
///   x(r) = sum_v N_v(r) X_v,  N_v = prod_d (1 +- r_d) / 2  (lexicographic corners v),
/// and its Jacobian J[c][d] = dx_c / dr_d. `corners`: 8 x 3 coordinates (corner v, coordinate c
/// at v * 3 + c). `x` may be null. No errors (any finite input).
void trilinear_map(const double* corners, const double r[3], double* x, double J[3][3]);

/// Geometric factors of `num_elements` trilinear hexahedra with corner coordinates `vertices`
/// (8 x 3 per element, lexicographic corner order as in number_gll_points) at the points of
/// `rule`. Throws InvalidInput when vertices has the wrong size or |J| <= 0 at some point (the
/// message names the 1-based element: inverted or degenerate).
GeometricFactors geometric_factors(std::int64_t num_elements, std::span<const double> vertices,
                                   const GllRule& rule);

}  // namespace kryflow::sem
