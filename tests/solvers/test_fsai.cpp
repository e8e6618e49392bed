// FSAI (fsai.hpp) on the backend under test: the defining properties of G against host
// computations independent of the kernels (diag(G A G^T) = I; G^T G = A^-1 when the pattern is
// the whole lower triangle), value updates, PCG-FSAI on the corpus by true residual, and the
// errors.
//
// Tolerances: the properties hold up to rounding, |error| <= 1e-10 for the well-conditioned
// matrices here (float64 factors); float32 factors make M a different (still SPD) preconditioner,
// so the solves are checked by the true residual only (the recursive one met 1e-8, the true one
// may drift to 2e-8).
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
#include "kryflow/preconditioners/fsai.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

/// A dense n x n matrix from CSR entries on the host (row-major).
std::vector<double> dense_of(const HostCsrMatrix& a) {
  const auto n = static_cast<std::size_t>(a.n);
  std::vector<double> d(n * n, 0.0);
  for (index_t i = 0; i < a.n; ++i) {
    for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) d[i * n + a.col_idx[k]] = a.values[k];
  }
  return d;
}

/// C = A B for dense n x n row-major matrices.
std::vector<double> multiply(const std::vector<double>& a, const std::vector<double>& b,
                             std::size_t n) {
  std::vector<double> c(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < n; ++k) {
      for (std::size_t j = 0; j < n; ++j) c[i * n + j] += a[i * n + k] * b[k * n + j];
    }
  }
  return c;
}

std::vector<double> transpose(const std::vector<double>& a, std::size_t n) {
  std::vector<double> t(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) t[j * n + i] = a[i * n + j];
  }
  return t;
}

/// A random strictly diagonally dominant matrix with `per_row` random off-diagonal entries per
/// row, mirrored (dense when per_row >= n): symmetric with a positive diagonal (SPD), or
/// (`nonsymmetric`) the mirrored entries with values of their own and every third diagonal entry
/// negative.
CooMatrix random_dominant(index_t n, int per_row, std::uint64_t seed, bool nonsymmetric) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::uniform_int_distribution<index_t> column(0, n - 1);
  std::vector<double> dense(static_cast<std::size_t>(n) * n, 0.0);
  for (index_t i = 0; i < n; ++i) {
    for (int k = 0; k < per_row; ++k) {
      const index_t j = per_row >= n ? k : column(rng);
      if (j == i) continue;
      dense[i * n + j] = value(rng);
      dense[j * n + i] = nonsymmetric ? value(rng) : dense[i * n + j];
    }
  }
  CooMatrix a;
  a.num_rows = a.num_cols = n;
  for (index_t i = 0; i < n; ++i) {
    double sum = 0.0;
    for (index_t j = 0; j < n; ++j) sum += std::abs(dense[i * n + j]);
    const double sign = nonsymmetric && i % 3 == 0 ? -1.0 : 1.0;
    dense[i * n + i] = sign * (sum + 0.5 + std::abs(value(rng)));
    for (index_t j = 0; j < n; ++j) {
      if (dense[i * n + j] != 0.0) a.push_back(i, j, dense[i * n + j]);
    }
  }
  return a;
}

CooMatrix random_spd(index_t n, int per_row, std::uint64_t seed) {
  return random_dominant(n, per_row, seed, false);
}

FsaiPreconditioner make_fsai(int power, Precision precision = Precision::float64,
                             index_t max_row_entries = 128, double filter = 0.0,
                             FsaiSymmetry symmetry = FsaiSymmetry::symmetric) {
  FsaiPreconditioner::Parameters p;
  p.symmetry = symmetry;
  p.filter_tolerance = filter;
  p.pattern_power = power;
  p.factor_precision = precision;
  p.max_row_entries = max_row_entries;
  return FsaiPreconditioner(p);
}

