// GMRES kernels of the backend under test against the reference oracle on fresh random data.
//
// Tolerances:
// - element-wise results (w - sum h_k v_k, w / ||w||, sum y_k v_k) must match bit for bit: the
//   contract fixes the operations and their order, and fused multiply-add is off on every
//   backend;
// - sums: two summation orders of n terms differ by at most (n + 2) eps sum |term_i| (Higham,
//   Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 3.5);
// - the scalar steps (givens, start_cycle, solve_least_squares) run the same function on one
//   thread everywhere: bit for bit.
// Outputs are filled with NaN before each kernel, so a value the kernel skips is caught.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/krylov/gmres/gmres.hpp"
#include "kryflow/linalg/scalars.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

namespace kg = kernels::krylov::gmres;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kEps = std::numeric_limits<double>::epsilon();
const std::vector<std::size_t> kSizes = {1, 2, 31, 1000, 100003};
/// Basis sizes: below, at and across the kGroup vectors of one launch.
const std::vector<std::size_t> kBasisSizes = {1, 3, 8, 9, 17};

struct RandomSource {
  std::uint64_t seed = test::fresh_seed();
  std::vector<double> vector(std::size_t n) { return test::random_vector(n, seed++); }
};

double reduction_tolerance(std::size_t n, double magnitude) {
  return static_cast<double>(n + 2) * kEps * magnitude;
}

void expect_identical(const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(expected[i])) {
      ASSERT_TRUE(std::isnan(actual[i])) << "element " << i << " written: " << actual[i];
      continue;
    }
    ASSERT_FALSE(std::isnan(actual[i])) << "element " << i << " not written";
    ASSERT_EQ(std::bit_cast<std::uint64_t>(actual[i]), std::bit_cast<std::uint64_t>(expected[i]))
        << "element " << i << ": " << actual[i] << " vs " << expected[i];
  }
}

/// The scalars of kernels::krylov::gmres for a basis of size m, in one DeviceScalars set on a
/// backend (layout: the 8 single scalars, H, correction, cs, sn, g, y).
class ScalarSet {
 public:
  ScalarSet(const Backend& backend, int m)
      : m_(m), values_(backend, 8 + static_cast<std::size_t>((m + 1) * m + 5 * m + 2)) {}
  kg::Scalars scalars() {
    auto at = [&](std::size_t i) { return values_.slot(i).address; };
    const std::size_t mm = static_cast<std::size_t>(m_);
    const std::size_t h = 8;
    const std::size_t correction = h + (mm + 1) * mm;
    const std::size_t cs = correction + mm + 1;
    const std::size_t sn = cs + mm;
    const std::size_t g = sn + mm;
    const std::size_t y = g + mm + 1;
    return {at(0), at(1),          at(2),  at(3),  at(4), at(5), at(6), at(7),
            at(h), at(correction), at(cs), at(sn), at(g), at(y), m_};
  }
  std::vector<double> read() const {
    std::vector<double> host(values_.size());
    values_.read(0, host);
    return host;
  }
  void write(const std::vector<double>& host) { values_.write(0, host); }
  std::size_t size() const { return values_.size(); }

 private:
  int m_;
  DeviceScalars values_;
};

/// m basis vectors (and their host copies) on a backend.
struct BasisOn {
  std::vector<std::vector<double>> host;
  std::vector<Array<double>> arrays;
  std::vector<const double*> device;
  std::vector<const double*> host_pointers;
  BasisOn(const Backend& backend, RandomSource& random, std::size_t count, std::size_t n) {
    for (std::size_t k = 0; k < count; ++k) {
      host.push_back(random.vector(n));
      arrays.push_back(Array<double>::from_host(backend, host.back()));
    }
    for (std::size_t k = 0; k < count; ++k) {
      device.push_back(arrays[k].data());
      host_pointers.push_back(host[k].data());
    }
  }
  kg::Basis on_device() const { return {device.data(), device.size()}; }
  kg::Basis on_host() const { return {host_pointers.data(), host_pointers.size()}; }
};

double sum_abs_products(const std::vector<double>& x, const std::vector<double>& y) {
  double sum = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) sum += std::abs(x[i] * y[i]);
  return sum;
}

class GmresKernelTest : public ::testing::Test {
 protected:
  Backend backend = test::backend_under_test();
  Backend reference = Backend::reference();
  RandomSource random;
  void SetUp() override { RecordProperty("seed", std::to_string(random.seed)); }

