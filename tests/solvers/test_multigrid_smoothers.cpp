// The smoothers on their own and in a cycle: each reduces the error of 2D Poisson, the
// Chebyshev estimate of lambda_max(D^-1 A) against the known value, hybrid Gauss-Seidel on 2D and
// 3D Poisson for every block size, at its extremes (Gauss-Seidel, l1-Jacobi) and with and
// without l1 where the plain one diverges, the V-cycle is a symmetric operator with every
// smoother (so PCG may use it), and AMG preconditions nonsymmetric convection-diffusion for
// BiCGStab and GMRES.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "kryflow/amg/amg.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/multigrid/smoothers.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

std::vector<std::unique_ptr<Smoother>> all_smoothers() {
  std::vector<std::unique_ptr<Smoother>> s;
  s.push_back(std::make_unique<JacobiSmoother>());
  s.push_back(std::make_unique<L1JacobiSmoother>());
  s.push_back(std::make_unique<ChebyshevSmoother>());
  s.push_back(std::make_unique<GaussSeidelSmoother>(GaussSeidelSmoother::Direction::forward));
  s.push_back(std::make_unique<GaussSeidelSmoother>(GaussSeidelSmoother::Direction::backward));
  s.push_back(std::make_unique<GaussSeidelSmoother>(GaussSeidelSmoother::Direction::symmetric));
  s.push_back(std::make_unique<HybridGaussSeidelSmoother>());
  s.push_back(std::make_unique<HybridGaussSeidelSmoother>(HybridGaussSeidelSmoother::Parameters{
      HybridGaussSeidelSmoother::Direction::forward, 8, false}));
  return s;
}

/// ||e||_A = sqrt(e^T A e) of e = x - x* on the host.
double energy_norm(const CsrMatrix& A, const std::vector<double>& e) {
  const Vector ev = Vector::from_host(A.backend(), e);
  Vector Ae(A.backend(), e.size());
  A.apply(ev, Ae);
  return std::sqrt(dot(ev, Ae));
}

TEST(Smoothers, EachReducesTheEnergyNormOfTheErrorOn2dPoisson) {
  // A x = b with b = A x*; from x = 0 the error is -x*. Ten smoothing steps must lower ||e||_A:
  // every smoother here converges for symmetric positive definite A (Jacobi with omega = 2/3
  // because lambda_max(D^-1 A) < 2 for the 5-point stencil).
  const Backend backend = test::backend_under_test();
  const CsrMatrix A = CsrMatrix::from_coo(backend, poisson2d(30));
  const std::vector<double> x_star = test::random_vector(900, 3);
  const Vector xs = Vector::from_host(backend, x_star);
  Vector b(backend, 900);
  A.apply(xs, b);
  const double initial = energy_norm(A, x_star);
  for (const auto& smoother : all_smoothers()) {
    SCOPED_TRACE(smoother->name());
    smoother->setup(A);
    Vector x(backend, 900);

    smoother->smooth(b, x, true);
    for (int k = 1; k < 10; ++k) smoother->smooth(b, x, false);

    std::vector<double> e = x.to_host();
    for (std::size_t i = 0; i < e.size(); ++i) e[i] -= x_star[i];
    EXPECT_LT(energy_norm(A, e), 0.9 * initial);
  }
}

TEST(Smoothers, ChebyshevEstimateOfLambdaMaxIsCloseToTheTrueValue) {
  // 1D Laplacian tridiag(-1, 2, -1) on n points: lambda_max(D^-1 A) = 1 + cos(pi / (n + 1)).
  // CG-Lanczos approaches it from below; ten steps from a random vector come within 5%.
  const index_t n = 200;
  CooMatrix coo;
  coo.num_rows = coo.num_cols = n;
  for (index_t i = 0; i < n; ++i) {
    if (i > 0) coo.push_back(i, i - 1, -1.0);
    coo.push_back(i, i, 2.0);
    if (i + 1 < n) coo.push_back(i, i + 1, -1.0);
  }
  const CsrMatrix A = CsrMatrix::from_coo(test::backend_under_test(), coo);
  ChebyshevSmoother smoother;

  smoother.setup(A);

  const double exact = 1.0 + std::cos(std::numbers::pi / (n + 1));
  EXPECT_LE(smoother.lambda_max(), exact * (1.0 + 1e-12));
  EXPECT_GE(smoother.lambda_max(), 0.95 * exact);
}

