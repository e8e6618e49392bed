// Sequences of systems with one pattern and drifting values: the reuse policy, the synchronous
// (deterministic) and asynchronous rebuilds of AINV, the builder thread's end, and the drifting
// generator they run on.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kryflow/amg/amg.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/preconditioners/approximate_inverse.hpp"
#include "kryflow/preconditioners/jacobi.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "kryflow/solvers/sequence.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

StopCriteria criteria() {
  StopCriteria c;
  // 1e-9 on the recursive residual, so that the true one (checked below) is within 1e-8.
  c.relative_tolerance = 1e-9;
  c.max_iterations = 2000;
  return c;
}

/// The steps of a drifting sequence on an n^3 grid: every system's matrix and right-hand side.
struct Drift {
  std::vector<CooMatrix> matrices;
  std::vector<std::vector<double>> rhs;
};

Drift drift(index_t n, int steps, double speed) {
  Drift d;
  for (int k = 0; k < steps; ++k) {
    std::vector<double> b;
    d.matrices.push_back(drifting_diffusion(n, k, speed, 3.0, &b));
    d.rhs.push_back(std::move(b));
  }
  return d;
}

/// Runs the sequence with `M` under `policy`: one CsrMatrix updated in place, the previous
/// solution as the initial guess; checks every system's true residual; returns the steps and
/// the last solution.
struct SequenceRun {
  std::vector<SequenceStep> steps;
  std::vector<std::vector<double>> solutions;
};

