// PCG kernels (kernels/krylov/cg) of the backend under test against the reference oracle on
// fresh random data.
//
// Tolerances: element-wise results (p, x, r) must match bit for bit, since the contract fixes
// the operations and their order and fused multiply-add is off on every backend; sums of n terms
// may differ by at most (n + 2) eps sum |term_i| (Higham, Accuracy and Stability of Numerical
// Algorithms, 2nd ed., eq. 3.5), and beta = rz / rz_previous inherits the relative bound of rz.
// The stop flag: a kernel that finds p·Ap or r·z invalid writes nothing but the flag.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/backend/reduction_emulation.hpp"
#include "kernels/krylov/cg/cg.hpp"
#include "kryflow/linalg/scalars.hpp"
#include "kryflow/linalg/vector.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

namespace kc = kernels::krylov::cg;

constexpr double kEps = 2.220446049250313e-16;
const std::vector<std::size_t> kSizes = {1, 2, 31, 1000, 100003};

std::vector<double> positive(std::vector<double> v) {
  for (double& e : v) e = 0.5 + std::abs(e);
  return v;
}

void expect_identical(const std::vector<double>& actual, const std::vector<double>& expected,
                      const char* what) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    ASSERT_EQ(std::bit_cast<std::uint64_t>(actual[i]), std::bit_cast<std::uint64_t>(expected[i]))
        << what << ", element " << i << ": " << actual[i] << " vs " << expected[i];
  }
}

/// Slots: rz, rz_previous, rz0, stop, beta, p·Ap, rr_out, rz_out.
constexpr std::size_t kSlots = 8;

/// The inputs of one kernel call, and their copies on one backend.
struct State {
  std::vector<double> p, q, d, z, x, r, scalars;
};

struct OnBackend {
  Vector p, q, d, z, x, r;
  DeviceScalars s;
  OnBackend(const Backend& backend, const State& st)
      : p(Vector::from_host(backend, st.p)),
        q(Vector::from_host(backend, st.q)),
        d(Vector::from_host(backend, st.d)),
        z(Vector::from_host(backend, st.z)),
        x(Vector::from_host(backend, st.x)),
        r(Vector::from_host(backend, st.r)),
        s(backend, kSlots) {
    s.write(0, st.scalars);
  }
  kc::Scalars scalars() {
    return {s.slot(0).address, s.slot(1).address, s.slot(2).address, s.slot(3).address,
            s.slot(4).address};
  }
  double* at(std::size_t i) { return s.slot(i).address; }
  std::vector<double> read() const {
    std::vector<double> host(kSlots);
    s.read(0, host);
    return host;
  }
};

class CgKernelTest : public ::testing::Test {
 protected:
  Backend backend = test::backend_under_test();
  Backend reference = Backend::reference();
  std::uint64_t seed = test::fresh_seed();

  State random_state(std::size_t n) {
    State st;
    st.p = test::random_vector(n, seed++);
    st.q = test::random_vector(n, seed++);
    st.d = positive(test::random_vector(n, seed++));
    st.z = test::random_vector(n, seed++);
    st.x = test::random_vector(n, seed++);
    st.r = test::random_vector(n, seed++);
    const std::vector<double> c = positive(test::random_vector(4, seed++));
    // rz, rz_previous, rz0 (positive: A and M positive definite), stop, beta, p·Ap, outputs
    st.scalars = {c[0], c[1], c[2], 0.0, c[3] - 0.5, 2.0 * c[0], -1.0, -1.0};
    return st;
  }

  /// Runs `kernel` on both backends from the same state; vectors must match bit for bit, the
  /// scalars within the bound of a sum of `n` terms of magnitude `magnitude` (relative to it
  /// for beta); returns the backend's scalars.
  template <class Kernel>
  std::vector<double> compare(const State& st, Kernel kernel) {
    OnBackend a(backend, st);
    OnBackend e(reference, st);
    kernel(backend, a);
    kernel(reference, e);
    expect_identical(a.p.to_host(), e.p.to_host(), "p");
    expect_identical(a.x.to_host(), e.x.to_host(), "x");
    expect_identical(a.r.to_host(), e.r.to_host(), "r");
    const std::vector<double> got = a.read();
    const std::vector<double> want = e.read();
    double magnitude = 0.0;
    const std::vector<double> r = e.r.to_host();
    for (std::size_t i = 0; i < r.size(); ++i) magnitude += r[i] * r[i] * (1.0 + st.d[i]);
    const double bound = static_cast<double>(r.size() + 2) * kEps * (magnitude + 1.0);
    for (std::size_t k = 0; k < kSlots; ++k) {
      const double tolerance = k == 4 ? 4.0 * bound * std::abs(want[k]) + 4.0 * kEps : bound;
      EXPECT_NEAR(got[k], want[k], tolerance) << "scalar slot " << k;
    }
    return got;
  }
};

