// Vector kernels of the backend under test against the reference oracle on fresh random data.
//
// Tolerances:
// - elementwise ops with one rounding (copy, fill, d*x, 1/d) must match bit for bit;
// - elementwise ops with several terms: |a - e| <= 1e-14 * (sum of the terms' magnitudes), which
//   allows a fused multiply-add to round differently from the reference's separate operations;
// - reductions: two summation orders of n terms differ by at most n * eps * sum |term_i|
//   (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 3.5, twice γ_n).
// Outputs are filled with NaN before each kernel, so an element the kernel skips is caught.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/backend/queue_clock.hpp"
#include "kernels/blas/blas.hpp"
#include "kryflow/linalg/vector.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

namespace blas = kernels::blas;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kElementwiseTolerance = 1e-14;
const std::vector<std::size_t> kSizes = {0, 1, 31, 1000, 100003};

/// Fresh random data for one test case, with its seed in the failure message.
struct RandomSource {
  std::uint64_t seed = test::fresh_seed();
  std::vector<double> vector(std::size_t n) { return test::random_vector(n, seed++); }
};

std::vector<double> poison(std::size_t n) {
  return std::vector<double>(n, kNaN);
}

Array<double> on(const Backend& backend, const std::vector<double>& host) {
  return Array<double>::from_host(backend, host);
}

Span<const double> cspan(const std::vector<double>& v) {
  return {v.data(), v.size()};
}

Span<double> span(std::vector<double>& v) {
  return {v.data(), v.size()};
}

/// Every element written, and equal to the expected one bit for bit.
void expect_identical(const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    ASSERT_FALSE(std::isnan(actual[i])) << "element " << i << " not written";
    ASSERT_EQ(std::bit_cast<std::uint64_t>(actual[i]), std::bit_cast<std::uint64_t>(expected[i]))
        << "element " << i << ": " << actual[i] << " vs " << expected[i];
  }
}

/// Every element written, and |actual_i - expected_i| <= 1e-14 * scale_i.
void expect_close(const std::vector<double>& actual, const std::vector<double>& expected,
                  const std::vector<double>& scale) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    ASSERT_FALSE(std::isnan(actual[i])) << "element " << i << " not written";
    ASSERT_LE(std::abs(actual[i] - expected[i]), kElementwiseTolerance * scale[i])
        << "element " << i << ": " << actual[i] << " vs " << expected[i];
  }
}

double sum_abs_products(const std::vector<double>& x, const std::vector<double>& y) {
  double sum = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) sum += std::abs(x[i] * y[i]);
  return sum;
}

/// The bound on |sum_1 - sum_2| for two summation orders of n terms with sum |terms| = magnitude.
double reduction_tolerance(std::size_t n, double magnitude) {
  return static_cast<double>(n + 2) * kEps * magnitude;
}

class BlasTest : public ::testing::Test {
 protected:
  Backend backend = test::backend_under_test();
  Backend reference = Backend::reference();
  RandomSource random;
  void SetUp() override { RecordProperty("seed", std::to_string(random.seed)); }
};

TEST_F(BlasTest, FillWritesTheValueToEveryElement) {
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    Array<double> x = on(backend, poison(n));

    blas::fill(backend, x.span(), -0.375);

    expect_identical(x.to_host(), std::vector<double>(n, -0.375));
  }
}

TEST_F(BlasTest, FillPseudoRandomGivesTheReferenceBitsInMinusOneToOne) {
  const std::uint64_t seed = random.seed;
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed " + std::to_string(seed));
    Array<double> x = on(backend, poison(n));
    Array<double> expected = on(reference, poison(n));

    blas::fill_pseudo_random(backend, x.span(), seed, {});
    blas::fill_pseudo_random(reference, expected.span(), seed, {});

    const std::vector<double> values = x.to_host();
    expect_identical(values, expected.to_host());
    for (const double v : values) {
      ASSERT_GE(v, -1.0);
      ASSERT_LT(v, 1.0);
    }
    if (n >= 2) EXPECT_NE(values[0], values[1]);
  }
}

