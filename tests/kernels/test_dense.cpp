// The dense kernels of the backend under test (kernels/dense) against the reference oracle on
// random matrices: SPD (Cholesky), nonsymmetric (LU), symmetric indefinite and symmetric
// singular (eigendecomposition), singular nonsymmetric and non-finite input.
//
// Tolerances (kernels/dense/dense.hpp): densify and properties give the reference's bits on
// every backend; the cpu backend also gives its bits for invert and apply. cuda's inverse comes
// from cuSOLVER, whose rounding differs from LAPACK's: on these matrices (condition numbers
// below 1e4) max |M - M_ref| <= 1e-10 max |M_ref|; its apply sums in another order:
// |z_i - z_ref,i| <= 4 n eps sum_j |m_ij r_j| (Higham, Accuracy and Stability of Numerical
// Algorithms, 2nd ed., eq. 3.5).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/dense/dense.hpp"
#include "kryflow/core/array.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

namespace kd = kernels::dense;

#ifdef KRYFLOW_TEST_BACKEND_IS_CUDA
constexpr bool kSameBits = false;
#else
constexpr bool kSameBits = true;
#endif
constexpr double kInverseTolerance = 1e-10;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const std::vector<index_t> kSizes = {1, 2, 7, 64, 203};

/// A CSR matrix on the host, rows may hold duplicate columns (densify sums them).
struct HostCsr {
  index_t n = 0;
  std::vector<index_t> row_ptr{0}, col_idx;
  std::vector<double> values;
  void push(index_t j, double v) {
    col_idx.push_back(j);
    values.push_back(v);
  }
  void end_row() { row_ptr.push_back(static_cast<index_t>(col_idx.size())); }
};

/// The same CSR arrays on a backend, and a view of them.
struct DeviceCsr {
  Array<index_t> row_ptr, col_idx;
  Array<double> values;
  index_t n;
  DeviceCsr(const Backend& backend, const HostCsr& a)
      : row_ptr(Array<index_t>::from_host(backend, a.row_ptr)),
        col_idx(Array<index_t>::from_host(backend, a.col_idx)),
        values(Array<double>::from_host(backend, a.values)),
        n(a.n) {}
  kd::MatrixView view() const {
    return {{n, n, row_ptr.span().data(), col_idx.span().data()}, values.span().data()};
  }
};

/// Random matrix: diagonal `diagonal(i)`, `per_row` random off-diagonal entries per row in
/// [-1, 1] (symmetrized when `symmetric`), some split into two duplicates; every seventh row is
/// stored in decreasing column order (densify takes unsorted rows too).
HostCsr random_matrix(index_t n, std::uint64_t seed, bool symmetric, double (*diagonal)(index_t),
                      int per_row = 6) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::uniform_int_distribution<index_t> column(0, n - 1);
  std::vector<double> dense(static_cast<std::size_t>(n) * n, 0.0);  // row-major here
  for (index_t i = 0; i < n; ++i) {
    for (int k = 0; k < per_row; ++k) {
      const index_t j = column(rng);
      if (j == i) continue;
      const double v = uniform(rng);
      dense[static_cast<std::size_t>(i) * n + j] += v;
      if (symmetric) dense[static_cast<std::size_t>(j) * n + i] += v;
    }
  }
  HostCsr a;
  a.n = n;
  for (index_t i = 0; i < n; ++i) {
    for (index_t j = 0; j < n; ++j) {
      double v = dense[static_cast<std::size_t>(i) * n + j];
      if (i == j) v += diagonal(i);
      if (v == 0.0) continue;
      if ((i + j) % 5 == 0) {  // a duplicate pair summing to v
        a.push(j, 0.25 * v);
        a.push(j, 0.75 * v);
      } else {
        a.push(j, v);
      }
    }
    if (i % 7 == 3) {
      const auto first = static_cast<std::ptrdiff_t>(a.row_ptr.back());
      std::reverse(a.col_idx.begin() + first, a.col_idx.end());
      std::reverse(a.values.begin() + first, a.values.end());
    }
    a.end_row();
  }
  return a;
}

std::vector<double> on_host(const Array<double>& a) {
  return a.to_host();
}

void expect_same_bits(const std::vector<double>& actual, const std::vector<double>& expected,
                      const char* what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (std::size_t k = 0; k < actual.size(); ++k) {
    ASSERT_EQ(std::bit_cast<std::uint64_t>(actual[k]), std::bit_cast<std::uint64_t>(expected[k]))
        << what << ", entry " << k << ": " << actual[k] << " vs " << expected[k];
  }
}

