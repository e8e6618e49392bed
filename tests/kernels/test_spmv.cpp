// CSR kernels of the backend under test against the reference oracle on fresh random matrices.
//
// Every kernel runs with each threads_per_row value (1, 2, 4, 8, 16, 32) on matrices with empty
// rows, skewed row lengths and very long rows. Tolerances: row i of A x summed in two orders
// differs by at most (len_i + 1) * eps * sum_k |a_ik x_k| (Higham, Accuracy and Stability of
// Numerical Algorithms, 2nd ed., eq. 3.5, twice γ_len), |b_i| joining the sum for the residual;
// x·y adds n * eps * sum |x_i y_i| plus sum |x_i| times the row bounds. The diagonal (a copy of
// one stored value per row) must match bit for bit. Outputs start as NaN, so a skipped row
// shows up.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/spmv/spmv.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/vector.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

namespace spmv = kernels::spmv;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr int kAllThreadsPerRow[] = {1, 2, 4, 8, 16, 32};

/// One test matrix: its triplets, CSR on the reference (host) and on the backend under test.
struct TestMatrix {
  std::string name;
  CooMatrix coo;
  CsrMatrix host;
  CsrMatrix device;
};

TestMatrix make_matrix(const Backend& backend, std::string name, CooMatrix coo) {
  CsrMatrix host = CsrMatrix::from_coo(Backend::reference(), coo);
  CsrMatrix device = host.copy_to(backend);
  return {std::move(name), std::move(coo), std::move(host), std::move(device)};
}

spmv::CsrView view_of(const CsrMatrix& A, int threads_per_row) {
  spmv::CsrView v;
  v.num_rows = A.num_rows();
  v.num_cols = A.num_cols();
  v.nnz = A.nnz();
  v.row_ptr = A.row_ptr().data();
  v.col_idx = A.col_idx().data();
  v.values = A.values().data();
  v.threads_per_row = threads_per_row;
  return v;
}

/// A matrix with rows of `length` entries at every other column, all other rows empty.
CooMatrix long_row_matrix(index_t num_rows, index_t num_cols, index_t long_row, index_t length,
                          std::uint64_t seed) {
  const std::vector<double> values = test::random_vector(static_cast<std::size_t>(length), seed);
  CooMatrix coo;
  coo.num_rows = num_rows;
  coo.num_cols = num_cols;
  for (index_t k = 0; k < length; ++k) coo.push_back(long_row, (2 * k) % num_cols, values[k]);
  if (num_rows > 1) coo.push_back(num_rows - 1, 0, 2.5);  // and one short row after it
  return coo;
}

/// Rectangular and square random matrices (empty rows, skewed lengths, some long rows).
std::vector<TestMatrix> test_matrices(const Backend& backend, std::uint64_t seed) {
  std::vector<TestMatrix> m;
  m.push_back(make_matrix(backend, "0x0", test::random_sparse(0, 0, 5, false, seed + 1)));
  m.push_back(make_matrix(backend, "1x1", test::random_sparse(1, 1, 1, false, seed + 2)));
  m.push_back(make_matrix(backend, "31x31", test::random_sparse(31, 31, 12, false, seed + 3)));
  m.push_back(make_matrix(backend, "31x57", test::random_sparse(31, 57, 20, true, seed + 4)));
  m.push_back(
      make_matrix(backend, "1000x1000", test::random_sparse(1000, 1000, 40, true, seed + 5)));
  m.push_back(make_matrix(backend, "1000x333", test::random_sparse(1000, 333, 9, false, seed + 6)));
  m.push_back(make_matrix(backend, "100003x100003 with a long row",
                          test::random_sparse(100003, 100003, 24, true, seed + 7)));
  CooMatrix empty;
  empty.num_rows = 77;
  empty.num_cols = 77;
  m.push_back(make_matrix(backend, "77x77 without entries", std::move(empty)));
  return m;
}

double row_length(const CsrMatrix& A, index_t i) {
  return A.row_ptr().data()[i + 1] - A.row_ptr().data()[i];
}

/// sum_k |a_ik x_k| of every row (host matrix).
std::vector<double> row_magnitudes(const CsrMatrix& A, const std::vector<double>& x) {
  const index_t* row_ptr = A.row_ptr().data();
  const index_t* col = A.col_idx().data();
  const double* val = A.values().data();
  std::vector<double> m(static_cast<std::size_t>(A.num_rows()), 0.0);
  for (index_t i = 0; i < A.num_rows(); ++i) {
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) m[i] += std::abs(val[k] * x[col[k]]);
  }
  return m;
}

