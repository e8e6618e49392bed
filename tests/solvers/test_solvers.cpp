// Krylov solvers on model problems: true residuals, agreement with the reference backend, and
// the status of every failure mode (breakdown, NaN, divergence, stagnation, iteration limit).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kryflow/core/error.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/preconditioners/jacobi.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "kryflow/solvers/solve_hint.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

enum class Method { cg, bicgstab, gmres, fgmres };

constexpr Method kAllMethods[] = {Method::cg, Method::bicgstab, Method::gmres, Method::fgmres};

std::unique_ptr<KrylovSolver> make_solver(Method method, StopCriteria criteria, int restart = 30) {
  switch (method) {
    case Method::cg:
      return std::make_unique<Cg>(criteria);
    case Method::bicgstab:
      return std::make_unique<Bicgstab>(criteria);
    case Method::gmres:
      return std::make_unique<Gmres>(criteria, restart, false);
    case Method::fgmres:
      return std::make_unique<Gmres>(criteria, restart, true);
  }
  return nullptr;
}

const char* method_name(Method method) {
  switch (method) {
    case Method::cg:
      return "cg";
    case Method::bicgstab:
      return "bicgstab";
    case Method::gmres:
      return "gmres";
    case Method::fgmres:
      return "fgmres";
  }
  return "?";
}

struct Outcome {
  SolveReport report;
  std::vector<double> x;
};

/// solver.solve(A, M, b, x) from x0 = 0 on A's backend (M set up for A).
Outcome solve_from_zero(const KrylovSolver& solver, const LinearOperator& A,
                        const Preconditioner& M, const std::vector<double>& b) {
  const Backend& backend = A.backend();
  Vector x = Vector::constant(backend, b.size(), 0.0);
  Outcome out;
  out.report = solver.solve(A, M, Vector::from_host(backend, b), x);
  out.x = x.to_host();
  return out;
}

/// Solves coo x = b from the initial guess x0 (zero when empty).
Outcome run(const Backend& backend, const CooMatrix& coo, const std::vector<double>& b,
            Method method, bool jacobi, StopCriteria criteria = {},
            const std::vector<double>& x0 = {}, int restart = 30) {
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  std::unique_ptr<Preconditioner> M;
  if (jacobi) {
    M = std::make_unique<JacobiPreconditioner>();
  } else {
    M = std::make_unique<IdentityPreconditioner>();
  }
  M->setup(A);
  const Vector bv = Vector::from_host(backend, b);
  Vector x = x0.empty() ? Vector::constant(backend, b.size(), 0.0) : Vector::from_host(backend, x0);
  Outcome out;
  out.report = make_solver(method, criteria, restart)->solve(A, *M, bv, x);
  out.x = x.to_host();
  return out;
}

/// A diagonal matrix.
CooMatrix diagonal(const std::vector<double>& d) {
  CooMatrix coo;
  coo.num_rows = coo.num_cols = static_cast<index_t>(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) {
    coo.push_back(static_cast<index_t>(i), static_cast<index_t>(i), d[i]);
  }
  return coo;
}

/// The reason's "at iteration k" must quote report.iterations.
bool reason_quotes_iterations(const SolveReport& report) {
  return report.reason.find("at iteration " + std::to_string(report.iterations)) !=
         std::string::npos;
}

class SolverOnPoisson : public ::testing::TestWithParam<std::tuple<Method, bool>> {};

TEST_P(SolverOnPoisson, ReachesTrueResidualAndMatchesReferenceIterations) {
  // Arrange: 3D Poisson 12^3 (1728 unknowns) with a random right-hand side.
  const auto [method, jacobi] = GetParam();
  const CooMatrix coo = poisson3d(12);
  const std::vector<double> b = test::random_vector(static_cast<std::size_t>(coo.num_rows));
  StopCriteria criteria;
  criteria.relative_tolerance = 1e-10;
  criteria.max_iterations = 500;

  // Act
  const Outcome tested = run(test::backend_under_test(), coo, b, method, jacobi, criteria);
  const Outcome reference = run(Backend::reference(), coo, b, method, jacobi, criteria);

  // Assert: converged, true residual independently computed below 1e-9 (tolerance 1e-10 plus
  // rounding headroom), and the backend needs the same iterations as the oracle (which sums in
  // a different order) within one for CG and GMRES, whose residuals decrease monotonically, and
  // within an eighth (plus one) for BiCGStab, whose irregular residual history lets rounding
  // move the crossing of the tolerance by a few steps (measured on this problem: 40 to 47
  // iterations, differences up to 5, over 600 random right-hand sides). The cpu and cuda
  // backends sum in the same order and must agree exactly (SolversCrossBackend below).
  EXPECT_EQ(tested.report.status, SolveStatus::converged) << tested.report.reason;
  EXPECT_LT(test::true_relative_residual(coo, tested.x, b), 1e-9);
  EXPECT_NEAR(tested.report.true_relative_residual(),
              test::true_relative_residual(coo, tested.x, b), 1e-12);
  const int slack = method == Method::bicgstab ? reference.report.iterations / 8 + 1 : 1;
  EXPECT_LE(std::abs(tested.report.iterations - reference.report.iterations), slack)
      << "backend " << tested.report.iterations << " reference " << reference.report.iterations;
  EXPECT_EQ(tested.report.residual_history.size(),
            static_cast<std::size_t>(tested.report.iterations) + 1);
}

INSTANTIATE_TEST_SUITE_P(AllMethods, SolverOnPoisson,
                         ::testing::Combine(::testing::Values(Method::cg, Method::bicgstab,
                                                              Method::gmres, Method::fgmres),
                                            ::testing::Bool()));

