// Shared helpers of the test suite.
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numbers>
#include <set>

#ifndef KRYFLOW_TEST_BACKEND
#define KRYFLOW_TEST_BACKEND "cpu"
#endif
#ifndef KRYFLOW_DEFAULT_DATA_DIR
#define KRYFLOW_DEFAULT_DATA_DIR "../shared/data"
#endif

namespace kryflow::test {

Backend backend_under_test() {
  return Backend::create(parse_backend_kind(KRYFLOW_TEST_BACKEND));
}

std::filesystem::path data_dir() {
  const char* env = std::getenv("KRYFLOW_DATA_DIR");
  std::filesystem::path dir = env != nullptr ? env : KRYFLOW_DEFAULT_DATA_DIR;
  if (!std::filesystem::is_directory(dir)) {
    ADD_FAILURE() << "corpus folder '" << dir.string()
                  << "' not found: set the environment variable KRYFLOW_DATA_DIR to the folder "
                     "holding matrices/ and meshes/ (e.g. export KRYFLOW_DATA_DIR=/path/to/data)";
    return {};
  }
  return dir;
}

std::filesystem::path data_file(const std::string& relative) {
  const std::filesystem::path dir = data_dir();
  if (dir.empty()) return {};
  std::filesystem::path file = dir / relative;
  if (!std::filesystem::exists(file)) {
    ADD_FAILURE() << "corpus file '" << file.string()
                  << "' not found (KRYFLOW_DATA_DIR points to the corpus folder)";
    return {};
  }
  return file;
}

const std::vector<std::string>& nek_corpus_meshes() {
  static const std::vector<std::string> names = {
      "nek_bp5/bp5",           "nek_tgv/tgv",
      "nek_turbPipe/turbPipe", "nekrs_ethier/ethier",
      "nekrs_hemi/hemi",       "nekrs_kershaw/kershaw",
      "nekrs_rbc/rbc",         "nekrs_turbChannel/turbChannel"};
  return names;
}

std::filesystem::path nek_mesh_file(const std::string& name) {
  return data_file("meshes/nek/" + name + ".re2.gz");
}

std::uint64_t fresh_seed() {
  // KRYFLOW_TEST_SEED replays a seed that a failing test named.
  if (const char* replay = std::getenv("KRYFLOW_TEST_SEED"); replay != nullptr && *replay != 0) {
    return std::strtoull(replay, nullptr, 10);
  }
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

std::vector<double> random_vector(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed != 0 ? seed : fresh_seed());
  std::uniform_real_distribution<double> magnitude(0.1, 1.0);
  std::bernoulli_distribution sign(0.5);
  std::vector<double> v(n);
  for (double& x : v) x = sign(rng) ? magnitude(rng) : -magnitude(rng);
  return v;
}

CooMatrix random_sparse(index_t num_rows, index_t num_cols, index_t max_row_length, bool long_row,
                        std::uint64_t seed) {
  std::mt19937_64 rng(seed != 0 ? seed : fresh_seed());
  std::uniform_real_distribution<double> value(0.1, 1.0);
  std::uniform_int_distribution<index_t> column(0, std::max<index_t>(num_cols - 1, 0));
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  CooMatrix coo;
  coo.num_rows = num_rows;
  coo.num_cols = num_cols;
  const index_t long_row_index = num_rows / 3;
  for (index_t i = 0; i < num_rows; ++i) {
    index_t length = 0;
    const double u = unit(rng);
    if (u < 0.1) {
      length = 0;  // empty row
    } else {
      // skewed: most rows short, some up to max_row_length
      length = 1 + static_cast<index_t>(std::pow(unit(rng), 3.0) * max_row_length);
    }
    if (long_row && i == long_row_index) length = std::max<index_t>(num_cols / 2, 1);
    length = std::min(length, num_cols);
    std::set<index_t> cols;
    while (static_cast<index_t>(cols.size()) < length) cols.insert(column(rng));
    for (index_t j : cols) coo.push_back(i, j, (unit(rng) < 0.5 ? -1.0 : 1.0) * value(rng));
  }
  return coo;
}

double relative_max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double diff = 0.0;
  double scale = 1.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) != std::isnan(b[i])) return INFINITY;
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return diff / scale;
}

}  // namespace kryflow::test

