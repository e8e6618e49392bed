// The sparse triangular solve (kernels/triangular) on the backend under test against the
// reference and against the definition (T x = b checked row by row): random strictly lower and
// upper factors with a long row and empty rows, a bidiagonal chain (every row waits for the one
// before it), and the inverse diagonal applied or not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/triangular/triangular.hpp"
#include "kryflow/core/array.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

namespace kt = kernels::triangular;

struct HostFactor {
  index_t n = 0;
  std::vector<index_t> row_ptr, col_idx;
  std::vector<double> values;
};

/// A random strict factor: up to `max_row` entries per row among the allowed columns, values
/// in [-1, 1] / (row length + 1) (a stable solve), row `long_row` (if >= 0) holds every allowed
/// column up to 300 of them.
HostFactor random_factor(index_t n, bool lower, index_t max_row, index_t long_row,
                         std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  HostFactor f;
  f.n = n;
  f.row_ptr.push_back(0);
  for (index_t i = 0; i < n; ++i) {
    const index_t first = lower ? 0 : i + 1;
    const index_t last = lower ? i : n;  // allowed columns [first, last)
    std::vector<index_t> columns;
    if (last > first) {
      if (i == long_row) {
        for (index_t j = first; j < last && static_cast<index_t>(columns.size()) < 300; ++j) {
          columns.push_back(j);
        }
      } else {
        const index_t count = static_cast<index_t>(rng() % (max_row + 1));
        for (index_t c = 0; c < count; ++c) {
          columns.push_back(first + static_cast<index_t>(rng() % (last - first)));
        }
        std::sort(columns.begin(), columns.end());
        columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
      }
    }
    for (const index_t j : columns) {
      f.col_idx.push_back(j);
      f.values.push_back(value(rng) / (static_cast<double>(columns.size()) + 1.0));
    }
    f.row_ptr.push_back(static_cast<index_t>(f.col_idx.size()));
  }
  return f;
}

/// x from kt::solve on `backend`.
std::vector<double> solve_on(const Backend& backend, const HostFactor& f, bool lower,
                             const std::vector<double>* inverse, const std::vector<double>& b) {
  const auto rp = Array<index_t>::from_host(backend, f.row_ptr);
  const auto ci = Array<index_t>::from_host(backend, f.col_idx);
  const auto v = Array<double>::from_host(backend, f.values);
  const auto bb = Array<double>::from_host(backend, b);
  Array<double> d;
  if (inverse != nullptr) d = Array<double>::from_host(backend, *inverse);
  Array<double> x(backend, b.size());
  Array<unsigned int> ready(backend, b.size() + 1);
  const kt::FactorView view{f.n, rp.span().data(), ci.span().data(), v.span().data()};
  kt::solve(backend, view, lower, inverse != nullptr ? d.span().data() : nullptr, bb.span().data(),
            x.span().data(), ready.span().data());
  return x.to_host();
}

/// max_i |(b_i - sum_k f_ik x_k) d_i - x_i| / max |x|: x satisfies the update of every row.
double defect(const HostFactor& f, const std::vector<double>* inverse, const std::vector<double>& b,
              const std::vector<double>& x) {
  double worst = 0.0, scale = 0.0;
  for (index_t i = 0; i < f.n; ++i) {
    double sum = b[i];
    for (index_t k = f.row_ptr[i]; k < f.row_ptr[i + 1]; ++k) sum -= f.values[k] * x[f.col_idx[k]];
    if (inverse != nullptr) sum *= (*inverse)[i];
    worst = std::max(worst, std::abs(sum - x[i]));
    scale = std::max(scale, std::abs(x[i]));
  }
  return worst / std::max(scale, 1e-300);
}

TEST(TriangularSolve, RandomFactorsMatchTheReferenceAndSolveEveryRow) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  for (const index_t n : {1, 2, 33, 1000, 20011}) {
    for (const bool lower : {true, false}) {
      SCOPED_TRACE("n " + std::to_string(n) + (lower ? " lower" : " upper"));
      const HostFactor f = random_factor(n, lower, 12, n / 2, seed + n + (lower ? 1 : 0));
      const std::vector<double> b = test::random_vector(static_cast<std::size_t>(n), seed + 7);
      std::vector<double> inverse = test::random_vector(static_cast<std::size_t>(n), seed + 9);
      for (double& d : inverse) d = 1.0 + std::abs(d);  // in [1, 2]
      for (const std::vector<double>* d : {static_cast<const std::vector<double>*>(nullptr),
                                           static_cast<const std::vector<double>*>(&inverse)}) {
        const std::vector<double> x = solve_on(backend, f, lower, d, b);
        const std::vector<double> expected = solve_on(Backend::reference(), f, lower, d, b);
        // The warp sums of the cuda kernel add in another order than the reference's loop.
        EXPECT_LE(test::relative_max_difference(x, expected), 1e-12);
        EXPECT_LE(defect(f, d, b, x), 1e-12);
      }
    }
  }
}

TEST(TriangularSolve, ABidiagonalChainWaitsRowByRow) {
  // x_i = b_i - c x_(i-1) (lower) or b_i - c x_(i+1) (upper): a chain of n dependent rows, the
  // worst case of a synchronization-free solve, and no level parallelism at all.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  const index_t n = 50000;
  for (const bool lower : {true, false}) {
    HostFactor f;
    f.n = n;
    f.row_ptr.push_back(0);
    for (index_t i = 0; i < n; ++i) {
      if (lower ? i > 0 : i + 1 < n) {
        f.col_idx.push_back(lower ? i - 1 : i + 1);
        f.values.push_back(0.5);
      }
      f.row_ptr.push_back(static_cast<index_t>(f.col_idx.size()));
    }
    const std::vector<double> b = test::random_vector(static_cast<std::size_t>(n), seed);
    const std::vector<double> x = solve_on(backend, f, lower, nullptr, b);
    EXPECT_LE(
        test::relative_max_difference(x, solve_on(Backend::reference(), f, lower, nullptr, b)),
        1e-14);
    EXPECT_LE(defect(f, nullptr, b, x), 1e-14);
  }
}

}  // namespace
}  // namespace kryflow