TEST(Fsai, TheDiagonalOfGAGtIsOne) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const CooMatrix coo = random_spd(60, 3, seed);
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  const std::vector<double> a = dense_of(A.to_host_csr());
  std::int64_t unfiltered = 0;
  for (const double filter : {0.0, 0.1}) {
    for (const int power : {1, 2, 3}) {
      SCOPED_TRACE("pattern_power " + std::to_string(power) + ", filter " + std::to_string(filter));
      FsaiPreconditioner M = make_fsai(power, Precision::float64, 128, filter);
      M.setup(A);
      if (power == 3) {
        // The filter drops entries (G is then computed again on what is left).
        if (filter == 0.0)
          unfiltered = M.lower().nnz();
        else
          EXPECT_LT(M.lower().nnz(), unfiltered);
      }
      const std::vector<double> g = dense_of(M.lower().to_host_csr());
      const std::vector<double> gt = dense_of(M.upper().to_host_csr());
      EXPECT_EQ(transpose(g, 60), gt);  // the stored G^T is G's transpose, bit for bit
      const std::vector<double> gag = multiply(multiply(g, a, 60), gt, 60);
      for (std::size_t i = 0; i < 60; ++i) {
        EXPECT_NEAR(gag[i * 60 + i], 1.0, 1e-10) << "row " << i;
        for (std::size_t j = 0; j < i; ++j) {
          // G lower triangular with its diagonal stored.
          EXPECT_EQ(gt[i * 60 + j], 0.0);
        }
      }
    }
  }
}

TEST(Fsai, AFullLowerPatternGivesTheExactInverse) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::size_t n = 40;
  const CsrMatrix A = CsrMatrix::from_coo(backend, random_spd(40, 40, seed));  // dense
  FsaiPreconditioner M = make_fsai(1);
  M.setup(A);
  EXPECT_EQ(M.lower().nnz(), static_cast<std::int64_t>(n * (n + 1) / 2));
  // M A = I: apply M to each column of A.
  const std::vector<double> a = dense_of(A.to_host_csr());
  double error = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    std::vector<double> column(n);
    for (std::size_t i = 0; i < n; ++i) column[i] = a[i * n + j];
    Vector z(backend, n);
    M.apply(Vector::from_host(backend, column), z);
    const std::vector<double> e = z.to_host();
    for (std::size_t i = 0; i < n; ++i) error = std::max(error, std::abs(e[i] - (i == j)));
  }
  EXPECT_LE(error, 1e-10);
}

/// max_ij |(M A - I)_ij| for the preconditioner M on the backend, A dense (n x n) on the host.
double inverse_error(const FsaiPreconditioner& M, const CsrMatrix& A) {
  const auto n = static_cast<std::size_t>(A.num_rows());
  const std::vector<double> a = dense_of(A.to_host_csr());
  double error = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    std::vector<double> column(n);
    for (std::size_t i = 0; i < n; ++i) column[i] = a[i * n + j];
    Vector z(A.backend(), n);
    M.apply(Vector::from_host(A.backend(), column), z);
    const std::vector<double> e = z.to_host();
    for (std::size_t i = 0; i < n; ++i) error = std::max(error, std::abs(e[i] - (i == j)));
  }
  return error;
}

TEST(Fsai, NonsymmetricWithAFullPatternGivesTheExactInverse) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const CsrMatrix A = CsrMatrix::from_coo(backend, random_dominant(30, 30, seed, true));
  FsaiPreconditioner M = make_fsai(1, Precision::float64, 128, 0.0, FsaiSymmetry::nonsymmetric);
  M.setup(A);
  EXPECT_LE(inverse_error(M, A), 1e-10);
}

TEST(Fsai, NonsymmetricOnAnSpdMatrixIsTheSymmetricOne) {
  // For A = L D L^T, z_i w_i^T = g_i g_i^T row by row: the same M up to rounding.
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const CsrMatrix A = CsrMatrix::from_coo(backend, random_spd(400, 4, seed));
  FsaiPreconditioner symmetric = make_fsai(2, Precision::float64, 128, 0.0);
  FsaiPreconditioner nonsymmetric =
      make_fsai(2, Precision::float64, 128, 0.0, FsaiSymmetry::nonsymmetric);
  symmetric.setup(A);
  nonsymmetric.setup(A);
  const std::vector<double> r = test::random_vector(400, seed + 1);
  Vector z1(backend, 400), z2(backend, 400);
  symmetric.apply(Vector::from_host(backend, r), z1);
  nonsymmetric.apply(Vector::from_host(backend, r), z2);
  EXPECT_LE(test::relative_max_difference(z2.to_host(), z1.to_host()), 1e-12);
}

