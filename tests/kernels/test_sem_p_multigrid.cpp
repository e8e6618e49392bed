// p-multigrid for the spectral-element Poisson operator: the GLL transfers (exact on coarse
// polynomials, restriction the transpose of prolongation, the backend against the reference),
// the assembled order-1 matrix against the operator, and PCG with the p-multigrid cycle
// (iterations bounded as the mesh is refined, checked by the true residual, the coarsest level
// by AMG, the dense solver or Chebyshev sweeps; lower orders inherit the Dirichlet faces), the
// cycle symmetric with symmetric smoothers, and V-cycle and two-level convergence factors
// bounded as the mesh is refined.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kryflow/config/registry.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/core/precision.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/vector.hpp"
#include "kryflow/multigrid/dense_solver.hpp"
#include "kryflow/multigrid/smoothers.hpp"
#include "kryflow/sem/hex_mesh.hpp"
#include "kryflow/sem/p_multigrid.hpp"
#include "kryflow/sem/poisson_operator.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "test_support.hpp"

namespace kryflow::sem {
namespace {

std::vector<double> deformed_box(int nx, int ny, int nz, double amplitude) {
  return test::unit_cube_box(nx, ny, nz, amplitude);
}

using test::dot;
using test::max_abs;

std::vector<double> prolongate(const SemTransfer& t, const Backend& backend,
                               const std::vector<double>& coarse) {
  const Vector c = Vector::from_host(backend, coarse);
  Vector f(backend, static_cast<std::size_t>(t.fine_rows()));
  t.prolongate(c, f, false);
  return f.to_host();
}

std::vector<double> restrict_to_coarse(const SemTransfer& t, const Backend& backend,
                                       const std::vector<double>& fine) {
  const Vector f = Vector::from_host(backend, fine);
  Vector c(backend, static_cast<std::size_t>(t.coarse_rows()));
  t.restrict_residual(f, c);
  return c.to_host();
}

/// A polynomial of total degree 3 in x, y, z: degree at most 3 in each reference coordinate of
/// a trilinear element, so the order-3 space holds it exactly.
double cubic(const double* x) {
  return 1.0 + x[0] - 2.0 * x[1] * x[1] + x[0] * x[1] * x[2] + 0.5 * x[2] * x[2] * x[2];
}

TEST(SemTransfer, ProlongationReproducesPolynomialsOfTheCoarseOrder) {
  const Backend backend = test::backend_under_test();
  const std::vector<double> vertices = deformed_box(3, 2, 2, 0.2);
  const SemPoissonOperator fine(backend, 12, vertices, 7, /*dirichlet_boundary=*/false);
  const auto coarse = fine.at_order(3);
  const SemTransfer transfer(fine, *coarse);
  std::vector<double> uc(static_cast<std::size_t>(coarse->num_rows()));
  for (std::size_t g = 0; g < uc.size(); ++g) uc[g] = cubic(&coarse->coordinates()[3 * g]);
  const std::vector<double> uf = prolongate(transfer, backend, uc);
  double error = 0.0;
  for (std::size_t g = 0; g < uf.size(); ++g) {
    error = std::max(error, std::abs(uf[g] - cubic(&fine.coordinates()[3 * g])));
  }
  EXPECT_LT(error, 1e-12 * max_abs(uf));
  // Adding to a vector adds the same values.
  const Vector c = Vector::from_host(backend, uc);
  Vector f = Vector::from_host(backend, uf);
  transfer.prolongate(c, f, true);
  const std::vector<double> twice = f.to_host();
  for (std::size_t g = 0; g < uf.size(); ++g) EXPECT_NEAR(twice[g], 2.0 * uf[g], 1e-13);
}

TEST(SemTransfer, RestrictionIsTheTransposeOfProlongationAndMasksDirichletPoints) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const Backend backend = test::backend_under_test();
  for (const auto& [pf, pc] : {std::pair{7, 3}, std::pair{3, 1}, std::pair{5, 2}}) {
    SCOPED_TRACE(std::to_string(pf) + " -> " + std::to_string(pc));
    const SemPoissonOperator fine(backend, 12, deformed_box(2, 3, 2, 0.3), pf);
    const auto coarse = fine.at_order(pc);
    const SemTransfer transfer(fine, *coarse);
    const std::vector<double> f =
        test::random_vector(static_cast<std::size_t>(fine.num_rows()), seed + pf);
    const std::vector<double> c =
        test::random_vector(static_cast<std::size_t>(coarse->num_rows()), seed + 10 + pc);
    const std::vector<double> Pc = prolongate(transfer, backend, c);
    const std::vector<double> Rf = restrict_to_coarse(transfer, backend, f);
    const double fPc = dot(f, Pc);
    const double cRf = dot(c, Rf);
    EXPECT_NEAR(fPc, cRf, 1e-12 * (std::abs(fPc) + 1.0));
    // Dirichlet points: P gives 0 there, R gives 0 there.
    for (std::size_t g = 0; g < Pc.size(); ++g) {
      if (fine.dirichlet()[g] != 0) EXPECT_EQ(Pc[g], 0.0);
    }
    for (std::size_t g = 0; g < Rf.size(); ++g) {
      if (coarse->dirichlet()[g] != 0) EXPECT_EQ(Rf[g], 0.0);
    }
  }
}

/// P c computed independently: every element's interpolant of c (coarse Dirichlet points 0;
/// J x J x J by plain loops) averaged over the elements that share each fine point, 0 at fine
/// Dirichlet points.
std::vector<double> averaged_interpolants(const SemPoissonOperator& fine,
                                          const SemPoissonOperator& coarse,
                                          const std::vector<double>& c) {
  const std::vector<double> J = lagrange_interpolation_matrix(coarse.rule(), fine.rule().nodes);
  const int nf = fine.rule().order + 1;
  const int nc = coarse.rule().order + 1;
  const auto& lf = fine.numbering().local_to_global;
  const auto& lc = coarse.numbering().local_to_global;
  std::vector<double> sum(static_cast<std::size_t>(fine.num_rows()), 0.0);
  std::vector<int> copies(sum.size(), 0);
  for (std::int64_t e = 0; e < fine.numbering().num_elements; ++e) {
    for (int k = 0; k < nf; ++k) {
      for (int j = 0; j < nf; ++j) {
        for (int i = 0; i < nf; ++i) {
          double value = 0.0;
          for (int kc = 0; kc < nc; ++kc) {
            for (int jc = 0; jc < nc; ++jc) {
              for (int ic = 0; ic < nc; ++ic) {
                const auto g = static_cast<std::size_t>(lc[((e * nc + kc) * nc + jc) * nc + ic]);
                const double u = coarse.dirichlet()[g] != 0 ? 0.0 : c[g];
                value += J[i * nc + ic] * J[j * nc + jc] * J[k * nc + kc] * u;
              }
            }
          }
          const auto g = static_cast<std::size_t>(lf[((e * nf + k) * nf + j) * nf + i]);
          sum[g] += value;
          ++copies[g];
        }
      }
    }
  }
  for (std::size_t g = 0; g < sum.size(); ++g) {
    sum[g] = fine.dirichlet()[g] != 0 ? 0.0 : sum[g] / copies[g];
  }
  return sum;
}

TEST(SemTransfer, ProlongationEqualsTheAverageOfTheElementInterpolants) {
  // P takes each fine point from one element; here against the average of all elements'
  // interpolants, on deformed boxes and on a corpus mesh whose elements meet in different
  // local orientations; writing (P c) and adding it to a vector (Dirichlet points kept).
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const Backend backend = test::backend_under_test();
  auto check = [&](const SemPoissonOperator& fine, int pc) {
    const auto coarse = fine.at_order(pc);
    const SemTransfer transfer(fine, *coarse);
    const auto n = static_cast<std::size_t>(fine.num_rows());
    const std::vector<double> c =
        test::random_vector(static_cast<std::size_t>(coarse->num_rows()), seed + pc);
    const std::vector<double> expected = averaged_interpolants(fine, *coarse, c);
    const std::vector<double> Pc = prolongate(transfer, backend, c);
    const std::vector<double> f0 = test::random_vector(n, seed + 100 + pc);
    Vector f = Vector::from_host(backend, f0);
    transfer.prolongate(Vector::from_host(backend, c), f, true);
    const std::vector<double> added = f.to_host();
    double worst = 0.0;
    double worst_added = 0.0;
    for (std::size_t g = 0; g < n; ++g) {
      worst = std::max(worst, std::abs(Pc[g] - expected[g]));
      worst_added = std::max(worst_added, std::abs(added[g] - (f0[g] + expected[g])));
      if (fine.dirichlet()[g] != 0) ASSERT_EQ(added[g], f0[g]) << "point " << g;
    }
    EXPECT_LT(worst, 1e-13 * (max_abs(expected) + 1.0));
    EXPECT_LT(worst_added, 1e-13 * (max_abs(expected) + max_abs(f0)));
  };
  for (const auto& [pf, pc] : {std::pair{7, 3}, std::pair{5, 2}, std::pair{3, 1}}) {
    SCOPED_TRACE(std::to_string(pf) + " -> " + std::to_string(pc));
    check(SemPoissonOperator(backend, 18, deformed_box(3, 2, 3, 0.3), pf), pc);
  }
  const auto path = test::nek_mesh_file("nekrs_ethier/ethier");
  ASSERT_FALSE(path.empty());
  const HexMesh mesh = read_re2(path);
  SCOPED_TRACE("ethier, 5 -> 2");
  check(SemPoissonOperator(backend, mesh.num_elements, mesh.vertices, 5), 2);
}

TEST(SemTransfer, BackendMatchesReference) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const std::vector<double> vertices = deformed_box(3, 2, 3, 0.3);
  const SemPoissonOperator fine(test::backend_under_test(), 18, vertices, 6);
  const auto coarse = fine.at_order(2);
  const SemTransfer transfer(fine, *coarse);
  const SemPoissonOperator fine_ref(Backend::reference(), 18, vertices, 6);
  const auto coarse_ref = fine_ref.at_order(2);
  const SemTransfer transfer_ref(fine_ref, *coarse_ref);
  const std::vector<double> c =
      test::random_vector(static_cast<std::size_t>(coarse->num_rows()), seed);
  const std::vector<double> f =
      test::random_vector(static_cast<std::size_t>(fine.num_rows()), seed + 1);
  const std::vector<double> Pc = prolongate(transfer, fine.backend(), c);
  const std::vector<double> Pc_ref = prolongate(transfer_ref, Backend::reference(), c);
  const std::vector<double> Rf = restrict_to_coarse(transfer, fine.backend(), f);
  const std::vector<double> Rf_ref = restrict_to_coarse(transfer_ref, Backend::reference(), f);
  ASSERT_EQ(Pc.size(), Pc_ref.size());
  ASSERT_EQ(Rf.size(), Rf_ref.size());
  for (std::size_t g = 0; g < Pc.size(); ++g) EXPECT_NEAR(Pc[g], Pc_ref[g], 1e-14);
  for (std::size_t g = 0; g < Rf.size(); ++g) EXPECT_NEAR(Rf[g], Rf_ref[g], 1e-13);
}