/// Every row written and within its bound (a tolerance per row).
void expect_rows_close(const std::vector<double>& actual, const std::vector<double>& expected,
                       const std::vector<double>& tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    ASSERT_FALSE(std::isnan(actual[i])) << "row " << i << " not written";
    ASSERT_LE(std::abs(actual[i] - expected[i]), tolerance[i])
        << "row " << i << ": " << actual[i] << " vs " << expected[i];
  }
}

std::vector<double> product_tolerance(const CsrMatrix& A, const std::vector<double>& x) {
  const std::vector<double> magnitude = row_magnitudes(A, x);
  std::vector<double> tol(magnitude.size());
  for (std::size_t i = 0; i < tol.size(); ++i) {
    tol[i] = (row_length(A, static_cast<index_t>(i)) + 1.0) * kEps * magnitude[i];
  }
  return tol;
}

class SpmvTest : public ::testing::Test {
 protected:
  Backend backend = test::backend_under_test();
  Backend reference = Backend::reference();
  std::uint64_t seed = test::fresh_seed();
};

TEST_F(SpmvTest, ProductMatchesReferenceForEveryThreadsPerRow) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const TestMatrix& A : test_matrices(backend, seed)) {
    const std::vector<double> x = test::random_vector(A.host.num_cols(), seed + 100);
    std::vector<double> y(A.host.num_rows());
    spmv::reference::csr_spmv(reference, view_of(A.host, 1), x, y);
    const std::vector<double> tolerance = product_tolerance(A.host, x);
    const Array<double> x_d = Array<double>::from_host(backend, x);
    for (int lanes : kAllThreadsPerRow) {
      SCOPED_TRACE(A.name + ", threads_per_row " + std::to_string(lanes));
      Array<double> y_d =
          Array<double>::from_host(backend, std::vector<double>(A.host.num_rows(), kNaN));

      spmv::csr_spmv(backend, view_of(A.device, lanes), x_d.span(), y_d.span());

      expect_rows_close(y_d.to_host(), y, tolerance);
    }
  }
}

TEST_F(SpmvTest, ResidualMatchesReferenceForEveryThreadsPerRow) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const TestMatrix& A : test_matrices(backend, seed)) {
    const std::vector<double> x = test::random_vector(A.host.num_cols(), seed + 200);
    const std::vector<double> b = test::random_vector(A.host.num_rows(), seed + 300);
    std::vector<double> r(A.host.num_rows());
    spmv::reference::csr_residual(reference, view_of(A.host, 1), b, x, r);
    std::vector<double> tolerance = row_magnitudes(A.host, x);
    for (std::size_t i = 0; i < tolerance.size(); ++i) {
      tolerance[i] = (row_length(A.host, static_cast<index_t>(i)) + 2.0) * kEps *
                     (tolerance[i] + std::abs(b[i]));
    }
    const Array<double> x_d = Array<double>::from_host(backend, x);
    const Array<double> b_d = Array<double>::from_host(backend, b);
    for (int lanes : kAllThreadsPerRow) {
      SCOPED_TRACE(A.name + ", threads_per_row " + std::to_string(lanes));
      Array<double> r_d =
          Array<double>::from_host(backend, std::vector<double>(A.host.num_rows(), kNaN));

      spmv::csr_residual(backend, view_of(A.device, lanes), b_d.span(), x_d.span(), r_d.span());

      expect_rows_close(r_d.to_host(), r, tolerance);
    }
  }
}

TEST_F(SpmvTest, FusedProductAndDotMatchReferenceForEveryThreadsPerRow) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const TestMatrix& A : test_matrices(backend, seed)) {
    if (A.host.num_rows() != A.host.num_cols()) continue;  // x·y needs a square matrix
    const std::vector<double> x = test::random_vector(A.host.num_cols(), seed + 400);
    std::vector<double> y(A.host.num_rows());
    const double expected_dot = spmv::reference::csr_spmv_dot(reference, view_of(A.host, 1), x, y);
    const std::vector<double> tolerance = product_tolerance(A.host, x);
    double dot_tolerance = 0.0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      dot_tolerance += std::abs(x[i]) * tolerance[i] +
                       (static_cast<double>(y.size()) + 2.0) * kEps * std::abs(x[i] * y[i]);
    }
    const Array<double> x_d = Array<double>::from_host(backend, x);
    for (int lanes : kAllThreadsPerRow) {
      SCOPED_TRACE(A.name + ", threads_per_row " + std::to_string(lanes));
      Array<double> y_d =
          Array<double>::from_host(backend, std::vector<double>(A.host.num_rows(), kNaN));

      const double dot =
          spmv::csr_spmv_dot(backend, view_of(A.device, lanes), x_d.span(), y_d.span());

      expect_rows_close(y_d.to_host(), y, tolerance);
      EXPECT_LE(std::abs(dot - expected_dot), dot_tolerance) << dot << " vs " << expected_dot;
    }
  }
}