TEST(Cg, JacobiPcgOnFloat32PoissonConvergesWithTheReferenceIterations) {
  // Arrange: 3D Poisson 16^3 with a stencil scaled by 1/3 (values not exactly floats), stored
  // in float32; a random right-hand side.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  CooMatrix coo = poisson3d(16);
  for (double& v : coo.values) v /= 3.0;
  CooMatrix rounded = coo;  // the matrix the solver sees: every value rounded to float
  for (double& v : rounded.values) v = static_cast<double>(static_cast<float>(v));
  const std::vector<double> b = test::random_vector(static_cast<std::size_t>(coo.num_rows), seed);
  StopCriteria criteria;
  criteria.relative_tolerance = 1e-10;
  criteria.max_iterations = 500;
  auto solve = [&](const Backend& backend) {
    const CsrMatrix A = CsrMatrix::from_coo(backend, coo, Precision::float32);
    JacobiPreconditioner M;
    M.setup(A);
    return solve_from_zero(Cg(criteria), A, M, b);
  };

  // Act
  const Outcome tested = solve(test::backend_under_test());
  const Outcome reference = solve(Backend::reference());

  // Assert: converged; the true residual, in double against the float-rounded matrix, below
  // 1e-8; the same iterations as the oracle.
  EXPECT_EQ(tested.report.status, SolveStatus::converged) << tested.report.reason;
  EXPECT_LT(test::true_relative_residual(rounded, tested.x, b), 1e-8);
  EXPECT_EQ(tested.report.iterations, reference.report.iterations);
}

TEST(Cg, IterationCountOnPoisson2dIsInTheExpectedBand) {
  // Unpreconditioned CG on the 5-point Laplacian needs O(n) iterations: for n = 32 and a
  // reduction of 1e-8, between 50 and 120 (cond ~ 4/(pi h)^2 ~ 440, sqrt ~ 21, ln(2e8) ~ 19).
  const CooMatrix coo = poisson2d(32);
  const std::vector<double> b = test::random_vector(static_cast<std::size_t>(coo.num_rows));
  const Outcome out = run(test::backend_under_test(), coo, b, Method::cg, false);
  EXPECT_EQ(out.report.status, SolveStatus::converged);
  EXPECT_GE(out.report.iterations, 50);
  EXPECT_LE(out.report.iterations, 120);
}

/// 3D Poisson on n^3 points with each diagonal entry scaled by a random factor in [1, 3]
/// (so that Jacobi matters).
CooMatrix jittered_poisson3d(index_t n, std::uint64_t seed) {
  CooMatrix coo = poisson3d(n);
  const std::vector<double> jitter =
      test::random_vector(static_cast<std::size_t>(coo.num_rows), seed);
  for (std::size_t k = 0; k < coo.values.size(); ++k) {
    if (coo.row_idx[k] == coo.col_idx[k])
      coo.values[k] *= 2.0 + jitter[static_cast<std::size_t>(coo.row_idx[k])];
  }
  return coo;
}

/// Point Jacobi as a general preconditioner (no inverse_diagonal, so CG does not fuse it) that
/// counts its applications; `modify(k, r, z)`, when set, then changes the z = D^-1 r of
/// application k (0-based).
class GeneralJacobi final : public Preconditioner {
 public:
  using Modify = std::function<void(int k, const Vector& r, Vector& z)>;
  explicit GeneralJacobi(Modify modify = {}) : modify_(std::move(modify)) {}
  void setup(const LinearOperator& A) override {
    jacobi_.setup(A);
    A_ = &A;
  }
  std::string name() const override { return modify_ ? "modified_jacobi" : "jacobi_unfused"; }
  index_t num_rows() const override { return A_->num_rows(); }
  index_t num_cols() const override { return A_->num_cols(); }
  const Backend& backend() const override { return A_->backend(); }
  void apply(const Vector& r, Vector& z) const override {
    jacobi_.apply(r, z);
    const int k = calls_++;
    if (modify_) modify_(k, r, z);
  }
  using Preconditioner::apply;
  int calls() const { return calls_; }

 private:
  Modify modify_;
  JacobiPreconditioner jacobi_;
  const LinearOperator* A_ = nullptr;
  mutable int calls_ = 0;
};

/// z scaled at every application by a fresh pseudo-random factor in [0.3, 1.7] per row: a
/// symmetric positive definite preconditioner that changes between iterations.
GeneralJacobi::Modify random_row_scaling() {
  return [](int k, const Vector& r, Vector& z) {
    std::vector<double> factor = test::random_vector(r.size(), static_cast<std::uint64_t>(k) + 1);
    for (double& f : factor) f = 1.0 + 0.7 * f;  // random_vector is in [-1, 1]
    Vector scaled(z.backend(), r.size());
    pointwise_multiply(Vector::from_host(z.backend(), factor), z, scaled);
    copy(scaled, z);
  };
}

/// From application `flip_at` on (0-based), z = scale D^-1 r (-1: a preconditioner that changed
/// sign; 0: one that vanished).
GeneralJacobi::Modify scaled_from(int flip_at, double scale) {
  return [flip_at, scale](int k, const Vector& r, Vector& z) {
    if (k >= flip_at) axpby(0.0, r, scale, z);  // z = scale z
  };
}

