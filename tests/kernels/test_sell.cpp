// SELL-C-sigma on the backend under test against the CSR reference, bit for bit: products,
// residuals, diagonals and the product of the fused dot for every slice height C, several
// sorting windows sigma and both storage precisions; conversions, value updates and errors;
// and Krylov solvers on a SellMatrix taking the iterations they take on a CsrMatrix.
//
// Float32 storage is compared with the CSR reference built from the float-rounded values, whose
// products are the same double operations (decision 002). The fused dot adds in another order
// than the reference: it must match within (n + 2) eps sum |x_i y_i|, and (cuda build) the cpu
// backend bit for bit. Outputs start as NaN, so a skipped row shows up.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kryflow/core/error.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/linalg/sell_matrix.hpp"
#include "kryflow/linalg/vector.hpp"
#include "kryflow/preconditioners/jacobi.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr int kAllSliceHeights[] = {1, 2, 4, 8, 16, 32, 64, 128};
constexpr Precision kAllPrecisions[] = {Precision::float64, Precision::float32};

std::uint64_t bits(double v) {
  return std::bit_cast<std::uint64_t>(v);
}

/// Sorting windows for slice height c: none, one slice, four slices, and one window larger
/// than every test matrix.
std::vector<index_t> sigmas_for(int c) {
  return {1, c, 4 * c, 1 << 20};
}

/// The values as stored: rounded to float for float32.
CooMatrix stored_values(CooMatrix coo, Precision precision) {
  if (precision == Precision::float32) {
    for (double& v : coo.values) v = static_cast<double>(static_cast<float>(v));
  }
  return coo;
}

/// Square matrix with one row of `length` entries, empty rows and a few short rows.
CooMatrix one_long_row(index_t n, index_t long_row, index_t length, std::uint64_t seed) {
  const std::vector<double> values =
      test::random_vector(static_cast<std::size_t>(length) + 3 * n, seed);
  CooMatrix coo;
  coo.num_rows = coo.num_cols = n;
  std::size_t v = 0;
  for (index_t k = 0; k < length; ++k) coo.push_back(long_row, (3 * k) % n, values[v++]);
  for (index_t i = 0; i < n; i += 3) {
    if (i == long_row) continue;
    coo.push_back(i, i, values[v++]);
    if (i % 2 == 0) coo.push_back(i, (i + 5) % n == i ? (i + 1) % n : (i + 5) % n, values[v++]);
  }
  return coo;
}

struct NamedMatrix {
  std::string name;
  CooMatrix coo;
};

/// Skewed row lengths, empty rows, one very long row, row counts that are no multiple of C.
std::vector<NamedMatrix> test_matrices(std::uint64_t seed) {
  std::vector<NamedMatrix> m;
  m.push_back({"0x0", test::random_sparse(0, 0, 5, false, seed + 1)});
  m.push_back({"1x1", test::random_sparse(1, 1, 1, false, seed + 2)});
  m.push_back({"31x31", test::random_sparse(31, 31, 12, false, seed + 3)});
  m.push_back({"31x57", test::random_sparse(31, 57, 20, true, seed + 4)});
  m.push_back({"1000x333", test::random_sparse(1000, 333, 9, false, seed + 5)});
  m.push_back(
      {"3001x3001 skewed with a long row", test::random_sparse(3001, 3001, 40, true, seed + 6)});
  m.push_back({"2053x2053 one row of 2000 entries", one_long_row(2053, 1500, 2000, seed + 7)});
  m.push_back({"poisson3d 9^3", poisson3d(9)});
  CooMatrix empty;
  empty.num_rows = empty.num_cols = 77;
  m.push_back({"77x77 without entries", empty});
  return m;
}

void expect_bitwise_equal(const std::vector<double>& actual, const std::vector<double>& expected,
                          const char* what) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    ASSERT_FALSE(std::isnan(actual[i])) << what << " row " << i << " not written";
    ASSERT_EQ(bits(actual[i]), bits(expected[i]))
        << what << " row " << i << ": " << actual[i] << " vs " << expected[i];
  }
}