TEST_F(BlasTest, FillPseudoRandomBalancedDividesBySquareRootsOfTheMagnitudes) {
  const std::uint64_t seed = random.seed;
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed " + std::to_string(seed));
    std::vector<double> balance = random.vector(n);
    for (std::size_t i = 0; i < n; ++i) balance[i] *= (i % 3 == 0 ? 1e6 : 1e-3);  // +- both
    const Array<double> b = on(backend, balance), b_ref = on(reference, balance);
    Array<double> x = on(backend, poison(n)), plain = on(reference, poison(n));
    Array<double> expected = on(reference, poison(n));

    blas::fill_pseudo_random(backend, x.span(), seed, b.span());
    blas::fill_pseudo_random(reference, expected.span(), seed, b_ref.span());
    blas::fill_pseudo_random(reference, plain.span(), seed, {});

    const std::vector<double> values = x.to_host(), u = plain.to_host();
    expect_identical(values, expected.to_host());
    for (std::size_t i = 0; i < n; ++i) {
      const double definition = u[i] / std::sqrt(std::abs(balance[i]));
      ASSERT_NEAR(values[i], definition, 1e-15 * std::abs(definition)) << "i = " << i;
    }
  }
}

TEST_F(BlasTest, ChebyshevUpdateMatchesReferenceBitForBit) {
  // d = alpha (dinv ∘ r) + beta d, x = d + x (or d): separately rounded products and sums on
  // every backend, so the bits are the reference's; d and x are not read where the contract
  // says so (poisoned with NaN there).
  for (std::size_t n : kSizes) {
    const std::vector<double> dinv = random.vector(n);
    const std::vector<double> r = random.vector(n);
    const std::vector<double> d0 = random.vector(n);
    const std::vector<double> x0 = random.vector(n);
    for (const bool reads_d : {true, false}) {
      for (const bool x_is_zero : {true, false}) {
        SCOPED_TRACE("n = " + std::to_string(n) + (reads_d ? ", beta != 0" : ", beta = 0") +
                     (x_is_zero ? ", x = 0" : ""));
        const double beta = reads_d ? -0.625 : 0.0;
        Array<double> d = on(backend, reads_d ? d0 : poison(n));
        Array<double> x = on(backend, x_is_zero ? poison(n) : x0);
        Array<double> d_ref = on(reference, reads_d ? d0 : poison(n));
        Array<double> x_ref = on(reference, x_is_zero ? poison(n) : x0);
        const Array<double> dinv_d = on(backend, dinv);
        const Array<double> r_d = on(backend, r);
        const Array<double> dinv_r = on(reference, dinv);
        const Array<double> r_r = on(reference, r);
        blas::chebyshev_update(backend, dinv_d.span(), r_d.span(), 1.375, beta, d.span(), x.span(),
                               x_is_zero);
        blas::chebyshev_update(reference, dinv_r.span(), r_r.span(), 1.375, beta, d_ref.span(),
                               x_ref.span(), x_is_zero);
        expect_identical(d.to_host(), d_ref.to_host());
        expect_identical(x.to_host(), x_ref.to_host());
      }
    }
  }
}

TEST_F(BlasTest, ChebyshevStepUpdateMatchesReferenceBitForBit) {
  // r = y, d = alpha (dinv ∘ r) + beta d, y = d + x: the bits of the reference; d not read
  // when beta == 0 (poisoned with NaN there).
  for (std::size_t n : kSizes) {
    const std::vector<double> dinv = random.vector(n);
    const std::vector<double> r = random.vector(n);
    const std::vector<double> d0 = random.vector(n);
    const std::vector<double> x = random.vector(n);
    for (const bool reads_d : {true, false}) {
      SCOPED_TRACE("n = " + std::to_string(n) + (reads_d ? ", beta != 0" : ", beta = 0"));
      const double beta = reads_d ? -0.625 : 0.0;
      Array<double> d = on(backend, reads_d ? d0 : poison(n));
      Array<double> y = on(backend, r);
      Array<double> d_ref = on(reference, reads_d ? d0 : poison(n));
      Array<double> y_ref = on(reference, r);
      const Array<double> dinv_d = on(backend, dinv);
      const Array<double> x_d = on(backend, x);
      const Array<double> dinv_r = on(reference, dinv);
      const Array<double> x_r = on(reference, x);
      blas::chebyshev_step_update(backend, dinv_d.span(), x_d.span(), 1.375, beta, d.span(),
                                  y.span());
      blas::chebyshev_step_update(reference, dinv_r.span(), x_r.span(), 1.375, beta, d_ref.span(),
                                  y_ref.span());
      expect_identical(d.to_host(), d_ref.to_host());
      expect_identical(y.to_host(), y_ref.to_host());
      // and the formula itself on the host
      const std::vector<double> y_host = y_ref.to_host();
      for (std::size_t i = 0; i < n; ++i) {
        const double z = dinv[i] * r[i];
        const double di = reads_d ? 1.375 * z + beta * d0[i] : 1.375 * z;
        ASSERT_EQ(std::bit_cast<std::uint64_t>(y_host[i]), std::bit_cast<std::uint64_t>(di + x[i]))
            << "entry " << i;
      }
    }
  }
}