TEST(SemTransfer, OperatorsOfAnotherMeshOrOrderAreRejected) {
  const Backend backend = test::backend_under_test();
  const SemPoissonOperator a(backend, 12, deformed_box(3, 2, 2, 0.0), 3);
  const SemPoissonOperator b(backend, 8, deformed_box(2, 2, 2, 0.0), 1);
  EXPECT_THROW(SemTransfer(a, b), InvalidInput);
  const auto same = a.at_order(3);
  EXPECT_THROW(SemTransfer(a, *same), InvalidInput);
}

TEST(SemPoisson, AssembledMatrixAppliesAsTheOperator) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const Backend backend = test::backend_under_test();
  for (int p : {1, 2, 3}) {
    SCOPED_TRACE(p);
    const SemPoissonOperator A(backend, 12, deformed_box(2, 2, 3, 0.3), p);
    const CsrMatrix M = CsrMatrix::from_coo(backend, A.assembled_matrix());
    const std::vector<double> x =
        test::random_vector(static_cast<std::size_t>(A.num_rows()), seed + p);
    const Vector xv = Vector::from_host(backend, x);
    Vector y1(backend, x.size()), y2(backend, x.size());
    A.apply(xv, y1);
    M.apply(xv, y2);
    const std::vector<double> a = y1.to_host();
    const std::vector<double> m = y2.to_host();
    const double scale = max_abs(a);
    for (std::size_t g = 0; g < a.size(); ++g) EXPECT_NEAR(a[g], m[g], 1e-12 * scale) << g;
  }
  const SemPoissonOperator high(backend, 8, deformed_box(2, 2, 2, 0.0), 4);
  EXPECT_THROW((void)high.assembled_matrix(), NotSupported);
}

