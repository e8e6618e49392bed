// Finite-difference Poisson model problems, generated row by row with sorted columns.
#include "kryflow/linalg/generators.hpp"

#include <limits>
#include <string>

#include "kryflow/core/error.hpp"

namespace kryflow {
namespace {

void check_size(index_t n, int dimension) {
  if (n < 1) throw InvalidInput("grid size n must be >= 1, got " + std::to_string(n));
  double rows = 1.0;
  for (int d = 0; d < dimension; ++d) rows *= n;
  const double entries = rows * (dimension == 2 ? 5.0 : (dimension == 3 ? 27.0 : 7.0));
  if (entries > static_cast<double>(std::numeric_limits<index_t>::max())) {
    throw InvalidInput("grid size n = " + std::to_string(n) + " exceeds 32-bit indices");
  }
}

/// Stencil matrix on an n^dim grid: `offsets` lists (dx, dy, dz, value) including the centre.
template <class Offsets>
CooMatrix stencil(index_t n, int dimension, const Offsets& offsets) {
  const index_t nz = dimension == 3 ? n : 1;
  CooMatrix coo;
  coo.num_rows = n * n * nz;
  coo.num_cols = coo.num_rows;
  coo.reserve(static_cast<std::size_t>(coo.num_rows) * offsets.size());
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
  check_size(n, 2);
  const std::vector<Offset> offsets = {
      {0, -1, 0, -1.0}, {-1, 0, 0, -1.0}, {0, 0, 0, 4.0}, {1, 0, 0, -1.0}, {0, 1, 0, -1.0}};
  return stencil(n, 2, offsets);
}

CooMatrix poisson3d(index_t n) {
  check_size(n, 3);
  const std::vector<Offset> offsets = {{0, 0, -1, -1.0}, {0, -1, 0, -1.0}, {-1, 0, 0, -1.0},
                                       {0, 0, 0, 6.0},   {1, 0, 0, -1.0},  {0, 1, 0, -1.0},
                                       {0, 0, 1, -1.0}};
  return stencil(n, 3, offsets);
}

CooMatrix poisson3d27(index_t n) {
  check_size(n, 3);
  std::vector<Offset> offsets;
  for (int dz = -1; dz <= 1; ++dz) {
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        const bool centre = dx == 0 && dy == 0 && dz == 0;
        offsets.push_back({dx, dy, dz, centre ? 26.0 : -1.0});
      }
    }
  }
  return stencil(n, 3, offsets);
}

}  // namespace kryflow