TEST_F(BlasTest, CopyReproducesTheSourceExactly) {
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed " + std::to_string(random.seed));
    const std::vector<double> x = random.vector(n);
    const Array<double> x_d = on(backend, x);
    Array<double> y_d = on(backend, poison(n));

    blas::copy(backend, x_d.span(), y_d.span());

    expect_identical(y_d.to_host(), x);
  }
}

TEST_F(BlasTest, AxpbyMatchesReference) {
  const double alpha = 1.75;
  const double beta = -0.625;
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed " + std::to_string(random.seed));
    const std::vector<double> x = random.vector(n);
    std::vector<double> y = random.vector(n);
    const Array<double> x_d = on(backend, x);
    Array<double> y_d = on(backend, y);
    std::vector<double> scale(n);
    for (std::size_t i = 0; i < n; ++i) scale[i] = std::abs(alpha * x[i]) + std::abs(beta * y[i]);

    blas::axpby(backend, alpha, x_d.span(), beta, y_d.span());
    blas::reference::axpby(reference, alpha, cspan(x), beta, span(y));

    expect_close(y_d.to_host(), y, scale);
  }
}

TEST_F(BlasTest, AxpbyDoesNotReadYWhenBetaIsZero) {
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed " + std::to_string(random.seed));
    const std::vector<double> x = random.vector(n);
    const Array<double> x_d = on(backend, x);
    Array<double> y_d = on(backend, poison(n));  // NaN * 0 would leak NaN if y were read
    std::vector<double> expected(n);
    for (std::size_t i = 0; i < n; ++i) expected[i] = 3.0 * x[i];

    blas::axpby(backend, 3.0, x_d.span(), 0.0, y_d.span());

    expect_identical(y_d.to_host(), expected);
  }
}

TEST_F(BlasTest, AxpbypczMatchesReference) {
  const double alpha = 0.5;
  const double beta = -1.25;
  const double gamma = 2.0;
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed " + std::to_string(random.seed));
    const std::vector<double> x = random.vector(n);
    const std::vector<double> y = random.vector(n);
    std::vector<double> z = random.vector(n);
    const Array<double> x_d = on(backend, x);
    const Array<double> y_d = on(backend, y);
    Array<double> z_d = on(backend, z);
    std::vector<double> scale(n);
    for (std::size_t i = 0; i < n; ++i) {
      scale[i] = std::abs(alpha * x[i]) + std::abs(beta * y[i]) + std::abs(gamma * z[i]);
    }

    blas::axpbypcz(backend, alpha, x_d.span(), beta, y_d.span(), gamma, z_d.span());
    blas::reference::axpbypcz(reference, alpha, cspan(x), beta, cspan(y), gamma, span(z));

    expect_close(z_d.to_host(), z, scale);
  }
}

TEST_F(BlasTest, AxpbypczDoesNotReadZWhenGammaIsZero) {
  const double alpha = -0.75;
  const double beta = 1.5;
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed " + std::to_string(random.seed));
    const std::vector<double> x = random.vector(n);
    const std::vector<double> y = random.vector(n);
    std::vector<double> z(n, 0.0);
    const Array<double> x_d = on(backend, x);
    const Array<double> y_d = on(backend, y);
    Array<double> z_d = on(backend, poison(n));
    std::vector<double> scale(n);
    for (std::size_t i = 0; i < n; ++i) scale[i] = std::abs(alpha * x[i]) + std::abs(beta * y[i]);

    blas::axpbypcz(backend, alpha, x_d.span(), beta, y_d.span(), 0.0, z_d.span());
    blas::reference::axpbypcz(reference, alpha, cspan(x), beta, cspan(y), 0.0, span(z));

    expect_close(z_d.to_host(), z, scale);
  }
}