TEST(SemPoisson, LowerOrdersKeepTheDirichletFacesOfTheirTypes) {
  HexMesh mesh = box_mesh(3, 2, 2);
  for (BoundaryFace& f : mesh.fields[0]) f.type = f.face < 2 ? "v" : "O";
  SemPoissonOptions options;
  options.dirichlet_types = {"v"};
  const SemPoissonOperator A(test::backend_under_test(), mesh, 5, options);
  for (int p : {3, 1}) {
    const auto lower = A.at_order(p);
    std::size_t masked = 0;
    for (std::size_t g = 0; g < lower->dirichlet().size(); ++g) {
      if (lower->dirichlet()[g] == 0) continue;
      ++masked;
      const double x = lower->coordinates()[3 * g];
      EXPECT_TRUE(std::abs(x) < 1e-12 || std::abs(x - 1.0) < 1e-12) << x;
    }
    EXPECT_EQ(masked, std::size_t{2} * (2 * p + 1) * (2 * p + 1));
  }
}

struct PmgSolve {
  int iterations = 0;
  double true_residual = 0.0;
};

/// PCG with `config`'s preconditioner on the order-p operator of `vertices`, b = B f (f = 1 in
/// the interior, 0 on the Dirichlet points), x0 = 0; the true residual from a separate apply.
/// The solver and preconditioner of `config`, the preconditioner set up for A.
config::SolverSetup setup_for(const SemPoissonOperator& A, const nlohmann::json& config) {
  config::SolverSetup setup = config::build_solver(config);
  setup.preconditioner->setup(A);
  return setup;
}

/// b = B f with f = 1 in the interior and 0 on the Dirichlet points.
std::vector<double> mass_rhs(const SemPoissonOperator& A) {
  std::vector<double> b(static_cast<std::size_t>(A.num_rows()));
  for (std::size_t g = 0; g < b.size(); ++g) b[g] = A.dirichlet()[g] != 0 ? 0.0 : A.mass()[g];
  return b;
}

PmgSolve solve_with(const Backend& backend, const std::vector<double>& vertices,
                    std::int64_t elements, int p, const nlohmann::json& config) {
  const SemPoissonOperator A(backend, elements, vertices, p);
  config::SolverSetup setup = setup_for(A, config);
  const auto n = static_cast<std::size_t>(A.num_rows());
  const std::vector<double> b = mass_rhs(A);
  const Vector bv = Vector::from_host(backend, b);
  Vector x = Vector::constant(backend, n, 0.0);
  const SolveReport report = setup.solver->solve(A, *setup.preconditioner, bv, x);
  EXPECT_TRUE(report.converged()) << report.reason;
  Vector ax(backend, n);
  A.apply(x, ax);
  const std::vector<double> axh = ax.to_host();
  double r2 = 0.0;
  for (std::size_t g = 0; g < n; ++g) r2 += (b[g] - axh[g]) * (b[g] - axh[g]);
  return {report.iterations, std::sqrt(r2 / dot(b, b))};
}

nlohmann::json pmg_config() {
  nlohmann::json config = config::load_preset("sem_pmg_cheby_jacobi");
  config["solver"]["relative_tolerance"] = 1e-8;
  return config;
}

