// AMG with its hierarchy (P, R, A_1 .. A_L) stored in float: the conversion kernels against the
// reference, the smoothers and the dense coarse solver on float-stored level matrices (the bits
// of the same component on the float-rounded double matrix), PCG with a float hierarchy against
// the double one by the true residual ||b - A x|| / ||b|| computed on the host, the bytes the
// report counts, value-only re-setup and the configuration key. Each case runs on the
// reference backend and on the backend under test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/blas/blas.hpp"
#include "kryflow/amg/amg.hpp"
#include "kryflow/config/registry.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/multigrid/dense_solver.hpp"
#include "kryflow/multigrid/smoothers.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

using Parameters = AmgPreconditioner::Parameters;

std::vector<Backend> backends() {
  return {Backend::reference(), test::backend_under_test()};
}

/// AMG with PMIS and direct interpolation, `smoother` and `precision`.
Parameters pmis(AmgPreconditioner::SmootherKind smoother, Precision precision) {
  Parameters p;
  p.coarsening = AmgPreconditioner::Coarsening::pmis;
  p.smoother = smoother;
  p.hierarchy_precision = precision;
  return p;
}

struct Solve {
  int iterations = 0;
  double true_residual = 0.0;
};

/// PCG from x = 0 to the relative tolerance 1e-8 with M (already set up for A).
Solve pcg(const CooMatrix& coo, const CsrMatrix& A, const Preconditioner& M,
          const std::vector<double>& b) {
  StopCriteria criteria;
  criteria.max_iterations = 200;
  criteria.relative_tolerance = 1e-8;
  const Vector bv = Vector::from_host(A.backend(), b);
  Vector x = Vector::constant(A.backend(), b.size(), 0.0);
  const SolveReport report = Cg(criteria).solve(A, M, bv, x);
  EXPECT_EQ(report.status, SolveStatus::converged) << report.reason;
  return {report.iterations, test::true_relative_residual(coo, x.to_host(), b)};
}

std::vector<float> to_float(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}

/// Values of a float-stored matrix, as floats (exact).
std::vector<float> float_values(const CsrMatrix& m) {
  EXPECT_EQ(m.precision(), Precision::float32);
  return to_float(m.values_to_host());
}

// ---------------------------------------------------------------------------------------------

TEST(FloatConversion, RoundAndWidenMatchTheReferenceAndReportTheFirstOverflow) {
  std::vector<double> x = test::random_vector(10001, 3);
  x[17] = 1.0 / 3.0;
  x[18] = std::numeric_limits<double>::infinity();
  x[19] = std::nan("");
  x[20] = 3.0e38;  // in float range
  for (const Backend& backend : backends()) {
    SCOPED_TRACE(backend.name());
    const Array<double> xd = Array<double>::from_host(backend, x);
    Array<float> y(backend, x.size());
    EXPECT_EQ(kernels::blas::round_to_float(backend, xd.span(), y.span()), -1);
    const std::vector<float> rounded = y.to_host();
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i])) {
        EXPECT_TRUE(std::isnan(rounded[i]));
      } else {
        ASSERT_EQ(rounded[i], static_cast<float>(x[i])) << i;
      }
    }
    Array<double> widened(backend, x.size());
    kernels::blas::widen_to_double(backend, y.span(), widened.span());
    const std::vector<double> back = widened.to_host();
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!std::isnan(x[i])) ASSERT_EQ(back[i], static_cast<double>(rounded[i])) << i;
    }

    std::vector<double> overflowing = x;
    overflowing[5000] = -1e39;
    overflowing[7000] = 1e300;
    const Array<double> od = Array<double>::from_host(backend, overflowing);
    EXPECT_EQ(kernels::blas::round_to_float(backend, od.span(), y.span()), 5000);
    EXPECT_EQ(y.to_host()[5000], -std::numeric_limits<float>::infinity());
  }
}