TEST_F(BlasTest, PointwiseMultiplyMatchesReferenceExactly) {
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed " + std::to_string(random.seed));
    const std::vector<double> d = random.vector(n);
    const std::vector<double> x = random.vector(n);
    std::vector<double> y(n);
    const Array<double> d_d = on(backend, d);
    const Array<double> x_d = on(backend, x);
    Array<double> y_d = on(backend, poison(n));

    blas::pointwise_multiply(backend, d_d.span(), x_d.span(), y_d.span());
    blas::reference::pointwise_multiply(reference, cspan(d), cspan(x), span(y));

    expect_identical(y_d.to_host(), y);
  }
}

TEST_F(BlasTest, DotMatchesReferenceWithinTheSummationBound) {
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed " + std::to_string(random.seed));
    const std::vector<double> x = random.vector(n);
    const std::vector<double> y = random.vector(n);
    const Array<double> x_d = on(backend, x);
    const Array<double> y_d = on(backend, y);

    const double actual = blas::dot(backend, x_d.span(), y_d.span());
    const double expected = blas::reference::dot(reference, cspan(x), cspan(y));

    EXPECT_LE(std::abs(actual - expected), reduction_tolerance(n, sum_abs_products(x, y)))
        << actual << " vs " << expected;
  }
}

TEST_F(BlasTest, DotGivesIdenticalBitsOnRepeatedCalls) {
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed " + std::to_string(random.seed));
    const Array<double> x_d = on(backend, random.vector(n));
    const Array<double> y_d = on(backend, random.vector(n));

    const double first = blas::dot(backend, x_d.span(), y_d.span());
    const double second = blas::dot(backend, x_d.span(), y_d.span());

    EXPECT_EQ(std::bit_cast<std::uint64_t>(first), std::bit_cast<std::uint64_t>(second));
  }
}

TEST_F(BlasTest, DotGivesIdenticalBitsWhateverTheAlignment) {
  // The same values once at the start of a buffer and once one element in (an 8-byte but not
  // 16-byte aligned address): the summation order must not depend on the address.
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed " + std::to_string(random.seed));
    const std::vector<double> x = random.vector(n);
    const std::vector<double> y = random.vector(n);
    std::vector<double> x_shifted(n + 1, 0.25);
    std::vector<double> y_shifted(n + 1, 0.25);
    std::copy(x.begin(), x.end(), x_shifted.begin() + 1);
    std::copy(y.begin(), y.end(), y_shifted.begin() + 1);
    const Array<double> x_d = on(backend, x);
    const Array<double> y_d = on(backend, y);
    const Array<double> xs_d = on(backend, x_shifted);
    const Array<double> ys_d = on(backend, y_shifted);

    const double aligned = blas::dot(backend, x_d.span(), y_d.span());
    const double shifted = blas::dot(backend, xs_d.span().subspan(1), ys_d.span().subspan(1));

    EXPECT_EQ(std::bit_cast<std::uint64_t>(aligned), std::bit_cast<std::uint64_t>(shifted));
  }
}

TEST_F(BlasTest, Norm2MatchesReferenceWithinTheSummationBound) {
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed " + std::to_string(random.seed));
    const std::vector<double> x = random.vector(n);
    const Array<double> x_d = on(backend, x);

    const double actual = blas::norm2(backend, x_d.span());
    const double expected = blas::reference::norm2(reference, cspan(x));

    // sqrt halves the relative error of the sum of squares; one more eps for the sqrt itself.
    EXPECT_LE(std::abs(actual - expected), (static_cast<double>(n) + 2.0) * kEps * expected)
        << actual << " vs " << expected;
  }
}