TEST(PMultigrid, PcgIterationsStayBoundedAsTheMeshIsRefined) {
  const Backend backend = test::backend_under_test();
  std::vector<int> iterations;
  for (int n : {2, 4, 6}) {
    SCOPED_TRACE(n);
    const PmgSolve s =
        solve_with(backend, deformed_box(n, n, n, 0.2), std::int64_t{n} * n * n, 5, pmg_config());
    EXPECT_LT(s.true_residual, 1e-7);
    iterations.push_back(s.iterations);
  }
  // Jacobi-PCG needs 50-150 iterations here; the p-multigrid 7 whatever the element count.
  for (int it : iterations) EXPECT_LE(it, 12);
  EXPECT_LE(iterations.back(), iterations.front() * 5 / 4 + 1);
}

/// The Chebyshev-accelerated Schwarz smoothers: additive with PCG, restricted with the preset's
/// flexible CG.
/// Iterations bounded as the mesh is refined (deformed boxes, 2^3 to 6^3 elements, p = 5), and
/// on the Kershaw mesh (eps = 0.3, thin elements) fewer than with Chebyshev-Jacobi (restricted:
/// at least 25 % fewer).
TEST(PMultigrid, SchwarzSmoothersConvergeInFewerIterations) {
  const Backend backend = test::backend_under_test();
  nlohmann::json asm_config = pmg_config();
  asm_config["solver"]["preconditioner"]["smoother"] = "chebyshev_asm";
  nlohmann::json ras_config = config::load_preset("sem_pmg_schwarz");
  ras_config["solver"]["relative_tolerance"] = 1e-8;
  EXPECT_EQ(ras_config["solver"]["preconditioner"]["smoother"], "chebyshev_ras");
  BoxOptions options;
  options.kershaw_epsilon = 0.3;
  const HexMesh kershaw = box_mesh(6, 4, 4, options);
  const PmgSolve jacobi =
      solve_with(backend, kershaw.vertices, kershaw.num_elements, 5, pmg_config());
  for (const nlohmann::json& config : {asm_config, ras_config}) {
    SCOPED_TRACE(config["solver"].dump());
    std::vector<int> iterations;
    for (int n : {2, 4, 6}) {
      SCOPED_TRACE(n);
      const auto vertices = deformed_box(n, n, n, 0.2);
      const PmgSolve s = solve_with(backend, vertices, std::int64_t{n} * n * n, 5, config);
      EXPECT_LT(s.true_residual, 1e-7);
      iterations.push_back(s.iterations);
    }
    // 9-11 on these meshes (Chebyshev-Jacobi: 9).
    for (int it : iterations) EXPECT_LE(it, 12);
    EXPECT_LE(iterations.back(), iterations.front() * 5 / 4 + 1);
    const PmgSolve s = solve_with(backend, kershaw.vertices, kershaw.num_elements, 5, config);
    EXPECT_LT(s.true_residual, 1e-7);
    // p = 5 here: Chebyshev-Jacobi 34, additive 31, restricted 18.
    if (config["solver"]["preconditioner"]["smoother"] == "chebyshev_ras") {
      EXPECT_LT(s.iterations * 4, jacobi.iterations * 3);
    } else {
      EXPECT_LE(s.iterations, jacobi.iterations);
    }
  }
}

/// Multiplicative vertex-patch Schwarz (the sem_pmg_vertex_patch preset, flexible CG): on
/// deformed boxes of 3^3 to 6^3 elements at p = 5 at most 5 iterations (4 here; the Chebyshev
/// smoothers: 9-11), growing by at most 25 %; on the Kershaw box it converges too (its
/// per-patch damping; more iterations than restricted Schwarz there). True residuals checked.
TEST(PMultigrid, VertexPatchSmootherConvergesInFewIterationsOnDeformedBoxes) {
  const Backend backend = test::backend_under_test();
  nlohmann::json config = config::load_preset("sem_pmg_vertex_patch");
  EXPECT_EQ(config["solver"]["preconditioner"]["smoother"], "vertex_patch");
  std::vector<int> iterations;
  for (int n : {3, 4, 6}) {
    SCOPED_TRACE(n);
    const PmgSolve s =
        solve_with(backend, deformed_box(n, n, n, 0.2), std::int64_t{n} * n * n, 5, config);
    EXPECT_LT(s.true_residual, 1e-7);
    iterations.push_back(s.iterations);
  }
  for (int it : iterations) EXPECT_LE(it, 5);
  EXPECT_LE(iterations.back() * 4, iterations.front() * 5);
  BoxOptions options;
  options.kershaw_epsilon = 0.3;
  const HexMesh kershaw = box_mesh(6, 4, 4, options);
  const PmgSolve s = solve_with(backend, kershaw.vertices, kershaw.num_elements, 5, config);
  EXPECT_LT(s.true_residual, 1e-7);
  EXPECT_LE(s.iterations, 60);
}