TEST(FloatConversion, SetPrecisionAndUpdateValuesRoundOnTheBackendAndNameAnOverflow) {
  const CooMatrix coo = poisson2d(30);
  for (const Backend& backend : backends()) {
    SCOPED_TRACE(backend.name());
    CsrMatrix A = CsrMatrix::from_coo(backend, coo);
    const CsrMatrix expected = CsrMatrix::from_coo(backend, coo, Precision::float32);
    A.set_precision(Precision::float32);
    EXPECT_EQ(A.precision(), Precision::float32);
    EXPECT_EQ(A.values_to_host(), expected.values_to_host());
    EXPECT_THROW(A.values(), NotSupported);

    std::vector<double> values = test::random_vector(static_cast<std::size_t>(A.nnz()), 9);
    A.update_values(Array<double>::from_host(backend, values));
    EXPECT_EQ(float_values(A), to_float(values));
    const std::vector<double> before = A.values_to_host();
    values[7] = 1e39;
    try {
      A.update_values(Array<double>::from_host(backend, values));
      ADD_FAILURE() << "no InvalidInput";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("row 3, column"), std::string::npos) << e.what();
    }
    EXPECT_EQ(A.values_to_host(), before);  // unchanged

    A.set_precision(Precision::float64);
    EXPECT_EQ(A.precision(), Precision::float64);
    EXPECT_EQ(A.values().to_host(), before);
    const CsrMatrix F = A.with_precision(Precision::float32);
    EXPECT_EQ(F.values_to_host(), before);
  }
}

TEST(FloatConversion, SetPrecisionWithADeferredCheckWritesTheFirstOverflowToItsSlot) {
  const CooMatrix coo = poisson2d(30);
  for (const Backend& backend : backends()) {
    SCOPED_TRACE(backend.name());
    Array<unsigned int> slots(backend, 3);
    CsrMatrix A = CsrMatrix::from_coo(backend, coo);
    const CsrMatrix expected = CsrMatrix::from_coo(backend, coo, Precision::float32);
    A.set_precision(Precision::float32, slots.span().data());
    EXPECT_EQ(A.precision(), Precision::float32);
    EXPECT_EQ(A.values_to_host(), expected.values_to_host());
    A.set_precision(Precision::float32, slots.span().data() + 1);  // already float32: "none"

    CsrMatrix B = CsrMatrix::from_coo(backend, coo);
    std::vector<double> values = test::random_vector(static_cast<std::size_t>(B.nnz()), 10);
    values[7] = 1e39;
    values[90] = -2e39;
    B.update_values(Array<double>::from_host(backend, values));
    B.set_precision(Precision::float32, slots.span().data() + 2);  // nothing thrown yet
    EXPECT_EQ(B.precision(), Precision::float32);
    const std::vector<unsigned int> host = slots.to_host();
    EXPECT_EQ(host[0], 0xffffffffu);
    EXPECT_EQ(host[1], 0xffffffffu);
    EXPECT_EQ(host[2], 7u);
    EXPECT_EQ(B.values_to_host()[7], std::numeric_limits<double>::infinity());
  }
}

// ---------------------------------------------------------------------------------------------

/// A float-stored matrix and the double matrix holding its float-rounded values: a component
/// set up on either must give the same bits.
struct Pair {
  CsrMatrix stored_float;
  CsrMatrix rounded_double;
};

Pair float_pair(const Backend& backend, const CooMatrix& coo) {
  CsrMatrix f = CsrMatrix::from_coo(backend, coo, Precision::float32);
  CsrMatrix d = f.with_precision(Precision::float64);
  return {std::move(f), std::move(d)};
}

/// Smooths twice from a random x with `make()` set up on each matrix of the pair.
template <class Make>
void expect_same_smoothing(const Backend& backend, const Pair& pair, Make make) {
  const auto n = static_cast<std::size_t>(pair.stored_float.num_rows());
  const Vector b = Vector::from_host(backend, test::random_vector(n, 21));
  const std::vector<double> x0 = test::random_vector(n, 22);
  std::vector<std::vector<double>> results;
  for (const CsrMatrix* A : {&pair.stored_float, &pair.rounded_double}) {
    auto smoother = make();
    smoother->setup(*A);
    Vector x = Vector::from_host(backend, x0);
    smoother->smooth(b, x, false);
    smoother->smooth(b, x, false);
    results.push_back(x.to_host());
  }
  EXPECT_EQ(results[0], results[1]);
}