TEST(Smoothers, ChebyshevEstimateFindsTheLargestEigenvalueOfRowsWithLargeCoefficients) {
  // tridiag(-0.5, 2, -0.5) on n points (lambda_max(D^-1 A) < 1.5) and, decoupled from it, the
  // pair 1e6 [1 -0.7; -0.7 1] (D^-1 A eigenvalues 0.3 and 1.7): the largest eigenvalue lives
  // in two rows with coefficients a million times larger. A start vector balanced by D^{1/2}
  // gives those rows their share and ten Lanczos steps find 1.7; a plain random residual weights
  // them by 1/a_ii, and the estimate stayed near 1.5 (below the true value even after the
  // safety factor 1.1, so the smoother amplified that eigenvector).
  const index_t n = 10000;
  CooMatrix coo;
  coo.num_rows = coo.num_cols = n + 2;
  for (index_t i = 0; i < n; ++i) {
    if (i > 0) coo.push_back(i, i - 1, -0.5);
    coo.push_back(i, i, 2.0);
    if (i + 1 < n) coo.push_back(i, i + 1, -0.5);
  }
  coo.push_back(n, n, 1e6);
  coo.push_back(n, n + 1, -0.7e6);
  coo.push_back(n + 1, n, -0.7e6);
  coo.push_back(n + 1, n + 1, 1e6);
  const CsrMatrix A = CsrMatrix::from_coo(test::backend_under_test(), coo);
  ChebyshevSmoother smoother;

  smoother.setup(A);

  EXPECT_LE(smoother.lambda_max(), 1.7 * (1.0 + 1e-12));
  EXPECT_GE(smoother.lambda_max(), 0.98 * 1.7);
}

TEST(Smoothers, ChebyshevGivenTheInverseDiagonalSmoothsAsWithItsOwn) {
  // A multigrid level hands its smoother the D^-1 of its diagonal check: the same estimate and
  // the same bits of smoothing as the smoother's own pass over A; a D^-1 of another length is
  // refused.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend& backend = test::backend_under_test();
  const CooMatrix coo = poisson2d(30);
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  const auto n = static_cast<std::size_t>(A.num_rows());
  std::vector<double> dinv(n);
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    if (coo.row_idx[k] == coo.col_idx[k]) dinv[coo.row_idx[k]] = 1.0 / coo.values[k];
  }
  const Vector b = Vector::from_host(backend, test::random_vector(n, seed));
  ChebyshevSmoother own, given, wrong;
  own.begin_setup(A);
  own.finish_setup();
  given.begin_setup_with_diagonal(A, Vector::from_host(backend, dinv));
  given.finish_setup();
  Vector x_own(backend, n), x_given(backend, n);

  own.smooth(b, x_own, true);
  given.smooth(b, x_given, true);

  EXPECT_EQ(given.lambda_max(), own.lambda_max());
  EXPECT_EQ(x_given.to_host(), x_own.to_host());
  EXPECT_THROW(wrong.begin_setup_with_diagonal(A, Vector(backend, n - 1)), DimensionMismatch);
}

TEST(Smoothers, ChebyshevAcceptsANegativeDefiniteMatrixAndRejectsAnIndefiniteOne) {
  // -A with its negative diagonal has the same D^-1 A as A: the same estimate. A - 5 I
  // (eigenvalues of both signs, diagonal -1) has none.
  CooMatrix coo = poisson2d(8);
  const CsrMatrix A = CsrMatrix::from_coo(test::backend_under_test(), coo);
  for (double& v : coo.values) v = -v;
  const CsrMatrix negative = CsrMatrix::from_coo(test::backend_under_test(), coo);
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    coo.values[k] = -coo.values[k] - (coo.row_idx[k] == coo.col_idx[k] ? 5.0 : 0.0);
  }
  const CsrMatrix indefinite = CsrMatrix::from_coo(test::backend_under_test(), coo);
  ChebyshevSmoother positive_smoother, negative_smoother, indefinite_smoother;

  positive_smoother.setup(A);
  negative_smoother.setup(negative);

  EXPECT_NEAR(negative_smoother.lambda_max(), positive_smoother.lambda_max(),
              1e-12 * positive_smoother.lambda_max());
  EXPECT_THROW(indefinite_smoother.setup(indefinite), InvalidInput);
}