/// The Schwarz preset with the fourth-kind Chebyshev polynomial converges on a deformed box (true
/// residual) and says so in its summary; Chebyshev-Jacobi with the fourth kind is a
/// configuration error.
TEST(PMultigrid, FourthKindChebyshevSchwarzConverges) {
  const Backend backend = test::backend_under_test();
  nlohmann::json config = config::load_preset("sem_pmg_schwarz");
  config["solver"]["preconditioner"]["chebyshev_kind"] = "fourth";
  const PmgSolve s = solve_with(backend, deformed_box(3, 3, 3, 0.2), 27, 5, config);
  EXPECT_LT(s.true_residual, 1e-7);
  EXPECT_LE(s.iterations, 15);
  const SemPoissonOperator A(backend, 27, deformed_box(3, 3, 3, 0.2), 5);
  const config::SolverSetup setup = setup_for(A, config);
  EXPECT_NE(setup.preconditioner->summary().find("fourth kind"), std::string::npos);
  nlohmann::json jacobi = pmg_config();
  jacobi["solver"]["preconditioner"]["chebyshev_kind"] = "fourth";
  EXPECT_THROW(config::build_solver(jacobi), ConfigError);
}

/// The p-multigrid cycle as an operator M (one cycle from z = 0): symmetric, x'My = y'Mx, with
/// the symmetric smoothers (Chebyshev-Jacobi, Chebyshev-accelerated additive Schwarz, vertex
/// patches forward before and backward after the correction) and a
/// symmetric coarsest solve (Chebyshev sweeps), so PCG may use it; not symmetric with
/// restricted additive Schwarz, which needs a flexible method outside.
TEST(PMultigrid, CycleIsSymmetricWithSymmetricSmoothersAndNotWithRestrictedSchwarz) {
  const Backend backend = test::backend_under_test();
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const SemPoissonOperator A(backend, 12, deformed_box(3, 2, 2, 0.2), 5);
  const auto n = static_cast<std::size_t>(A.num_rows());
  std::vector<double> x = test::random_vector(n, seed), y = test::random_vector(n, seed + 1);
  for (std::size_t g = 0; g < n; ++g) {
    if (A.dirichlet()[g]) x[g] = y[g] = 0.0;
  }
  for (const char* smoother :
       {"chebyshev_jacobi", "chebyshev_asm", "chebyshev_ras", "vertex_patch"}) {
    SCOPED_TRACE(smoother);
    nlohmann::json config = pmg_config();
    config["solver"]["preconditioner"]["smoother"] = smoother;
    config["solver"]["preconditioner"]["coarsest"] = "chebyshev";
    // Float local solves are symmetric only to float rounding.
    config["solver"]["preconditioner"]["schwarz_precision"] = "float64";
    config::SolverSetup setup = setup_for(A, config);
    auto apply = [&](const std::vector<double>& v) {
      const Vector vv = Vector::from_host(backend, v);
      Vector z(backend, n);
      setup.preconditioner->apply(vv, z);
      return z.to_host();
    };
    const std::vector<double> Mx = apply(x), My = apply(y);
    const double asymmetry = std::abs(dot(x, My) - dot(y, Mx)) / std::sqrt(dot(x, x) * dot(My, My));
    if (std::string(smoother) == "chebyshev_ras") {
      EXPECT_GT(asymmetry, 1e-6);
    } else {
      EXPECT_LT(asymmetry, 1e-11);
    }
  }
}

/// Convergence factors of the stationary iteration x <- x + M (b - A x) with M one V-cycle
/// (orders 5, 2, 1; about 0.32 here) or one two-level cycle (orders 5, 1; 0.48 to 0.55), the
/// mean factor of cycles 4 to 8: bounded, and growing by at most 25 % from 2^3 to 6^3 elements
/// of a deformed box.
TEST(PMultigrid, VCycleAndTwoLevelConvergenceFactorsDoNotGrowWithTheElementCount) {
  const Backend backend = test::backend_under_test();
  for (const char* schedule : {"halving", "two_level"}) {
    SCOPED_TRACE(schedule);
    std::vector<double> factors;
    for (int e : {2, 4, 6}) {
      SCOPED_TRACE(e);
      const SemPoissonOperator A(backend, std::int64_t{e} * e * e, deformed_box(e, e, e, 0.2), 5);
      nlohmann::json config = pmg_config();
      config["solver"]["preconditioner"]["schedule"] = schedule;
      config::SolverSetup setup = setup_for(A, config);
      const auto n = static_cast<std::size_t>(A.num_rows());
      const Vector bv = Vector::from_host(backend, mass_rhs(A));
      Vector x = Vector::constant(backend, n, 0.0), r(backend, n), z(backend, n);
      std::vector<double> norms;
      for (int k = 0; k <= 8; ++k) {
        A.residual(bv, x, r);
        norms.push_back(norm2(r));
        setup.preconditioner->apply(r, z);
        axpby(1.0, z, 1.0, x);
      }
      const double factor = std::pow(norms[8] / norms[4], 0.25);
      EXPECT_LT(factor, std::string(schedule) == "halving" ? 0.4 : 0.6);
      factors.push_back(factor);
    }
    EXPECT_LE(factors.back(), factors.front() * 1.25 + 0.02)
        << factors[0] << " " << factors[1] << " " << factors[2];
  }
}