class SellTest : public ::testing::Test {
 protected:
  Backend backend = test::backend_under_test();
  Backend reference = Backend::reference();
  std::uint64_t seed = test::fresh_seed();
};

TEST_F(SellTest, KernelsMatchCsrReferenceBitForBitForEveryLayout) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const NamedMatrix& m : test_matrices(seed)) {
    const CsrMatrix csr = CsrMatrix::from_coo(backend, m.coo);
    const auto rows = static_cast<std::size_t>(m.coo.num_rows);
    const std::vector<double> x =
        test::random_vector(static_cast<std::size_t>(m.coo.num_cols), seed + 100);
    const std::vector<double> b = test::random_vector(rows, seed + 200);
    const Vector x_d = Vector::from_host(backend, x);
    const Vector b_d = Vector::from_host(backend, b);
    for (Precision precision : kAllPrecisions) {
      // Arrange: the oracle on the values as stored.
      const CsrMatrix oracle = CsrMatrix::from_coo(reference, stored_values(m.coo, precision));
      const Vector x_ref = Vector::from_host(reference, x);
      Vector y_ref = Vector::constant(reference, rows, 0.0);
      Vector r_ref = Vector::constant(reference, rows, 0.0);
      Vector d_ref = Vector::constant(reference, rows, 0.0);
      oracle.apply(x_ref, y_ref);
      oracle.residual(Vector::from_host(reference, b), x_ref, r_ref);
      oracle.diagonal(d_ref);
      const std::vector<double> y_expected = y_ref.to_host();
      double dot_magnitude = 0.0;
      for (std::size_t i = 0; i < rows && m.coo.num_rows == m.coo.num_cols; ++i) {
        dot_magnitude += std::abs(x[i] * y_expected[i]);
      }
      for (int c : kAllSliceHeights) {
        for (index_t sigma : sigmas_for(c)) {
          SCOPED_TRACE(m.name + ", C " + std::to_string(c) + ", sigma " + std::to_string(sigma) +
                       ", " + std::string(to_string(precision)));
          const SellMatrix A = SellMatrix::from_csr(csr, c, sigma, precision);
          Vector y = Vector::constant(backend, rows, kNaN);
          Vector r = Vector::constant(backend, rows, kNaN);
          Vector d = Vector::constant(backend, rows, kNaN);

          A.apply(x_d, y);
          A.residual(b_d, x_d, r);
          A.diagonal(d);

          expect_bitwise_equal(y.to_host(), y_expected, "A x");
          expect_bitwise_equal(r.to_host(), r_ref.to_host(), "b - A x");
          expect_bitwise_equal(d.to_host(), d_ref.to_host(), "diagonal");
          if (m.coo.num_rows == m.coo.num_cols) {
            Vector y_dot = Vector::constant(backend, rows, kNaN);
            const double xy = A.apply_dot(x_d, y_dot);
            expect_bitwise_equal(y_dot.to_host(), y_expected, "A x of apply_dot");
            const double expected_xy = dot(x_ref, y_ref);
            EXPECT_LE(std::abs(xy - expected_xy), (rows + 2.0) * kEps * dot_magnitude)
                << xy << " vs " << expected_xy;
          }
        }
      }
    }
  }
}