TEST(Cg, FlexibleTakesPcgIterationsWithAFixedPreconditionerAndConvergesWithAVaryingOne) {
  // Arrange: 3D Poisson 14^3 with a jittered diagonal (so that Jacobi matters), random b.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const CooMatrix coo = jittered_poisson3d(14, seed);
  const std::vector<double> b =
      test::random_vector(static_cast<std::size_t>(coo.num_rows), seed + 1);
  const Backend backend = test::backend_under_test();
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  StopCriteria criteria;
  criteria.relative_tolerance = 1e-10;
  criteria.max_iterations = 2000;
  auto solve = [&](bool flexible, bool varying) {
    GeneralJacobi M(varying ? random_row_scaling() : GeneralJacobi::Modify{});
    M.setup(A);
    return solve_from_zero(Cg(criteria, flexible), A, M, b);
  };

  // Act
  const Outcome pcg_fixed = solve(false, false);
  const Outcome fcg_fixed = solve(true, false);
  const Outcome pcg_varying = solve(false, true);
  const Outcome fcg_varying = solve(true, true);

  // Assert: the same iterations (to rounding) with a fixed symmetric M; with a varying M,
  // flexible CG converges by the true residual in fewer iterations than PCG, whose
  // directions lose their A-orthogonality.
  EXPECT_EQ(Cg(criteria, true).name(), "fcg");
  ASSERT_EQ(pcg_fixed.report.status, SolveStatus::converged) << pcg_fixed.report.reason;
  ASSERT_EQ(fcg_fixed.report.status, SolveStatus::converged) << fcg_fixed.report.reason;
  EXPECT_LE(std::abs(fcg_fixed.report.iterations - pcg_fixed.report.iterations), 1);
  ASSERT_EQ(fcg_varying.report.status, SolveStatus::converged) << fcg_varying.report.reason;
  EXPECT_LE(test::true_relative_residual(coo, fcg_varying.x, b), 1e-10 * (1 + 1e-6));
  EXPECT_LE(test::true_relative_residual(coo, fcg_fixed.x, b), 1e-10 * (1 + 1e-6));
  const int pcg_iterations = pcg_varying.report.status == SolveStatus::converged
                                 ? pcg_varying.report.iterations
                                 : criteria.max_iterations;
  EXPECT_LT(fcg_varying.report.iterations, pcg_iterations)
      << "pcg " << pcg_varying.report.iterations << " (" << pcg_varying.report.reason << ")";
}

TEST(Cg, GeneralPreconditionerIsAppliedOncePerIterationAndNotAfterTheLast) {
  // 3D Poisson 10^3 with a jittered diagonal, random b; PCG and FCG, windows of 1 and 3.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const CooMatrix coo = jittered_poisson3d(10, seed);
  const std::vector<double> b =
      test::random_vector(static_cast<std::size_t>(coo.num_rows), seed + 1);
  const Backend backend = test::backend_under_test();
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  for (const bool flexible : {false, true}) {
    for (const int check_every : {1, 3}) {
      SCOPED_TRACE(std::string(flexible ? "fcg" : "pcg") + ", check_every " +
                   std::to_string(check_every));
      auto solve = [&](int max_iterations, GeneralJacobi& M) {
        StopCriteria criteria;
        criteria.relative_tolerance = max_iterations < 100 ? 1e-15 : 1e-10;
        criteria.max_iterations = max_iterations;
        Cg solver(criteria, flexible);
        IterationOptions options = solver.options();
        options.check_every = check_every;
        solver.set_options(options);
        M.setup(A);
        return solve_from_zero(solver, A, M, b);
      };
      // Act: stopped by an iteration limit (every queued iteration is one of the report's), then
      // to convergence.
      GeneralJacobi limited_M;
      const Outcome limited = solve(7, limited_M);
      GeneralJacobi converged_M;
      const Outcome converged = solve(1000, converged_M);

      // Assert: M once per iteration, none before the first or after the last: 7 for 7
      // iterations (a z computed after the update would make 8); to convergence, at most the
      // window queued ahead of the host's last check (check_every) more.
      EXPECT_EQ(limited.report.status, SolveStatus::max_iterations) << limited.report.reason;
      EXPECT_EQ(limited.report.iterations, 7);
      EXPECT_EQ(limited_M.calls(), 7);
      ASSERT_EQ(converged.report.status, SolveStatus::converged) << converged.report.reason;
      EXPECT_GE(converged_M.calls(), converged.report.iterations);
      EXPECT_LE(converged_M.calls(), converged.report.iterations + check_every);
      EXPECT_LE(test::true_relative_residual(coo, converged.x, b), 1e-10 * (1 + 1e-6));
    }
  }
}

TEST(KrylovSolver, SetupRunsOneWindowAndLeavesTheSolvesUnchanged) {
  // 3D Poisson 10^3, random b; PCG with a counting Jacobi, windows of 3.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const CooMatrix coo = poisson3d(10);
  const std::vector<double> b = test::random_vector(static_cast<std::size_t>(coo.num_rows), seed);
  const Backend backend = test::backend_under_test();
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  StopCriteria criteria;
  criteria.relative_tolerance = 1e-9;
  auto make = [&] {
    auto solver = std::make_unique<Cg>(criteria, true);
    IterationOptions options = solver->options();
    options.check_every = 3;
    solver->set_options(options);
    return solver;
  };
  auto solve = [&](Cg& solver, const GeneralJacobi& M) { return solve_from_zero(solver, A, M, b); };
  GeneralJacobi cold_M;
  cold_M.setup(A);
  auto cold_solver = make();
  const Outcome cold = solve(*cold_solver, cold_M);

  // Act: setup (with a monitor that must not be called), then the same solve.
  GeneralJacobi M;
  M.setup(A);
  auto solver = make();
  int monitored = 0;
  solver->set_monitor([&](int, double, double) { ++monitored; });
  solver->setup(A, M);
  const int setup_calls = M.calls();
  const int monitored_in_setup = monitored;
  const Outcome warm = solve(*solver, M);

  // Assert: one window of M in setup, no monitor call; the criteria are back and the solve
  // after it has the cold solve's iterations and bits.
  EXPECT_EQ(setup_calls, 3);
  EXPECT_EQ(monitored_in_setup, 0);
  EXPECT_GT(monitored, 0);
  EXPECT_EQ(solver->criteria().max_iterations, criteria.max_iterations);
  EXPECT_EQ(solver->criteria().relative_tolerance, criteria.relative_tolerance);
  ASSERT_EQ(cold.report.status, SolveStatus::converged) << cold.report.reason;
  ASSERT_EQ(warm.report.status, SolveStatus::converged) << warm.report.reason;
  EXPECT_EQ(warm.report.iterations, cold.report.iterations);
  EXPECT_EQ(warm.x, cold.x);
  EXPECT_LE(test::true_relative_residual(coo, warm.x, b), 1e-9 * (1 + 1e-6));
  // A mismatched preconditioner is rejected as by solve.
  GeneralJacobi other;
  const CsrMatrix small = CsrMatrix::from_coo(backend, poisson3d(4));
  other.setup(small);
  EXPECT_THROW(solver->setup(A, other), DimensionMismatch);
  EXPECT_EQ(solver->criteria().max_iterations, criteria.max_iterations);  // restored after it
  EXPECT_EQ(solver->criteria().relative_tolerance, criteria.relative_tolerance);
  const int before = monitored;
  solve(*solver, M);
  EXPECT_GT(monitored, before);  // the monitor too
}