  /// Scalars for basis size m on the backend under test and on the reference, equal, all NaN
  /// but stop = 0.
  struct Pair {
    ScalarSet tested;
    ScalarSet expected;
  };
  Pair scalar_pair(int m) {
    Pair pair{ScalarSet(backend, m), ScalarSet(reference, m)};
    std::vector<double> initial(pair.tested.size(), kNaN);
    initial[0] = 0.0;
    pair.tested.write(initial);
    pair.expected.write(initial);
    return pair;
  }
};

TEST_F(GmresKernelTest, ProjectMatchesReferenceWithinTheReductionBound) {
  for (std::size_t n : kSizes) {
    for (std::size_t count : kBasisSizes) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", basis " + std::to_string(count) + ", seed " +
                   std::to_string(random.seed));
      const BasisOn basis(backend, random, count, n);
      const std::vector<double> w = random.vector(n);
      const Array<double> w_d = Array<double>::from_host(backend, w);
      Pair s = scalar_pair(static_cast<int>(count));
      kg::Scalars tested = s.tested.scalars();
      kg::Scalars expected = s.expected.scalars();

      kg::project(backend, basis.on_device(), w_d.span(), tested.hessenberg, tested.az, tested);
      kg::reference::project(reference, basis.on_host(), {w.data(), n}, expected.hessenberg,
                             expected.az, expected);

      const std::vector<double> got = s.tested.read();
      const std::vector<double> want = s.expected.read();
      EXPECT_NEAR(got[4], want[4], reduction_tolerance(n, sum_abs_products(w, w)));
      for (std::size_t k = 0; k < count; ++k) {
        EXPECT_NEAR(got[8 + k], want[8 + k],
                    reduction_tolerance(n, sum_abs_products(basis.host[k], w)))
            << "h_" << k;
      }
      EXPECT_TRUE(std::isnan(got[8 + count])) << "wrote beyond the basis";
    }
  }
}

TEST_F(GmresKernelTest, SubtractMatchesReferenceBitForBitAndItsNormWithinTheBound) {
  for (std::size_t n : kSizes) {
    for (std::size_t count : kBasisSizes) {
      for (const bool with_norm : {false, true}) {
        SCOPED_TRACE("n = " + std::to_string(n) + ", basis " + std::to_string(count) +
                     (with_norm ? ", norm" : "") + ", seed " + std::to_string(random.seed));
        const BasisOn basis(backend, random, count, n);
        std::vector<double> w = random.vector(n);
        Array<double> w_d = Array<double>::from_host(backend, w);
        Pair s = scalar_pair(static_cast<int>(count));
        std::vector<double> initial = s.tested.read();
        const std::vector<double> h = random.vector(count);
        for (std::size_t k = 0; k < count; ++k) initial[8 + k] = h[k];
        s.tested.write(initial);
        s.expected.write(initial);
        kg::Scalars tested = s.tested.scalars();
        kg::Scalars expected = s.expected.scalars();

        kg::subtract(backend, basis.on_device(), tested.hessenberg, w_d.span(),
                     with_norm ? tested.wn : nullptr, tested);
        kg::reference::subtract(reference, basis.on_host(), expected.hessenberg, {w.data(), n},
                                with_norm ? expected.wn : nullptr, expected);

        expect_identical(w_d.to_host(), w);
        const std::vector<double> got = s.tested.read();
        const std::vector<double> want = s.expected.read();
        if (with_norm) {
          EXPECT_NEAR(got[5], want[5], reduction_tolerance(n, sum_abs_products(w, w)));
        } else {
          EXPECT_TRUE(std::isnan(got[5])) << "wrote a norm nobody asked for";
        }
      }
    }
  }
}

