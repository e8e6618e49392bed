// AINV (approximate_inverse.hpp): the factors against a dense computation, the apply on the
// backend under test against the host product of the factors, PCG and BiCGStab with AINV by
// true residual, and the errors.
//
// Tolerances: with no dropping W^T (S A S) Z = D up to rounding, |entry| <= 1e-10 max|D| for the
// well-conditioned random matrices here; the apply in float64 matches the host product to
// 1e-12 relative (sums in another order), in float32 to 1e-6 (each factor entry rounded once).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kryflow/config/registry.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/coo_matrix.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/preconditioners/approximate_inverse.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

/// A random sparse n x n matrix, diagonally dominant (positive diagonal); symmetric when asked
/// (then SPD).
CooMatrix random_dominant(index_t n, bool symmetric, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::uniform_int_distribution<index_t> column(0, n - 1);
  std::vector<std::vector<double>> dense(n, std::vector<double>(n, 0.0));
  for (index_t i = 0; i < n; ++i) {
    for (int k = 0; k < 4; ++k) {
      const index_t j = column(random);
      if (j == i) continue;
      const double v = value(random);
      dense[i][j] = v;
      if (symmetric) dense[j][i] = v;
    }
  }
  CooMatrix a;
  a.num_rows = a.num_cols = n;
  for (index_t i = 0; i < n; ++i) {
    double sum = 0.0;
    for (index_t j = 0; j < n; ++j) sum += std::abs(dense[i][j]) + std::abs(dense[j][i]);
    dense[i][i] = sum + 0.5 + std::abs(value(random));
    for (index_t j = 0; j < n; ++j) {
      if (dense[i][j] != 0.0) a.push_back(i, j, dense[i][j]);
    }
  }
  return a;
}

struct HostMatrix {
  std::vector<index_t> row_ptr, col_idx;
  std::vector<double> values;
};

HostMatrix to_host_csr(const CooMatrix& coo) {
  const CsrMatrix A = CsrMatrix::from_coo(Backend::reference(), coo);
  return {A.row_ptr().to_host(), A.col_idx().to_host(), A.values_to_host()};
}

/// Column j of a factor stored by columns, as a dense vector.
std::vector<std::vector<double>> dense_columns(index_t n, const std::vector<index_t>& ptr,
                                               const std::vector<index_t>& row,
                                               const std::vector<double>& values) {
  std::vector<std::vector<double>> z(n, std::vector<double>(n, 0.0));
  for (index_t j = 0; j < n; ++j) {
    for (index_t k = ptr[j]; k < ptr[j + 1]; ++k) z[j][row[k]] = values[k];
  }
  return z;
}

TEST(AinvFactor, WithoutDroppingTheFactorsAreExactlyConjugate) {
  for (const bool symmetric : {true, false}) {
    const std::uint64_t seed = test::fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + (symmetric ? " symmetric" : " nonsymmetric"));
    const index_t n = 40;
    const CooMatrix coo = random_dominant(n, symmetric, seed);
    const HostMatrix a = to_host_csr(coo);
    AinvParameters parameters;
    parameters.drop_tolerance = 0.0;
    parameters.symmetry = symmetric ? AinvSymmetry::symmetric : AinvSymmetry::nonsymmetric;
    const AinvFactors f = ainv_factor(n, a.row_ptr, a.col_idx, a.values, parameters);
    EXPECT_EQ(f.symmetric, symmetric);
    EXPECT_TRUE(f.shifted.empty());
    const auto z = dense_columns(n, f.z_ptr, f.z_row, f.z_values);
    const auto w = symmetric ? z : dense_columns(n, f.w_ptr, f.w_row, f.w_values);
    // Unit upper triangular.
    for (index_t j = 0; j < n; ++j) {
      EXPECT_EQ(z[j][j], 1.0);
      EXPECT_EQ(w[j][j], 1.0);
      for (index_t k = j + 1; k < n; ++k) {
        EXPECT_EQ(z[j][k], 0.0);
        EXPECT_EQ(w[j][k], 0.0);
      }
    }
    // S A S, dense.
    std::vector<std::vector<double>> sas(n, std::vector<double>(n, 0.0));
    for (std::size_t k = 0; k < coo.values.size(); ++k) {
      const index_t i = coo.row_idx[k], j = coo.col_idx[k];
      sas[i][j] = f.scale[i] * coo.values[k] * f.scale[j];
    }
    double largest = 0.0;
    for (double d : f.pivots) largest = std::max(largest, std::abs(d));
    for (index_t i = 0; i < n; ++i) {
      for (index_t j = 0; j < n; ++j) {
        double entry = 0.0;  // w_i^T (S A S) z_j
        for (index_t r = 0; r < n; ++r) {
          if (w[i][r] == 0.0) continue;
          for (index_t c = 0; c < n; ++c) entry += w[i][r] * sas[r][c] * z[j][c];
        }
        const double expected = i == j ? f.pivots[i] : 0.0;
        EXPECT_NEAR(entry, expected, 1e-10 * largest) << "(" << i << ", " << j << ")";
      }
    }
  }
}