TEST(Cg, PreconditionerThatVanishesOrChangesSignIsReportedAtItsIteration) {
  const CooMatrix coo = poisson2d(12);
  const std::vector<double> b = test::random_vector(static_cast<std::size_t>(coo.num_rows), 7);
  const Backend backend = test::backend_under_test();
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  struct Case {
    int flip_at;
    double scale;
    int iterations;  // where the failure is reported
  };
  for (const bool flexible : {false, true}) {
    // z = 0 from the start (r0·z0 = 0), and z = -D^-1 r from the fourth application on.
    for (const Case c : {Case{0, 0.0, 0}, Case{3, -1.0, 3}}) {
      SCOPED_TRACE(std::string(flexible ? "fcg" : "pcg") + ", flip at " +
                   std::to_string(c.flip_at));
      GeneralJacobi M(scaled_from(c.flip_at, c.scale));
      M.setup(A);
      StopCriteria criteria;
      criteria.relative_tolerance = 1e-12;
      Vector x = Vector::constant(backend, b.size(), 0.0);
      const SolveReport report =
          Cg(criteria, flexible).solve(A, M, Vector::from_host(backend, b), x);
      EXPECT_EQ(report.status, SolveStatus::breakdown) << report.reason;
      EXPECT_EQ(report.iterations, c.iterations) << report.reason;
      EXPECT_NE(report.reason.find("r·z"), std::string::npos) << report.reason;
      EXPECT_NE(report.reason.find("the preconditioner is not definite"), std::string::npos)
          << report.reason;
      if (c.iterations == 0) {  // x untouched
        for (const double value : x.to_host()) EXPECT_EQ(value, 0.0);
      }
    }
  }
}

TEST(Cg, ReportsBreakdownOnIndefiniteMatrix) {
  // diag(1, -1, 1, -1, ...) is symmetric indefinite: p·Ap <= 0 must be reported, not thrown.
  CooMatrix coo;
  coo.num_rows = coo.num_cols = 10;
  for (index_t i = 0; i < 10; ++i) coo.push_back(i, i, i % 2 == 0 ? 1.0 : -1.0);
  std::vector<double> b(10, 1.0);
  const Outcome out = run(test::backend_under_test(), coo, b, Method::cg, false);
  EXPECT_EQ(out.report.status, SolveStatus::breakdown);
  EXPECT_NE(out.report.reason.find("not positive (or negative) definite"), std::string::npos);
  // The reason ends with what to try.
  EXPECT_TRUE(
      out.report.reason.ends_with("try --preset bicgstab_jacobi for a nonsymmetric or "
                                  "indefinite A"))
      << out.report.reason;
}

TEST(Solvers, ReportNanInRightHandSide) {
  const CooMatrix coo = poisson2d(5);
  std::vector<double> b = test::random_vector(25);
  b[7] = std::nan("");
  for (Method method : {Method::cg, Method::bicgstab, Method::gmres}) {
    const Outcome out = run(test::backend_under_test(), coo, b, method, true);
    EXPECT_EQ(out.report.status, SolveStatus::nan_detected) << out.report.reason;
  }
}

TEST(Solvers, ReportIterationLimit) {
  const CooMatrix coo = poisson3d(10);
  const std::vector<double> b = test::random_vector(1000);
  StopCriteria criteria;
  criteria.max_iterations = 3;
  for (Method method : {Method::cg, Method::bicgstab, Method::gmres}) {
    const Outcome out = run(test::backend_under_test(), coo, b, method, true, criteria);
    EXPECT_EQ(out.report.status, SolveStatus::max_iterations);
    EXPECT_EQ(out.report.iterations, 3);
  }
}

TEST(Solvers, ReportStagnation) {
  // A skew-symmetric system: the minimal residual of GMRES(1) cannot decrease (r·Ar = 0).
  CooMatrix coo;
  coo.num_rows = coo.num_cols = 2;
  coo.push_back(0, 1, 1.0);
  coo.push_back(1, 0, -1.0);
  StopCriteria criteria;
  criteria.stagnation_window = 20;
  criteria.max_iterations = 1000;
  const CsrMatrix A = CsrMatrix::from_coo(test::backend_under_test(), coo);
  IdentityPreconditioner M;
  M.setup(A);
  const Vector b = Vector::from_host(A.backend(), {1.0, 1.0});
  Vector x = Vector::constant(A.backend(), 2, 0.0);
  const SolveReport report = Gmres(criteria, 1, false).solve(A, M, b, x);
  EXPECT_EQ(report.status, SolveStatus::stagnated) << report.reason;
  EXPECT_LE(report.iterations, 25);
  EXPECT_NE(report.reason.find("; hint: restarted GMRES stalls"), std::string::npos)
      << report.reason;
  EXPECT_NE(report.reason.find("--preset bicgstab_jacobi"), std::string::npos) << report.reason;
}

