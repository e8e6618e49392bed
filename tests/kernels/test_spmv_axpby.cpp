// The scaled CSR product y = alpha A x + beta y (kernels/spmv_axpby, CsrMatrix::apply with
// four arguments) on the backend under test against the reference bit for bit and against the
// definition, in both storage precisions; y is not read when beta == 0; and the default
// LinearOperator implementation through a work vector agrees with it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kryflow/linalg/csr_matrix.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

TEST(SpmvAxpby, MatchesReferenceAndTheDefinitionInBothPrecisionsAndIgnoresYWhenBetaIsZero) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const CooMatrix coo = test::random_sparse(301, 173, 20, true, seed);
  const std::vector<double> x = test::random_vector(173, seed + 1);
  const std::vector<double> y0 = test::random_vector(301, seed + 2);
  Precision precision = Precision::float64;
  const auto run = [&](const Backend& backend, double beta, bool nan_y) {
    const CsrMatrix A = CsrMatrix::from_coo(backend, coo, precision);
    const Vector xv = Vector::from_host(backend, x);
    Vector y =
        nan_y ? Vector::constant(backend, 301, std::nan("")) : Vector::from_host(backend, y0);
    A.apply(-1.5, xv, beta, y);
    return y.to_host();
  };
  const CsrMatrix host = CsrMatrix::from_coo(Backend::reference(), coo);
  const std::vector<index_t> row_ptr = host.row_ptr().to_host();
  const std::vector<index_t> col_idx = host.col_idx().to_host();
  const std::vector<double> values = host.values_to_host();
  for (const double beta : {0.0, 0.75}) {
    precision = beta == 0.0 ? Precision::float32 : Precision::float64;
    const std::vector<double> y = run(test::backend_under_test(), beta, beta == 0.0);
    EXPECT_EQ(y, run(Backend::reference(), beta, beta == 0.0));
    std::vector<double> expected(301);
    for (index_t i = 0; i < 301; ++i) {
      double sum = 0.0;
      for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
        const double a_ik = precision == Precision::float32 ? double(float(values[k])) : values[k];
        sum += a_ik * x[col_idx[k]];
      }
      expected[i] = -1.5 * sum + beta * y0[i];
    }
    EXPECT_LE(test::relative_max_difference(y, expected), 1e-14);
  }
}

TEST(SpmvAxpby, DefaultImplementationThroughAWorkVectorAgreesWithTheFusedOne) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  const CsrMatrix A = CsrMatrix::from_coo(backend, test::random_sparse(97, 83, 11, false, seed));
  const Vector x = Vector::from_host(backend, test::random_vector(83, seed + 1));
  const std::vector<double> y0 = test::random_vector(97, seed + 2);
  for (const double beta : {0.0, -2.0}) {
    Vector fused = Vector::from_host(backend, y0), plain = Vector::from_host(backend, y0);

    A.apply(0.5, x, beta, fused);
    test::ApplyOnlyOperator(A).apply(0.5, x, beta, plain);

    EXPECT_LE(test::relative_max_difference(plain.to_host(), fused.to_host()), 1e-15);
  }
}

}  // namespace
}  // namespace kryflow
