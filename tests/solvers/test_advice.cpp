// The advice of `kryflow info` (analyse()) put to the test on every matrix of the corpus: the
// suggested preset, with the suggested overrides and pinned unknown, must converge, judged by the
// true residual computed on the host from the file's triplets.
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "kryflow/config/registry.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/linalg/matrix_analysis.hpp"
#include "kryflow/solver.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

struct AdviceCase {
  std::string name;
  std::string matrix;
  std::string rhs;  // "" : b = A x* for a random x*
};

std::ostream& operator<<(std::ostream& os, const AdviceCase& c) {
  return os << c.name;
}

/// b = A x for the triplets of A.
std::vector<double> multiply(const CooMatrix& A, const std::vector<double>& x) {
  std::vector<double> b(static_cast<std::size_t>(A.num_rows), 0.0);
  for (std::size_t k = 0; k < A.num_entries(); ++k) {
    b[static_cast<std::size_t>(A.row_idx[k])] +=
        A.values[k] * x[static_cast<std::size_t>(A.col_idx[k])];
  }
  return b;
}

class Advice : public ::testing::TestWithParam<AdviceCase> {};

TEST_P(Advice, TheSuggestedPresetConvergesOnTheMatrixItWasMadeFor) {
  // Arrange: A (and b) from the corpus, the advice for A.
  const AdviceCase& c = GetParam();
  const auto path = test::data_file(c.matrix);
  ASSERT_FALSE(path.empty());
  CooMatrix coo = io::read_matrix_market(path);
  const MatrixProperties advice = analyse(CsrMatrix::from_coo(Backend::reference(), coo));
  ASSERT_NE(advice.suggested_solver, "none") << advice.suggestion_reason;
  if (advice.suggested_solver.starts_with("pcg")) {
    EXPECT_TRUE(advice.numerically_symmetric()) << "PCG advised for a nonsymmetric matrix";
  }
  std::vector<double> b;
  // The seed of x* (printed with the result and in every failure), so that a failure can be
  // reproduced.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("x* seed " + std::to_string(seed));
  if (c.rhs.empty()) {
    b = multiply(coo, test::random_vector(static_cast<std::size_t>(coo.num_cols), seed));
  } else {
    const auto rhs = test::data_file(c.rhs);
    ASSERT_FALSE(rhs.empty());
    b = io::read_vector(rhs);
    ASSERT_EQ(b.size(), static_cast<std::size_t>(coo.num_rows));
  }
  // The suggestion as `kryflow solve` takes it: the preset, then the advised overrides, then the
  // advised pinned unknown.
  nlohmann::json config = config::load_preset(advice.suggested_solver);
  for (const std::string& assignment : advice.suggested_overrides) {
    config::apply_override(config, assignment);
  }
  const config::SolverSetup setup = config::build_solver(config);
  if (advice.suggested_pin_unknown > 0) pin_unknown(coo, &b, advice.suggested_pin_unknown - 1);
  // Stored as `kryflow solve` stores it by default (--format auto: BSR for a block pattern).
  const Backend backend = test::backend_under_test();
  StorageOptions storage;
  storage.format = "auto";
  const StoredMatrix stored =
      store_matrix(CsrMatrix::from_coo(Backend::reference(), coo), backend, storage);
  const LinearOperator& A = stored.op();
  setup.preconditioner->setup(A);
  const Vector bv = Vector::from_host(backend, b);
  Vector x = Vector::constant(backend, b.size(), 0.0);

  // Act
  const SolveReport report = setup.solver->solve(A, *setup.preconditioner, bv, x);

  // Assert: converged, and the independently computed true residual meets the tolerance up to
  // the drift of the recursive residual that KrylovSolver::solve accepts (at most
  // SolveReport::true_residual_slack times the target; measured up to 1.3 times on ex10hs,
  // the OpenFOAM matrix and 2dcyl1 with random x*). A solver that stagnates or diverges is far
  // above it.
  const double tolerance = setup.resolved["solver"]["relative_tolerance"].get<double>();
  const double true_residual = test::true_relative_residual(coo, x.to_host(), b);
  std::string arguments = "--preset " + advice.suggested_solver;
  for (const std::string& assignment : advice.suggested_overrides) arguments += " -p " + assignment;
  if (advice.suggested_pin_unknown > 0) {
    arguments += " --pin-unknown " + std::to_string(advice.suggested_pin_unknown);
  }
  std::cout << "[ advice   ] " << c.name
            << (c.rhs.empty() ? " (x* seed " + std::to_string(seed) + ")" : "") << ": " << arguments
            << ": " << to_string(report.status) << " in " << report.iterations
            << " iterations, relative residual " << report.relative_residual() << " (recursive), "
            << true_residual << " (true)\n";
  EXPECT_EQ(report.status, SolveStatus::converged) << arguments << ": " << report.reason;
  EXPECT_LE(true_residual, SolveReport::true_residual_slack * tolerance)
      << arguments << ", " << report.iterations << " iterations";
  RecordProperty("advice", arguments);
  RecordProperty("iterations", report.iterations);
}