TEST(Solvers, EveryUnconvergedStatusEndsWithAHint) {
  for (const char* solver : {"pcg", "bicgstab", "gmres", "fgmres", "other"}) {
    EXPECT_EQ(solve_hint(solver, SolveStatus::converged), "") << solver;
    for (const SolveStatus status :
         {SolveStatus::max_iterations, SolveStatus::breakdown, SolveStatus::diverged,
          SolveStatus::stagnated, SolveStatus::nan_detected}) {
      const std::string hint = solve_hint(solver, status);
      EXPECT_TRUE(hint.starts_with("hint: ")) << solver << " " << to_string(status) << ": " << hint;
      EXPECT_NE(hint.find("try"), std::string::npos) << hint;
    }
  }
  EXPECT_NE(solve_hint("bicgstab", SolveStatus::breakdown).find("--preset gmres_jacobi"),
            std::string::npos);
  EXPECT_NE(solve_hint("gmres", SolveStatus::breakdown).find("--pin-unknown 1"), std::string::npos);
  EXPECT_NE(solve_hint("pcg", SolveStatus::stagnated).find("solver.stagnation_window"),
            std::string::npos);
  EXPECT_NE(solve_hint("pcg", SolveStatus::stagnated, true).find("looser"), std::string::npos);
}

TEST(Solvers, ReportDivergence) {
  // Bicgstab on a matrix with a huge skew part and a tiny divergence factor.
  CooMatrix coo = test::random_sparse(200, 200, 20, false, 12345);
  for (index_t i = 0; i < 200; ++i) coo.push_back(i, i, 1e-3);
  StopCriteria criteria;
  criteria.divergence_factor = 1.5;
  criteria.max_iterations = 2000;
  const std::vector<double> b = test::random_vector(200, 99);
  const Outcome out = run(test::backend_under_test(), coo, b, Method::bicgstab, false, criteria);
  EXPECT_TRUE(out.report.status == SolveStatus::diverged ||
              out.report.status == SolveStatus::breakdown)
      << to_string(out.report.status) << ": " << out.report.reason;
}

TEST(Jacobi, RejectsZeroDiagonalNamingTheRow) {
  CooMatrix coo = poisson2d(4);
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    if (coo.row_idx[k] == 5 && coo.col_idx[k] == 5) coo.values[k] = 0.0;
  }
  const CsrMatrix A = CsrMatrix::from_coo(test::backend_under_test(), coo);
  JacobiPreconditioner M;
  try {
    M.setup(A);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("row 6"), std::string::npos) << e.what();
  }
}

TEST(Jacobi, RejectsNanDiagonal) {
  CooMatrix coo = poisson2d(4);
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    if (coo.row_idx[k] == 9 && coo.col_idx[k] == 9) coo.values[k] = std::nan("");
  }
  const CsrMatrix A = CsrMatrix::from_coo(test::backend_under_test(), coo);
  JacobiPreconditioner M;
  EXPECT_THROW(M.setup(A), InvalidInput);
}

TEST(Jacobi, RejectsAnOperatorWithoutItsDiagonal) {
  // A Jacobi preconditioner of a preconditioner: square, but it has no diagonal to give.
  const Backend backend = test::backend_under_test();
  const CsrMatrix A = CsrMatrix::from_coo(backend, poisson2d(3));
  IdentityPreconditioner identity;
  identity.setup(A);
  JacobiPreconditioner M;
  try {
    M.setup(identity);
    FAIL() << "expected NotSupported";
  } catch (const NotSupported& e) {
    EXPECT_NE(std::string(e.what()).find("diagonal"), std::string::npos) << e.what();
  }
}

TEST(Solvers, RejectNonSquareAndMismatchedSizes) {
  CooMatrix coo;
  coo.num_rows = 3;
  coo.num_cols = 4;
  coo.push_back(0, 0, 1.0);
  const Backend backend = test::backend_under_test();
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  IdentityPreconditioner M;
  M.setup(A);
  const Vector b = Vector::constant(backend, 3, 1.0);
  Vector x = Vector::constant(backend, 3, 0.0);
  EXPECT_THROW(Cg(StopCriteria{}).solve(A, M, b, x), DimensionMismatch);
  EXPECT_THROW(JacobiPreconditioner().setup(A), DimensionMismatch);
}

// --- b = 0

TEST(Solvers, ZeroRightHandSideGivesZeroSolutionWithoutIterating) {
  // Arrange: b = 0 and a nonzero initial guess; an absolute tolerance of 0 would otherwise make
  // the target 0.
  const CooMatrix coo = poisson2d(6);
  const std::vector<double> b(36, 0.0);
  const std::vector<double> x0 = test::random_vector(36, 5);
  for (const Method method : kAllMethods) {
    for (const bool jacobi : {false, true}) {
      SCOPED_TRACE(std::string(method_name(method)) + (jacobi ? " jacobi" : " identity"));
      // Act
      const Outcome out = run(test::backend_under_test(), coo, b, method, jacobi, {}, x0);
      // Assert: x = 0 exactly, converged at once, every norm 0 and no NaN.
      EXPECT_EQ(out.report.status, SolveStatus::converged) << out.report.reason;
      EXPECT_EQ(out.report.iterations, 0);
      EXPECT_EQ(out.x, std::vector<double>(36, 0.0));
      EXPECT_EQ(out.report.rhs_norm, 0.0);
      EXPECT_EQ(out.report.residual_norm, 0.0);
      EXPECT_EQ(out.report.true_residual_norm, 0.0);
      EXPECT_EQ(out.report.relative_residual(), 0.0);
      EXPECT_EQ(out.report.true_relative_residual(), 0.0);
      EXPECT_EQ(out.report.residual_history, std::vector<double>{0.0});
    }
  }
}