namespace kryflow::test {

double true_relative_residual(const CooMatrix& A, const std::vector<double>& x,
                              const std::vector<double>& b) {
  std::vector<long double> r(b.begin(), b.end());
  for (std::size_t k = 0; k < A.num_entries(); ++k) {
    r[static_cast<std::size_t>(A.row_idx[k])] -=
        static_cast<long double>(A.values[k]) * x[static_cast<std::size_t>(A.col_idx[k])];
  }
  long double rr = 0.0L;
  long double bb = 0.0L;
  for (std::size_t i = 0; i < b.size(); ++i) {
    rr += r[i] * r[i];
    bb += static_cast<long double>(b[i]) * b[i];
  }
  return static_cast<double>(std::sqrt(rr / (bb > 0.0L ? bb : 1.0L)));
}

}  // namespace kryflow::test

namespace kryflow::test {

std::vector<double> hex_box_vertices(int nx, int ny, int nz) {
  std::vector<double> v;
  for (int ez = 0; ez < nz; ++ez) {
    for (int ey = 0; ey < ny; ++ey) {
      for (int ex = 0; ex < nx; ++ex) {
        for (int c = 0; c < 8; ++c) {
          const double X = ex + (c & 1);
          const double Y = ey + ((c >> 1) & 1);
          const double Z = ez + ((c >> 2) & 1);
          const double bump = 0.05 * std::sin(1.3 * X + 2.1 * Y + 0.7 * Z);
          v.push_back(X + bump);
          v.push_back(Y - bump);
          v.push_back(Z + 0.5 * bump);
        }
      }
    }
  }
  return v;
}

std::vector<double> unit_cube_box(int nx, int ny, int nz, double amplitude) {
  std::vector<double> v;
  const double pi = std::numbers::pi;
  const double h = 1.0 / std::max({nx, ny, nz});
  for (int ez = 0; ez < nz; ++ez) {
    for (int ey = 0; ey < ny; ++ey) {
      for (int ex = 0; ex < nx; ++ex) {
        for (int c = 0; c < 8; ++c) {
          const double x = static_cast<double>(ex + (c & 1)) / nx;
          const double y = static_cast<double>(ey + ((c >> 1) & 1)) / ny;
          const double z = static_cast<double>(ez + ((c >> 2) & 1)) / nz;
          const double bump =
              amplitude * h * std::sin(pi * x) * std::sin(pi * y) * std::sin(pi * z);
          v.push_back(x + bump);
          v.push_back(y - bump);
          v.push_back(z + bump);
        }
      }
    }
  }
  return v;
}

}  // namespace kryflow::test

namespace kryflow::test {

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

double max_abs(const std::vector<double>& a) {
  double m = 0.0;
  for (double v : a) m = std::max(m, std::abs(v));
  return m;
}

void reorient_hex_elements(std::vector<double>& vertices, std::uint64_t seed, bool proper) {
  std::mt19937_64 rng(seed);
  for (std::size_t e = 0; e < vertices.size() / 24; ++e) {
    int axes[3] = {0, 1, 2};
    std::shuffle(axes, axes + 3, rng);
    int flips = static_cast<int>(rng() % 8);
    if (proper) {
      // The symmetry's determinant: the permutation's sign times (-1)^(number of flips).
      const int inversions = (axes[0] > axes[1]) + (axes[0] > axes[2]) + (axes[1] > axes[2]);
      const int reflections = (flips & 1) + ((flips >> 1) & 1) + ((flips >> 2) & 1);
      if ((inversions + reflections) % 2 == 1) flips ^= 1;
    }
    const std::vector<double> old(vertices.begin() + static_cast<std::ptrdiff_t>(e * 24),
                                  vertices.begin() + static_cast<std::ptrdiff_t>(e * 24 + 24));
    for (int c = 0; c < 8; ++c) {
      // New corner c takes the old corner whose bit axes[d] is bit d of c, flipped as drawn.
      int source = 0;
      for (int d = 0; d < 3; ++d) source |= (((c >> d) & 1) ^ ((flips >> d) & 1)) << axes[d];
      for (int x = 0; x < 3; ++x) {
        vertices[e * 24 + static_cast<std::size_t>(c * 3 + x)] =
            old[static_cast<std::size_t>(source * 3 + x)];
      }
    }
  }
}

}  // namespace kryflow::test
