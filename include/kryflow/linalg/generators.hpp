// Model problems: finite-difference Poisson matrices on the unit square and cube.
#pragma once

#include "kryflow/linalg/coo_matrix.hpp"

namespace kryflow {

/// -Laplace(u) on an n x n grid of interior points of the unit square, homogeneous Dirichlet
/// boundary eliminated, 5-point stencil scaled by h^2 (h = 1/(n+1)): diagonal 4, neighbours -1.
/// Rows are numbered x fastest. SPD. Throws InvalidInput when n < 1 or n^2 overflows.
CooMatrix poisson2d(index_t n);
/// As poisson2d on n^3 interior points of the unit cube, 7-point stencil: diagonal 6,
/// neighbours -1 (scaled by h^2).
CooMatrix poisson3d(index_t n);
/// 27-point stencil on n^3 interior points of the unit cube (unscaled): diagonal 26,
/// all 26 neighbours -1; irreducibly diagonally dominant, hence SPD.
CooMatrix poisson3d27(index_t n);

}  // namespace kryflow