TEST(FloatLevelMatrix, EverySmootherGivesTheBitsOfTheRoundedDoubleMatrix) {
  // A Poisson matrix with a scaled diagonal, so its values are not all exact in float.
  CooMatrix coo = poisson3d(10);
  for (std::size_t k = 0; k < coo.num_entries(); ++k) coo.values[k] *= 1.0 / 3.0;
  for (const Backend& backend : backends()) {
    SCOPED_TRACE(backend.name());
    const Pair pair = float_pair(backend, coo);
    expect_same_smoothing(backend, pair, [] { return std::make_unique<JacobiSmoother>(0.7); });
    expect_same_smoothing(backend, pair, [] { return std::make_unique<L1JacobiSmoother>(); });
    expect_same_smoothing(backend, pair, [] { return std::make_unique<ChebyshevSmoother>(); });
    expect_same_smoothing(backend, pair,
                          [] { return std::make_unique<HybridGaussSeidelSmoother>(); });
    if (backend.kind() != BackendKind::cuda) {
      expect_same_smoothing(backend, pair, [] {
        return std::make_unique<GaussSeidelSmoother>(GaussSeidelSmoother::Direction::symmetric);
      });
    } else {
      GaussSeidelSmoother gs;
      gs.setup(pair.stored_float);
      const auto n = static_cast<std::size_t>(pair.stored_float.num_rows());
      const Vector b = Vector::constant(backend, n, 1.0);
      Vector x = Vector::constant(backend, n, 0.0);
      EXPECT_THROW(gs.smooth(b, x, false), NotSupported);
    }
  }
}

TEST(FloatLevelMatrix, DenseDirectSolverGivesTheInverseOfTheRoundedDoubleMatrix) {
  CooMatrix coo = poisson3d(6);
  for (std::size_t k = 0; k < coo.num_entries(); ++k) coo.values[k] *= 1.0 / 7.0;
  for (const Backend& backend : backends()) {
    SCOPED_TRACE(backend.name());
    const Pair pair = float_pair(backend, coo);
    const auto n = static_cast<std::size_t>(pair.stored_float.num_rows());
    const Vector r = Vector::from_host(backend, test::random_vector(n, 4));
    std::vector<std::vector<double>> results;
    for (const CsrMatrix* A : {&pair.stored_float, &pair.rounded_double}) {
      DenseDirectSolver solver;
      solver.setup(*A);
      EXPECT_EQ(solver.factorization(), "cholesky");
      Vector z(backend, n);
      solver.apply(r, z);
      results.push_back(z.to_host());
    }
    EXPECT_EQ(results[0], results[1]);
  }
}

// ---------------------------------------------------------------------------------------------

TEST(FloatHierarchy, IsTheDoubleHierarchyRoundedAndCountsFourBytesLessPerStoredValue) {
  const CooMatrix coo = poisson3d(20);
  for (const Backend& backend : backends()) {
    SCOPED_TRACE(backend.name());
    const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
    const auto smoother = AmgPreconditioner::SmootherKind::chebyshev;
    AmgPreconditioner f(pmis(smoother, Precision::float32));
    AmgPreconditioner d(pmis(smoother, Precision::float64));
    f.setup(A);
    d.setup(A);
    ASSERT_EQ(f.num_levels(), d.num_levels());
    ASSERT_GE(f.num_levels(), 2u);
    EXPECT_EQ(f.level_matrix(0).precision(), Precision::float64);
    std::int64_t stored_values = 0;
    for (std::size_t l = 0; l < f.num_levels(); ++l) {
      SCOPED_TRACE(l);
      EXPECT_EQ(f.splitting(l), d.splitting(l));
      EXPECT_EQ(float_values(f.prolongation(l)), to_float(d.prolongation(l).values_to_host()));
      EXPECT_EQ(float_values(f.restriction(l)), to_float(d.restriction(l).values_to_host()));
      EXPECT_EQ(float_values(f.level_matrix(l + 1)),
                to_float(d.level_matrix(l + 1).values_to_host()));
      stored_values +=
          f.prolongation(l).nnz() + f.restriction(l).nnz() + f.level_matrix(l + 1).nnz();
    }
    const HierarchyReport& rf = f.hierarchy_report();
    const HierarchyReport& rd = d.hierarchy_report();
    EXPECT_EQ(rf.hierarchy_precision, Precision::float32);
    EXPECT_EQ(rd.hierarchy_precision, Precision::float64);
    EXPECT_EQ(rd.memory_bytes - rf.memory_bytes, 4 * stored_values);
    EXPECT_LT(rf.bytes_per_fine_row, rd.bytes_per_fine_row);
    EXPECT_NE(rf.to_text().find("float32"), std::string::npos) << rf.to_text();
    EXPECT_EQ(rd.to_text().find("float32"), std::string::npos) << rd.to_text();
    RecordProperty("bytes_per_fine_row_float64", static_cast<int>(rd.bytes_per_fine_row));
    RecordProperty("bytes_per_fine_row_float32", static_cast<int>(rf.bytes_per_fine_row));
  }
}