TEST_F(BlasTest, InvertDiagonalMatchesReferenceAndReportsNoBadEntry) {
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed " + std::to_string(random.seed));
    const std::vector<double> d = random.vector(n);
    std::vector<double> dinv(n);
    const Array<double> d_d = on(backend, d);
    Array<double> dinv_d = on(backend, poison(n));

    const index_t bad = blas::invert_diagonal(backend, d_d.span(), dinv_d.span());
    blas::reference::invert_diagonal(reference, cspan(d), span(dinv));

    EXPECT_EQ(bad, -1);
    expect_identical(dinv_d.to_host(), dinv);  // 1 / d is correctly rounded everywhere
  }
}

TEST_F(BlasTest, InvertDiagonalReturnsTheFirstZeroNanOrInfEntry) {
  const std::vector<double> bad_values = {0.0, -0.0, kNaN, std::numeric_limits<double>::infinity(),
                                          -std::numeric_limits<double>::infinity()};
  for (std::size_t n : {std::size_t{1}, std::size_t{31}, std::size_t{1000}, std::size_t{100003}}) {
    // Three bad entries at increasing positions; each kind of bad value comes first once.
    const std::vector<std::size_t> positions =
        n == 1 ? std::vector<std::size_t>{0} : std::vector<std::size_t>{n / 7, n / 2, n - 1};
    for (std::size_t first_kind = 0; first_kind < bad_values.size(); ++first_kind) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", first bad value " +
                   std::to_string(bad_values[first_kind]) + ", seed " +
                   std::to_string(random.seed));
      std::vector<double> d = random.vector(n);
      for (std::size_t j = 0; j < positions.size(); ++j) {
        d[positions[j]] = bad_values[(first_kind + j) % bad_values.size()];
      }
      std::vector<double> dinv(n);
      const Array<double> d_d = on(backend, d);
      Array<double> dinv_d = on(backend, poison(n));

      const index_t bad = blas::invert_diagonal(backend, d_d.span(), dinv_d.span());
      const index_t expected_bad =
          blas::reference::invert_diagonal(reference, cspan(d), span(dinv));

      EXPECT_EQ(bad, static_cast<index_t>(positions[0]));
      EXPECT_EQ(bad, expected_bad);
      expect_identical(dinv_d.to_host(), dinv);  // bad entries give 0
    }
  }
}

TEST_F(BlasTest, KernelsMatchReferenceOnSpansNotAlignedTo16Bytes) {
  // Subspans starting one element into their buffers take the kernels' unaligned path.
  const std::size_t n = 1001;
  SCOPED_TRACE("seed " + std::to_string(random.seed));
  const std::vector<double> x = random.vector(n + 1);
  const std::vector<double> y = random.vector(n + 1);
  std::vector<double> z = random.vector(n + 1);
  const Array<double> x_d = on(backend, x);
  const Array<double> y_d = on(backend, y);
  Array<double> z_d = on(backend, z);
  Array<double> w_d = on(backend, poison(n + 1));
  std::vector<double> w(n + 1, kNaN);
  std::vector<double> scale(n + 1, 0.0);
  for (std::size_t i = 1; i <= n; ++i) {
    scale[i] = std::abs(2.0 * x[i]) + std::abs(3.0 * y[i]) + std::abs(0.5 * z[i]);
  }

  blas::axpbypcz(backend, 2.0, x_d.span().subspan(1), 3.0, y_d.span().subspan(1), 0.5,
                 z_d.span().subspan(1));
  blas::pointwise_multiply(backend, x_d.span().subspan(1), y_d.span().subspan(1),
                           w_d.span().subspan(1));
  blas::reference::axpbypcz(reference, 2.0, cspan(x).subspan(1), 3.0, cspan(y).subspan(1), 0.5,
                            span(z).subspan(1));
  blas::reference::pointwise_multiply(reference, cspan(x).subspan(1), cspan(y).subspan(1),
                                      span(w).subspan(1));

  const std::vector<double> z_actual = z_d.to_host();
  const std::vector<double> w_actual = w_d.to_host();
  EXPECT_EQ(std::bit_cast<std::uint64_t>(z_actual[0]), std::bit_cast<std::uint64_t>(z[0]))
      << "element before the span was written";
  EXPECT_TRUE(std::isnan(w_actual[0])) << "element before the span was written";
  expect_close(std::vector<double>(z_actual.begin() + 1, z_actual.end()),
               std::vector<double>(z.begin() + 1, z.end()),
               std::vector<double>(scale.begin() + 1, scale.end()));
  expect_identical(std::vector<double>(w_actual.begin() + 1, w_actual.end()),
                   std::vector<double>(w.begin() + 1, w.end()));
}