/// Both p-multigrid presets (PCG with Chebyshev-Jacobi smoothing, flexible CG with restricted
/// Schwarz smoothing) on every Nek mesh of the corpus at p = 2 (orders 2, 1), Dirichlet on the
/// boundary faces, b = B f: converged, checked by the true residual.
TEST(PMultigrid, BothPresetsConvergeOnEveryCorpusMesh) {
  const Backend backend = test::backend_under_test();
  for (const std::string& name : test::nek_corpus_meshes()) {
    SCOPED_TRACE(name);
    const auto path = test::nek_mesh_file(name);
    ASSERT_FALSE(path.empty());
    const HexMesh mesh = read_re2(path);
    for (const char* preset : {"sem_pmg_cheby_jacobi", "sem_pmg_schwarz"}) {
      SCOPED_TRACE(preset);
      nlohmann::json config = config::load_preset(preset);
      config["solver"]["max_iterations"] = 60;
      const PmgSolve s = solve_with(backend, mesh.vertices, mesh.num_elements, 2, config);
      EXPECT_LT(s.true_residual, 1e-8 * (1 + 1e-6));
      EXPECT_LE(s.iterations, 40);
    }
  }
}

/// The vertex-patch preset on the corpus at p = 2 converges (true residual) on every mesh: bp5,
/// tgv, kershaw and turbChannel are structured (every unknown inside some patch), turbPipe,
/// ethier, hemi and rbc have irregular vertices, whose points the smoother relaxes by damped
/// Jacobi (the summary counts them).
TEST(PMultigrid, VertexPatchPresetConvergesOnTheCorpus) {
  const Backend backend = test::backend_under_test();
  int structured = 0;
  for (const std::string& name : test::nek_corpus_meshes()) {
    SCOPED_TRACE(name);
    const auto path = test::nek_mesh_file(name);
    ASSERT_FALSE(path.empty());
    const HexMesh mesh = read_re2(path);
    nlohmann::json config = config::load_preset("sem_pmg_vertex_patch");
    config["solver"]["max_iterations"] = 60;
    const SemPoissonOperator A(backend, mesh.num_elements, mesh.vertices, 2);
    config::SolverSetup setup = config::build_solver(config);
    setup.preconditioner->setup(A);
    const std::string summary = setup.preconditioner->summary();
    if (summary.find("points by Jacobi") == std::string::npos) ++structured;
    const PmgSolve s = solve_with(backend, mesh.vertices, mesh.num_elements, 2, config);
    EXPECT_LT(s.true_residual, 1e-8 * (1 + 1e-6));
    EXPECT_LE(s.iterations, 40);
  }
  EXPECT_EQ(structured, 4);
}

/// The cycle in float element arithmetic (cycle_precision float32: every level's operator,
/// the finest included, computes its element Laplacians in float) inside flexible CG and
/// flexible GMRES with A in double: converged to ||b - A x|| / ||b|| <= 1e-8 by the true
/// residual, in at most 2 iterations more than the double cycle (deformed boxes, p = 5 and 7,
/// Chebyshev-Jacobi and restricted Schwarz smoothing); the summary names the arithmetic.
TEST(PMultigrid, FloatArithmeticCycleConvergesAsTheDoubleCycle) {
  const Backend backend = test::backend_under_test();
  for (const char* solver : {"fcg", "fgmres"}) {
    for (const char* smoother : {"chebyshev_jacobi", "chebyshev_ras"}) {
      for (int p : {5, 7}) {
        SCOPED_TRACE(std::string(solver) + ", " + smoother + ", p = " + std::to_string(p));
        nlohmann::json config = pmg_config();
        config["solver"]["type"] = solver;
        config["solver"]["preconditioner"]["smoother"] = smoother;
        const std::vector<double> vertices = deformed_box(3, 3, 2, 0.25);
        const PmgSolve in_double = solve_with(backend, vertices, 18, p, config);
        config["solver"]["preconditioner"]["cycle_precision"] = "float32";
        const PmgSolve in_float = solve_with(backend, vertices, 18, p, config);
        EXPECT_LE(in_double.true_residual, 1e-8);
        EXPECT_LE(in_float.true_residual, 1e-8);
        EXPECT_LE(in_float.iterations, in_double.iterations + 2)
            << "double " << in_double.iterations << ", float " << in_float.iterations;
      }
    }
  }
  const SemPoissonOperator A(backend, 8, deformed_box(2, 2, 2, 0.2), 5);
  PMultigrid::Parameters parameters;
  parameters.cycle_precision = Precision::float32;
  PMultigrid M(parameters);
  M.setup(A);
  EXPECT_NE(M.summary().find("cycle arithmetic float32"), std::string::npos) << M.summary();
  EXPECT_EQ(A.arithmetic(), Precision::float64);  // A itself is left alone
  PMultigrid double_cycle;
  double_cycle.setup(A);
  EXPECT_EQ(double_cycle.summary().find("float32"), std::string::npos) << double_cycle.summary();
  // The float cycle is a different (float-rounded) operator: z differs from the double cycle's
  // by float rounding, not more.
  const Vector b = Vector::from_host(backend, mass_rhs(A));
  Vector z_float(backend, b.size()), z_double(backend, b.size());
  M.apply(b, z_float);
  double_cycle.apply(b, z_double);
  const std::vector<double> zf = z_float.to_host(), zd = z_double.to_host();
  double difference = 0.0;
  for (std::size_t g = 0; g < zf.size(); ++g)
    difference = std::max(difference, std::abs(zf[g] - zd[g]));
  EXPECT_GT(difference, 0.0);
  EXPECT_LT(difference, 1e-4 * max_abs(zd));
}

