// The metric terms of a spectral element at one point from the Jacobian of its map, shared by
// the host's geometric_factors (src/sem/geometry.cpp) and the cuda vertex element kernel
// (kernels/sem/poisson_cuda.cu), which recomputes them on the fly (Deville, Fischer and Mund,
// High-Order Methods for Incompressible Fluid Flow, 2002, sec. 4.4).
#pragma once

#include "kernels/backend/host_device.hpp"

namespace kryflow::kernels::sem {

/// The adjugate of the 3 x 3 Jacobian J[c][d] = dx_c / dr_d (adj = det(J) J^-1, so
/// adj[d][a] / det = dr_d / dx_a) and its determinant (returned), by cofactors.
KRYFLOW_HOST_DEVICE inline double adjugate(const double J[3][3], double adj[3][3]) {
  adj[0][0] = J[1][1] * J[2][2] - J[1][2] * J[2][1];
  adj[0][1] = J[0][2] * J[2][1] - J[0][1] * J[2][2];
  adj[0][2] = J[0][1] * J[1][2] - J[0][2] * J[1][1];
  adj[1][0] = J[1][2] * J[2][0] - J[1][0] * J[2][2];
  adj[1][1] = J[0][0] * J[2][2] - J[0][2] * J[2][0];
  adj[1][2] = J[0][2] * J[1][0] - J[0][0] * J[1][2];
  adj[2][0] = J[1][0] * J[2][1] - J[1][1] * J[2][0];
  adj[2][1] = J[0][1] * J[2][0] - J[0][0] * J[2][1];
  adj[2][2] = J[0][0] * J[1][1] - J[0][1] * J[1][0];
  return J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
         J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
         J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
}

/// The six metric terms G_ab = w sum_c inv[a][c] inv[b][c] (a <= b; in the order G11, G12,
/// G13, G22, G23, G33) of the Laplacian's quadrature at a point, inv[d][a] = dr_d / dx_a and w
/// the quadrature weight times |J|.
KRYFLOW_HOST_DEVICE inline void metric_terms(const double inv[3][3], double w, double g[6]) {
  constexpr int pairs[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
  for (int c = 0; c < 6; ++c) {
    const int a = pairs[c][0];
    const int b = pairs[c][1];
    g[c] = w * (inv[a][0] * inv[b][0] + inv[a][1] * inv[b][1] + inv[a][2] * inv[b][2]);
  }
}

}  // namespace kryflow::kernels::sem