// --- Recursive residual drift

TEST(Solvers, RecursiveResidualDriftIsNotReportedAsConverged) {
  // Arrange: A = diag(1, 1e8, 1e16) repeated (100 unknowns). CG's recursive residual falls
  // below 1e-12 ||b|| in a few iterations while the true residual of its iterate stays near
  // 1e-9 ||b|| (the updates lose the accuracy of the 1e16 components): a "converged" status
  // would be false.
  std::vector<double> d;
  for (int i = 0; i < 100; ++i) d.push_back(std::pow(1e8, i % 3));
  const CooMatrix coo = diagonal(d);
  const std::vector<double> b = test::random_vector(100, 3);
  StopCriteria criteria;
  criteria.relative_tolerance = 1e-12;
  // Act
  const Outcome out = run(test::backend_under_test(), coo, b, Method::cg, false, criteria);
  // Assert: the true residual is far above the target, so the status is not converged and the
  // reason quotes both residuals.
  const double true_relative = test::true_relative_residual(coo, out.x, b);
  ASSERT_GT(true_relative, SolveReport::true_residual_slack * 1e-12);
  EXPECT_LE(out.report.relative_residual(), 1e-12);
  EXPECT_EQ(out.report.status, SolveStatus::stagnated) << out.report.reason;
  EXPECT_NE(out.report.reason.find("recursive residual"), std::string::npos);
  EXPECT_NE(out.report.reason.find("true residual"), std::string::npos);
  EXPECT_NE(out.report.reason.find("; hint: the attainable accuracy"), std::string::npos)
      << out.report.reason;
  EXPECT_NEAR(out.report.true_relative_residual(), true_relative, 1e-3 * true_relative);
}

// --- max_iterations

TEST(StopCriteria, ZeroIterationsOnlyComputesTheInitialResidual) {
  // Arrange: 2D Poisson with b = A x* for a known x*.
  const CooMatrix coo = poisson2d(6);
  const std::vector<double> x_star = test::random_vector(36, 21);
  std::vector<double> b(36, 0.0);
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    b[static_cast<std::size_t>(coo.row_idx[k])] +=
        coo.values[k] * x_star[static_cast<std::size_t>(coo.col_idx[k])];
  }
  StopCriteria criteria;
  criteria.max_iterations = 0;
  for (const Method method : kAllMethods) {
    SCOPED_TRACE(method_name(method));
    // Act: from x0 = 0, and from x0 = x*.
    const Outcome cold = run(test::backend_under_test(), coo, b, method, true, criteria);
    const Outcome warm = run(test::backend_under_test(), coo, b, method, true, criteria, x_star);
    // Assert: no iteration, x unchanged; converged only when r0 already meets the target.
    EXPECT_EQ(cold.report.status, SolveStatus::max_iterations) << cold.report.reason;
    EXPECT_EQ(cold.report.iterations, 0);
    EXPECT_EQ(cold.x, std::vector<double>(36, 0.0));
    EXPECT_EQ(cold.report.residual_history.size(), 1u);
    EXPECT_EQ(warm.report.status, SolveStatus::converged) << warm.report.reason;
    EXPECT_EQ(warm.report.iterations, 0);
    EXPECT_EQ(warm.x, x_star);
  }
}

TEST(StopCriteria, RejectsNegativeIterationLimit) {
  StopCriteria criteria;
  criteria.max_iterations = -1;
  EXPECT_THROW(criteria.validate(), ConfigError);
  EXPECT_THROW(Cg{criteria}, ConfigError);
  EXPECT_THROW(Gmres(criteria, 30, false), ConfigError);
}

TEST(StopCriteria, HugeIterationLimitDoesNotReserveAHugeHistory) {
  // max_iterations = 2^30 must not reserve 8 GiB of residual history up front.
  const CooMatrix coo = poisson2d(6);
  const std::vector<double> b = test::random_vector(36, 2);
  StopCriteria criteria;
  criteria.max_iterations = 1 << 30;
  for (const Method method : kAllMethods) {
    SCOPED_TRACE(method_name(method));
    const Outcome out = run(test::backend_under_test(), coo, b, method, true, criteria);
    EXPECT_EQ(out.report.status, SolveStatus::converged) << out.report.reason;
    EXPECT_LE(out.report.residual_history.capacity(), std::size_t{1} << 16);
  }
}

// --- NaN in the middle of a solve, and the iteration quoted by reasons

/// A CsrMatrix whose `poisoned_call`-th apply (1-based; residual and apply_dot go through apply
/// here) returns a NaN entry: a non-finite value that appears in the middle of a solve.
class NanOnApply final : public LinearOperator {
 public:
  NanOnApply(const CsrMatrix& A, int poisoned_call) : A_(A), poisoned_call_(poisoned_call) {}
  index_t num_rows() const override { return A_.num_rows(); }
  index_t num_cols() const override { return A_.num_cols(); }
  const Backend& backend() const override { return A_.backend(); }
  void apply(const Vector& x, Vector& y) const override {
    A_.apply(x, y);
    if (++calls_ == poisoned_call_) {
      std::vector<double> host = y.to_host();
      host[0] = std::nan("");
      copy(Vector::from_host(backend(), host), y);
    }
  }

 private:
  const CsrMatrix& A_;
  int poisoned_call_;
  mutable int calls_ = 0;
};

struct PoisonedSolve {
  SolveReport report;
  std::vector<double> x;
  std::vector<double> b;
  CooMatrix coo;
};