TEST(Fsai, UpdateValuesMatchesAFreshSetup) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<double> r = test::random_vector(300, seed + 1);
  for (const FsaiSymmetry symmetry : {FsaiSymmetry::symmetric, FsaiSymmetry::nonsymmetric}) {
    SCOPED_TRACE(to_string(symmetry));
    const bool nonsymmetric = symmetry == FsaiSymmetry::nonsymmetric;
    CooMatrix coo = random_dominant(300, 4, seed, nonsymmetric);
    for (const double filter : {0.0, 0.05}) {
      SCOPED_TRACE("filter " + std::to_string(filter));
      CsrMatrix A = CsrMatrix::from_coo(backend, coo);
      FsaiPreconditioner updated = make_fsai(2, Precision::float32, 128, filter, symmetry);
      updated.setup(A);
      const index_t* pattern = updated.lower().col_idx().span().data();
      // New values on the same pattern. Unfiltered: off-diagonal entries grow by at most 1.5 and
      // the diagonal by 2 (still dominant); filtered: every entry times 4 (the filter's test is
      // invariant under that scaling, so the filtered pattern stays).
      CooMatrix scaled = coo;
      for (std::size_t k = 0; k < scaled.values.size(); ++k) {
        scaled.values[k] *= filter > 0.0 ? 4.0
                            : scaled.row_idx[k] == scaled.col_idx[k]
                                ? 2.0
                                : 1.0 + 0.5 * std::abs(std::sin(k));
      }
      const CsrMatrix B = CsrMatrix::from_coo(backend, scaled);
      A.update_values(B.values());
      updated.update_values(A);
      EXPECT_EQ(updated.lower().col_idx().span().data(), pattern);  // the value-only path
      FsaiPreconditioner fresh = make_fsai(2, Precision::float32, 128, filter, symmetry);
      fresh.setup(B);
      ASSERT_EQ(updated.lower().col_idx().to_host(), fresh.lower().col_idx().to_host());
      Vector z1(backend, 300), z2(backend, 300);
      updated.apply(Vector::from_host(backend, r), z1);
      fresh.apply(Vector::from_host(backend, r), z2);
      EXPECT_EQ(z1.to_host(), z2.to_host());  // one pattern, the same values: the same bits
    }
  }
}

TEST(Fsai, NonsymmetricGivesAUnitDiagonalOfWAZ) {
  // (W' A Z)_ii = 1 on any pattern (the rows' LU factors), checked by dense products.
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::size_t n = 80;
  const CsrMatrix A = CsrMatrix::from_coo(backend, random_dominant(80, 3, seed, true));
  for (const double filter : {0.0, 0.1}) {
    FsaiPreconditioner M =
        make_fsai(2, Precision::float64, 128, filter, FsaiSymmetry::nonsymmetric);
    M.setup(A);
    const std::vector<double> waz =
        multiply(multiply(dense_of(M.lower().to_host_csr()), dense_of(A.to_host_csr()), n),
                 dense_of(M.upper().to_host_csr()), n);
    for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(waz[i * n + i], 1.0, 1e-10) << "row " << i;
  }
}

TEST(Fsai, AnIndefiniteMatrixWithDefiniteBlocksStopsPcg) {
  // Tridiagonal (0.6, 1, 0.6), n = 40: indefinite (lambda_min = 1 - 1.2 cos(pi / 41) < 0), but
  // its 2 x 2 blocks (pattern_power 1) are definite, so setup passes and PCG reports breakdown.
  const Backend backend = test::backend_under_test();
  CooMatrix coo;
  coo.num_rows = coo.num_cols = 40;
  for (index_t i = 0; i < 40; ++i) {
    if (i > 0) coo.push_back(i, i - 1, 0.6);
    coo.push_back(i, i, 1.0);
    if (i < 39) coo.push_back(i, i + 1, 0.6);
  }
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  nlohmann::json config = config::load_preset("pcg_fsai");
  config["solver"]["preconditioner"]["pattern_power"] = 1;
  config::SolverSetup setup = config::build_solver(config);
  ASSERT_NO_THROW(setup.preconditioner->setup(A));
  Vector x = Vector::constant(backend, 40, 0.0);
  const SolveReport report = setup.solver->solve(
      A, *setup.preconditioner, Vector::from_host(backend, test::random_vector(40, 3)), x);
  EXPECT_EQ(report.status, SolveStatus::breakdown) << report.reason;
}

