// Local diagonal of the SEM Poisson operator: every kernel variant on the backend under test
// equals the reference bit for bit, and the reference equals the diagonal of the element
// Laplacian applied to unit vectors (cross terms of deformed elements included).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/sem/diagonal.hpp"
#include "kernels/sem/poisson_element.hpp"
#include "kryflow/core/array.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/sem/gll.hpp"
#include "test_support.hpp"

namespace kryflow::kernels::sem {
namespace {

constexpr auto& kVariants = kDiagonalVariants;

/// Whether the backend under test runs `variant` at N points per direction (the cuda natural
/// and shared kernels take one block of N^3 threads per element: N <= 10).
bool runs(DiagonalVariant variant, int n) {
#ifdef KRYFLOW_TEST_BACKEND_IS_CUDA
  return n <= 10 || variant == DiagonalVariant::extended || variant == DiagonalVariant::wide;
#else
  (void)variant;
  (void)n;
  return true;
#endif
}

std::int64_t points_per_element(int n) {
  return static_cast<std::int64_t>(n) * n * n;
}

/// The reference diagonal of `num_elements` elements with metric terms g and derivative D.
std::vector<double> reference_diagonal(std::int64_t num_elements, int n,
                                       const std::vector<double>& D, const std::vector<double>& g) {
  PoissonView a;
  a.num_elements = num_elements;
  a.n = n;
  a.derivative = D.data();
  a.g = g.data();
  std::vector<double> d(static_cast<std::size_t>(num_elements * points_per_element(n)));
  reference::poisson_local_diagonal(Backend::reference(), a, DiagonalVariant::extended, d);
  return d;
}

/// Entries whose bits differ.
int bit_differences(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return -1;
  int differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<std::uint64_t>(a[i]) != std::bit_cast<std::uint64_t>(b[i])) ++differ;
  }
  return differ;
}

TEST(SemDiagonal, EveryVariantMatchesReferenceBitForBit) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const Backend backend = test::backend_under_test();
  for (int p : {1, 3, 7, 9, 10, 11, 15}) {
    const int n = p + 1;
    const std::vector<double> D = kryflow::sem::derivative_matrix(kryflow::sem::gll_rule(p));
    const Array<double> D_backend = Array<double>::from_host(backend, D);
    for (std::int64_t num_elements : {std::int64_t{5}, std::int64_t{37}}) {
      SCOPED_TRACE("p = " + std::to_string(p) + ", " + std::to_string(num_elements) + " elements");
      const std::size_t size = static_cast<std::size_t>(num_elements * points_per_element(n));
      const std::vector<double> g =
          test::random_vector(6 * size, seed + static_cast<std::uint64_t>(100 * p + num_elements));
      const std::vector<double> expected = reference_diagonal(num_elements, n, D, g);

      const Array<double> g_backend = Array<double>::from_host(backend, g);
      PoissonView a;
      a.num_elements = num_elements;
      a.n = n;
      a.derivative = D_backend.data();
      a.g = g_backend.data();
      for (DiagonalVariant variant : kVariants) {
        if (!runs(variant, n)) continue;
        SCOPED_TRACE(to_string(variant));
        Array<double> d(backend, size);
        poisson_local_diagonal(backend, a, variant, d.span());
        EXPECT_EQ(bit_differences(d.to_host(), expected), 0);
      }
    }
  }
}