TEST_F(CgKernelTest, UpdateMatchesReferenceWithAndWithoutDirectionAndJacobi) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (std::size_t n : kSizes) {
    for (bool jacobi : {true, false}) {
      for (bool direction : {true, false}) {
        SCOPED_TRACE("n " + std::to_string(n) + (jacobi ? " jacobi" : " general") +
                     (direction ? " with direction" : ""));
        const State st = random_state(n);
        const std::vector<double> s = compare(st, [&](const Backend& b, OnBackend& v) {
          kc::update(b, v.p.span(), v.q.span(), jacobi ? v.d.span() : Span<const double>(),
                     v.z.span(), v.x.span(), v.r.span(), v.scalars(), DeviceSum{v.at(5), 0},
                     v.at(5), v.at(6), v.at(7), direction);
        });
        EXPECT_EQ(s[3], 0.0) << "stop set on valid input";
        EXPECT_GE(s[6], 0.0) << "r·r not written";
        if (jacobi) {
          EXPECT_EQ(s[1], st.scalars[0]) << "rz_previous = the old rz";
          EXPECT_NEAR(s[4], s[0] / s[1], 4.0 * kEps * std::abs(s[0] / s[1])) << "beta";
        }
      }
    }
  }
}

TEST_F(CgKernelTest, ResidualDotDirectionAndStartMatchReference) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n " + std::to_string(n));
    const State st = random_state(n);
    compare(st, [&](const Backend& b, OnBackend& v) {
      kc::residual_dot(b, v.r.span(), v.z.span(), {}, nullptr, v.scalars(), v.at(7));
    });
    // Flexible: r·z and z·q in one pass, beta = -(z·q) / p·q (p·q in slot 5); z = d r, so
    // that r·z > 0.
    State flexible = st;
    for (std::size_t i = 0; i < n; ++i) flexible.z[i] = st.d[i] * st.r[i];
    const std::vector<double> f = compare(flexible, [&](const Backend& b, OnBackend& v) {
      kc::residual_dot(b, v.r.span(), v.z.span(), v.q.span(), v.at(5), v.scalars(), v.at(7));
    });
    double zq = 0.0;
    for (std::size_t i = 0; i < n; ++i) zq += flexible.z[i] * st.q[i];
    EXPECT_EQ(f[3], 0.0) << "stop set on valid input";
    EXPECT_NEAR(f[4], -zq / st.scalars[5], 1e-10 * (std::abs(zq / st.scalars[5]) + 1.0))
        << "flexible beta";
    for (bool jacobi : {true, false}) {
      compare(st, [&](const Backend& b, OnBackend& v) {
        kc::direction(b, jacobi ? v.d.span() : Span<const double>(), v.r.span(), v.z.span(),
                      v.p.span(), v.scalars());
      });
      const std::vector<double> s = compare(st, [&](const Backend& b, OnBackend& v) {
        kc::start(b, jacobi ? v.d.span() : Span<const double>(), v.r.span(), v.z.span(), v.p.span(),
                  v.scalars(), v.at(6));
      });
      EXPECT_EQ(s[4], 0.0) << "start sets beta = 0";
      EXPECT_EQ(s[0], s[2]) << "start sets rz0 = rz";
    }
  }
}

TEST_F(CgKernelTest, StartWithoutZLeavesTheFirstResidualDotToFixRz0) {
  // start with neither dinv nor z: p = 0, rz = rz0 = 0, r·r. The next residual_dot (plain or
  // flexible, whose q and p·q must not be used) makes r·z the first r0·z0:
  // rz0 = rz_previous = rz, beta = 0, no stop; of either sign (A and M negative definite). q
  // holds a NaN and p·q = 0: beta = -(z·q) / p·q would not be 0.
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n " + std::to_string(n));
    for (const double sign : {1.0, -1.0}) {
      State st = random_state(n);
      for (std::size_t i = 0; i < n; ++i) st.z[i] = sign * st.d[i] * st.r[i];
      st.q[n / 2] = std::numeric_limits<double>::quiet_NaN();
      st.scalars[5] = 0.0;
      for (const bool flexible : {false, true}) {
        SCOPED_TRACE(flexible ? "flexible" : "plain");
        const std::vector<double> s = compare(st, [&](const Backend& b, OnBackend& v) {
          kc::start(b, Span<const double>(), v.r.span(), Span<const double>(), v.p.span(),
                    v.scalars(), v.at(6));
          const std::vector<double> p = v.p.to_host();
          for (const double e : p) ASSERT_EQ(e, 0.0) << "p after start";
          const std::vector<double> after_start = v.read();
          ASSERT_EQ(after_start[0], 0.0) << "rz";
          ASSERT_EQ(after_start[2], 0.0) << "rz0";
          kc::residual_dot(b, v.r.span(), v.z.span(),
                           flexible ? Span<const double>(v.q.span()) : Span<const double>(),
                           v.at(5), v.scalars(), v.at(7));
        });
        double rz = 0.0;
        for (std::size_t i = 0; i < n; ++i) rz += st.r[i] * st.z[i];
        EXPECT_EQ(s[3], 0.0) << "stop set";
        EXPECT_EQ(s[4], 0.0) << "beta";
        EXPECT_EQ(s[0], s[2]) << "rz0 = rz";
        EXPECT_EQ(s[1], s[2]) << "rz_previous = rz";
        EXPECT_EQ(s[7], s[0]) << "recorded r·z";
        EXPECT_NEAR(s[0], rz, 1e-10 * std::abs(rz));
        EXPECT_GT(sign * s[0], 0.0);
      }
    }
  }
  // A first r·z of 0 (z = 0) stops at once.
  State st = random_state(100);
  for (double& e : st.z) e = 0.0;
  OnBackend v(backend, st);
  kc::start(backend, Span<const double>(), v.r.span(), Span<const double>(), v.p.span(),
            v.scalars(), v.at(6));
  kc::residual_dot(backend, v.r.span(), v.z.span(), {}, nullptr, v.scalars(), v.at(7));
  EXPECT_EQ(v.read()[3], 1.0) << "stop not set on r0·z0 = 0";
}