TEST(PMultigrid, EveryCoarsestTreatmentConverges) {
  const Backend backend = test::backend_under_test();
  const std::vector<double> vertices = deformed_box(3, 3, 2, 0.3);
  nlohmann::json dense = pmg_config();
  dense["solver"]["preconditioner"]["coarse_solver"] = {{"type", "dense"}};
  nlohmann::json chebyshev = pmg_config();
  chebyshev["solver"]["preconditioner"]["coarsest"] = "chebyshev";
  chebyshev["solver"]["preconditioner"]["chebyshev_coarse_sweeps"] = 6;
  nlohmann::json two_level = pmg_config();
  two_level["solver"]["preconditioner"]["schedule"] = "two_level";
  for (const nlohmann::json& config : {pmg_config(), dense, chebyshev, two_level}) {
    SCOPED_TRACE(config["solver"]["preconditioner"].dump());
    const PmgSolve s = solve_with(backend, vertices, 18, 6, config);
    EXPECT_LT(s.true_residual, 1e-7);
    EXPECT_LE(s.iterations, 25);
  }
}

TEST(PMultigrid, ScheduleAndSummaryNameTheLevels) {
  EXPECT_EQ(PMultigrid::default_orders(7), (std::vector<int>{3, 1}));
  EXPECT_EQ(PMultigrid::default_orders(9), (std::vector<int>{4, 2, 1}));
  EXPECT_EQ(PMultigrid::default_orders(15), (std::vector<int>{7, 3, 1}));
  EXPECT_EQ(PMultigrid::default_orders(1), (std::vector<int>{}));
  using Schedule = PMultigrid::Schedule;
  EXPECT_EQ(PMultigrid::default_orders(7, Schedule::halving_then_unit),
            (std::vector<int>{3, 2, 1}));
  EXPECT_EQ(PMultigrid::default_orders(9, Schedule::halving_then_unit),
            (std::vector<int>{4, 2, 1}));
  EXPECT_EQ(PMultigrid::default_orders(15, Schedule::halving_then_unit),
            (std::vector<int>{7, 3, 2, 1}));
  EXPECT_EQ(PMultigrid::default_orders(7, Schedule::minus_two), (std::vector<int>{5, 3, 1}));
  EXPECT_EQ(PMultigrid::default_orders(8, Schedule::minus_two), (std::vector<int>{6, 4, 2, 1}));
  EXPECT_EQ(PMultigrid::default_orders(7, Schedule::two_level), (std::vector<int>{1}));
  EXPECT_EQ(PMultigrid::default_orders(1, Schedule::minus_two), (std::vector<int>{}));
  const Backend backend = test::backend_under_test();
  const SemPoissonOperator A(backend, 8, deformed_box(2, 2, 2, 0.0), 7);
  PMultigrid M;
  M.setup(A);
  EXPECT_EQ(M.orders(), (std::vector<int>{7, 3, 1}));
  ASSERT_NE(M.coarse_matrix(), nullptr);
  EXPECT_EQ(M.coarse_matrix()->num_rows(), 27);
  EXPECT_NE(M.summary().find("orders 7"), std::string::npos) << M.summary();
  // A second setup (same operator) rebuilds the levels with the same coarse solver.
  M.setup(A);
  EXPECT_EQ(M.num_levels(), 2u);
}

/// Every schedule of orders builds its levels and converges (true residual) with the Schwarz
/// preset on a Kershaw-mapped box at p = 7.
TEST(PMultigrid, EveryScheduleConverges) {
  const Backend backend = test::backend_under_test();
  BoxOptions options;
  options.kershaw_epsilon = 0.3;
  const HexMesh kershaw = box_mesh(3, 3, 3, options);
  const SemPoissonOperator A(backend, kershaw.num_elements, kershaw.vertices, 7);
  const std::vector<std::pair<std::string, std::vector<int>>> schedules = {
      {"halving", {7, 3, 1}},
      {"halving_then_unit", {7, 3, 2, 1}},
      {"minus_two", {7, 5, 3, 1}},
      {"two_level", {7, 1}}};
  for (const auto& [schedule, orders] : schedules) {
    SCOPED_TRACE(schedule);
    nlohmann::json config = config::load_preset("sem_pmg_schwarz");
    config["solver"]["preconditioner"]["schedule"] = schedule;
    config::SolverSetup setup = setup_for(A, config);
    const auto* pmg = dynamic_cast<const PMultigrid*>(setup.preconditioner.get());
    ASSERT_NE(pmg, nullptr);
    EXPECT_EQ(pmg->orders(), orders);
    const PmgSolve s = solve_with(backend, kershaw.vertices, kershaw.num_elements, 7, config);
    EXPECT_LT(s.true_residual, 1e-8 * (1 + 1e-6));
    EXPECT_LE(s.iterations, 30);
  }
}