void expect_close(const std::vector<double>& actual, const std::vector<double>& expected,
                  double tolerance, const char* what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  double largest = 0.0, difference = 0.0;
  for (std::size_t k = 0; k < actual.size(); ++k) {
    ASSERT_TRUE(std::isfinite(actual[k])) << what << ", entry " << k;
    largest = std::max(largest, std::abs(expected[k]));
    difference = std::max(difference, std::abs(actual[k] - expected[k]));
  }
  EXPECT_LE(difference, tolerance * largest) << what;
}

/// Runs every kernel on the reference and on the backend under test for `a` and compares them;
/// returns the backend's result of invert.
kd::Inverse compare_all(const HostCsr& a) {
  const Backend reference = Backend::reference();
  const Backend backend = test::backend_under_test();
  const index_t n = a.n;
  const std::size_t size = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  const DeviceCsr a_ref(reference, a), a_dev(backend, a);

  Array<double> dense_ref(reference, size),
      dense_dev = Array<double>::from_host(backend, std::vector<double>(size, kNaN));
  kd::reference::densify(reference, a_ref.view(), dense_ref.span());
  kd::densify(backend, a_dev.view(), dense_dev.span());
  expect_same_bits(on_host(dense_dev), on_host(dense_ref), "densify");

  const kd::Properties p_ref = kd::reference::properties(reference, n, dense_ref.span());
  const kd::Properties p_dev = kd::properties(backend, n, dense_dev.span());
  EXPECT_EQ(p_dev.finite, p_ref.finite);
  EXPECT_EQ(p_dev.symmetric, p_ref.symmetric);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(p_dev.largest),
            std::bit_cast<std::uint64_t>(p_ref.largest));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(p_dev.first_diagonal),
            std::bit_cast<std::uint64_t>(p_ref.first_diagonal));
  if (!p_ref.finite) return {};

  const kd::Inverse i_ref = kd::reference::invert(reference, n, p_ref, dense_ref.span());
  const kd::Inverse i_dev = kd::invert(backend, n, p_dev, dense_dev.span());
  EXPECT_EQ(i_dev.method, i_ref.method);
  EXPECT_EQ(i_dev.converged, i_ref.converged);
  EXPECT_EQ(i_dev.null_space_dimension, i_ref.null_space_dimension);
  EXPECT_EQ(i_dev.zero_pivot != 0, i_ref.zero_pivot != 0);
  if (i_ref.zero_pivot != 0 || !i_ref.converged) return i_dev;
  if (kSameBits) {
    expect_same_bits(on_host(dense_dev), on_host(dense_ref), "invert");
  } else {
    expect_close(on_host(dense_dev), on_host(dense_ref), kInverseTolerance, "invert");
  }

  // apply on the reference's inverse on both, so that only the product is compared.
  const std::vector<double> m = on_host(dense_ref);
  const std::vector<double> r = test::random_vector(static_cast<std::size_t>(n));
  const Array<double> m_dev = Array<double>::from_host(backend, m);
  const Array<double> r_ref = Array<double>::from_host(reference, r);
  const Array<double> r_dev = Array<double>::from_host(backend, r);
  Array<double> z_ref(reference, r.size());
  Array<double> z_dev = Array<double>::from_host(backend, std::vector<double>(r.size(), kNaN));
  kd::reference::apply(reference, n, dense_ref.span(), r_ref.span(), z_ref.span());
  kd::apply(backend, n, m_dev.span(), r_dev.span(), z_dev.span());
  const std::vector<double> z = on_host(z_dev), z_expected = on_host(z_ref);
  if (kSameBits) {
    expect_same_bits(z, z_expected, "apply");
  } else {
    const double eps = std::numeric_limits<double>::epsilon();
    std::size_t worst_row = 0;
    double worst = 0.0;  // largest |z_i - z_ref,i| / (4 n eps sum_j |m_ij r_j|)
    for (std::size_t i = 0; i < z.size(); ++i) {
      double scale = 0.0;
      for (std::size_t j = 0; j < r.size(); ++j) scale += std::abs(m[i * r.size() + j] * r[j]);
      const double ratio = std::abs(z[i] - z_expected[i]) / (4.0 * double(n) * eps * scale);
      if (!(ratio <= worst)) {
        worst = ratio;
        worst_row = i;
      }
    }
    EXPECT_LE(worst, 1.0) << "apply, row " << worst_row;
  }
  return i_dev;
}