TEST(Smoothers, ChebyshevSetupInTwoPhasesGivesTheEstimateOfSetupAndReportsErrorsAtTheEnd) {
  // begin_setup queues the diagonal check and the Lanczos steps; finish_setup reads them. The
  // estimate is setup's, bit for bit; smooth() between the phases is refused; a zero diagonal
  // entry is reported by finish_setup with its 1-based row.
  const Backend backend = test::backend_under_test();
  CooMatrix coo = poisson2d(9);
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  ChebyshevSmoother one_phase, two_phases;
  one_phase.setup(A);
  two_phases.begin_setup(A);
  const auto n = static_cast<std::size_t>(A.num_rows());
  const Vector b = Vector::constant(backend, n, 1.0);
  Vector x(backend, n);
  EXPECT_THROW(two_phases.smooth(b, x, true), InvalidInput);
  two_phases.finish_setup();
  EXPECT_EQ(two_phases.lambda_max(), one_phase.lambda_max());
  EXPECT_NO_THROW(two_phases.smooth(b, x, true));
  EXPECT_NO_THROW(two_phases.finish_setup());  // finished already: nothing to do

  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    if (coo.row_idx[k] == 30 && coo.col_idx[k] == 30) coo.values[k] = 0.0;
  }
  const CsrMatrix zero_diagonal = CsrMatrix::from_coo(backend, coo);
  ChebyshevSmoother rejected;
  EXPECT_NO_THROW(rejected.begin_setup(zero_diagonal));
  try {
    rejected.finish_setup();
    ADD_FAILURE() << "finish_setup accepted a zero diagonal entry";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("row 31"), std::string::npos) << e.what();
  }
  EXPECT_THROW(rejected.smooth(b, x, true), InvalidInput);
  ChebyshevSmoother never_begun;
  EXPECT_THROW(never_begun.finish_setup(), InvalidInput);
}

/// ||x - x*||_A after `smooths` smooths of A x = A x* from x = 0 (the first with x_is_zero),
/// relative to ||x*||_A; x* random (all frequencies).
double relative_error_after(const CsrMatrix& A, const Smoother& smoother, int smooths,
                            std::vector<double>* x_out = nullptr) {
  const auto n = static_cast<std::size_t>(A.num_rows());
  const std::vector<double> x_star = test::random_vector(n, 5);
  const Vector xs = Vector::from_host(A.backend(), x_star);
  Vector b(A.backend(), n), x(A.backend(), n);
  A.apply(xs, b);
  for (int k = 0; k < smooths; ++k) smoother.smooth(b, x, k == 0);
  std::vector<double> e = x.to_host();
  if (x_out != nullptr) *x_out = e;
  for (std::size_t i = 0; i < n; ++i) e[i] -= x_star[i];
  return energy_norm(A, e) / energy_norm(A, x_star);
}

TEST(Smoothers, HybridGaussSeidelReducesTheErrorOn2dAnd3dPoissonForEveryBlockSize) {
  // Ten symmetric smooths from x = 0 on 2D Poisson 32^2 and 3D Poisson 12^3 (1024 and 1728
  // rows), blocks of 1 to all rows, with and without l1. Poisson is an M-matrix: dropping
  // couplings from it leaves a regular splitting, so every variant converges. The A-norm of the
  // error (x* random: mostly high frequencies) must fall below 0.2 of the initial one (measured
  // 0.002 to 0.023 with l1; without it 0.002 to 0.037, and 0.13 for blocks of one row, undamped
  // Jacobi, on 2D). The backend under test gives the reference's bits.
  for (const CooMatrix& coo : {poisson2d(32), poisson3d(12)}) {
    SCOPED_TRACE(std::to_string(coo.num_rows) + " rows");
    const CsrMatrix A = CsrMatrix::from_coo(test::backend_under_test(), coo);
    const CsrMatrix A_ref = CsrMatrix::from_coo(Backend::reference(), coo);
    for (const index_t block_rows : {index_t{1}, index_t{4}, index_t{32}, coo.num_rows}) {
      for (const bool l1 : {true, false}) {
        const HybridGaussSeidelSmoother::Parameters p{
            HybridGaussSeidelSmoother::Direction::symmetric, block_rows, l1};
        HybridGaussSeidelSmoother smoother(p), reference(p);
        SCOPED_TRACE(smoother.name());
        smoother.setup(A);
        reference.setup(A_ref);
        std::vector<double> x, x_ref;

        const double ratio = relative_error_after(A, smoother, 10, &x);
        relative_error_after(A_ref, reference, 10, &x_ref);

        EXPECT_LT(ratio, 0.2);
        EXPECT_EQ(x, x_ref);
        RecordProperty(std::to_string(coo.num_rows) + " " + smoother.name(), std::to_string(ratio));
      }
    }
  }
}