TEST_F(SellTest, LayoutSortsWithinWindowsAndPadsEachSliceToItsLongestRow) {
  // Arrange: skewed rows, 1001 rows (not a multiple of any C > 1).
  const CooMatrix coo = test::random_sparse(1001, 1001, 30, true, seed);
  const CsrMatrix csr = CsrMatrix::from_coo(reference, coo);
  const index_t* row_ptr = csr.row_ptr().data();
  auto length = [&](index_t i) { return row_ptr[i + 1] - row_ptr[i]; };
  for (int c : {4, 32}) {
    for (index_t sigma : {1, 4 * c}) {
      SCOPED_TRACE("C " + std::to_string(c) + ", sigma " + std::to_string(sigma));
      // Act
      const SellMatrix A = SellMatrix::from_csr(csr, c, sigma);
      // Assert: a permutation, sorted (stably, descending) within each window.
      const std::vector<index_t> perm = A.permutation().to_host();
      std::vector<index_t> sorted = perm;
      std::sort(sorted.begin(), sorted.end());
      for (index_t p = 0; p < 1001; ++p) ASSERT_EQ(sorted[p], p);
      for (index_t p = 0; p + 1 < 1001; ++p) {
        if (sigma == 1) {
          ASSERT_EQ(perm[p], p);
        } else if ((p + 1) % sigma != 0) {
          ASSERT_TRUE(length(perm[p]) > length(perm[p + 1]) ||
                      (length(perm[p]) == length(perm[p + 1]) && perm[p] < perm[p + 1]))
              << "position " << p;
        }
      }
      ASSERT_EQ(A.num_slices(), (1001 + c - 1) / c);
      const std::vector<std::int64_t> slice_ptr = A.slice_ptr().to_host();
      const std::vector<index_t> width = A.slice_width().to_host();
      for (index_t s = 0; s < A.num_slices(); ++s) {
        index_t longest = 0;
        for (index_t p = s * c; p < std::min<index_t>(1001, (s + 1) * c); ++p) {
          longest = std::max(longest, length(perm[p]));
        }
        EXPECT_EQ(width[s], longest);
        EXPECT_EQ(slice_ptr[s + 1] - slice_ptr[s], static_cast<std::int64_t>(c) * longest);
      }
      EXPECT_EQ(A.stored_entries(), slice_ptr.back());
      EXPECT_EQ(A.padding_entries(), A.stored_entries() - csr.nnz());
      EXPECT_DOUBLE_EQ(A.padding_ratio(), static_cast<double>(A.padding_entries()) /
                                              static_cast<double>(A.stored_entries()));
      EXPECT_GE(A.spmv_moved_bytes(), A.spmv_bytes());
    }
  }
}

TEST_F(SellTest, ToCsrRoundTripIsExact) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const NamedMatrix& m : test_matrices(seed)) {
    const CsrMatrix csr = CsrMatrix::from_coo(backend, m.coo);
    for (Precision precision : kAllPrecisions) {
      const CsrMatrix expected = CsrMatrix::from_coo(reference, stored_values(m.coo, precision));
      for (int c : {1, 8, 32, 128}) {
        SCOPED_TRACE(m.name + ", C " + std::to_string(c) + ", " +
                     std::string(to_string(precision)));
        const CsrMatrix back = SellMatrix::from_csr(csr, c, 4 * c, precision).to_csr();
        EXPECT_EQ(back.num_rows(), expected.num_rows());
        EXPECT_EQ(back.num_cols(), expected.num_cols());
        EXPECT_EQ(back.row_ptr().to_host(), expected.row_ptr().to_host());
        EXPECT_EQ(back.col_idx().to_host(), expected.col_idx().to_host());
        expect_bitwise_equal(back.values().to_host(), expected.values().to_host(), "values");
      }
    }
  }
}

TEST_F(SellTest, UpdateValuesGivesTheProductOfAFreshConversion) {
  // Arrange: the pattern of one matrix, the values of another.
  const CooMatrix coo = test::random_sparse(2001, 2001, 25, true, seed);
  CooMatrix scaled = coo;
  for (double& v : scaled.values) v = -3.0 * v + 0.25;
  const CsrMatrix csr = CsrMatrix::from_coo(backend, coo);
  const CsrMatrix csr_scaled = CsrMatrix::from_coo(backend, scaled);
  const Vector x = Vector::from_host(backend, test::random_vector(2001, seed + 1));
  for (Precision precision : kAllPrecisions) {
    SCOPED_TRACE(std::string(to_string(precision)));
    SellMatrix A = SellMatrix::from_csr(csr, 16, 256, precision);
    const SellMatrix fresh = SellMatrix::from_csr(csr_scaled, 16, 256, precision);
    Vector y = Vector::constant(backend, 2001, kNaN);
    Vector y_fresh = Vector::constant(backend, 2001, kNaN);

    // Act
    A.update_values(csr_scaled.values());
    A.apply(x, y);
    fresh.apply(x, y_fresh);

    // Assert
    expect_bitwise_equal(y.to_host(), y_fresh.to_host(), "A x");
    EXPECT_THROW(A.update_values(Array<double>(backend, 7)), DimensionMismatch);
  }
}