TEST(Fsai, AnEmptyMatrixSetsUp) {
  const Backend backend = test::backend_under_test();
  CooMatrix empty;
  FsaiPreconditioner M;
  M.setup(CsrMatrix::from_coo(backend, empty));
  EXPECT_EQ(M.num_rows(), 0);
  Vector r(backend, 0), z(backend, 0);
  M.apply(r, z);
}

/// PCG with `preset` (from x = 0) on the corpus matrix `file`, b = A x* for a random x* (as the
/// benchmarks; ex10hs's diagonal spans 1e-4..5e7, so a random b asks for an accuracy its
/// condition number does not allow), unknown `pin` fixed when >= 0; the true residual into
/// *true_residual.
SolveReport solve_corpus(const std::string& preset, const std::string& file, index_t pin,
                         double* true_residual) {
  const Backend backend = test::backend_under_test();
  // As stored: the OpenFOAM pressure matrix is negative semi-definite (pinned: negative
  // definite), which FSAI factors as -A.
  CooMatrix coo = io::read_matrix_market(test::data_file(file));
  std::vector<double> b(static_cast<std::size_t>(coo.num_rows), 0.0);
  if (pin >= 0) pin_unknown(coo, nullptr, pin);
  const std::vector<double> solution = test::random_vector(b.size(), 11);
  for (std::size_t k = 0; k < coo.values.size(); ++k) {
    b[coo.row_idx[k]] += coo.values[k] * solution[coo.col_idx[k]];
  }
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  nlohmann::json config = config::load_preset(preset);
  config["solver"]["max_iterations"] = 20000;
  config["solver"]["stagnation_window"] = 5000;
  config::SolverSetup setup = config::build_solver(config);
  setup.preconditioner->setup(A);
  Vector x = Vector::constant(backend, b.size(), 0.0);
  const SolveReport report =
      setup.solver->solve(A, *setup.preconditioner, Vector::from_host(backend, b), x);
  *true_residual = test::true_relative_residual(coo, x.to_host(), b);
  return report;
}

TEST(Fsai, PcgFsaiSolvesEx10hsInUnderAThirdOfJacobisIterations) {
  const std::string file = "matrices/suitesparse/ex10hs/ex10hs.mtx.gz";
  double fsai_residual = 0.0, jacobi_residual = 0.0;
  const SolveReport fsai = solve_corpus("pcg_fsai", file, -1, &fsai_residual);
  const SolveReport jacobi = solve_corpus("pcg_jacobi", file, -1, &jacobi_residual);
  EXPECT_EQ(fsai.status, SolveStatus::converged) << fsai.reason;
  EXPECT_LE(fsai_residual, 2e-8) << fsai.iterations << " iterations";
  EXPECT_EQ(jacobi.status, SolveStatus::converged) << jacobi.reason;
  EXPECT_LT(3 * fsai.iterations, jacobi.iterations)
      << "fsai " << fsai.iterations << ", jacobi " << jacobi.iterations;
}

TEST(Fsai, PcgFsaiSolvesTheOpenFoamPressureMatrix) {
  const std::string file = "matrices/openfoam/pressure_23325/openfoam_p_23325.mtx.gz";
  double fsai_residual = 0.0, jacobi_residual = 0.0;
  const SolveReport fsai = solve_corpus("pcg_fsai", file, 0, &fsai_residual);
  const SolveReport jacobi = solve_corpus("pcg_jacobi", file, 0, &jacobi_residual);
  EXPECT_EQ(fsai.status, SolveStatus::converged) << fsai.reason;
  EXPECT_LE(fsai_residual, 2e-8) << fsai.iterations << " iterations";
  EXPECT_LT(2 * fsai.iterations, jacobi.iterations)
      << "fsai " << fsai.iterations << ", jacobi " << jacobi.iterations;
}

TEST(Fsai, BicgstabFsaiSolvesTheNonsymmetricCorpusInFewerIterationsThanJacobi) {
  const Backend backend = test::backend_under_test();
  for (const std::string file :
       {"matrices/suitesparse/airfoil_2d/airfoil_2d.mtx.gz", "matrices/fvens/2dcyl1/2dcyl1.mtx.gz",
        "matrices/petsc_ex19/ex19_cavity_33.mtx.gz"}) {
    SCOPED_TRACE(file);
    double fsai_residual = 0.0, jacobi_residual = 0.0;
    const SolveReport fsai = solve_corpus("bicgstab_fsai", file, -1, &fsai_residual);
    const SolveReport jacobi = solve_corpus("bicgstab_jacobi", file, -1, &jacobi_residual);
    EXPECT_EQ(fsai.status, SolveStatus::converged) << fsai.reason;
    EXPECT_LE(fsai_residual, 1e-7) << fsai.iterations << " iterations";
    EXPECT_LT(fsai.iterations * 3 / 2, jacobi.iterations)
        << "fsai " << fsai.iterations << ", jacobi " << jacobi.iterations;
  }
  (void)backend;
}

