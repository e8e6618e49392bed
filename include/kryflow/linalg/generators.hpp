// Model problems: finite-difference Poisson matrices on the unit square and cube.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kryflow/linalg/coo_matrix.hpp"

namespace kryflow {

// The generators build stencil matrices on the n (per direction) interior points of a uniform
// grid of the unit square or cube, spacing h = 1/(n+1), with homogeneous Dirichlet boundary
// points eliminated (a row near the boundary simply lacks the outside neighbours). The values
// are the unscaled integer stencil: for poisson2d and poisson3d that is h^2 times the standard
// finite-difference -Laplacian, so multiply by 1/h^2 = (n+1)^2 (or scale b by h^2) to solve
// -Laplace(u) = f. Rows and columns are numbered lexicographically, x fastest: point (i, j, k),
// 0 <= i, j, k < n, is row (k n + j) n + i. Entries come row by row with sorted columns and no
// duplicates. num_rows = num_cols = n^d (d = 2 or 3).
//
// Errors, raised before anything is allocated: InvalidInput when n < 1, or when n^d or the
// number of stored entries exceeds the 32-bit index_t limit (2^31 - 1); the message names the
// generator, n and the limit. std::bad_alloc when the host cannot hold the triplets
// (16 bytes per entry).

/// 5-point stencil on an n x n grid: diagonal 4, the (up to) 4 neighbours -1. Stores exactly
/// 5n^2 - 4n entries (n <= 20724). Symmetric positive definite.
CooMatrix poisson2d(index_t n);
/// 7-point stencil on an n x n x n grid: diagonal 6, the (up to) 6 face neighbours -1. Stores
/// exactly 7n^3 - 6n^2 entries (n <= 674). Symmetric positive definite.
CooMatrix poisson3d(index_t n);
/// 27-point stencil on an n x n x n grid: diagonal 26, all (up to) 26 face, edge and corner
/// neighbours -1. Not the standard 27-point Laplacian weights: for smooth u it gives
/// 9 h^2 (-Laplace(u)) + O(h^4), so divide by 9 h^2 for the -Laplacian. Stores exactly
/// (3n - 2)^3 entries (n <= 430). Weakly and irreducibly diagonally dominant, hence symmetric
/// positive definite.
CooMatrix poisson3d27(index_t n);

/// A block version of a scalar matrix for block-sparse tests and benchmarks: every stored
/// entry (i, j) of `scalar_pattern` (its value is ignored; duplicates count once) becomes a dense
/// block_size x block_size block of random values in [-1, -0.1] u [0.1, 1] (from `seed`) at block
/// position (i, j); then every diagonal entry is set to 1 + the sum of |off-diagonal entries| of
/// its row, so the matrix is strictly diagonally dominant with a positive diagonal (nonsingular).
/// With `symmetric`, block (j, i) is the transpose of block (i, j), which makes the result
/// symmetric positive definite; the pattern must then be structurally symmetric (only its
/// entries with i <= j are read). Entries come row by row with sorted columns, no duplicates:
/// num_rows = block_size * scalar_pattern.num_rows, likewise for columns. Throws InvalidInput
/// when block_size < 1, symmetric with a non-square pattern, or the entries exceed index_t.
CooMatrix kronecker_block(const CooMatrix& scalar_pattern, int block_size, std::uint64_t seed,
                          bool symmetric = true);

/// One system of a sequence whose values drift while the pattern stays: the 7-point finite-volume
/// discretization (harmonic-mean face coefficients) of -div(k grad u) = f on the n^3 interior
/// points of the unit cube, homogeneous Dirichlet boundaries eliminated, scaled by h^2 (so the
/// entries are O(k)), at time step `step` >= 0. The coefficient is a high-contrast inclusion that
/// moves: k(x, t) = 10^(c g(x, t)), g = exp(-|x - x_c(t)|^2 / (2 r^2)) with the center x_c(t) =
/// (0.3 + 0.4 (t mod 1), 0.5, 0.5) moving `speed` per step (t = speed * step), radius r = 0.15
/// and contrast 10^c (`log10_contrast` c >= 0). Row i of the pattern is that of poisson3d(n);
/// SPD for every step. `b` (when non-null) receives n^3 entries of the right-hand side f h^2
/// with f = 1 + 0.5 sin(2 pi (x + t)). Throws InvalidInput as poisson3d, or for step < 0, c < 0.
CooMatrix drifting_diffusion(index_t n, int step, double speed = 0.02, double log10_contrast = 3.0,
                             std::vector<double>* b = nullptr);

/// The random solution x* of kryflow solve's default right-hand side b = A x*: x*_i uniform in
/// [-1, 1) from a splitmix64 hash of (seed, i) (Steele, Lea, Flood, OOPSLA 2014), the same on
/// every platform, so every frequency is present (unlike x* = 1, which aggregation multigrid
/// solves in one cycle). The default seed 0x5eed is kryflow solve's `random-solution`;
/// `random-solution:SEED` picks another. Length n; throws std::bad_alloc only.
std::vector<double> random_solution(std::size_t n, std::uint64_t seed = 0x5eed);

}  // namespace kryflow