TEST_F(SellTest, RejectsInvalidSliceHeightAndSigma) {
  const CsrMatrix csr = CsrMatrix::from_coo(backend, poisson3d(4));
  for (int c : {0, 3, 6, 256, -8}) {
    EXPECT_THROW(SellMatrix::from_csr(csr, c, 1), InvalidInput) << "C " << c;
  }
  for (index_t sigma : {0, -32, 2, 48, 100}) {
    EXPECT_THROW(SellMatrix::from_csr(csr, 32, sigma), InvalidInput) << "sigma " << sigma;
  }
  try {
    SellMatrix::from_csr(csr, 32, 48);
    ADD_FAILURE() << "sigma 48 with C 32 accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("multiple of C"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(SellMatrix::from_csr(csr, 32, 1));
  EXPECT_NO_THROW(SellMatrix::from_csr(csr, 32, 64));
}

TEST_F(SellTest, RejectsMisusedOperands) {
  const SellMatrix A = SellMatrix::from_csr(CsrMatrix::from_coo(backend, poisson3d(4)), 8, 16);
  Vector x = Vector::constant(backend, 64, 1.0);
  Vector y = Vector::constant(backend, 63, 1.0);
  EXPECT_THROW(A.apply(x, y), DimensionMismatch);
  EXPECT_THROW(A.apply(x, x), InvalidInput);
  Vector d = Vector::constant(backend, 63, 1.0);
  EXPECT_THROW(A.diagonal(d), DimensionMismatch);
}

#ifdef KRYFLOW_TEST_BACKEND_IS_CUDA
TEST_F(SellTest, FusedDotOnCudaEqualsCpuBitForBit) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend cpu = Backend::cpu();
  const CooMatrix coo = test::random_sparse(100003, 100003, 24, true, seed);
  const std::vector<double> x = test::random_vector(100003, seed + 1);
  for (Precision precision : kAllPrecisions) {
    for (int c : kAllSliceHeights) {
      SCOPED_TRACE("C " + std::to_string(c) + ", " + std::string(to_string(precision)));
      const SellMatrix A_cuda =
          SellMatrix::from_csr(CsrMatrix::from_coo(backend, coo), c, 8 * c, precision);
      const SellMatrix A_cpu =
          SellMatrix::from_csr(CsrMatrix::from_coo(cpu, coo), c, 8 * c, precision);
      Vector y_cuda = Vector::constant(backend, 100003, kNaN);
      Vector y_cpu = Vector::constant(cpu, 100003, kNaN);
      const double first = A_cuda.apply_dot(Vector::from_host(backend, x), y_cuda);
      const double second = A_cuda.apply_dot(Vector::from_host(backend, x), y_cuda);
      const double on_cpu = A_cpu.apply_dot(Vector::from_host(cpu, x), y_cpu);
      EXPECT_EQ(bits(first), bits(second));
      EXPECT_EQ(bits(first), bits(on_cpu)) << first << " vs " << on_cpu;
      EXPECT_EQ(A_cuda.permutation().to_host(), A_cpu.permutation().to_host());
      EXPECT_EQ(A_cuda.slice_ptr().to_host(), A_cpu.slice_ptr().to_host());
    }
  }
}
#endif

// ---- Krylov solvers on SELL ----

enum class Method { cg, bicgstab, gmres };

std::unique_ptr<KrylovSolver> make_solver(Method method, const StopCriteria& criteria) {
  switch (method) {
    case Method::cg:
      return std::make_unique<Cg>(criteria);
    case Method::bicgstab:
      return std::make_unique<Bicgstab>(criteria);
    case Method::gmres:
      return std::make_unique<Gmres>(criteria, 30, false);
  }
  return nullptr;
}