TEST(AinvFactor, DroppingKeepsTheDiagonalAndTheFillLimit) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const index_t n = 200;
  const HostMatrix a = to_host_csr(random_dominant(n, false, seed));
  AinvParameters parameters;
  parameters.drop_tolerance = 1e-3;
  parameters.fill = 3;
  parameters.symmetry = AinvSymmetry::nonsymmetric;
  const AinvFactors f = ainv_factor(n, a.row_ptr, a.col_idx, a.values, parameters);
  for (index_t j = 0; j < n; ++j) {
    ASSERT_LE(f.z_ptr[j + 1] - f.z_ptr[j], 4) << "column " << j;
    ASSERT_LE(f.w_ptr[j + 1] - f.w_ptr[j], 4) << "column " << j;
    EXPECT_EQ(f.z_row[f.z_ptr[j + 1] - 1], j);
    EXPECT_EQ(f.z_values[f.z_ptr[j + 1] - 1], 1.0);
    for (index_t k = f.z_ptr[j]; k + 1 < f.z_ptr[j + 1]; ++k) {
      EXPECT_LT(f.z_row[k], f.z_row[k + 1]);
      EXPECT_GE(std::abs(f.z_values[k]), 1e-3);
    }
  }
}

/// M r on the host from the factors: S Z D^-1 W^T S r.
std::vector<double> host_apply(const AinvFactors& f, const std::vector<double>& r) {
  const index_t n = f.n;
  const auto& w_ptr = f.symmetric ? f.z_ptr : f.w_ptr;
  const auto& w_row = f.symmetric ? f.z_row : f.w_row;
  const auto& w_values = f.symmetric ? f.z_values : f.w_values;
  std::vector<double> t(n, 0.0), z(n, 0.0);
  for (index_t j = 0; j < n; ++j) {
    double sum = 0.0;
    for (index_t k = w_ptr[j]; k < w_ptr[j + 1]; ++k) {
      sum += w_values[k] * f.scale[w_row[k]] * r[w_row[k]];
    }
    t[j] = sum / f.pivots[j];
  }
  for (index_t j = 0; j < n; ++j) {
    for (index_t k = f.z_ptr[j]; k < f.z_ptr[j + 1]; ++k) {
      z[f.z_row[k]] += f.scale[f.z_row[k]] * f.z_values[k] * t[j];
    }
  }
  return z;
}

TEST(AinvPreconditioner, ApplyMatchesTheHostProductOfTheFactors) {
  const Backend backend = test::backend_under_test();
  for (const bool symmetric : {true, false}) {
    for (const Precision precision : {Precision::float64, Precision::float32}) {
      const std::uint64_t seed = test::fresh_seed();
      SCOPED_TRACE("seed " + std::to_string(seed) + (symmetric ? " symmetric " : " nonsymmetric ") +
                   std::string(to_string(precision)));
      const index_t n = 3000;
      const CsrMatrix A = CsrMatrix::from_coo(backend, random_dominant(n, symmetric, seed));
      AinvPreconditioner::Parameters parameters;
      parameters.ainv.drop_tolerance = 0.01;
      parameters.factor_precision = precision;
      AinvPreconditioner M(parameters);
      M.setup(A);
      EXPECT_EQ(M.factors().symmetric, symmetric);
      const std::vector<double> r = test::random_vector(static_cast<std::size_t>(n), seed + 1);
      Vector z(backend, static_cast<std::size_t>(n));
      M.apply(Vector::from_host(backend, r), z);
      const double tolerance = precision == Precision::float64 ? 1e-12 : 1e-6;
      EXPECT_LE(test::relative_max_difference(z.to_host(), host_apply(M.factors(), r)), tolerance);
    }
  }
}

SolveReport solve_with(const std::string& preset, const CooMatrix& coo, std::vector<double>& x,
                       const std::vector<double>& b, double* true_residual) {
  const Backend backend = test::backend_under_test();
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  nlohmann::json config = config::load_preset(preset);
  config["solver"]["max_iterations"] = 5000;
  config::SolverSetup setup = config::build_solver(config);
  setup.preconditioner->setup(A);
  Vector xv = Vector::constant(backend, b.size(), 0.0);  // x0 = 0
  const SolveReport report =
      setup.solver->solve(A, *setup.preconditioner, Vector::from_host(backend, b), xv);
  x = xv.to_host();
  *true_residual = test::true_relative_residual(coo, x, b);
  return report;
}