SequenceRun run(const Drift& d, Preconditioner& M, ReusePolicy policy,
                bool wait_for_builder = false) {
  const Backend backend = test::backend_under_test();
  CsrMatrix A = CsrMatrix::from_coo(backend, d.matrices[0]);
  Cg cg(criteria());
  SequenceSolver sequence(cg, M, policy);
  Vector x = Vector::constant(backend, d.rhs[0].size(), 0.0);
  SequenceRun r;
  for (std::size_t k = 0; k < d.matrices.size(); ++k) {
    if (k > 0) A.update_values(Array<double>::from_host(backend, d.matrices[k].values));
    const Vector b = Vector::from_host(backend, d.rhs[k]);
    const SequenceStep step = sequence.solve(A, b, x);
    EXPECT_EQ(step.report.status, SolveStatus::converged)
        << "system " << k << ": " << step.report.reason;
    const std::vector<double> xh = x.to_host();
    EXPECT_LE(test::true_relative_residual(d.matrices[k], xh, d.rhs[k]), 1e-8) << "system " << k;
    r.steps.push_back(step);
    r.solutions.push_back(xh);
    if (wait_for_builder && step.rebuild_started) {
      // The test (not the sequence) waits for the builder, so that the next solve must swap.
      while (sequence.builder_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  sequence.finish();
  EXPECT_FALSE(sequence.builder_running());
  return r;
}

TEST(Sequence, ReusePolicyParsesItsTextAndRejectsTheRest) {
  EXPECT_EQ(ReusePolicy::parse("never").to_string(), "never");
  EXPECT_EQ(ReusePolicy::parse("always").rebuild_every, 1);
  const ReusePolicy both = ReusePolicy::parse("every:5,growth:1.5");
  EXPECT_EQ(both.rebuild_every, 5);
  EXPECT_EQ(both.iteration_growth, 1.5);
  EXPECT_EQ(both.to_string(), "every:5,growth:1.5");
  EXPECT_EQ(ReusePolicy::parse("growth:2").to_string(), "growth:2");
  for (const char* bad : {"", "every", "every:0", "every:x", "growth:1", "growth:0.5", "often:3",
                          "every:3,", "every:2.5"}) {
    EXPECT_THROW(ReusePolicy::parse(bad), ConfigError) << bad;
  }
  Cg cg(criteria());
  JacobiPreconditioner M;
  ReusePolicy negative;
  negative.rebuild_every = -1;
  EXPECT_THROW(SequenceSolver(cg, M, negative), ConfigError);
}

TEST(Sequence, DriftingDiffusionKeepsThePatternAndChangesTheValues) {
  const index_t n = 9;
  std::vector<double> b0, b5;
  const CooMatrix A0 = drifting_diffusion(n, 0, 0.05, 3.0, &b0);
  const CooMatrix A5 = drifting_diffusion(n, 5, 0.05, 3.0, &b5);
  const CooMatrix P = poisson3d(n);
  ASSERT_EQ(A0.num_entries(), P.num_entries());
  EXPECT_EQ(A0.row_idx, P.row_idx);
  EXPECT_EQ(A0.col_idx, P.col_idx);
  EXPECT_EQ(A5.col_idx, P.col_idx);
  EXPECT_NE(A0.values, A5.values);
  EXPECT_NE(b0, b5);
  ASSERT_EQ(b0.size(), static_cast<std::size_t>(n * n * n));
  // Symmetric, positive diagonal, weakly diagonally dominant (strictly at the boundary), and a
  // contrast of about 10^3 between the largest and the smallest diagonal.
  std::vector<double> diagonal(static_cast<std::size_t>(n * n * n)), off(diagonal.size());
  double largest = 0.0, smallest = 1e300;
  for (std::size_t k = 0; k < A0.num_entries(); ++k) {
    const index_t i = A0.row_idx[k], j = A0.col_idx[k];
    if (i == j) {
      diagonal[i] = A0.values[k];
      largest = std::max(largest, A0.values[k]);
      smallest = std::min(smallest, A0.values[k]);
    } else {
      off[i] += std::abs(A0.values[k]);
      EXPECT_LT(A0.values[k], 0.0);
    }
  }
  for (std::size_t i = 0; i < diagonal.size(); ++i) EXPECT_GE(diagonal[i], off[i] * (1 - 1e-14));
  EXPECT_GT(largest / smallest, 100.0);
  EXPECT_THROW(drifting_diffusion(n, -1), InvalidInput);
  EXPECT_THROW(drifting_diffusion(0, 0), InvalidInput);
}

TEST(Sequence, DeterministicRebuildsReproduceBitForBit) {
  const Drift d = drift(12, 7, 0.05);
  SequenceRun first, second;
  {
    AinvPreconditioner M;
    first = run(d, M, ReusePolicy::parse("every:3"));
  }
  {
    AinvPreconditioner M;
    second = run(d, M, ReusePolicy::parse("every:3"));
  }
  ASSERT_EQ(first.steps.size(), 7u);
  for (std::size_t k = 0; k < first.steps.size(); ++k) {
    EXPECT_EQ(first.steps[k].report.iterations, second.steps[k].report.iterations) << k;
    EXPECT_EQ(first.steps[k].action, second.steps[k].action) << k;
    EXPECT_EQ(first.solutions[k], second.solutions[k]) << "system " << k << " differs in bits";
  }
  // every:3: built, reused twice, rebuilt, reused twice, rebuilt.
  using A = PreconditionerAction;
  const std::vector<A> expected = {A::built,  A::reused, A::reused, A::rebuilt,
                                   A::reused, A::reused, A::rebuilt};
  for (std::size_t k = 0; k < expected.size(); ++k) EXPECT_EQ(first.steps[k].action, expected[k]);
}

TEST(Sequence, AsynchronousRebuildsConvergeEverySystemAndSwapInBetweenSolves) {
  const Drift d = drift(12, 8, 0.05);
  AinvPreconditioner M;
  ReusePolicy policy = ReusePolicy::parse("every:2");
  policy.asynchronous = true;
  const SequenceRun r = run(d, M, policy, /*wait_for_builder=*/true);
  using A = PreconditionerAction;
  EXPECT_EQ(r.steps[0].action, A::built);
  int started = 0, swapped = 0;
  for (std::size_t k = 1; k < r.steps.size(); ++k) {
    EXPECT_NE(r.steps[k].action, A::rebuilt) << "the host rebuild must not run synchronously";
    if (r.steps[k].rebuild_started) ++started;
    if (r.steps[k].action == A::swapped_in) {
      ++swapped;
      EXPECT_TRUE(r.steps[k - 1].rebuild_started) << "system " << k;
    }
  }
  EXPECT_GE(started, 2);
  EXPECT_EQ(swapped, started - (r.steps.back().rebuild_started ? 1 : 0));
}

TEST(Sequence, FinishStopsTheBuilderThreadAndLeavesNoneRunning) {
  // A host rebuild of a larger system is asked for, then the sequence ends at once: finish()
  // stops the thread (its result dropped) and joins it.
  const index_t n = 36;
  std::vector<double> b;
  const CooMatrix A0 = drifting_diffusion(n, 0, 0.05, 3.0, &b);
  const Backend backend = test::backend_under_test();
  CsrMatrix A = CsrMatrix::from_coo(backend, A0);
  Cg cg(criteria());
  AinvPreconditioner M;
  ReusePolicy policy = ReusePolicy::parse("always");
  policy.asynchronous = true;
  SequenceSolver sequence(cg, M, policy);
  Vector x = Vector::constant(backend, b.size(), 0.0);
  const Vector bv = Vector::from_host(backend, b);
  sequence.solve(A, bv, x);
  A.update_values(Array<double>::from_host(backend, drifting_diffusion(n, 1).values));
  const SequenceStep step = sequence.solve(A, bv, x);
  EXPECT_TRUE(step.rebuild_started);
  sequence.finish();
  EXPECT_FALSE(sequence.builder_running());
  ASSERT_EQ(sequence.builder_runs().size(), 1u);
  EXPECT_FALSE(sequence.builder_runs()[0].installed);
  EXPECT_THROW(sequence.solve(A, bv, x), InvalidInput);
}

TEST(Sequence, PreconditionersWithoutAHostFactorizationRebuildSynchronously) {
  // AMG's value-only re-setup runs where the data lives: asynchronous mode rebuilds it before
  // every solve that asks for it. (AMG's finest level is A itself, so a reused hierarchy would
  // mix A's new values with the smoothers' old diagonal and eigenvalue estimate: with this
  // drift its Chebyshev smoother diverges, hence a rebuild for every system.)
  const Drift d = drift(10, 5, 0.1);
  AmgPreconditioner::Parameters parameters;  // smoothers with kernels on every backend
  parameters.coarsening = AmgPreconditioner::Coarsening::pmis;
  parameters.smoother = AmgPreconditioner::SmootherKind::chebyshev;
  AmgPreconditioner M(parameters);
  ReusePolicy policy = ReusePolicy::parse("always");
  policy.asynchronous = true;
  const SequenceRun r = run(d, M, policy);
  using A = PreconditionerAction;
  EXPECT_EQ(r.steps[0].action, A::built);
  for (std::size_t k = 1; k < r.steps.size(); ++k) EXPECT_EQ(r.steps[k].action, A::rebuilt);
  for (const SequenceStep& step : r.steps) EXPECT_FALSE(step.rebuild_started);
}

TEST(Sequence, IterationGrowthTriggersARebuild) {
  // A fast drift: the preconditioner of system 0 degrades; growth:1.2 rebuilds it.
  const Drift d = drift(12, 8, 0.15);
  AinvPreconditioner never_rebuilt, rebuilt_on_growth;
  const SequenceRun never = run(d, never_rebuilt, ReusePolicy::parse("never"));
  const SequenceRun growth = run(d, rebuilt_on_growth, ReusePolicy::parse("growth:1.2"));
  int rebuilds = 0, never_total = 0, growth_total = 0;
  int baseline = growth.steps[0].report.iterations;  // of the last fresh preconditioner
  for (std::size_t k = 0; k < growth.steps.size(); ++k) {
    const int previous = k > 0 ? growth.steps[k - 1].report.iterations : 0;
    if (growth.steps[k].action == PreconditionerAction::rebuilt) {
      ++rebuilds;
      EXPECT_GT(previous, 1.2 * baseline) << "system " << k << " rebuilt without growth";
      baseline = growth.steps[k].report.iterations;
    } else if (k > 0) {
      EXPECT_LE(previous, 1.2 * baseline) << "system " << k << " not rebuilt after growth";
    }
    never_total += never.steps[k].report.iterations;
    growth_total += growth.steps[k].report.iterations;
  }
  EXPECT_GE(rebuilds, 1);
  EXPECT_LT(growth_total, never_total);
}

TEST(Sequence, AnotherPatternIsRejected) {
  const Backend backend = test::backend_under_test();
  Cg cg(criteria());
  JacobiPreconditioner M;
  SequenceSolver sequence(cg, M, ReusePolicy{});
  const CsrMatrix A = CsrMatrix::from_coo(backend, poisson3d(5));
  const CsrMatrix B = CsrMatrix::from_coo(backend, poisson3d(6));
  Vector x = Vector::constant(backend, 125, 0.0);
  sequence.solve(A, Vector::constant(backend, 125, 1.0), x);
  Vector y = Vector::constant(backend, 216, 0.0);
  EXPECT_THROW(sequence.solve(B, Vector::constant(backend, 216, 1.0), y), DimensionMismatch);
}

}  // namespace
}  // namespace kryflow