TEST(FloatHierarchy, PcgConvergesByTheTrueResidualWithinTwoIterationsOfTheDoubleHierarchy) {
  // 3D Poisson 24^3, b random or all ones (not A times a known vector), PCG to 1e-8. The
  // float hierarchy is the double one rounded (relative 6e-8 per value): the preconditioner
  // changes by about that much, and the iterations by at most 2 either way (the band).
  const CooMatrix coo = poisson3d(24);
  const auto n = static_cast<std::size_t>(coo.num_rows);
  const std::vector<std::vector<double>> rhs = {test::random_vector(n, 7),
                                                std::vector<double>(n, 1.0)};
  for (const Backend& backend : backends()) {
    const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
    for (const auto smoother :
         {AmgPreconditioner::SmootherKind::chebyshev, AmgPreconditioner::SmootherKind::l1_jacobi,
          AmgPreconditioner::SmootherKind::jacobi}) {
      AmgPreconditioner f(pmis(smoother, Precision::float32));
      AmgPreconditioner d(pmis(smoother, Precision::float64));
      f.setup(A);
      d.setup(A);
      for (std::size_t k = 0; k < rhs.size(); ++k) {
        SCOPED_TRACE(backend.name() + ", " + f.hierarchy_report().smoother +
                     (k == 0 ? ", b random" : ", b ones"));
        const Solve sf = pcg(coo, A, f, rhs[k]);
        const Solve sd = pcg(coo, A, d, rhs[k]);
        EXPECT_LE(sf.true_residual, 1e-8);
        EXPECT_LE(sd.true_residual, 1e-8);
        EXPECT_GE(sf.iterations, 3);
        EXPECT_LE(std::abs(sf.iterations - sd.iterations), 2)
            << "float " << sf.iterations << ", double " << sd.iterations;
        RecordProperty(backend.name() + " " + f.hierarchy_report().smoother +
                           (k == 0 ? " b random" : " b ones") + " float32/float64",
                       std::to_string(sf.iterations) + "/" + std::to_string(sd.iterations));
      }
    }
  }
}

#ifndef KRYFLOW_TEST_BACKEND_IS_CUDA
TEST(FloatHierarchy, GaussSeidelAndGreedyCoarseningConvergeOnTheHostBackends) {
  const CooMatrix coo = poisson3d(20);
  const std::vector<double> b(static_cast<std::size_t>(coo.num_rows), 1.0);
  for (const Backend& backend : backends()) {
    SCOPED_TRACE(backend.name());
    const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
    Parameters pf;  // greedy coarsening, Gauss-Seidel: the defaults
    pf.hierarchy_precision = Precision::float32;
    AmgPreconditioner f(pf), d;
    f.setup(A);
    d.setup(A);
    const Solve sf = pcg(coo, A, f, b);
    const Solve sd = pcg(coo, A, d, b);
    EXPECT_LE(sf.true_residual, 1e-8);
    EXPECT_LE(std::abs(sf.iterations - sd.iterations), 2);
  }
}
#endif

/// Every stored value of the hierarchy, level by level (P, R, A_{l+1}), as floats.
std::vector<std::vector<float>> hierarchy_values(const AmgPreconditioner& M) {
  std::vector<std::vector<float>> values;
  for (std::size_t l = 0; l < M.num_levels(); ++l) {
    values.push_back(float_values(M.prolongation(l)));
    values.push_back(float_values(M.restriction(l)));
    values.push_back(float_values(M.level_matrix(l + 1)));
  }
  return values;
}