TEST(DenseKernels, SymmetricPositiveDefiniteIsInvertedByCholesky) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const index_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    // Diagonal 20 against at most 12 off-diagonal entries of magnitude <= 1: diagonally dominant.
    const kd::Inverse inverse =
        compare_all(random_matrix(n, seed + n, true, [](index_t) { return 20.0; }));
    EXPECT_EQ(inverse.method, kd::Method::cholesky);
  }
}

TEST(DenseKernels, SymmetricNegativeDefiniteIsInvertedByCholeskyOfMinusA) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const index_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const kd::Inverse inverse =
        compare_all(random_matrix(n, seed + n, true, [](index_t) { return -20.0; }));
    EXPECT_EQ(inverse.method, kd::Method::cholesky_of_negated);
  }
}

TEST(DenseKernels, NonsymmetricIsInvertedByLu) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const index_t n : kSizes) {
    if (n <= 2) continue;  // 1 x 1 is symmetric, and 2 x 2 may draw no off-diagonal entry
    SCOPED_TRACE("n = " + std::to_string(n));
    const kd::Inverse inverse = compare_all(
        random_matrix(n, seed + n, false, [](index_t i) { return i % 2 ? 9.0 : -9.0; }));
    EXPECT_EQ(inverse.method, kd::Method::lu);
    EXPECT_EQ(inverse.zero_pivot, 0);
  }
}

TEST(DenseKernels, SymmetricIndefiniteIsInvertedByEigendecomposition) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const index_t n : kSizes) {
    if (n == 1) continue;
    SCOPED_TRACE("n = " + std::to_string(n));
    // Diagonal +-20 (Gershgorin discs away from 0): indefinite, well conditioned.
    const kd::Inverse inverse = compare_all(
        random_matrix(n, seed + n, true, [](index_t i) { return i % 2 ? 20.0 : -20.0; }));
    EXPECT_EQ(inverse.method, kd::Method::eigen);
    EXPECT_EQ(inverse.null_space_dimension, 0);
  }
}

TEST(DenseKernels, SingularSymmetricGivesThePseudoInverse) {
  // The 1D Neumann Laplacian (zero row sums): null space of the constants.
  for (const index_t n : {2, 9, 50}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    HostCsr a;
    a.n = n;
    for (index_t i = 0; i < n; ++i) {
      if (i > 0) a.push(i - 1, -1.0);
      a.push(i, (i == 0 || i == n - 1) ? 1.0 : 2.0);
      if (i + 1 < n) a.push(i + 1, -1.0);
      a.end_row();
    }
    const kd::Inverse inverse = compare_all(a);
    EXPECT_EQ(inverse.method, kd::Method::eigen);
    EXPECT_EQ(inverse.null_space_dimension, 1);
  }
}

TEST(DenseKernels, SingularNonsymmetricReportsAZeroPivot) {
  // Rows 2 and 4 equal; unsymmetric.
  HostCsr a;
  a.n = 5;
  const double rows[5][5] = {
      {4, 1, 0, 0, 2}, {0, 3, 1, 0, 0}, {1, 0, 5, 2, 0}, {0, 2, 0, 6, 1}, {1, 0, 5, 2, 0}};
  for (index_t i = 0; i < 5; ++i) {
    for (index_t j = 0; j < 5; ++j) {
      if (rows[i][j] != 0.0) a.push(j, rows[i][j]);
    }
    a.end_row();
  }
  const kd::Inverse inverse = compare_all(a);
  EXPECT_EQ(inverse.method, kd::Method::lu);
  EXPECT_NE(inverse.zero_pivot, 0);
}

TEST(DenseKernels, NonFiniteEntriesAreFound) {
  HostCsr a = random_matrix(7, 3, true, [](index_t) { return 20.0; });
  a.values[5] = std::numeric_limits<double>::infinity();
  compare_all(a);
  a.values[5] = kNaN;
  compare_all(a);
  const Backend backend = test::backend_under_test();
  const DeviceCsr a_dev(backend, a);
  Array<double> dense(backend, 49);
  kd::densify(backend, a_dev.view(), dense.span());
  EXPECT_FALSE(kd::properties(backend, 7, dense.span()).finite);
}

TEST(DenseKernels, EmptyMatrix) {
  const Backend backend = test::backend_under_test();
  Array<double> dense(backend, 0);
  const kd::Properties p = kd::properties(backend, 0, dense.span());
  EXPECT_TRUE(p.finite);
  const kd::Inverse inverse = kd::invert(backend, 0, p, dense.span());
  EXPECT_EQ(inverse.zero_pivot, 0);
  Array<double> r(backend, 0), z(backend, 0);
  kd::apply(backend, 0, dense.span(), r.span(), z.span());
}

}  // namespace
}  // namespace kryflow