TEST(Smoothers, HybridGaussSeidelIsGaussSeidelInOneBlockAndL1JacobiInBlocksOfOneRow) {
  // The extremes of the block size give the bits of the existing smoothers on 2D Poisson: one
  // block of all rows without l1 is GaussSeidelSmoother, blocks of one row with l1 are
  // L1JacobiSmoother (Poisson's rows are short: the residual adds in stored order everywhere).
  const Backend backend = test::backend_under_test();
  const CsrMatrix A = CsrMatrix::from_coo(backend, poisson2d(20));
  const index_t n = A.num_rows();
  using Direction = HybridGaussSeidelSmoother::Direction;
  HybridGaussSeidelSmoother one_block({Direction::symmetric, n, false});
  GaussSeidelSmoother gauss_seidel(GaussSeidelSmoother::Direction::symmetric);
  HybridGaussSeidelSmoother single_rows({Direction::forward, 1, true});
  L1JacobiSmoother l1_jacobi;
  for (Smoother* s :
       std::initializer_list<Smoother*>{&one_block, &gauss_seidel, &single_rows, &l1_jacobi}) {
    s->setup(A);
  }
  std::vector<double> x[4];
  relative_error_after(A, one_block, 3, &x[0]);
  relative_error_after(A, gauss_seidel, 3, &x[1]);
  relative_error_after(A, single_rows, 3, &x[2]);
  relative_error_after(A, l1_jacobi, 3, &x[3]);
  EXPECT_EQ(x[0], x[1]);
  EXPECT_EQ(x[2], x[3]);
  EXPECT_NE(x[0], x[2]);
}

TEST(Smoothers, L1SmoothersTreatANegativeDefiniteMatrixAsItsNegative) {
  // The l1 terms take the sign of a_ii: on -A with -b, l1-Jacobi and l1 hybrid Gauss-Seidel
  // (blocks of 7 rows) give x of A with b, bit for bit (every product and sum only changes
  // sign). Without the sign the l1 diagonal of -A is positive while A's is negative, the
  // smoother multiplies the residual by a negative definite factor and the error grows.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  CooMatrix coo = poisson3d(9);
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  for (double& v : coo.values) v = -v;
  const CsrMatrix negative = CsrMatrix::from_coo(backend, coo);
  const auto n = static_cast<std::size_t>(A.num_rows());
  const std::vector<double> b = test::random_vector(n, seed);
  std::vector<double> minus_b(b);
  for (double& v : minus_b) v = -v;
  using Direction = HybridGaussSeidelSmoother::Direction;
  for (int kind = 0; kind < 2; ++kind) {
    SCOPED_TRACE(kind == 0 ? "l1_jacobi" : "hybrid_gauss_seidel with l1");
    const auto make = [&]() -> std::unique_ptr<Smoother> {
      if (kind == 0) return std::make_unique<L1JacobiSmoother>();
      return std::make_unique<HybridGaussSeidelSmoother>(
          HybridGaussSeidelSmoother::Parameters{Direction::symmetric, 7, true});
    };
    const std::unique_ptr<Smoother> on_a = make(), on_negative = make();
    on_a->setup(A);
    on_negative->setup(negative);
    Vector x(backend, n), y(backend, n);
    const Vector bv = Vector::from_host(backend, b), minus_bv = Vector::from_host(backend, minus_b);
    on_a->smooth(bv, x, true);
    on_negative->smooth(minus_bv, y, true);
    for (int sweep = 0; sweep < 3; ++sweep) {
      on_a->smooth(bv, x, false);
      on_negative->smooth(minus_bv, y, false);
    }
    EXPECT_EQ(x.to_host(), y.to_host());
    // And it smooths: the residual of -A y = -b, computed on the host, is below ||b||.
    EXPECT_LT(test::true_relative_residual(coo, y.to_host(), minus_b), 0.9);
  }
}