TEST(FloatHierarchy, UpdateValuesAfterScalingGivesTheIterationsAndValuesOfAFreshSetup) {
  // Scaled by 2 every double operation of the setup scales exactly: a fresh setup finds the
  // same splittings and the update must give its bits. Scaled by 3.7 the coarse splittings of
  // a fresh setup may differ where strength comparisons tie (rounding): the iterations must
  // agree and A_1 (from the unchanged finest splitting) to float rounding.
  const CooMatrix original = poisson3d(20);
  const std::vector<double> b = test::random_vector(static_cast<std::size_t>(original.num_rows), 8);
  for (const Backend& backend : backends()) {
    const CsrMatrix A = CsrMatrix::from_coo(backend, original);
    for (const double scale : {2.0, 3.7}) {
      CooMatrix changed = original;
      for (double& v : changed.values) v *= scale;
      const CsrMatrix B = CsrMatrix::from_coo(backend, changed);
      for (const auto smoother : {AmgPreconditioner::SmootherKind::chebyshev,
                                  AmgPreconditioner::SmootherKind::l1_jacobi}) {
        const Parameters p = pmis(smoother, Precision::float32);
        AmgPreconditioner updated(p), fresh(p);
        updated.setup(A);
        SCOPED_TRACE(backend.name() + ", scale " + std::to_string(scale) + ", " +
                     updated.hierarchy_report().smoother);
        const std::vector<std::vector<float>> original_values = hierarchy_values(updated);
        const std::int64_t bytes = updated.hierarchy_report().memory_bytes;

        updated.update_values(B);
        fresh.setup(B);

        ASSERT_EQ(updated.num_levels(), fresh.num_levels());
        if (scale == 2.0) {
          EXPECT_EQ(hierarchy_values(updated), hierarchy_values(fresh));
        } else {
          const std::vector<double> coarse = updated.level_matrix(1).values_to_host();
          const std::vector<double> expected = fresh.level_matrix(1).values_to_host();
          EXPECT_LE(test::relative_max_difference(coarse, expected), 1.2e-7);
        }
        EXPECT_EQ(updated.hierarchy_report().memory_bytes, bytes);
        EXPECT_EQ(updated.level_matrix(1).precision(), Precision::float32);
        const Solve su = pcg(changed, B, updated, b);
        const Solve sf = pcg(changed, B, fresh, b);
        EXPECT_EQ(su.iterations, sf.iterations);
        EXPECT_LE(su.true_residual, 1e-8);

        updated.update_values(A);  // back to the original values: the original bits
        EXPECT_EQ(hierarchy_values(updated), original_values);
      }
    }
  }
}

TEST(FloatHierarchy, TheConfigurationKeySelectsThePrecisionAndRejectsOthers) {
  nlohmann::json config = {{"solver",
                            {{"type", "pcg"},
                             {"preconditioner",
                              {{"type", "amg"},
                               {"coarsening", "pmis"},
                               {"smoother", "chebyshev"},
                               {"hierarchy_precision", "float32"}}}}}};
  config::SolverSetup setup = config::build_solver(config);
  auto& amg = dynamic_cast<AmgPreconditioner&>(*setup.preconditioner);
  EXPECT_EQ(amg.amg_parameters().hierarchy_precision, Precision::float32);
  const CsrMatrix A = CsrMatrix::from_coo(test::backend_under_test(), poisson3d(12));
  amg.setup(A);
  EXPECT_EQ(amg.level_matrix(1).precision(), Precision::float32);

  config["solver"]["preconditioner"]["hierarchy_precision"] = "float16";
  EXPECT_THROW(config::build_solver(config), ConfigError);
  config["solver"]["preconditioner"].erase("hierarchy_precision");
  config::SolverSetup defaults = config::build_solver(config);
  EXPECT_EQ(dynamic_cast<AmgPreconditioner&>(*defaults.preconditioner)
                .amg_parameters()
                .hierarchy_precision,
            Precision::float64);
}

}  // namespace
}  // namespace kryflow