/// coarse_levels_chebyshev_degree raises the degree below the finest level only: the summary
/// names it, the V- and W-cycles converge (true residual), and on a Kershaw-mapped box the
/// stronger coarse-grid correction takes fewer iterations than the preset's.
TEST(PMultigrid, CoarseLevelsChebyshevDegree) {
  const Backend backend = test::backend_under_test();
  BoxOptions options;
  options.kershaw_epsilon = 0.3;
  const HexMesh kershaw = box_mesh(6, 6, 6, options);
  const nlohmann::json preset = config::load_preset("sem_pmg_schwarz");
  const PmgSolve plain = solve_with(backend, kershaw.vertices, kershaw.num_elements, 7, preset);
  for (const std::string cycle : {"v", "w"}) {
    SCOPED_TRACE(cycle);
    nlohmann::json config = preset;
    config["solver"]["preconditioner"]["coarse_levels_chebyshev_degree"] = 8;
    config["solver"]["preconditioner"]["cycle"] = cycle;
    const SemPoissonOperator A(backend, kershaw.num_elements, kershaw.vertices, 7);
    config::SolverSetup setup = setup_for(A, config);
    EXPECT_NE(setup.preconditioner->summary().find("degree 3 (coarser levels 8)"),
              std::string::npos)
        << setup.preconditioner->summary();
    // The smoothers built: degree 3 on the finest level, 8 on the one below.
    const auto* pmg = dynamic_cast<const PMultigrid*>(setup.preconditioner.get());
    ASSERT_NE(pmg, nullptr);
    ASSERT_EQ(pmg->num_levels(), 2u);
    for (std::size_t l = 0; l < 2; ++l) {
      const auto* smoother =
          dynamic_cast<const PreconditionedChebyshevSmoother*>(&pmg->level(l).pre_smoother());
      ASSERT_NE(smoother, nullptr) << "level " << l;
      EXPECT_EQ(smoother->degree(), l == 0 ? 3 : 8) << "level " << l;
    }
    const PmgSolve s = solve_with(backend, kershaw.vertices, kershaw.num_elements, 7, config);
    EXPECT_LT(s.true_residual, 1e-8 * (1 + 1e-6));
    EXPECT_LT(s.iterations, plain.iterations);
  }
  PMultigrid::Parameters bad;
  bad.coarse_levels_chebyshev_degree = -1;
  EXPECT_THROW(PMultigrid{bad}, ConfigError);
}

TEST(PMultigrid, ProfiledCyclesTimeEveryLevelAndLeaveTheCycleUnchanged) {
  // Orders 5, 2, 1: the components of the two smoothed levels and the AMG coarse solve, on the
  // backend's queue (timing events on cuda); apply gives the same bits after the profiled cycles
  // on the host backends, the same values to rounding on cuda (whose atomic assembly sums in no
  // fixed order).
  const Backend backend = test::backend_under_test();
  const SemPoissonOperator A(backend, 12, deformed_box(3, 2, 2, 0.2), 5);
  PMultigrid M;
  M.setup(A);
  ASSERT_EQ(M.num_levels(), 2u);
  const auto n = static_cast<std::size_t>(A.num_rows());
  const Vector bv = Vector::from_host(backend, mass_rhs(A));
  Vector z(backend, n);
  M.apply(bv, z);
  const std::vector<double> before = z.to_host();

  const std::vector<CycleComponentTime> profile = M.profile_cycle(bv, 3);

  ASSERT_EQ(profile.size(), 11u);
  EXPECT_EQ(profile.front().level, 0u);
  EXPECT_EQ(profile.front().component, "pre_smoothing");
  EXPECT_EQ(profile[6].level, 1u);
  EXPECT_EQ(profile[6].component, "residual");
  EXPECT_EQ(profile.back().level, 2u);
  EXPECT_EQ(profile.back().component, "coarse_solve");
  for (const CycleComponentTime& entry : profile) {
    EXPECT_TRUE(std::isfinite(entry.seconds) && entry.seconds >= 0.0)
        << entry.level << " " << entry.component << " " << entry.seconds;
  }
  EXPECT_GT(profile.front().seconds, 0.0);
  M.apply(bv, z);
  const std::vector<double> after = z.to_host();
  const double tolerance = backend.is_device() ? 1e-10 * max_abs(before) : 0.0;
  for (std::size_t g = 0; g < n; ++g) {
    ASSERT_LE(std::abs(after[g] - before[g]), tolerance) << "entry " << g;
  }
}

TEST(PMultigrid, MisuseIsAClearError) {
  const Backend backend = test::backend_under_test();
  PMultigrid M;
  const CsrMatrix csr = CsrMatrix::from_coo(
      backend, SemPoissonOperator(backend, 8, deformed_box(2, 2, 2, 0.0), 1).assembled_matrix());
  EXPECT_THROW(M.setup(csr), NotSupported);
  PMultigrid::Parameters bad;
  bad.orders = {3, 2};
  EXPECT_THROW(PMultigrid{bad}, ConfigError);
  bad.orders = {2, 3, 1};
  EXPECT_THROW(PMultigrid{bad}, ConfigError);
  PMultigrid::Parameters high;
  high.orders = {5, 1};
  PMultigrid M2(high);
  const SemPoissonOperator A(backend, 8, deformed_box(2, 2, 2, 0.0), 4);
  EXPECT_THROW(M2.setup(A), ConfigError);
  // After the failed setup the object is empty and can be set up for a higher order.
  const SemPoissonOperator B(backend, 8, deformed_box(2, 2, 2, 0.0), 6);
  M2.setup(B);
  EXPECT_EQ(M2.orders(), (std::vector<int>{6, 5, 1}));
}

TEST(PMultigrid, BackendIterationsMatchTheReferenceWithinOne) {
  const std::vector<double> vertices = deformed_box(2, 2, 2, 0.3);
  nlohmann::json config = pmg_config();
  config["solver"]["preconditioner"]["coarse_solver"] = {{"type", "dense"}};
  const PmgSolve here = solve_with(test::backend_under_test(), vertices, 8, 4, config);
  const PmgSolve reference = solve_with(Backend::reference(), vertices, 8, 4, config);
  EXPECT_LE(std::abs(here.iterations - reference.iterations), 1);
}

}  // namespace
}  // namespace kryflow::sem