/// Solves A x = b from zero with Jacobi built on the CSR matrix (the same diagonal).
SolveReport solve(const LinearOperator& A, const CsrMatrix& csr, Method method,
                  const std::vector<double>& b, std::vector<double>& x_out) {
  StopCriteria criteria;
  criteria.relative_tolerance = 1e-10;
  criteria.max_iterations = 500;
  JacobiPreconditioner M;
  M.setup(csr);
  const Vector bv = Vector::from_host(A.backend(), b);
  Vector x = Vector::constant(A.backend(), b.size(), 0.0);
  const SolveReport report = make_solver(method, criteria)->solve(A, M, bv, x);
  x_out = x.to_host();
  return report;
}

class SellSolverTest : public ::testing::TestWithParam<Method> {};

TEST_P(SellSolverTest, TakesTheIterationsOfCsrAndReachesTheTrueResidual) {
  // Arrange: 3D Poisson 12^3 plus a skew part (nonsymmetric for BiCGStab and GMRES).
  const Method method = GetParam();
  const Backend backend = test::backend_under_test();
  CooMatrix coo = poisson3d(12);
  if (method != Method::cg) {
    for (std::size_t k = 0; k < coo.values.size(); ++k) {
      if (coo.col_idx[k] == coo.row_idx[k] + 1) coo.values[k] += 0.3;
    }
  }
  const std::vector<double> b = test::random_vector(static_cast<std::size_t>(coo.num_rows));
  const CsrMatrix csr = CsrMatrix::from_coo(backend, coo);
  std::vector<double> x_csr;
  const SolveReport on_csr = solve(csr, csr, method, b, x_csr);
  for (int c : {8, 32}) {
    for (index_t sigma : {1, 256}) {
      SCOPED_TRACE("C " + std::to_string(c) + ", sigma " + std::to_string(sigma));
      const SellMatrix A = SellMatrix::from_csr(csr, c, sigma);
      std::vector<double> x;

      // Act
      const SolveReport on_sell = solve(A, csr, method, b, x);

      // Assert: sums are bit-identical to CSR, only the fused dots' order differs: CG's p·q,
      // and BiCGStab's r^·v, t·t and t·s (CSR fuses them into its products, SELL adds them in
      // a pass of their own), whose rounding BiCGStab amplifies more (measured: 38 against 40
      // iterations for some right-hand sides), hence a tenth of the count for it.
      const int slack = method == Method::bicgstab ? std::max(1, on_csr.iterations / 10) : 1;
      EXPECT_EQ(on_sell.status, SolveStatus::converged) << on_sell.reason;
      EXPECT_LT(test::true_relative_residual(coo, x, b), 1e-9);
      EXPECT_LE(std::abs(on_sell.iterations - on_csr.iterations), slack)
          << "SELL " << on_sell.iterations << " CSR " << on_csr.iterations;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Methods, SellSolverTest,
                         ::testing::Values(Method::cg, Method::bicgstab, Method::gmres));

TEST(SellConversion, FromFloat32CsrEqualsFromDoubleCsr) {
  // Converting a CSR matrix that already stores float32 values gives the same SELL matrix as
  // rounding while converting from double.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const Backend backend = test::backend_under_test();
  const CsrMatrix csr64 =
      CsrMatrix::from_coo(backend, test::random_sparse(301, 301, 40, true, seed));
  const CsrMatrix csr32 = csr64.with_precision(Precision::float32);
  const SellMatrix a = SellMatrix::from_csr(csr64, 8, 32, Precision::float32);
  const SellMatrix b = SellMatrix::from_csr(csr32, 8, 32, Precision::float32);
  const Vector x = Vector::from_host(backend, test::random_vector(301, seed + 1));
  Vector ya(backend, 301);
  Vector yb(backend, 301);
  a.apply(x, ya);
  b.apply(x, yb);
  EXPECT_EQ(ya.to_host(), yb.to_host());
  EXPECT_EQ(b.to_csr().values_to_host(), csr32.values_to_host());
}

}  // namespace
}  // namespace kryflow