TEST(Advice, CoupledBlocksWithZeroDiagonalEntriesAreSolvedWithBlockJacobi) {
  // A nonsymmetric block system of 3 x 3 blocks on a 2D grid whose last unknown of every node
  // has no diagonal entry of its own: the equations of a node's last two unknowns swap their
  // dominant coefficients (each sits on the other's column, as a constraint row couples to the
  // unknowns it constrains). Point Jacobi cannot be set up; each diagonal block is a row
  // permutation of a diagonally dominant one, so invertible, and block Jacobi applies.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  CooMatrix coo = kronecker_block(poisson2d(40), 3, seed, false);
  std::vector<double> diagonal(static_cast<std::size_t>(coo.num_rows), 0.0);
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    if (coo.row_idx[k] == coo.col_idx[k]) diagonal[coo.row_idx[k]] = coo.values[k];
  }
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    const index_t i = coo.row_idx[k], j = coo.col_idx[k];
    if (i % 3 == 1 && j == i) coo.values[k] = 0.5;  // row 1 keeps a small diagonal
    if (i % 3 == 1 && j == i + 1) coo.values[k] = diagonal[i];
    if (i % 3 == 2 && j == i) coo.values[k] = 0.0;
    if (i % 3 == 2 && j == i - 1) coo.values[k] = diagonal[i];
  }
  const MatrixProperties advice = analyse(CsrMatrix::from_coo(Backend::reference(), coo));
  ASSERT_EQ(advice.suggested_solver, "bicgstab_block_jacobi") << advice.suggestion_reason;
  EXPECT_EQ(advice.block_size, 3);
  const std::vector<double> b = multiply(coo, test::random_vector(coo.num_cols, seed + 1));
  nlohmann::json config = config::load_preset(advice.suggested_solver);
  for (const std::string& assignment : advice.suggested_overrides) {
    config::apply_override(config, assignment);
  }
  const config::SolverSetup setup = config::build_solver(config);
  const Backend backend = test::backend_under_test();
  StorageOptions storage;
  storage.format = "auto";
  const StoredMatrix stored =
      store_matrix(CsrMatrix::from_coo(Backend::reference(), coo), backend, storage);
  EXPECT_EQ(stored.format(), "BSR-3 (float64 values)");
  setup.preconditioner->setup(stored.op());
  Vector x = Vector::constant(backend, b.size(), 0.0);

  const SolveReport report =
      setup.solver->solve(stored.op(), *setup.preconditioner, Vector::from_host(backend, b), x);

  const double true_residual = test::true_relative_residual(coo, x.to_host(), b);
  std::cout << "[ advice   ] coupled blocks: --preset " << advice.suggested_solver << ": "
            << to_string(report.status) << " in " << report.iterations
            << " iterations, true relative residual " << true_residual << "\n";
  EXPECT_EQ(report.status, SolveStatus::converged) << report.reason;
  EXPECT_LE(true_residual, SolveReport::true_residual_slack * 1e-8);
}

// Every matrix of the corpus, with b = A x* and with its own right-hand side where it has one.
// ex19_cavity_257 (264,196 rows, about 2500 BiCGStab iterations) runs as its own CTest entry.
INSTANTIATE_TEST_SUITE_P(
    Corpus, Advice,
    ::testing::Values(
        AdviceCase{"ex10hs", "matrices/suitesparse/ex10hs/ex10hs.mtx.gz", ""},
        AdviceCase{"openfoam_pressure", "matrices/openfoam/pressure_23325/openfoam_p_23325.mtx.gz",
                   ""},
        AdviceCase{"airfoil_2d", "matrices/suitesparse/airfoil_2d/airfoil_2d.mtx.gz", ""},
        AdviceCase{"fvens_2dcyl1", "matrices/fvens/2dcyl1/2dcyl1.mtx.gz", ""},
        AdviceCase{"fvens_2dcyl1_b", "matrices/fvens/2dcyl1/2dcyl1.mtx.gz",
                   "matrices/fvens/2dcyl1/2dcyl1_b.mtx.gz"},
        AdviceCase{"ex19_cavity_33", "matrices/petsc_ex19/ex19_cavity_33.mtx.gz", ""},
        AdviceCase{"ex19_cavity_33_b", "matrices/petsc_ex19/ex19_cavity_33.mtx.gz",
                   "matrices/petsc_ex19/ex19_cavity_33_b.mtx.gz"},
        AdviceCase{"ex19_cavity_129", "matrices/petsc_ex19/ex19_cavity_129.mtx.gz", ""},
        AdviceCase{"ex19_cavity_129_b", "matrices/petsc_ex19/ex19_cavity_129.mtx.gz",
                   "matrices/petsc_ex19/ex19_cavity_129_b.mtx.gz"},
        AdviceCase{"ex19_cavity_257", "matrices/petsc_ex19/ex19_cavity_257.mtx.gz", ""},
        AdviceCase{"ex19_cavity_257_b", "matrices/petsc_ex19/ex19_cavity_257.mtx.gz",
                   "matrices/petsc_ex19/ex19_cavity_257_b.mtx.gz"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kryflow