#ifdef KRYFLOW_TEST_BACKEND_IS_CUDA
// The cpu backend emulates the cuda reduction order and neither side fuses multiply-adds, so
// every vector kernel gives the same bits on both (tolerance: none).
TEST(BlasCrossBackend, CudaAndCpuGiveIdenticalBits) {
  const Backend cuda = test::backend_under_test();
  const Backend cpu = Backend::cpu();
  for (std::size_t n :
       {std::size_t{1}, std::size_t{1001}, std::size_t{262145}, std::size_t{3000001}}) {
    SCOPED_TRACE(n);
    const std::vector<double> a = test::random_vector(n);
    const std::vector<double> b = test::random_vector(n);
    const std::vector<double> c = test::random_vector(n);
    const std::vector<double> d = test::random_vector(n);
    auto on = [&](const Backend& backend) {
      Vector p = Vector::from_host(backend, a);
      Vector q = Vector::from_host(backend, b);
      Vector x = Vector::from_host(backend, c);
      Vector r = Vector::from_host(backend, d);
      const Vector inverse_diagonal = Vector::from_host(backend, c);
      std::vector<double> scalars;
      scalars.push_back(dot(p, q));
      scalars.push_back(norm2(r));
      axpby(0.37, p, 1.0, x);
      axpby(-0.37, q, 1.0, r);
      scalars.push_back(dot(r, inverse_diagonal));
      axpbypcz(0.3, p, -1.7, q, 0.9, x);
      axpby(1.0, r, 0.61, p);
      return std::make_tuple(scalars, x.to_host(), r.to_host(), p.to_host());
    };
    const auto [scalars_cuda, x_cuda, r_cuda, p_cuda] = on(cuda);
    const auto [scalars_cpu, x_cpu, r_cpu, p_cpu] = on(cpu);
    ASSERT_EQ(scalars_cuda.size(), scalars_cpu.size());
    for (std::size_t k = 0; k < scalars_cpu.size(); ++k) {
      EXPECT_EQ(std::memcmp(&scalars_cuda[k], &scalars_cpu[k], sizeof(double)), 0)
          << "scalar " << k << ": " << scalars_cuda[k] << " vs " << scalars_cpu[k];
    }
    EXPECT_TRUE(x_cuda == x_cpu);
    EXPECT_TRUE(r_cuda == r_cpu);
    EXPECT_TRUE(p_cuda == p_cpu);
  }
}
#endif

// QueueClock: marks around queued work give non-negative, additive intervals, and resolving
// them waits at most once (the marks before the last are done when the last one is).
TEST(QueueClock, IntervalsAreOrderedAndCostOneWait) {
  const Backend backend = test::backend_under_test();
  RandomSource random;
  const std::size_t n = 1 << 20;
  Array<double> x = on(backend, random.vector(n));
  Array<double> y = on(backend, random.vector(n));
  backend.synchronize();
  kernels::QueueClock clock(backend);
  const std::size_t start = clock.mark();
  for (int k = 0; k < 20; ++k) blas::axpby(backend, 0.5, x.span(), 0.5, y.span());
  const std::size_t middle = clock.mark();
  for (int k = 0; k < 20; ++k) blas::axpby(backend, 0.5, y.span(), 0.5, x.span());
  const std::size_t end = clock.mark();
  const std::uint64_t waits = backend.host_waits();
  const double whole = clock.seconds(start, end);
  const double first = clock.seconds(start, middle);
  const double second = clock.seconds(middle, end);
  EXPECT_LE(backend.host_waits() - waits, 1u);
  EXPECT_GE(first, 0.0);
  EXPECT_GE(second, 0.0);
  EXPECT_GT(whole, 0.0);
  // Event times have a resolution of about half a microsecond on cuda.
  EXPECT_NEAR(first + second, whole, 1e-5 + 1e-6 * whole);
}

}  // namespace
}  // namespace kryflow