TEST(SemDiagonal, EqualsElementLaplacianAppliedToUnitVectors) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const std::int64_t num_elements = 3;
  // The real GLL derivative matrix (its diagonal is nonzero only at the end points, so the
  // cross terms live on the element's faces), then a random one (cross terms everywhere).
  for (bool random_derivative : {false, true}) {
    for (int p : {1, 2, 4}) {
      SCOPED_TRACE("p = " + std::to_string(p) + (random_derivative ? ", random D" : ", GLL D"));
      const int n = p + 1;
      const std::int64_t n3 = points_per_element(n);
      const std::size_t size = static_cast<std::size_t>(num_elements * n3);
      const std::vector<double> D =
          random_derivative ? test::random_vector(static_cast<std::size_t>(n * n),
                                                  seed + 7 + static_cast<std::uint64_t>(p))
                            : kryflow::sem::derivative_matrix(kryflow::sem::gll_rule(p));
      const std::vector<double> g =
          test::random_vector(6 * size, seed + 1000 + static_cast<std::uint64_t>(p));

      const std::vector<double> d = reference_diagonal(num_elements, n, D, g);

      // diag(A_e)_q = (A_e e_q)_q, A_e applied by sum factorization.
      std::vector<double> local_x(size, 0.0);
      std::vector<double> local_y(size, 0.0);
      std::vector<double> work(static_cast<std::size_t>(6 * n3));
      PoissonView a;
      a.num_elements = num_elements;
      a.n = n;
      a.derivative = D.data();
      a.g = g.data();
      a.local_x = local_x.data();
      a.local_y = local_y.data();
      std::vector<double> expected(size);
      for (std::int64_t e = 0; e < num_elements; ++e) {
        for (std::int64_t q = 0; q < n3; ++q) {
          const auto l = static_cast<std::size_t>(e * n3 + q);
          local_x[l] = 1.0;
          detail::element_laplacian(a, e, work.data());
          expected[l] = local_y[l];
          local_x[l] = 0.0;
        }
      }
      const double scale =
          std::abs(*std::max_element(expected.begin(), expected.end(),
                                     [](double x, double y) { return std::abs(x) < std::abs(y); }));
      double difference = 0.0;
      for (std::size_t l = 0; l < size; ++l) {
        difference = std::max(difference, std::abs(d[l] - expected[l]));
      }
      EXPECT_LE(difference, 1e-13 * scale);

      // Without G12, G13, G23 the diagonal misses by far more than the tolerance: the cross
      // terms are checked, not negligible.
      std::vector<double> g_no_cross = g;
      for (std::int64_t e = 0; e < num_elements; ++e) {
        for (int c : {1, 2, 4}) {
          std::fill_n(g_no_cross.begin() + (e * 6 + c) * n3, n3, 0.0);
        }
      }
      const std::vector<double> d_no_cross = reference_diagonal(num_elements, n, D, g_no_cross);
      double cross = 0.0;
      for (std::size_t l = 0; l < size; ++l) {
        cross = std::max(cross, std::abs(d_no_cross[l] - expected[l]));
      }
      EXPECT_GT(cross, 1e-3 * scale);
    }
  }
}

TEST(SemDiagonal, RejectsAnOutputOfTheWrongSize) {
  const Backend backend = test::backend_under_test();
  const std::vector<double> D = kryflow::sem::derivative_matrix(kryflow::sem::gll_rule(2));
  const Array<double> D_backend = Array<double>::from_host(backend, D);
  const Array<double> g = Array<double>::from_host(backend, test::random_vector(2 * 6 * 27));
  PoissonView a;
  a.num_elements = 2;
  a.n = 3;
  a.derivative = D_backend.data();
  a.g = g.data();
  Array<double> d(backend, 2 * 27 - 1);
  EXPECT_THROW(poisson_local_diagonal(backend, a, DiagonalVariant::extended, d.span()),
               DimensionMismatch);
}

#ifdef KRYFLOW_TEST_BACKEND_IS_CUDA
TEST(SemDiagonal, BlockPerElementVariantsRejectMoreThanTenPointsPerDirection) {
  const Backend backend = test::backend_under_test();
  for (int p : {10, 15}) {
    SCOPED_TRACE(p);
    const int n = p + 1;
    const std::vector<double> D = kryflow::sem::derivative_matrix(kryflow::sem::gll_rule(p));
    const Array<double> D_backend = Array<double>::from_host(backend, D);
    const Array<double> g = Array<double>::from_host(
        backend, test::random_vector(static_cast<std::size_t>(6 * points_per_element(n))));
    PoissonView a;
    a.num_elements = 1;
    a.n = n;
    a.derivative = D_backend.data();
    a.g = g.data();
    Array<double> d(backend, static_cast<std::size_t>(points_per_element(n)));
    EXPECT_THROW(poisson_local_diagonal(backend, a, DiagonalVariant::natural, d.span()),
                 NotSupported);
    EXPECT_THROW(poisson_local_diagonal(backend, a, DiagonalVariant::shared, d.span()),
                 NotSupported);
  }
}
#endif

}  // namespace
}  // namespace kryflow::kernels::sem