PoisonedSolve solve_poisoned(Method method, int poisoned_call) {
  PoisonedSolve out;
  out.coo = poisson3d(6);
  out.b = test::random_vector(216, 11);
  const CsrMatrix csr = CsrMatrix::from_coo(test::backend_under_test(), out.coo);
  const NanOnApply A(csr, poisoned_call);
  IdentityPreconditioner M;
  M.setup(csr);
  const Vector b = Vector::from_host(csr.backend(), out.b);
  Vector x = Vector::constant(csr.backend(), out.b.size(), 0.0);
  out.report = make_solver(method, StopCriteria{})->solve(A, M, b, x);
  out.x = x.to_host();
  return out;
}

TEST(Cg, NanInTheMiddleIsReportedAtTheIterationItHappened) {
  // Apply 1 is r0 = b - A x0, apply k + 1 is q = A p of iteration k: apply 4 poisons p·Ap of
  // iteration 3, after 2 completed iterations.
  const PoisonedSolve out = solve_poisoned(Method::cg, 4);
  EXPECT_EQ(out.report.status, SolveStatus::nan_detected) << out.report.reason;
  EXPECT_EQ(out.report.iterations, 2);
  EXPECT_TRUE(reason_quotes_iterations(out.report)) << out.report.reason;
}

TEST(Bicgstab, NonFiniteScalarIsNanDetectedNotBreakdown) {
  // Apply 1 is r0, then v = A p^ and t = A s^ per iteration: apply 4 poisons v (so r^·v) and
  // apply 5 poisons t (so t·t) of iteration 2, after 1 completed iteration.
  for (const int call : {4, 5}) {
    SCOPED_TRACE("poisoned apply " + std::to_string(call));
    const PoisonedSolve out = solve_poisoned(Method::bicgstab, call);
    EXPECT_EQ(out.report.status, SolveStatus::nan_detected) << out.report.reason;
    EXPECT_EQ(out.report.iterations, 1);
    EXPECT_TRUE(reason_quotes_iterations(out.report)) << out.report.reason;
    for (const double v : out.x) ASSERT_TRUE(std::isfinite(v)) << "x was updated with a NaN";
  }
}

TEST(Bicgstab, OverflowingScalarIsNanDetected) {
  // A = 1e308 I, b = 1: v = A p = 1e308 and r^·v = 10 x 1e308 overflows to inf.
  const CooMatrix coo = diagonal(std::vector<double>(10, 1e308));
  const std::vector<double> b(10, 1.0);
  const Outcome out = run(test::backend_under_test(), coo, b, Method::bicgstab, false);
  EXPECT_EQ(out.report.status, SolveStatus::nan_detected) << out.report.reason;
  EXPECT_TRUE(reason_quotes_iterations(out.report)) << out.report.reason;
}

// --- GMRES basis size and restart

TEST(Gmres, RestartBeyondTheSizeOfTheSystemUsesAtMostNBasisVectors) {
  // Arrange: 3D Poisson 5^3 (125 unknowns); restarts far beyond n, up to INT_MAX, must neither
  // overflow the Hessenberg indexing nor allocate restart + 1 vectors.
  const CooMatrix coo = poisson3d(5);
  const std::vector<double> b = test::random_vector(125, 7);
  StopCriteria criteria;
  criteria.relative_tolerance = 1e-10;
  for (const int restart : {126, 1000000000, std::numeric_limits<int>::max()}) {
    for (const Method method : {Method::gmres, Method::fgmres}) {
      SCOPED_TRACE(std::string(method_name(method)) + " restart " + std::to_string(restart));
      // Act
      const Outcome out =
          run(test::backend_under_test(), coo, b, method, true, criteria, {}, restart);
      // Assert
      EXPECT_EQ(out.report.status, SolveStatus::converged) << out.report.reason;
      EXPECT_LT(test::true_relative_residual(coo, out.x, b), 1e-9);
    }
  }
}

TEST(Gmres, RejectsARestartBelowOne) {
  for (const int restart : {0, -1, std::numeric_limits<int>::min()}) {
    EXPECT_THROW(Gmres(StopCriteria{}, restart, false), ConfigError) << restart;
    EXPECT_THROW(Gmres(StopCriteria{}, restart, true), ConfigError) << restart;
  }
}

// --- GMRES on singular and degenerate Hessenberg matrices

TEST(Gmres, SingularOperatorReportsBreakdownAndKeepsTheLeastSquaresSolution) {
  // Arrange: A = diag(1, 1, 0), b = (1, 1, 1). K_2(A, b) is invariant and H_2 is singular
  // (h_21 = 0 and det H = 0): the best x in the Krylov space is (1, 1, 0), whose residual
  // (0, 0, 1) is also the least-squares minimum over all x: ||b - Ax|| / ||b|| = 1/sqrt(3).
  const CooMatrix coo = diagonal({1.0, 1.0, 0.0});
  const std::vector<double> b = {1.0, 1.0, 1.0};
  for (const Method method : {Method::gmres, Method::fgmres}) {
    SCOPED_TRACE(method_name(method));
    // Act
    const Outcome out = run(test::backend_under_test(), coo, b, method, false);
    // Assert: a breakdown naming the singular Hessenberg matrix, and x = (1, 1, 0) kept.
    EXPECT_EQ(out.report.status, SolveStatus::breakdown) << out.report.reason;
    EXPECT_NE(out.report.reason.find("singular"), std::string::npos) << out.report.reason;
    EXPECT_TRUE(reason_quotes_iterations(out.report)) << out.report.reason;
    EXPECT_NEAR(test::true_relative_residual(coo, out.x, b), 1.0 / std::sqrt(3.0), 1e-12);
    EXPECT_NEAR(out.x[0], 1.0, 1e-12);
    EXPECT_NEAR(out.x[1], 1.0, 1e-12);
    EXPECT_NEAR(out.report.true_relative_residual(), 1.0 / std::sqrt(3.0), 1e-12);
  }
}