TEST_F(GmresKernelTest, MgsStepMatchesReferenceInEveryForm) {
  for (std::size_t n : kSizes) {
    for (const bool update : {false, true}) {
      for (const bool dot : {false, true}) {
        SCOPED_TRACE("n = " + std::to_string(n) + (update ? ", update" : "") +
                     (dot ? ", dot" : "") + ", seed " + std::to_string(random.seed));
        const BasisOn basis(backend, random, 2, n);
        std::vector<double> w = random.vector(n);
        Array<double> w_d = Array<double>::from_host(backend, w);
        Pair s = scalar_pair(2);
        std::vector<double> initial = s.tested.read();
        initial[8] = 0.375;  // h_0, the coefficient of the update
        s.tested.write(initial);
        s.expected.write(initial);
        kg::Scalars tested = s.tested.scalars();
        kg::Scalars expected = s.expected.scalars();
        const Span<const double> none;
        const Span<const double> previous_d = basis.arrays[0].span();
        const Span<const double> next_d = basis.arrays[1].span();
        const Span<const double> previous_h(basis.host[0].data(), n);
        const Span<const double> next_h(basis.host[1].data(), n);

        kg::mgs_step(backend, update ? previous_d : none, tested.hessenberg, w_d.span(),
                     dot ? next_d : none, tested.hessenberg + 1, tested.wn, tested);
        kg::reference::mgs_step(reference, update ? previous_h : none, expected.hessenberg,
                                {w.data(), n}, dot ? next_h : none, expected.hessenberg + 1,
                                expected.wn, expected);

        expect_identical(w_d.to_host(), w);
        const std::vector<double> got = s.tested.read();
        const std::vector<double> want = s.expected.read();
        EXPECT_NEAR(got[5], want[5], reduction_tolerance(n, sum_abs_products(w, w)));
        if (dot) {
          EXPECT_NEAR(got[9], want[9], reduction_tolerance(n, sum_abs_products(basis.host[1], w)));
        } else {
          EXPECT_TRUE(std::isnan(got[9]));
        }
      }
    }
  }
}

TEST_F(GmresKernelTest, NormalizeMatchesReferenceBitForBitAlsoInPlace) {
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed " + std::to_string(random.seed));
    const std::vector<double> w = random.vector(n);
    const Array<double> w_d = Array<double>::from_host(backend, w);
    Array<double> v_d = Array<double>::from_host(backend, std::vector<double>(n, kNaN));
    Array<double> in_place = Array<double>::from_host(backend, w);
    Pair s = scalar_pair(1);
    std::vector<double> initial = s.tested.read();
    initial[5] = 7.25;  // ||w||^2
    s.tested.write(initial);
    s.expected.write(initial);
    std::vector<double> v(n, kNaN);

    kg::normalize(backend, w_d.span(), s.tested.scalars().wn, v_d.span(), s.tested.scalars());
    kg::normalize(backend, in_place.span(), s.tested.scalars().wn, in_place.span(),
                  s.tested.scalars());
    kg::reference::normalize(reference, {w.data(), n}, s.expected.scalars().wn, {v.data(), n},
                             s.expected.scalars());

    expect_identical(v_d.to_host(), v);
    expect_identical(in_place.to_host(), v);
  }
}

TEST_F(GmresKernelTest, AddCombinationUsesTheAcceptedColumnsOnly) {
  for (std::size_t n : kSizes) {
    for (std::size_t count : kBasisSizes) {
      for (const bool accumulate : {false, true}) {
        // columns below, at and (clamped) above the basis size
        for (const std::size_t columns : {std::size_t{0}, count / 2, count, count + 3}) {
          SCOPED_TRACE("n = " + std::to_string(n) + ", basis " + std::to_string(count) +
                       ", columns " + std::to_string(columns) + (accumulate ? ", accumulate" : "") +
                       ", seed " + std::to_string(random.seed));
          BasisOn basis(backend, random, count, n);
          // A NaN in a vector beyond the accepted columns must not reach the result.
          if (columns < count) {
            basis.host[columns][0] = kNaN;
            basis.arrays[columns] = Array<double>::from_host(backend, basis.host[columns]);
            basis.device[columns] = basis.arrays[columns].data();
          }
          std::vector<double> out = accumulate ? random.vector(n) : std::vector<double>(n, kNaN);
          Array<double> out_d = Array<double>::from_host(backend, out);
          const int m = static_cast<int>(count + 3);
          Pair s = scalar_pair(m);
          std::vector<double> initial = s.tested.read();
          initial[2] = static_cast<double>(columns);
          const std::vector<double> y = random.vector(static_cast<std::size_t>(m));
          const std::size_t y_first = initial.size() - static_cast<std::size_t>(m);
          for (std::size_t k = 0; k < y.size(); ++k) initial[y_first + k] = y[k];
          s.tested.write(initial);
          s.expected.write(initial);

          kg::add_combination(backend, basis.on_device(), s.tested.scalars(), out_d.span(),
                              accumulate);
          kg::reference::add_combination(reference, basis.on_host(), s.expected.scalars(),
                                         {out.data(), n}, accumulate);

          expect_identical(out_d.to_host(), out);
        }
      }
    }
  }
}