TEST(AinvPreconditioner, PcgAinvSolvesPoissonInFewerIterationsThanJacobi) {
  const CooMatrix coo = poisson2d(100);
  const std::vector<double> b = test::random_vector(coo.num_rows);
  std::vector<double> x;
  double jacobi_residual = 0.0, ainv_residual = 0.0;
  const SolveReport jacobi = solve_with("pcg_jacobi", coo, x, b, &jacobi_residual);
  const SolveReport ainv = solve_with("pcg_ainv", coo, x, b, &ainv_residual);
  EXPECT_EQ(ainv.status, SolveStatus::converged);
  EXPECT_LE(ainv_residual,
            1e-8 * 1.05);  // the recursive residual met 1e-8; the true one drifts a little
  EXPECT_LT(ainv.iterations, jacobi.iterations * 3 / 4)
      << "jacobi " << jacobi.iterations << ", ainv " << ainv.iterations;
}

/// `preset` converges on the corpus matrix `file` (b random; unknown `pin` fixed to 0 when >= 0,
/// for a singular pure-Neumann system) to the true residual 1e-8.
void expect_converges(const std::string& preset, const std::string& file, index_t pin = -1) {
  CooMatrix coo = io::read_matrix_market(test::data_file(file));
  std::vector<double> b = test::random_vector(coo.num_rows);
  if (pin >= 0) pin_unknown(coo, &b, pin);
  std::vector<double> x;
  double residual = 0.0;
  const SolveReport report = solve_with(preset, coo, x, b, &residual);
  EXPECT_EQ(report.status, SolveStatus::converged);
  EXPECT_LE(residual,
            1e-8 * 1.05);  // the recursive residual met 1e-8; the true one drifts a little
}

TEST(AinvPreconditioner, PcgAinvSolvesTheOpenFoamPressureMatrix) {
  expect_converges("pcg_ainv", "matrices/openfoam/pressure_23325/openfoam_p_23325.mtx.gz", 0);
}

TEST(AinvPreconditioner, BicgstabAinvSolvesANonsymmetricBlockSystem) {
  expect_converges("bicgstab_ainv", "matrices/petsc_ex19/ex19_cavity_33.mtx.gz");
}

TEST(AinvPreconditioner, BadInputIsReported) {
  const Backend backend = test::backend_under_test();
  AinvPreconditioner M;
  // A zero diagonal entry, named by its 1-based row.
  CooMatrix zero;
  zero.num_rows = zero.num_cols = 3;
  zero.push_back(0, 0, 2.0);
  zero.push_back(1, 2, 1.0);
  zero.push_back(2, 2, 2.0);
  zero.push_back(2, 1, 1.0);
  try {
    M.setup(CsrMatrix::from_coo(backend, zero));
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("row 2"), std::string::npos) << e.what();
  }
  // NaN.
  CooMatrix nan = poisson2d(3);
  nan.values[4] = std::nan("");
  EXPECT_THROW(M.setup(CsrMatrix::from_coo(backend, nan)), InvalidInput);
  // Symmetric requested on a nonsymmetric matrix.
  AinvPreconditioner::Parameters parameters;
  parameters.ainv.symmetry = AinvSymmetry::symmetric;
  AinvPreconditioner symmetric(parameters);
  EXPECT_THROW(symmetric.setup(CsrMatrix::from_coo(backend, random_dominant(20, false, 7))),
               InvalidInput);
  // Out-of-range parameters.
  parameters.ainv.drop_tolerance = -1.0;
  EXPECT_THROW(AinvPreconditioner{parameters}, ConfigError);
}

TEST(AinvFactor, APivotOfTheWrongSignIsShiftedAndReported) {
  // [[1, 2], [2, 1]] is symmetric indefinite: the second pivot, 1 - 4 = -3, is replaced by +1.
  const std::vector<index_t> row_ptr{0, 2, 4}, col_idx{0, 1, 0, 1};
  const std::vector<double> values{1.0, 2.0, 2.0, 1.0};
  AinvParameters parameters;
  parameters.symmetry = AinvSymmetry::symmetric;
  const AinvFactors f = ainv_factor(2, row_ptr, col_idx, values, parameters);
  ASSERT_EQ(f.shifted.size(), 1u);
  EXPECT_EQ(f.shifted[0], 1);
  EXPECT_EQ(f.pivots[1], 1.0);
}

}  // namespace
}  // namespace kryflow
