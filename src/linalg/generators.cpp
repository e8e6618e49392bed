// Finite-difference Poisson model problems, generated row by row with sorted columns.
#include "kryflow/linalg/generators.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/blas/blas.hpp"
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

CooMatrix drifting_diffusion(index_t n, int step, double speed, double log10_contrast,
                             std::vector<double>* b) {
  check_size("drifting_diffusion", n, 3, poisson3d_nnz);
  if (step < 0) throw InvalidInput("drifting_diffusion: step must be >= 0");
  if (!(log10_contrast >= 0.0) || !std::isfinite(speed)) {
    throw InvalidInput("drifting_diffusion: log10_contrast must be >= 0 and speed finite");
  }
  const double h = 1.0 / (n + 1);
  const double t = speed * step;
  const double centre_x = 0.3 + 0.4 * (t - std::floor(t));
  constexpr double radius = 0.15;
  // k at the grid point (i, j, l), 0-based interior indices (coordinates (i + 1) h, ...).
  auto coefficient = [&](index_t i, index_t j, index_t l) {
    const double x = (i + 1) * h - centre_x, y = (j + 1) * h - 0.5, z = (l + 1) * h - 0.5;
    const double g = std::exp(-(x * x + y * y + z * z) / (2.0 * radius * radius));
    return std::pow(10.0, log10_contrast * g);
  };
  const auto N = static_cast<std::size_t>(n);
  std::vector<double> k(N * N * N);
  for (index_t l = 0; l < n; ++l) {
    for (index_t j = 0; j < n; ++j) {
      for (index_t i = 0; i < n; ++i)
        k[(static_cast<std::size_t>(l) * N + j) * N + i] = coefficient(i, j, l);
    }
  }
  // A face towards the (eliminated) boundary takes the point's own k (the boundary value sits
  // half a cell away in the finite-volume sense: harmonic mean of k with itself).
  auto face = [](double a, double c) { return 2.0 * a * c / (a + c); };
  CooMatrix A;
  A.num_rows = A.num_cols = n * n * n;
  A.reserve(static_cast<std::size_t>(poisson3d_nnz(n)));
  if (b != nullptr) b->assign(N * N * N, 0.0);
  const index_t offsets[3] = {1, n, n * n};
  for (index_t l = 0; l < n; ++l) {
    for (index_t j = 0; j < n; ++j) {
      for (index_t i = 0; i < n; ++i) {
        const index_t row = (l * n + j) * n + i;
        const double kc = k[row];
        const index_t position[3] = {i, j, l};
        double diagonal = 0.0;
        double below[3] = {0, 0, 0}, above[3] = {0, 0, 0};
        for (int d = 0; d < 3; ++d) {
          const double lower = position[d] > 0 ? face(kc, k[row - offsets[d]]) : kc;
          const double upper = position[d] < n - 1 ? face(kc, k[row + offsets[d]]) : kc;
          below[d] = position[d] > 0 ? -lower : 0.0;
          above[d] = position[d] < n - 1 ? -upper : 0.0;
          diagonal += lower + upper;
        }
        // Sorted columns: -n^2, -n, -1, 0, +1, +n, +n^2.
        for (int d = 2; d >= 0; --d) {
          if (position[d] > 0) A.push_back(row, row - offsets[d], below[d]);
        }
        A.push_back(row, row, diagonal);
        for (int d = 0; d < 3; ++d) {
          if (position[d] < n - 1) A.push_back(row, row + offsets[d], above[d]);
        }
        if (b != nullptr) {
          const double x = (i + 1) * h;
          (*b)[static_cast<std::size_t>(row)] =
              h * h * (1.0 + 0.5 * std::sin(2.0 * std::numbers::pi * (x + t)));
        }
      }
    }
  }
  return A;
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

CooMatrix kronecker_block(const CooMatrix& scalar_pattern, int block_size, std::uint64_t seed,
                          bool symmetric) {
  const std::string problem = "kronecker_block(block_size = " + std::to_string(block_size) + ")";
  if (block_size < 1) throw InvalidInput(problem + ": the block size must be >= 1");
  if (symmetric && scalar_pattern.num_rows != scalar_pattern.num_cols) {
    throw InvalidInput(problem + ": a symmetric block matrix needs a square pattern");
  }
  const std::int64_t B = block_size;
  constexpr std::int64_t limit = std::numeric_limits<index_t>::max();
  if (B * scalar_pattern.num_rows > limit || B * scalar_pattern.num_cols > limit) {
    throw InvalidInput(problem + ": the rows exceed kryflow's 32-bit index limit");
  }
  // Distinct pattern entries, row by row with sorted columns.
  std::vector<std::pair<index_t, index_t>> pattern;
  pattern.reserve(scalar_pattern.num_entries());
  for (std::size_t k = 0; k < scalar_pattern.num_entries(); ++k) {
    pattern.emplace_back(scalar_pattern.row_idx[k], scalar_pattern.col_idx[k]);
  }
  std::sort(pattern.begin(), pattern.end());
  pattern.erase(std::unique(pattern.begin(), pattern.end()), pattern.end());
  if (static_cast<double>(pattern.size()) * static_cast<double>(B * B) > limit) {
    throw InvalidInput(problem + ": the entries exceed kryflow's 32-bit index limit");
  }
  // Random blocks, one per distinct (i, j) with i <= j (symmetric) or per entry.
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> magnitude(0.1, 1.0);
  std::bernoulli_distribution negative(0.5);
  auto random_value = [&] { return negative(rng) ? -magnitude(rng) : magnitude(rng); };
  const auto BB = static_cast<std::size_t>(B * B);
  std::vector<double> blocks(pattern.size() * BB);
  for (std::size_t p = 0; p < pattern.size(); ++p) {
    const auto [i, j] = pattern[p];
    if (symmetric && i > j) {
      const auto mirror = std::lower_bound(pattern.begin(), pattern.end(), std::make_pair(j, i));
      if (mirror == pattern.end() || *mirror != std::make_pair(j, i)) {
        throw InvalidInput(problem + ": the pattern is not structurally symmetric at (" +
                           std::to_string(i + 1) + ", " + std::to_string(j + 1) + ")");
      }
      continue;  // filled from its mirror below
    }
    for (std::size_t e = 0; e < BB; ++e) blocks[p * BB + e] = random_value();
    if (symmetric && i == j) {
      for (std::int64_t a = 0; a < B; ++a) {
        for (std::int64_t c = 0; c < a; ++c)
          blocks[p * BB + a * B + c] = blocks[p * BB + c * B + a];
      }
    }
  }
  if (symmetric) {
    for (std::size_t p = 0; p < pattern.size(); ++p) {
      const auto [i, j] = pattern[p];
      if (i <= j) continue;
      const auto q = static_cast<std::size_t>(
          std::lower_bound(pattern.begin(), pattern.end(), std::make_pair(j, i)) - pattern.begin());
      for (std::int64_t a = 0; a < B; ++a) {
        for (std::int64_t c = 0; c < B; ++c)
          blocks[p * BB + a * B + c] = blocks[q * BB + c * B + a];
      }
    }
  }
  // Diagonal dominance: a_rr = 1 + sum of |a_rc| over c != r (symmetry is kept).
  const auto num_rows = static_cast<std::size_t>(B * scalar_pattern.num_rows);
  std::vector<double> off_diagonal(num_rows, 0.0);
  for (std::size_t p = 0; p < pattern.size(); ++p) {
    const auto [i, j] = pattern[p];
    for (std::int64_t a = 0; a < B; ++a) {
      for (std::int64_t c = 0; c < B; ++c) {
        if (i == j && a == c) continue;
        off_diagonal[static_cast<std::size_t>(i * B + a)] += std::abs(blocks[p * BB + a * B + c]);
      }
    }
  }
  CooMatrix coo;
  coo.num_rows = static_cast<index_t>(B * scalar_pattern.num_rows);
  coo.num_cols = static_cast<index_t>(B * scalar_pattern.num_cols);
  coo.reserve(pattern.size() * BB);
  std::size_t row_first = 0;  // first pattern entry of the current scalar row
  while (row_first < pattern.size()) {
    const index_t i = pattern[row_first].first;
    std::size_t row_last = row_first;
    while (row_last < pattern.size() && pattern[row_last].first == i) ++row_last;
    for (std::int64_t a = 0; a < B; ++a) {
      const auto row = static_cast<index_t>(i * B + a);
      for (std::size_t p = row_first; p < row_last; ++p) {
        const index_t j = pattern[p].second;
        for (std::int64_t c = 0; c < B; ++c) {
          const bool diagonal = i == j && a == c;
          const double value = diagonal ? 1.0 + off_diagonal[static_cast<std::size_t>(row)]
                                        : blocks[p * BB + a * B + c];
          coo.push_back(row, static_cast<index_t>(j * B + c), value);
        }
      }
    }
    row_first = row_last;
  }
  return coo;
}

std::vector<double> random_solution(std::size_t n, std::uint64_t seed) {
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = kernels::blas::pseudo_uniform(seed, i);
  return x;
}

}  // namespace kryflow