TEST_F(GmresKernelTest, GivensStartAndLeastSquaresGiveTheReferenceBits) {
  // A cycle of m = 6 columns of a random Hessenberg matrix through the scalar steps, the
  // reorthogonalization correction added in every other column.
  const int m = 6;
  Pair s = scalar_pair(m);
  const kg::Scalars tested = s.tested.scalars();
  const kg::Scalars expected = s.expected.scalars();
  std::vector<double> values = s.tested.read();
  values[7] = 2.5;  // beta = ||r||^2
  s.tested.write(values);
  s.expected.write(values);
  kg::start_cycle(backend, tested);
  kg::reference::start_cycle(reference, expected);
  DeviceScalars residuals(backend, m);
  std::vector<double> expected_residuals(m, kNaN);
  for (int j = 0; j < m; ++j) {
    SCOPED_TRACE("column " + std::to_string(j) + ", seed " + std::to_string(random.seed));
    // The column, correction, ||w||^2 and ||A z||^2 as the orthogonalization leaves them.
    values = s.tested.read();
    const std::vector<double> column = random.vector(static_cast<std::size_t>(j + 1));
    const std::vector<double> correction = random.vector(static_cast<std::size_t>(j + 1));
    const std::size_t h = 8 + static_cast<std::size_t>(j * (m + 1));
    const std::size_t c = 8 + static_cast<std::size_t>((m + 1) * m);
    for (int i = 0; i <= j; ++i) {
      values[h + i] = column[i];
      values[c + i] = 1e-3 * correction[i];
    }
    values[5] = 0.25 + 0.125 * j;  // ||w||^2
    values[4] = 100.0;             // ||A z||^2
    s.tested.write(values);
    s.expected.write(values);

    kg::givens(backend, tested, j, j % 2 == 1, residuals.slot(static_cast<std::size_t>(j)).address);
    kg::reference::givens(reference, expected, j, j % 2 == 1, &expected_residuals[j]);

    expect_identical(s.tested.read(), s.expected.read());
  }
  kg::solve_least_squares(backend, tested);
  kg::reference::solve_least_squares(reference, expected);

  const std::vector<double> got = s.tested.read();
  expect_identical(got, s.expected.read());
  EXPECT_EQ(got[0], 0.0) << "stopped: " << got[0];
  EXPECT_EQ(got[2], static_cast<double>(m));
  std::vector<double> got_residuals(m);
  residuals.read(0, got_residuals);
  expect_identical(got_residuals, expected_residuals);
}

TEST_F(GmresKernelTest, GivensStopsOnASingularColumnAndEveryKernelThenWaits) {
  // Column 0 = (0, 0): R(0,0) = 0 <= eps ||H||: stop = kSingular, nothing accepted; the
  // Arnoldi kernels then leave their outputs alone.
  Pair s = scalar_pair(2);
  const kg::Scalars tested = s.tested.scalars();
  std::vector<double> values = s.tested.read();
  values[7] = 1.0;
  s.tested.write(values);
  kg::start_cycle(backend, tested);
  values = s.tested.read();
  values[8] = 0.0;  // h_00
  values[5] = 0.0;  // ||w||^2
  values[4] = 1.0;  // ||A z||^2
  s.tested.write(values);
  DeviceScalars residual(backend, 1);

  kg::givens(backend, tested, 0, false, residual.slot(0).address);
  const std::vector<double> w = random.vector(31);
  Array<double> w_d = Array<double>::from_host(backend, w);
  const BasisOn basis(backend, random, 2, 31);
  kg::project(backend, basis.on_device(), w_d.span(), tested.hessenberg, tested.az, tested);
  kg::subtract(backend, basis.on_device(), tested.hessenberg, w_d.span(), tested.wn, tested);
  kg::normalize(backend, w_d.span(), tested.wn, w_d.span(), tested);

  const std::vector<double> got = s.tested.read();
  EXPECT_EQ(got[0], static_cast<double>(kg::kSingular));
  EXPECT_EQ(got[1], 0.0);
  EXPECT_EQ(got[2], 0.0);
  EXPECT_EQ(got[4], 1.0) << "project ran after the stop";
  EXPECT_EQ(got[5], 0.0) << "subtract ran after the stop";
  expect_identical(w_d.to_host(), w);
}

}  // namespace
}  // namespace kryflow