TEST(Gmres, SingularOperatorWithRepeatedEigenvaluesKeepsTheLeastSquaresSolution) {
  // Arrange: A = diag(1, 2, 3, 1, 2, 3, 0, 0, 0, 0) scaled by 1e-150 (the happy-breakdown and
  // rank tests must be relative, not absolute), b = 1. The Krylov space has dimension 4, the
  // least-squares minimum is ||(0, ..., 0, 1, 1, 1, 1)|| / ||b|| = 2 / sqrt(10).
  std::vector<double> d = {1, 2, 3, 1, 2, 3, 0, 0, 0, 0};
  for (double& v : d) v *= 1e-150;
  const CooMatrix coo = diagonal(d);
  const std::vector<double> b(10, 1.0);
  for (const Method method : {Method::gmres, Method::fgmres}) {
    SCOPED_TRACE(method_name(method));
    // Act
    const Outcome out = run(test::backend_under_test(), coo, b, method, false);
    // Assert
    EXPECT_EQ(out.report.status, SolveStatus::breakdown) << out.report.reason;
    EXPECT_NEAR(test::true_relative_residual(coo, out.x, b), 2.0 / std::sqrt(10.0), 1e-10);
    EXPECT_LE(out.report.iterations, 4);
  }
}

TEST(Gmres, HappyBreakdownOnABadlyScaledOperatorConverges) {
  // Arrange: A = 1e-100 diag(1, 2, 3) repeated: the Krylov space of b = 1 has dimension 3, so
  // h_{3,2} vanishes relative to ||A z_2|| (while both are far below any absolute threshold).
  std::vector<double> d;
  for (int i = 0; i < 12; ++i) d.push_back(1e-100 * (1 + i % 3));
  const CooMatrix coo = diagonal(d);
  const std::vector<double> b(12, 1.0);
  StopCriteria criteria;
  criteria.relative_tolerance = 1e-12;
  for (const Method method : {Method::gmres, Method::fgmres}) {
    SCOPED_TRACE(method_name(method));
    // Act
    const Outcome out = run(test::backend_under_test(), coo, b, method, false, criteria);
    // Assert
    EXPECT_EQ(out.report.status, SolveStatus::converged) << out.report.reason;
    EXPECT_LE(out.report.iterations, 3);
    EXPECT_LT(test::true_relative_residual(coo, out.x, b), 1e-12);
  }
}

TEST(Gmres, NanInTheMiddleKeepsTheProgressOfTheCycle) {
  // Apply 1 is r0, apply j + 2 is A z_j: apply 4 poisons the third Arnoldi step. x must hold the
  // least-squares solution over the first two columns, whose residual the history reports.
  for (const Method method : {Method::gmres, Method::fgmres}) {
    SCOPED_TRACE(method_name(method));
    const PoisonedSolve out = solve_poisoned(method, 4);
    EXPECT_EQ(out.report.status, SolveStatus::nan_detected) << out.report.reason;
    EXPECT_EQ(out.report.iterations, 2);
    EXPECT_TRUE(reason_quotes_iterations(out.report)) << out.report.reason;
    const double true_relative = test::true_relative_residual(out.coo, out.x, out.b);
    EXPECT_LT(true_relative, 0.9);
    EXPECT_NEAR(true_relative, out.report.residual_history.back() / out.report.rhs_norm, 1e-12);
  }
}

}  // namespace
}  // namespace kryflow

namespace kryflow {
namespace {

TEST(Backend, OutOfMemoryIsCatchableAndBackendStaysUsable) {
  // Arrange: a request far beyond any device or host memory (2^50 doubles = 8 PiB).
  const Backend backend = test::backend_under_test();
  // Act / Assert: a typed, catchable error carrying the request; the backend still works.
  try {
    Array<double> huge(backend, std::size_t{1} << 50);
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.bytes_requested(), (std::size_t{1} << 50) * sizeof(double));
  }
  const Vector v = Vector::constant(backend, 1000, 2.0);
  EXPECT_DOUBLE_EQ(norm2(v), std::sqrt(4000.0));
}

}  // namespace
}  // namespace kryflow

#ifdef KRYFLOW_TEST_BACKEND_IS_CUDA
namespace kryflow {
namespace {

TEST(SolversCrossBackend, CudaAndCpuTakeIdenticalIterationsAndGiveIdenticalBits) {
  // Every kernel gives the same bits on cpu and cuda, so whole solves must agree exactly.
  CooMatrix nonsymmetric = poisson3d(20);
  for (std::size_t k = 0; k < nonsymmetric.num_entries(); ++k) {
    if (nonsymmetric.col_idx[k] == nonsymmetric.row_idx[k] + 1) nonsymmetric.values[k] = -1.4;
  }
  const CooMatrix spd = poisson3d(20);
  const std::vector<double> b = test::random_vector(static_cast<std::size_t>(spd.num_rows));
  StopCriteria criteria;
  criteria.relative_tolerance = 1e-10;
  criteria.max_iterations = 5000;
  // GMRES(30) stagnates on this convection-like matrix; GMRES(60) converges in every trial.
  for (Method method : {Method::cg, Method::bicgstab, Method::gmres}) {
    SCOPED_TRACE(static_cast<int>(method));
    const CooMatrix& coo = method == Method::cg ? spd : nonsymmetric;
    const Outcome cuda = run(test::backend_under_test(), coo, b, method, true, criteria, {}, 60);
    const Outcome cpu = run(Backend::cpu(), coo, b, method, true, criteria, {}, 60);
    EXPECT_EQ(cuda.report.status, SolveStatus::converged) << cuda.report.reason;
    EXPECT_EQ(cuda.report.iterations, cpu.report.iterations);
    EXPECT_TRUE(cuda.x == cpu.x) << "solutions differ in their bits";
    EXPECT_TRUE(cuda.report.residual_history == cpu.report.residual_history);
  }
}

}  // namespace
}  // namespace kryflow
#endif