/// M.setup(A) throws InvalidInput whose message holds `text`.
void expect_invalid_input(FsaiPreconditioner* M, const CsrMatrix& A, const std::string& text) {
  try {
    M->setup(A);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(Fsai, BadInputIsReported) {
  const Backend backend = test::backend_under_test();
  // An indefinite matrix: row 3's diagonal is negative; named by its 1-based row.
  CooMatrix coo = poisson2d(4);
  for (std::size_t k = 0; k < coo.values.size(); ++k) {
    if (coo.row_idx[k] == 2 && coo.col_idx[k] == 2) coo.values[k] = -coo.values[k];
  }
  FsaiPreconditioner M;
  expect_invalid_input(&M, CsrMatrix::from_coo(backend, coo), "row 3 ");
  // A missing diagonal entry (row 2 stores none): its row cannot end at its diagonal.
  CooMatrix missing;
  missing.num_rows = missing.num_cols = 3;
  missing.push_back(0, 0, 2.0);
  missing.push_back(1, 2, 1.0);
  missing.push_back(2, 1, 1.0);
  missing.push_back(2, 2, 2.0);
  EXPECT_THROW(M.setup(CsrMatrix::from_coo(backend, missing)), InvalidInput);
  // A NaN diagonal entry of a negative definite matrix, named by its row.
  CooMatrix nan = poisson2d(3);
  for (double& v : nan.values) v = -v;
  for (std::size_t k = 0; k < nan.values.size(); ++k) {
    if (nan.row_idx[k] == 4 && nan.col_idx[k] == 4) nan.values[k] = std::nan("");
  }
  expect_invalid_input(&M, CsrMatrix::from_coo(backend, nan), "row 5 ");
  EXPECT_EQ(M.num_rows(), 0);  // nothing half-built stays
  // Nonsymmetric: a zero pivot, named by its 1-based row (rows 1 and 2 hold [[1, 1], [1, 1]]).
  CooMatrix singular;
  singular.num_rows = singular.num_cols = 3;
  singular.push_back(0, 0, 1.0);
  singular.push_back(0, 1, 1.0);
  singular.push_back(1, 0, 1.0);
  singular.push_back(1, 1, 1.0);
  singular.push_back(2, 2, 2.0);
  FsaiPreconditioner nonsymmetric =
      make_fsai(1, Precision::float32, 128, 0.0, FsaiSymmetry::nonsymmetric);
  expect_invalid_input(&nonsymmetric, CsrMatrix::from_coo(backend, singular), "row 2 ");
  // Not square, not a CsrMatrix of float64.
  CooMatrix rectangular;
  rectangular.num_rows = 2;
  rectangular.num_cols = 3;
  rectangular.push_back(0, 0, 1.0);
  EXPECT_THROW(M.setup(CsrMatrix::from_coo(backend, rectangular)), DimensionMismatch);
  EXPECT_THROW(M.setup(CsrMatrix::from_coo(backend, poisson2d(3), Precision::float32)),
               NotSupported);
  // Parameters out of range, directly and through the configuration.
  EXPECT_THROW(make_fsai(0), ConfigError);
  EXPECT_THROW(make_fsai(4), ConfigError);
  EXPECT_THROW(make_fsai(2, Precision::float32, 151), ConfigError);
  EXPECT_THROW(make_fsai(2, Precision::float32, 128, -0.1), ConfigError);
  nlohmann::json config = config::load_preset("pcg_fsai");
  config["solver"]["preconditioner"]["pattern_power"] = 4;
  EXPECT_THROW(config::build_solver(config), ConfigError);
  config["solver"]["preconditioner"]["pattern_power"] = 2;
  config["solver"]["preconditioner"]["symmetry"] = "skew";
  EXPECT_THROW(config::build_solver(config), ConfigError);
}

}  // namespace
}  // namespace kryflow
