// Finite-difference Poisson model problems, generated row by row with sorted columns.
#include "kryflow/linalg/generators.hpp"

#include <cstdint>
#include <limits>
#include <string>

#include "kryflow/core/error.hpp"

namespace kryflow {
namespace {

/// Throws InvalidInput, before anything is allocated, unless n >= 1 and both the n^dimension
/// rows and the exact number of stored entries fit kryflow's 32-bit index_t (CSR row pointers
/// hold nnz). `nnz` gives the stored entries of the stencil for n >= 1.
void check_size(const char* name, index_t n, int dimension, std::int64_t (*nnz)(std::int64_t)) {
  const std::string problem = std::string(name) + "(n = " + std::to_string(n) + ")";
  if (n < 1) throw InvalidInput(problem + ": the grid size n must be >= 1");
  constexpr std::int64_t limit = std::numeric_limits<index_t>::max();
  // n^dimension, stopping as soon as it exceeds the limit (n^3 itself may overflow int64).
  std::int64_t rows = 1;
  for (int d = 0; d < dimension; ++d) {
    rows *= n;
    if (rows > limit) {
      throw InvalidInput(problem + ": n^" + std::to_string(dimension) +
                         " rows exceed kryflow's 32-bit index limit of " + std::to_string(limit));
    }
  }
  const std::int64_t entries = nnz(n);  // rows <= 2^31 - 1, so at most 27 * 2^31: no overflow
  if (entries > limit) {
    throw InvalidInput(problem + ": " + std::to_string(entries) +
                       " nonzeros exceed kryflow's 32-bit index limit of " + std::to_string(limit));
  }
}

// Exact stored entries: one per (point, stencil neighbour inside the grid). Per direction a
// line of n points has n - 1 neighbour pairs, so the 5- and 7-point stencils store
// n^d + 2 d (n - 1) n^(d-1) entries; the 27-point stencil couples each point to its
// neighbours in {-1, 0, 1}^3, (3n - 2)^3 in all.
std::int64_t poisson2d_nnz(std::int64_t n) {
  return 5 * n * n - 4 * n;
}
std::int64_t poisson3d_nnz(std::int64_t n) {
  return 7 * n * n * n - 6 * n * n;
}
std::int64_t poisson3d27_nnz(std::int64_t n) {
  return (3 * n - 2) * (3 * n - 2) * (3 * n - 2);
}

/// Stencil matrix on an n^dim grid: `offsets` lists (dx, dy, dz, value) including the centre;
/// `nnz` is the exact number of entries it stores (checked by check_size).
template <class Offsets>
CooMatrix stencil(index_t n, int dimension, const Offsets& offsets, std::int64_t nnz) {
  const index_t nz = dimension == 3 ? n : 1;
  CooMatrix coo;
  coo.num_rows = n * n * nz;
  coo.num_cols = coo.num_rows;
  coo.reserve(static_cast<std::size_t>(nnz));
  for (index_t k = 0; k < nz; ++k) {
    for (index_t j = 0; j < n; ++j) {
      for (index_t i = 0; i < n; ++i) {
        const index_t row = (k * n + j) * n + i;
        for (const auto& [dx, dy, dz, value] : offsets) {  // offsets are sorted by column
          const index_t ii = i + dx;
          const index_t jj = j + dy;
          const index_t kk = k + dz;
          if (ii < 0 || ii >= n || jj < 0 || jj >= n || kk < 0 || kk >= nz) continue;
          coo.push_back(row, (kk * n + jj) * n + ii, value);
        }
      }
    }
  }
  return coo;
}

struct Offset {
  int dx, dy, dz;
  double value;
};

}  // namespace

CooMatrix poisson2d(index_t n) {
  check_size("poisson2d", n, 2, poisson2d_nnz);
  const std::vector<Offset> offsets = {
      {0, -1, 0, -1.0}, {-1, 0, 0, -1.0}, {0, 0, 0, 4.0}, {1, 0, 0, -1.0}, {0, 1, 0, -1.0}};
  return stencil(n, 2, offsets, poisson2d_nnz(n));
}

CooMatrix poisson3d(index_t n) {
  check_size("poisson3d", n, 3, poisson3d_nnz);
  const std::vector<Offset> offsets = {{0, 0, -1, -1.0}, {0, -1, 0, -1.0}, {-1, 0, 0, -1.0},
                                       {0, 0, 0, 6.0},   {1, 0, 0, -1.0},  {0, 1, 0, -1.0},
                                       {0, 0, 1, -1.0}};
  return stencil(n, 3, offsets, poisson3d_nnz(n));
}

CooMatrix poisson3d27(index_t n) {
  check_size("poisson3d27", n, 3, poisson3d27_nnz);
  std::vector<Offset> offsets;
  for (int dz = -1; dz <= 1; ++dz) {
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        const bool centre = dx == 0 && dy == 0 && dz == 0;
        offsets.push_back({dx, dy, dz, centre ? 26.0 : -1.0});
      }
    }
  }
  return stencil(n, 3, offsets, poisson3d27_nnz(n));
}

}  // namespace kryflow