TEST(Smoothers, HybridGaussSeidelWithL1ConvergesWhereThePlainOneDiverges) {
  // A = 0.7 I + 0.3 1 1^T (16 x 16, eigenvalues 0.7 and 5.5: symmetric positive definite) in
  // blocks of 4 rows: each row couples to 12 rows of other blocks with 0.3, more than its
  // diagonal 1, and plain hybrid Gauss-Seidel diverges (the A-norm of the error grows by a factor
  // of about 6 per symmetric smooth), while with l1 (diagonal 1 + 12 * 0.3 = 4.6) it converges
  // (about 0.73 per smooth), as Baker et al. 2011, sec. 6, prove for every SPD matrix.
  CooMatrix coo;
  coo.num_rows = coo.num_cols = 16;
  for (index_t i = 0; i < 16; ++i) {
    for (index_t j = 0; j < 16; ++j) coo.push_back(i, j, i == j ? 1.0 : 0.3);
  }
  const CsrMatrix A = CsrMatrix::from_coo(test::backend_under_test(), coo);
  using Direction = HybridGaussSeidelSmoother::Direction;
  HybridGaussSeidelSmoother plain({Direction::symmetric, 4, false});
  HybridGaussSeidelSmoother l1({Direction::symmetric, 4, true});
  plain.setup(A);
  l1.setup(A);

  EXPECT_GT(relative_error_after(A, plain, 10), 1e3);
  EXPECT_LT(relative_error_after(A, l1, 10), 0.1);
}