TEST_F(CgKernelTest, UpdateAddsPartialSumsOfPqInTheFixedOrder) {
  // p·q handed over as partial sums (a product's row-block sums): the update adds them in the
  // order of emulation::ordered_sum, records the sum, and updates exactly as with the sum given.
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (std::size_t count : {1, 7, 256, 300, 1024}) {
    SCOPED_TRACE("partials " + std::to_string(count));
    const State st = random_state(31);
    std::vector<double> partials = positive(test::random_vector(count, seed++));
    const double sum =
        kernels::emulation::ordered_sum(partials.data(), static_cast<long long>(count));
    State given = st;
    given.scalars[5] = sum;
    OnBackend a(backend, st);
    OnBackend e(backend, given);
    const Vector parts = Vector::from_host(backend, partials);
    kc::update(backend, a.p.span(), a.q.span(), a.d.span(), a.z.span(), a.x.span(), a.r.span(),
               a.scalars(), DeviceSum{parts.span().data(), static_cast<int>(count)}, a.at(5),
               a.at(6), a.at(7), true);
    kc::update(backend, e.p.span(), e.q.span(), e.d.span(), e.z.span(), e.x.span(), e.r.span(),
               e.scalars(), DeviceSum{e.at(5), 0}, e.at(5), e.at(6), e.at(7), true);
    expect_identical(a.x.to_host(), e.x.to_host(), "x");
    expect_identical(a.r.to_host(), e.r.to_host(), "r");
    expect_identical(a.read(), e.read(), "scalars (p·q recorded)");
  }
}

TEST_F(CgKernelTest, FlexibleResidualDotRecordsNanWhenZqIsNotFinite) {
  // A non-finite z·q stops the iteration, and the recorded r·z is NaN so that the host, which
  // tests the recorded r·z, reports the iteration where the device stopped.
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::size_t n = 1000;
  State st = random_state(n);
  for (std::size_t i = 0; i < n; ++i) st.z[i] = st.d[i] * st.r[i];  // r·z > 0
  st.q[n / 2] = std::numeric_limits<double>::infinity();
  OnBackend v(backend, st);
  kc::residual_dot(backend, v.r.span(), v.z.span(), v.q.span(), v.at(5), v.scalars(), v.at(7));
  const std::vector<double> s = v.read();
  EXPECT_EQ(s[3], 1.0) << "stop not set";
  EXPECT_TRUE(std::isnan(s[7])) << "recorded r·z " << s[7];
  EXPECT_EQ(s[4], st.scalars[4]) << "beta written";
}

TEST_F(CgKernelTest, InvalidCoefficientSetsStopAndWritesNothing) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::size_t n = 1000;
  State st = random_state(n);
  st.scalars[5] = -1.0;  // p·Ap of the wrong sign: A not positive definite
  OnBackend v(backend, st);
  kc::update(backend, v.p.span(), v.q.span(), v.d.span(), v.z.span(), v.x.span(), v.r.span(),
             v.scalars(), DeviceSum{v.at(5), 0}, v.at(5), v.at(6), v.at(7), true);
  EXPECT_EQ(v.read()[3], 1.0) << "stop not set";
  expect_identical(v.p.to_host(), st.p, "p after an invalid p·Ap");
  expect_identical(v.x.to_host(), st.x, "x after an invalid p·Ap");
  expect_identical(v.r.to_host(), st.r, "r after an invalid p·Ap");

  // Once stopped, every kernel does nothing.
  kc::direction(backend, v.d.span(), v.r.span(), v.z.span(), v.p.span(), v.scalars());
  kc::residual_dot(backend, v.r.span(), v.z.span(), {}, nullptr, v.scalars(), v.at(7));
  expect_identical(v.p.to_host(), st.p, "p after stop");
  EXPECT_EQ(v.read()[7], -1.0) << "r·z written after stop";

  // A non-positive new r·z (M indefinite) stops the iteration after the update, beta unset.
  State neg = random_state(n);
  neg.z.assign(n, 0.0);
  OnBackend w(backend, neg);
  kc::residual_dot(backend, w.r.span(), w.z.span(), {}, nullptr, w.scalars(), w.at(7));
  const std::vector<double> s = w.read();
  EXPECT_EQ(s[3], 1.0) << "stop not set for r·z = 0";
  EXPECT_EQ(s[4], neg.scalars[4]) << "beta written for an invalid r·z";
}

}  // namespace
}  // namespace kryflow