TEST_F(SpmvTest, FusedDotGivesIdenticalBitsOnRepeatedCalls) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const TestMatrix A =
      make_matrix(backend, "20011x20011", test::random_sparse(20011, 20011, 30, true, seed));
  const Array<double> x_d = Array<double>::from_host(backend, test::random_vector(20011, seed + 1));
  Array<double> y_d(backend, 20011);
  for (int lanes : kAllThreadsPerRow) {
    SCOPED_TRACE("threads_per_row " + std::to_string(lanes));

    const double first =
        spmv::csr_spmv_dot(backend, view_of(A.device, lanes), x_d.span(), y_d.span());
    const double second =
        spmv::csr_spmv_dot(backend, view_of(A.device, lanes), x_d.span(), y_d.span());

    EXPECT_EQ(std::bit_cast<std::uint64_t>(first), std::bit_cast<std::uint64_t>(second));
  }
}

TEST_F(SpmvTest, DiagonalMatchesReferenceExactlyForEveryThreadsPerRow) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const TestMatrix& A : test_matrices(backend, seed)) {
    std::vector<double> d(A.host.num_rows());
    spmv::reference::csr_diagonal(reference, view_of(A.host, 1), d);
    for (int lanes : kAllThreadsPerRow) {
      SCOPED_TRACE(A.name + ", threads_per_row " + std::to_string(lanes));
      Array<double> d_d =
          Array<double>::from_host(backend, std::vector<double>(A.host.num_rows(), kNaN));

      spmv::csr_diagonal(backend, view_of(A.device, lanes), d_d.span());

      const std::vector<double> actual = d_d.to_host();
      for (std::size_t i = 0; i < d.size(); ++i) {
        ASSERT_EQ(std::bit_cast<std::uint64_t>(actual[i]), std::bit_cast<std::uint64_t>(d[i]))
            << "row " << i << ": " << actual[i] << " vs " << d[i];
      }
    }
  }
}

TEST_F(SpmvTest, RowWithHalfAMillionEntriesMatchesReference) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const index_t num_cols = 1000003;
  const TestMatrix A = make_matrix(backend, "3 x 1000003, row 1 with 500002 entries",
                                   long_row_matrix(3, num_cols, 1, 500002, seed));
  const std::vector<double> x = test::random_vector(num_cols, seed + 1);
  const std::vector<double> b = test::random_vector(3, seed + 2);
  std::vector<double> y(3);
  std::vector<double> r(3);
  spmv::reference::csr_spmv(reference, view_of(A.host, 1), x, y);
  spmv::reference::csr_residual(reference, view_of(A.host, 1), b, x, r);
  const std::vector<double> tolerance = product_tolerance(A.host, x);
  std::vector<double> r_tolerance = tolerance;
  for (std::size_t i = 0; i < 3; ++i) r_tolerance[i] += 2.0 * kEps * std::abs(b[i]);
  const Array<double> x_d = Array<double>::from_host(backend, x);
  const Array<double> b_d = Array<double>::from_host(backend, b);
  for (int lanes : kAllThreadsPerRow) {
    SCOPED_TRACE("threads_per_row " + std::to_string(lanes));
    Array<double> y_d = Array<double>::from_host(backend, std::vector<double>(3, kNaN));
    Array<double> r_d = Array<double>::from_host(backend, std::vector<double>(3, kNaN));

    spmv::csr_spmv(backend, view_of(A.device, lanes), x_d.span(), y_d.span());
    spmv::csr_residual(backend, view_of(A.device, lanes), b_d.span(), x_d.span(), r_d.span());

    expect_rows_close(y_d.to_host(), y, tolerance);
    expect_rows_close(r_d.to_host(), r, r_tolerance);
  }
}

TEST_F(SpmvTest, CsrMatrixOperationsUseTheirChosenThreadsPerRow) {
  // The matrix's own view (threads_per_row from its row-length statistics) through the
  // LinearOperator interface: a 7-point-like pattern and one with a very long row.
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (bool long_row : {false, true}) {
    const CooMatrix coo = test::random_sparse(5003, 5003, 14, long_row, seed + long_row);
    const TestMatrix A = make_matrix(backend, long_row ? "long row" : "short rows", coo);
    SCOPED_TRACE(A.name + ", threads_per_row " + std::to_string(A.device.threads_per_row()));
    const std::vector<double> x = test::random_vector(5003, seed + 7);
    std::vector<double> y(5003);
    spmv::reference::csr_spmv(reference, view_of(A.host, 1), x, y);
    const Vector x_d = Vector::from_host(backend, x);
    Vector y_d = Vector::from_host(backend, std::vector<double>(5003, kNaN));

    A.device.apply(x_d, y_d);

    expect_rows_close(y_d.to_host(), y, product_tolerance(A.host, x));
  }
}

}  // namespace
}  // namespace kryflow