TEST(Smoothers, HybridGaussSeidelChecksItsParametersAndItsMatrix) {
  using Direction = HybridGaussSeidelSmoother::Direction;
  EXPECT_THROW(HybridGaussSeidelSmoother({Direction::symmetric, 0, true}), ConfigError);
  const Backend backend = test::backend_under_test();
  HybridGaussSeidelSmoother smoother;
  EXPECT_FALSE(smoother.supports_recording());  // not set up
  EXPECT_EQ(smoother.name(), "hybrid_gauss_seidel (symmetric, blocks of 32 rows, l1)");
  EXPECT_EQ(HybridGaussSeidelSmoother({Direction::backward, 7, false}).name(),
            "hybrid_gauss_seidel (backward, blocks of 7 rows)");
  // a_99 = 0 in 2D Poisson 8^2: without l1 the diagonal of row 10 (1-based) is zero, with l1 as
  // well when all its couplings lie in its block (32 rows), not with blocks of 4 rows (rows 1 and
  // 17 lie outside rows 8 to 11: d = 2).
  CooMatrix coo = poisson2d(8);
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    if (coo.row_idx[k] == 9 && coo.col_idx[k] == 9) coo.values[k] = 0.0;
  }
  const CsrMatrix zero_diagonal = CsrMatrix::from_coo(backend, coo);
  HybridGaussSeidelSmoother plain({Direction::symmetric, 4, false});
  HybridGaussSeidelSmoother l1_small_blocks({Direction::symmetric, 4, true});
  for (Smoother* s : std::initializer_list<Smoother*>{&plain, &smoother}) {
    try {
      s->setup(zero_diagonal);
      ADD_FAILURE() << "no InvalidInput";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("row 10 "), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(l1_small_blocks.setup(zero_diagonal));
  const CsrMatrix A = CsrMatrix::from_coo(backend, poisson2d(8));
  smoother.setup(A);
  EXPECT_TRUE(smoother.supports_recording());
  Vector short_b(backend, 10), x(backend, 64);
  EXPECT_THROW(smoother.smooth(short_b, x, false), DimensionMismatch);
}

TEST(VCycle, IsASymmetricPositiveOperatorWithEverySmoother) {
  // v·M u = u·M v and u·M u > 0 for random u, v: what PCG needs from a preconditioner.
  const Backend backend = test::backend_under_test();
  const CsrMatrix A = CsrMatrix::from_coo(backend, poisson3d(14));
  const auto n = static_cast<std::size_t>(A.num_rows());
  const Vector u = Vector::from_host(backend, test::random_vector(n, 21));
  const Vector v = Vector::from_host(backend, test::random_vector(n, 22));
  Vector Mu(backend, n), Mv(backend, n);
  using Kind = AmgPreconditioner::SmootherKind;
  for (const Kind kind : {Kind::gauss_seidel, Kind::jacobi, Kind::l1_jacobi, Kind::chebyshev,
                          Kind::hybrid_gauss_seidel}) {
    for (const CycleType cycle : {CycleType::v, CycleType::w, CycleType::f}) {
      SCOPED_TRACE(std::to_string(int(kind)) + " " + to_string(cycle));
      AmgPreconditioner::Parameters p;
      p.smoother = kind;
      p.cycle.cycle = cycle;
      p.cycle.pre_sweeps = 2;
      p.cycle.post_sweeps = 2;
      AmgPreconditioner M(p);
      M.setup(A);

      M.apply(u, Mu);
      M.apply(v, Mv);

      const double vMu = dot(v, Mu), uMv = dot(u, Mv);
      EXPECT_NEAR(vMu, uMv, 1e-11 * std::max(dot(u, Mu), dot(v, Mv)));
      EXPECT_GT(dot(u, Mu), 0.0);
    }
  }
}

/// -Laplace(u) + c . grad(u) on an n x n grid, first-order upwind convection with Peclet number
/// `peclet` per cell in x and half that in y: nonsymmetric, an M-matrix.
CooMatrix convection_diffusion(index_t n, double peclet) {
  CooMatrix coo;
  coo.num_rows = coo.num_cols = n * n;
  const double cx = peclet, cy = 0.5 * peclet;
  for (index_t j = 0; j < n; ++j) {
    for (index_t i = 0; i < n; ++i) {
      const index_t row = j * n + i;
      if (j > 0) coo.push_back(row, row - n, -1.0 - cy);
      if (i > 0) coo.push_back(row, row - 1, -1.0 - cx);
      coo.push_back(row, row, 4.0 + cx + cy);
      if (i + 1 < n) coo.push_back(row, row + 1, -1.0);
      if (j + 1 < n) coo.push_back(row, row + n, -1.0);
    }
  }
  return coo;
}

TEST(NonsymmetricAmg, PreconditionsConvectionDiffusionForBicgstabAndGmres) {
  // With upwinding the strong couplings follow the flow. Measured 4 BiCGStab and 7 GMRES(30)
  // iterations with the default AMG (Gauss-Seidel, R = P^T); bands 8 and 12.
  const CooMatrix coo = convection_diffusion(64, 2.0);
  const Backend backend = test::backend_under_test();
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  const std::vector<double> x_star = test::random_vector(coo.num_rows, 4);
  std::vector<double> b(x_star.size(), 0.0);
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    b[coo.row_idx[k]] += coo.values[k] * x_star[coo.col_idx[k]];
  }
  StopCriteria criteria;
  criteria.max_iterations = 300;
  criteria.relative_tolerance = 1e-8;
  AmgPreconditioner M;
  M.setup(A);
  const std::unique_ptr<KrylovSolver> solvers[] = {std::make_unique<Bicgstab>(criteria),
                                                   std::make_unique<Gmres>(criteria, 30, false)};
  const int bands[] = {8, 12};
  for (int s = 0; s < 2; ++s) {
    const KrylovSolver* solver = solvers[s].get();
    SCOPED_TRACE(solver->name());
    const Vector bv = Vector::from_host(backend, b);
    Vector x = Vector::constant(backend, b.size(), 0.0);

    const SolveReport report = solver->solve(A, M, bv, x);

    EXPECT_EQ(report.status, SolveStatus::converged) << report.reason;
    EXPECT_LE(report.iterations, bands[s]);
    EXPECT_LE(test::true_relative_residual(coo, x.to_host(), b), 1e-7);
    RecordProperty(solver->name(), report.iterations);
  }
}

}  // namespace
}  // namespace kryflow
