// Block relaxation (kernels/block_relaxation and its public users BlockJacobiPreconditioner,
// MulticolorGaussSeidel and MulticolorIluPreconditioner) on the backend under test against the
// reference backend and against textbook computations on the host (symmetric Gauss-Seidel with
// full rows, ILU(0) and DILU in the natural order), on random
// block matrices (B = 1..8, odd sizes, block rows holding only their diagonal block, one long
// block row that takes a color of its own), both value precisions and both inverse precisions;
// and against the definitions: D_I D_I^-1 = I, a valid grouping by color, one color = block
// Jacobi, n colors = sequential Gauss-Seidel in the coloring's order, singular blocks reported
// with their block row; solvers by the true residual computed on the host.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernels/coloring/coloring.hpp"
#include "kryflow/config/registry.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/bsr_matrix.hpp"
#include "kryflow/linalg/coloring.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/preconditioners/block_jacobi.hpp"
#include "kryflow/preconditioners/incomplete_lu.hpp"
#include "kryflow/preconditioners/multicolor_gauss_seidel.hpp"
#include "kryflow/preconditioners/threshold_ilu.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

constexpr Precision kPrecisions[] = {Precision::float64, Precision::float32};

/// The sweep kernels to run on the backend under test: both cuda kernels, else the one kernel.
std::vector<SweepKernel> kernels_under_test() {
#ifdef KRYFLOW_TEST_BACKEND_IS_CUDA
  return {SweepKernel::coefficient, SweepKernel::warp, SweepKernel::block_row};
#else
  return {SweepKernel::automatic};
#endif
}

/// A random nonsymmetric block matrix of nb block rows: the scalar pattern of random_sparse
/// (empty rows, a long row) plus the diagonal and a full block row nb / 2, made into B x B random
/// blocks, strictly diagonally dominant (kronecker_block), so every diagonal block is nonsingular.
CooMatrix random_block_system(index_t nb, int B, std::uint64_t seed) {
  CooMatrix pattern = test::random_sparse(nb, nb, 6, true, seed);
  for (index_t i = 0; i < nb; ++i) pattern.push_back(i, i, 1.0);
  for (index_t j = 0; j < nb; ++j) pattern.push_back(nb / 2, j, 1.0);  // a color of its own
  return kronecker_block(pattern, B, seed + 1, false);
}

std::unique_ptr<LinearOperator> as_operator(const CooMatrix& coo, int B, Precision precision,
                                            const Backend& backend) {
  CsrMatrix csr = CsrMatrix::from_coo(backend, coo).with_precision(precision);
  if (B == 1) return std::make_unique<CsrMatrix>(std::move(csr));
  return std::make_unique<BsrMatrix>(BsrMatrix::from_csr(csr, B, precision));
}

TEST(BlockRelaxation, GroupByColorIsAStableGroupingOfEveryVertex) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  std::mt19937_64 rng(seed);
  const index_t n = 1001;
  const index_t num_colors = 7;
  std::vector<index_t> colors(static_cast<std::size_t>(n));
  for (auto& c : colors) c = static_cast<index_t>(rng() % (num_colors - 1));  // color 6 empty
  const Array<index_t> device_colors = Array<index_t>::from_host(backend, colors);
  Array<index_t> offsets(backend, num_colors + 1);
  Array<index_t> rows(backend, static_cast<std::size_t>(n));
  kernels::coloring::group_by_color(backend, device_colors.span(), num_colors, offsets.span(),
                                    rows.span());
  const std::vector<index_t> o = offsets.to_host();
  const std::vector<index_t> r = rows.to_host();
  ASSERT_EQ(o.front(), 0);
  ASSERT_EQ(o.back(), n);
  EXPECT_EQ(o[6], o[7]);
  for (index_t c = 0; c < num_colors; ++c) {
    for (index_t q = o[c]; q < o[c + 1]; ++q) {
      EXPECT_EQ(colors[r[q]], c);
      if (q > o[c]) EXPECT_LT(r[q - 1], r[q]);
    }
  }
}

TEST(BlockRelaxation, ColoringOfABlockMatrixIsValidAndEqualOnEveryBackend) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  const CooMatrix coo = random_block_system(203, 3, seed);
  const auto A = as_operator(coo, 3, Precision::float64, backend);
  const auto R = as_operator(coo, 3, Precision::float64, Backend::reference());
  for (const auto algorithm :
       {ColoringAlgorithm::greedy, ColoringAlgorithm::jones_plassmann_luby}) {
    const MulticolorOrdering mine = color_matrix(*A, algorithm, seed);
    const MulticolorOrdering oracle = color_matrix(*R, algorithm, seed);
    EXPECT_EQ(mine.color_offsets, oracle.color_offsets);
    EXPECT_EQ(mine.rows.to_host(), oracle.rows.to_host());
    // Valid: no stored block couples two block rows of one color.
    std::vector<index_t> color(203);
    const std::vector<index_t> rows = mine.rows.to_host();
    for (index_t c = 0; c < mine.num_colors; ++c) {
      for (index_t q = mine.color_offsets[c]; q < mine.color_offsets[c + 1]; ++q) {
        color[rows[q]] = c;
      }
    }
    for (std::size_t k = 0; k < coo.num_entries(); ++k) {
      const index_t I = coo.row_idx[k] / 3;
      const index_t J = coo.col_idx[k] / 3;
      if (I != J) EXPECT_NE(color[I], color[J]) << "blocks " << I << ", " << J;
    }
    // The long block row is adjacent to every other one: a color of its own.
    index_t singletons = 0;
    for (index_t c = 0; c < mine.num_colors; ++c) singletons += mine.color_size(c) == 1 ? 1 : 0;
    EXPECT_GE(singletons, 1);
  }
}

/// x after `sweeps` symmetric sweeps from a random x, with the given parameters.
std::vector<double> relaxed(const LinearOperator& A, MulticolorGaussSeidel::Parameters p,
                            const std::vector<double>& b, const std::vector<double>& x0) {
  MulticolorGaussSeidel sgs(p);
  sgs.setup(A);
  Vector x = Vector::from_host(A.backend(), x0);
  sgs.relax(Vector::from_host(A.backend(), b), x, false);
  return x.to_host();
}

TEST(BlockRelaxation, SweepsAndBlockJacobiMatchTheReference) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  for (int B = 1; B <= 8; ++B) {
    const index_t nb = 97 + 2 * B;
    const CooMatrix coo = random_block_system(nb, B, seed + B);
    const std::vector<double> b = test::random_vector(coo.num_rows, seed + 100 + B);
    const std::vector<double> x0 = test::random_vector(coo.num_rows, seed + 200 + B);
    for (const Precision values : kPrecisions) {
      const auto A = as_operator(coo, B, values, backend);
      const auto R = as_operator(coo, B, values, Backend::reference());
      for (const Precision inverse : kPrecisions) {
        SCOPED_TRACE("B " + std::to_string(B) + ", values " + std::string(to_string(values)) +
                     ", inverses " + std::string(to_string(inverse)));
        // Block Jacobi: the same formulas in the same order (tolerance 0 up to the last bit).
        BlockJacobiPreconditioner::Parameters bj;
        bj.omega = 0.9;
        bj.inverse_precision = inverse;
        BlockJacobiPreconditioner mine(bj), oracle(bj);
        mine.setup(*A);
        oracle.setup(*R);
        Vector z(backend, b.size()), zr(Backend::reference(), b.size());
        mine.apply(Vector::from_host(backend, b), z);
        oracle.apply(Vector::from_host(Backend::reference(), b), zr);
        EXPECT_LE(test::relative_max_difference(z.to_host(), zr.to_host()), 1e-15);
        // Two symmetric sweeps, damped, from a random x.
        MulticolorGaussSeidel::Parameters p;
        p.sweeps = 2;
        p.omega = 0.8;
        p.coloring = ColoringAlgorithm::jones_plassmann_luby;
        p.seed = seed;
        p.inverse_precision = inverse;
        const std::vector<double> expected = relaxed(*R, p, b, x0);
        for (const SweepKernel kernel : kernels_under_test()) {
          SCOPED_TRACE(std::string("kernel ") + to_string(kernel));
          p.kernel = kernel;
          const std::vector<double> x = relaxed(*A, p, b, x0);
          // The coefficient and block_row kernels and the host backends keep the reference's
          // order; the warp kernel adds the row's terms in a tree: a few ulps of the row's
          // largest term.
          const double tolerance = kernel == SweepKernel::warp ? 1e-12 : 1e-15;
          EXPECT_LE(test::relative_max_difference(x, expected), tolerance);
        }
      }
    }
  }
}

TEST(BlockRelaxation, InverseBlocksInvertTheDiagonalBlocks) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  const int B = 5;
  const CooMatrix coo = random_block_system(31, B, seed);
  const auto A = as_operator(coo, B, Precision::float64, backend);
  BlockJacobiPreconditioner bj;
  bj.setup(*A);
  // z = D^-1 r on unit vectors e_k gives the columns of D^-1; D (from the triplets) times them
  // must give e_k.
  std::vector<std::vector<double>> D(coo.num_rows, std::vector<double>(B, 0.0));
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    if (coo.row_idx[k] / B == coo.col_idx[k] / B)
      D[coo.row_idx[k]][coo.col_idx[k] % B] = coo.values[k];
  }
  for (int c = 0; c < B; ++c) {
    std::vector<double> e(coo.num_rows, 0.0);
    for (index_t I = 0; I < 31; ++I) e[I * B + c] = 1.0;
    Vector z(backend, e.size());
    bj.apply(Vector::from_host(backend, e), z);
    const std::vector<double> col = z.to_host();
    for (index_t i = 0; i < coo.num_rows; ++i) {
      double s = 0.0;
      const index_t I = i / B;
      for (int j = 0; j < B; ++j) s += D[i][j] * col[I * B + j];
      EXPECT_NEAR(s, i % B == c ? 1.0 : 0.0, 1e-13) << "row " << i << ", column " << c;
    }
  }
}

TEST(BlockRelaxation, SingularOrMissingDiagonalBlocksNameTheirBlockRow) {
  const Backend backend = test::backend_under_test();
  const int B = 4;
  CooMatrix coo = random_block_system(9, B, 7);
  // Block row 4 (0-based 3): make its diagonal block's last two rows equal.
  std::vector<double> row2(B, 0.0);
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    if (coo.row_idx[k] == 3 * B + 2 && coo.col_idx[k] / B == 3)
      row2[coo.col_idx[k] % B] = coo.values[k];
  }
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    if (coo.row_idx[k] == 3 * B + 3 && coo.col_idx[k] / B == 3)
      coo.values[k] = row2[coo.col_idx[k] % B];
  }
  const auto A = as_operator(coo, B, Precision::float64, backend);
  BlockJacobiPreconditioner bj;
  try {
    bj.setup(*A);
    FAIL() << "a singular diagonal block was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("block row 4 "), std::string::npos) << e.what();
  }
  MulticolorGaussSeidelPreconditioner sgs;
  EXPECT_THROW(sgs.setup(*A), InvalidInput);
  // No diagonal block at all in block row 2 (0-based 1): a 2 x 2 block pattern [0 X; X X].
  CooMatrix hole;
  hole.num_rows = hole.num_cols = 2 * B;
  for (index_t i = 0; i < 2 * B; ++i) {
    for (index_t j = 0; j < 2 * B; ++j) {
      if (i / B == 1 && j / B == 1) continue;
      hole.push_back(i, j, i == j ? 10.0 : 1.0 + 0.01 * (i + j));
    }
  }
  const auto H = as_operator(hole, B, Precision::float64, backend);
  try {
    bj.setup(*H);
    FAIL() << "a missing diagonal block was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("block row 2 "), std::string::npos) << e.what();
  }
}

TEST(BlockRelaxation, OneColorIsBlockJacobiAndNColorsAreSequentialGaussSeidel) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  // A block diagonal matrix has one color: a forward sweep from 0 is block Jacobi.
  const int B = 3;
  CooMatrix diagonal_pattern;
  diagonal_pattern.num_rows = diagonal_pattern.num_cols = 41;
  for (index_t i = 0; i < 41; ++i) diagonal_pattern.push_back(i, i, 1.0);
  const CooMatrix block_diagonal = kronecker_block(diagonal_pattern, B, seed, false);
  const auto D = as_operator(block_diagonal, B, Precision::float64, backend);
  const std::vector<double> b = test::random_vector(41 * B, seed);
  MulticolorGaussSeidel::Parameters p;
  p.symmetric = false;
  MulticolorGaussSeidel sweeps(p);
  sweeps.setup(*D);
  EXPECT_EQ(sweeps.ordering().num_colors, 1);
  Vector x(backend, b.size());
  sweeps.relax(Vector::from_host(backend, b), x, true);
  BlockJacobiPreconditioner bj;
  bj.setup(*D);
  Vector z(backend, b.size());
  bj.apply(Vector::from_host(backend, b), z);
  EXPECT_EQ(x.to_host(), z.to_host());

  // A dense 11 x 11 matrix: greedy gives row i color i, so a forward sweep is Gauss-Seidel in
  // row order, computed here on the host from the triplets.
  const index_t n = 11;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> off(-1.0, 1.0);
  std::vector<std::vector<double>> a(n, std::vector<double>(n));
  CooMatrix dense;
  dense.num_rows = dense.num_cols = n;
  for (index_t i = 0; i < n; ++i) {
    for (index_t j = 0; j < n; ++j) {
      a[i][j] = i == j ? 12.0 + off(rng) : off(rng);
      dense.push_back(i, j, a[i][j]);
    }
  }
  const auto A = as_operator(dense, 1, Precision::float64, backend);
  p.coloring = ColoringAlgorithm::greedy;
  MulticolorGaussSeidel gs(p);
  gs.setup(*A);
  EXPECT_EQ(gs.ordering().num_colors, n);
  const std::vector<double> rhs = test::random_vector(n, seed + 1);
  std::vector<double> expected = test::random_vector(n, seed + 2);
  Vector y = Vector::from_host(backend, expected);
  gs.forward(Vector::from_host(backend, rhs), y);
  for (index_t i = 0; i < n; ++i) {
    double s = rhs[i];
    for (index_t j = 0; j < n; ++j) {
      if (j != i) s -= a[i][j] * expected[j];
    }
    expected[i] = s / a[i][i];
  }
  EXPECT_LE(test::relative_max_difference(y.to_host(), expected), 1e-14);
  // The natural coloring (every row its own color, in order) is the same sweep.
  p.coloring = ColoringAlgorithm::natural;
  MulticolorGaussSeidel natural(p);
  natural.setup(*A);
  EXPECT_EQ(natural.ordering().num_colors, n);
  Vector w = Vector::from_host(backend, test::random_vector(n, seed + 2));
  natural.forward(Vector::from_host(backend, rhs), w);
  EXPECT_LE(test::relative_max_difference(w.to_host(), expected), 1e-14);
}

TEST(BlockRelaxation, KrylovSolversWithBlockPreconditionersReachTheTrueResidual) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  const int B = 4;
  const CooMatrix coo = kronecker_block(poisson3d(9), B, seed, false);
  const std::vector<double> b = test::random_vector(coo.num_rows, seed);
  StopCriteria criteria;
  criteria.relative_tolerance = 1e-9;
  criteria.max_iterations = 500;
  for (const Precision values : kPrecisions) {
    const auto A = as_operator(coo, B, values, backend);
    const auto solve = [&](KrylovSolver& solver, Preconditioner& M, const char* what) {
      SCOPED_TRACE(std::string(what) + ", values " + std::string(to_string(values)));
      M.setup(*A);
      Vector x = Vector::constant(backend, b.size(), 0.0);
      const SolveReport report = solver.solve(*A, M, Vector::from_host(backend, b), x);
      EXPECT_EQ(report.status, SolveStatus::converged) << report.reason;
      // float32 values solve a perturbed system: the true residual of the stored one (A's
      // values rounded to float) is what the solver reduced; against the double triplets
      // it stays near the float rounding.
      const double bound = values == Precision::float64 ? 2e-9 : 1e-6;
      EXPECT_LE(test::true_relative_residual(coo, x.to_host(), b), bound);
      return report.iterations;
    };
    MulticolorGaussSeidel::Parameters p;
    MulticolorGaussSeidelPreconditioner sgs(p);
    Bicgstab bicgstab(criteria);
    const int sgs_iterations = solve(bicgstab, sgs, "bicgstab + sgs");
    Gmres gmres(criteria, 30, false);
    solve(gmres, sgs, "gmres + sgs");
    p.inverse_precision = Precision::float32;
    p.sweeps = 2;
    MulticolorGaussSeidelPreconditioner sgs32(p);
    Gmres fgmres(criteria, 30, true);
    solve(fgmres, sgs32, "fgmres + 2 sgs sweeps, float inverses");
    BlockJacobiPreconditioner bj;
    const int bj_iterations = solve(bicgstab, bj, "bicgstab + block jacobi");
    EXPECT_LT(sgs_iterations, bj_iterations);
    MulticolorIluPreconditioner ilu0;
    const int ilu_iterations = solve(gmres, ilu0, "gmres + ilu0");
    MulticolorIluPreconditioner::Parameters dp;
    dp.factorization = IluFactorization::dilu;
    dp.inverse_precision = Precision::float32;
    MulticolorIluPreconditioner dilu(dp);
    solve(fgmres, dilu, "fgmres + dilu, float inverses");
    solve(bicgstab, dilu, "bicgstab + dilu, float inverses");
    EXPECT_LT(ilu_iterations, bj_iterations);
  }
}

TEST(BlockRelaxation, BlockPresetsConvergeOnANonsymmetricBlockSystem) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  const int B = 5;
  const CooMatrix coo = kronecker_block(poisson3d(8), B, seed, false);
  const auto A = as_operator(coo, B, Precision::float64, backend);
  const std::vector<double> b = test::random_vector(coo.num_rows, seed);
  for (const char* preset :
       {"bicgstab_mcsgs", "bicgstab_block_jacobi", "gmres_ilu0", "fgmres_dilu"}) {
    SCOPED_TRACE(preset);
    config::SolverSetup setup = config::build_solver(config::load_preset(preset));
    setup.preconditioner->setup(*A);
    Vector x = Vector::constant(backend, b.size(), 0.0);
    const SolveReport report =
        setup.solver->solve(*A, *setup.preconditioner, Vector::from_host(backend, b), x);
    EXPECT_EQ(report.status, SolveStatus::converged) << report.reason;
    EXPECT_LE(test::true_relative_residual(coo, x.to_host(), b), 2e-8);
  }
}

/// The n x n dense matrix of coo's triplets.
std::vector<std::vector<double>> dense_of(const CooMatrix& coo) {
  std::vector<std::vector<double>> a(coo.num_rows, std::vector<double>(coo.num_cols, 0.0));
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    a[coo.row_idx[k]][coo.col_idx[k]] += coo.values[k];
  }
  return a;
}

/// a x for a dense square a (rows of doubles).
std::vector<double> dense_times(const std::vector<std::vector<double>>& a,
                                const std::vector<double>& x) {
  std::vector<double> y(x.size(), 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    for (std::size_t j = 0; j < x.size(); ++j) y[i] += a[i][j] * x[j];
  }
  return y;
}

/// x = D^-1 t for a B x B block D (Gaussian elimination with partial pivoting on copies).
std::vector<double> solve_block(std::vector<std::vector<double>> D, std::vector<double> t) {
  const int B = static_cast<int>(t.size());
  for (int k = 0; k < B; ++k) {
    int p = k;
    for (int i = k + 1; i < B; ++i) {
      if (std::abs(D[i][k]) > std::abs(D[p][k])) p = i;
    }
    std::swap(D[k], D[p]);
    std::swap(t[k], t[p]);
    for (int i = k + 1; i < B; ++i) {
      const double f = D[i][k] / D[k][k];
      for (int c = k; c < B; ++c) D[i][c] -= f * D[k][c];
      t[i] -= f * t[k];
    }
  }
  std::vector<double> x(B);
  for (int i = B - 1; i >= 0; --i) {
    double s = t[i];
    for (int c = i + 1; c < B; ++c) s -= D[i][c] * x[c];
    x[i] = s / D[i][i];
  }
  return x;
}

/// Textbook block symmetric Gauss-Seidel with full rows, block rows visited in `order` forward
/// and in reverse backward (the multicolor sweep when `order` groups the rows by color).
std::vector<double> textbook_sgs(const std::vector<std::vector<double>>& a, int B,
                                 const std::vector<index_t>& order, int sweeps, double omega,
                                 const std::vector<double>& b, std::vector<double> x) {
  const auto nb = static_cast<index_t>(order.size());
  auto update = [&](index_t I) {
    std::vector<double> t(B);
    std::vector<std::vector<double>> D(B, std::vector<double>(B));
    for (int i = 0; i < B; ++i) {
      t[i] = b[I * B + i];
      for (index_t j = 0; j < nb * B; ++j) {
        if (j / B == I) {
          D[i][j % B] = a[I * B + i][j];
        } else {
          t[i] -= a[I * B + i][j] * x[j];
        }
      }
    }
    const std::vector<double> d = solve_block(D, t);
    for (int i = 0; i < B; ++i) x[I * B + i] = (1.0 - omega) * x[I * B + i] + omega * d[i];
  };
  for (int s = 0; s < sweeps; ++s) {
    for (index_t q = 0; q < nb; ++q) update(order[q]);
    for (index_t q = nb - 1; q >= 0; --q) update(order[q]);
  }
  return x;
}

TEST(BlockRelaxation, SymmetricSweepsWithSavedProductsAreTextbookGaussSeidel) {
  // The sweeps reuse the half products of the sweep before (and skip the repeated color when
  // omega = 1): against full-row block Gauss-Seidel in the coloring's order on the host.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  const int B = 3;
  const index_t nb = 61;
  const CooMatrix coo = random_block_system(nb, B, seed);
  const auto dense = dense_of(coo);
  const auto A = as_operator(coo, B, Precision::float64, backend);
  const std::vector<double> b = test::random_vector(coo.num_rows, seed + 1);
  const std::vector<double> x0 = test::random_vector(coo.num_rows, seed + 2);
  for (const double omega : {1.0, 0.7}) {
    for (const int sweeps : {1, 3}) {
      for (const bool from_zero : {true, false}) {
        SCOPED_TRACE("omega " + std::to_string(omega) + ", sweeps " + std::to_string(sweeps) +
                     (from_zero ? ", from 0" : ", from a random x"));
        MulticolorGaussSeidel::Parameters p;
        p.omega = omega;
        p.sweeps = sweeps;
        p.seed = seed;
        for (const SweepKernel kernel : kernels_under_test()) {
          p.kernel = kernel;
          MulticolorGaussSeidel sgs(p);
          sgs.setup(*A);
          EXPECT_GE(sgs.ordering().num_colors, 3);
          Vector x =
              Vector::from_host(backend, from_zero ? std::vector<double>(x0.size(), 7.0) : x0);
          sgs.relax(Vector::from_host(backend, b), x, from_zero);
          const std::vector<double> expected =
              textbook_sgs(dense, B, sgs.ordering().rows.to_host(), sweeps, omega, b,
                           from_zero ? std::vector<double>(x0.size(), 0.0) : x0);
          EXPECT_LE(test::relative_max_difference(x.to_host(), expected), 1e-12)
              << to_string(kernel);
        }
      }
    }
  }
}

/// Textbook ILU(0) or DILU of a dense matrix on its pattern (entries != 0), natural order
/// (Saad, Algorithm 10.4; DILU: d_i = a_ii - sum_{k < i} a_ik a_ki / d_k), and z = M^-1 r.
std::vector<double> textbook_ilu_apply(std::vector<std::vector<double>> a, bool dilu,
                                       const std::vector<double>& r) {
  const auto n = static_cast<index_t>(a.size());
  std::vector<std::vector<bool>> stored(n, std::vector<bool>(n));
  for (index_t i = 0; i < n; ++i) {
    for (index_t j = 0; j < n; ++j) stored[i][j] = a[i][j] != 0.0;
  }
  std::vector<double> d(n);
  if (dilu) {
    for (index_t i = 0; i < n; ++i) {
      d[i] = a[i][i];
      for (index_t k = 0; k < i; ++k) {
        if (stored[i][k] && stored[k][i]) d[i] -= a[i][k] * a[k][i] / d[k];
      }
    }
  } else {
    for (index_t i = 1; i < n; ++i) {
      for (index_t k = 0; k < i; ++k) {
        if (!stored[i][k]) continue;
        a[i][k] /= a[k][k];
        for (index_t j = k + 1; j < n; ++j) {
          if (stored[i][j]) a[i][j] -= a[i][k] * a[k][j];
        }
      }
    }
  }
  std::vector<double> y(n), z(n);
  for (index_t i = 0; i < n; ++i) {
    double s = r[i];
    for (index_t k = 0; k < i; ++k) s -= a[i][k] * y[k];
    y[i] = dilu ? s / d[i] : s;
  }
  for (index_t i = n - 1; i >= 0; --i) {
    double s = 0.0;
    for (index_t k = i + 1; k < n; ++k) s += a[i][k] * z[k];
    z[i] = dilu ? y[i] - s / d[i] : (y[i] - s) / a[i][i];
  }
  return z;
}

TEST(BlockRelaxation, IluZeroAndDiluInTheNaturalOrderAreTheTextbookFactorizations) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  // A random nonsymmetric sparse matrix with a dominant diagonal (CSR, 1 x 1 blocks).
  const CooMatrix coo = random_block_system(37, 1, seed);
  const auto A = as_operator(coo, 1, Precision::float64, backend);
  const std::vector<double> r = test::random_vector(coo.num_rows, seed + 1);
  for (const IluFactorization kind : {IluFactorization::ilu0, IluFactorization::dilu}) {
    SCOPED_TRACE(to_string(kind));
    MulticolorIluPreconditioner::Parameters p;
    p.factorization = kind;
    p.coloring = ColoringAlgorithm::natural;
    MulticolorIluPreconditioner M(p);
    M.setup(*A);
    Vector z(backend, r.size());
    M.apply(Vector::from_host(backend, r), z);
    const std::vector<double> expected =
        textbook_ilu_apply(dense_of(coo), kind == IluFactorization::dilu, r);
    EXPECT_LE(test::relative_max_difference(z.to_host(), expected), 1e-12);
  }
  // A block tridiagonal matrix (B = 3) has no fill: block ILU(0) in the natural order is its
  // exact LU factorization, so M^-1 A x = x.
  const int B = 3;
  const index_t nb = 25;
  CooMatrix path;
  path.num_rows = path.num_cols = nb;
  for (index_t i = 0; i < nb; ++i) {
    for (index_t j = std::max<index_t>(0, i - 1); j <= std::min<index_t>(nb - 1, i + 1); ++j) {
      path.push_back(i, j, 1.0);
    }
  }
  const CooMatrix tridiagonal = kronecker_block(path, B, seed + 3, false);
  const auto T = as_operator(tridiagonal, B, Precision::float64, backend);
  const std::vector<double> x = test::random_vector(tridiagonal.num_rows, seed + 4);
  const auto dense = dense_of(tridiagonal);
  const std::vector<double> b = dense_times(dense, x);
  MulticolorIluPreconditioner::Parameters p;
  p.coloring = ColoringAlgorithm::natural;
  MulticolorIluPreconditioner M(p);
  M.setup(*T);
  Vector z(backend, x.size());
  M.apply(Vector::from_host(backend, b), z);
  EXPECT_LE(test::relative_max_difference(z.to_host(), x), 1e-11);
}

TEST(BlockRelaxation, MulticolorIluMatchesTheReferenceForEveryBlockSize) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  for (int B = 1; B <= 8; ++B) {
    const index_t nb = 89 + 2 * B;
    const CooMatrix coo = random_block_system(nb, B, seed + B);
    const std::vector<double> r = test::random_vector(coo.num_rows, seed + 100 + B);
    for (const Precision values : kPrecisions) {
      const auto A = as_operator(coo, B, values, backend);
      const auto R = as_operator(coo, B, values, Backend::reference());
      for (const IluFactorization kind : {IluFactorization::ilu0, IluFactorization::dilu}) {
        for (const Precision inverse : kPrecisions) {
          SCOPED_TRACE("B " + std::to_string(B) + ", values " + std::string(to_string(values)) +
                       ", " + to_string(kind) + ", inverses " + std::string(to_string(inverse)));
          MulticolorIluPreconditioner::Parameters p;
          p.factorization = kind;
          p.seed = seed;
          p.inverse_precision = inverse;
          MulticolorIluPreconditioner oracle(p);
          oracle.setup(*R);
          Vector zr(Backend::reference(), r.size());
          oracle.apply(Vector::from_host(Backend::reference(), r), zr);
          for (const SweepKernel kernel : kernels_under_test()) {
            p.kernel = kernel;
            MulticolorIluPreconditioner mine(p);
            mine.setup(*A);
            Vector z(backend, r.size());
            mine.apply(Vector::from_host(backend, r), z);
            // The factorization is the reference's code on every backend; the solves keep its
            // order except in the warp kernel.
            const double tolerance = kernel == SweepKernel::warp ? 1e-11 : 1e-14;
            EXPECT_LE(test::relative_max_difference(z.to_host(), zr.to_host()), tolerance)
                << to_string(kernel);
          }
        }
      }
    }
  }
}

TEST(BlockRelaxation, SingularIluPivotBlocksNameTheirBlockRow) {
  const Backend backend = test::backend_under_test();
  // [D C; C^T D] with D singular... simpler: block row 2's diagonal block zero, so both
  // factorizations break down at its pivot (1-based block row 2).
  const int B = 2;
  CooMatrix coo;
  coo.num_rows = coo.num_cols = 3 * B;
  for (index_t i = 0; i < 3 * B; ++i) {
    for (index_t j = 0; j < 3 * B; ++j) {
      if (i / B == 1 && j / B == 1) {
        coo.push_back(i, j, 0.0);
      } else if (i / B != j / B) {
        coo.push_back(i, j, 0.0);  // stored zeros: the coupling blocks carry no update
      } else {
        coo.push_back(i, j, i == j ? 4.0 : 1.0);
      }
    }
  }
  const auto A = as_operator(coo, B, Precision::float64, backend);
  for (const IluFactorization kind : {IluFactorization::ilu0, IluFactorization::dilu}) {
    MulticolorIluPreconditioner::Parameters p;
    p.factorization = kind;
    MulticolorIluPreconditioner M(p);
    try {
      M.setup(*A);
      FAIL() << "a singular pivot block was accepted";
    } catch (const InvalidInput& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("block row 2 "), std::string::npos) << what;
      EXPECT_NE(what.find(to_string(kind)), std::string::npos) << what;
    }
  }
}

/// The CSR arrays of coo on the host (columns sorted, duplicates summed by CsrMatrix).
struct HostCsr {
  index_t n = 0;
  std::vector<index_t> row_ptr, col_idx;
  std::vector<double> values;
};
HostCsr host_csr(const CooMatrix& coo) {
  const CsrMatrix csr = CsrMatrix::from_coo(Backend::reference(), coo);
  return {coo.num_rows, csr.row_ptr().to_host(), csr.col_idx().to_host(), csr.values_to_host()};
}

/// z = U^-1 L^-1 r from the host factors, row by row.
std::vector<double> solve_with_factors(const IlutFactors& f, const std::vector<double>& r) {
  std::vector<double> y(r.size()), z(r.size());
  for (index_t i = 0; i < f.n; ++i) {
    double s = r[i];
    for (index_t k = f.lower_ptr[i]; k < f.lower_ptr[i + 1]; ++k)
      s -= f.lower_values[k] * y[f.lower_col[k]];
    y[i] = s;
  }
  for (index_t i = f.n - 1; i >= 0; --i) {
    double s = y[i];
    for (index_t k = f.upper_ptr[i]; k < f.upper_ptr[i + 1]; ++k)
      s -= f.upper_values[k] * z[f.upper_col[k]];
    z[i] = s / f.diagonal[i];
  }
  return z;
}

TEST(Ilut, WithoutDroppingItIsTheExactLuAndItsSolvesMatchTheHost) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  const CooMatrix coo = random_block_system(83, 1, seed);
  const auto dense = dense_of(coo);
  const std::vector<double> x = test::random_vector(coo.num_rows, seed + 1);
  const std::vector<double> b = dense_times(dense, x);
  const auto A = as_operator(coo, 1, Precision::float64, backend);
  // tau = 0 and unlimited fill: the LU factorization without pivoting, so M^-1 A x = x.
  IlutPreconditioner::Parameters exact;
  exact.ilut.drop_tolerance = 0.0;
  exact.ilut.fill = -1;
  IlutPreconditioner lu(exact);
  lu.setup(*A);
  Vector z(backend, x.size());
  lu.apply(Vector::from_host(backend, b), z);
  EXPECT_LE(test::relative_max_difference(z.to_host(), x), 1e-10);
  EXPECT_GT(lu.lower_levels(), 1);
  // The default ILUT: the level-scheduled solves on the backend are the host's solves with the
  // same factors, and the fill stays within A's row counts.
  IlutPreconditioner ilut;
  ilut.setup(*A);
  const IlutFactors& f = ilut.factors();
  const HostCsr h = host_csr(coo);
  for (index_t i = 0; i < f.n; ++i) {
    index_t lower = 0, upper = 0;
    for (index_t k = h.row_ptr[i]; k < h.row_ptr[i + 1]; ++k) {
      lower += h.col_idx[k] < i ? 1 : 0;
      upper += h.col_idx[k] > i ? 1 : 0;
    }
    EXPECT_LE(f.lower_ptr[i + 1] - f.lower_ptr[i], lower) << "row " << i;
    EXPECT_LE(f.upper_ptr[i + 1] - f.upper_ptr[i], upper) << "row " << i;
  }
  EXPECT_LT(f.stored(), lu.factors().stored());
  ilut.apply(Vector::from_host(backend, b), z);
  EXPECT_LE(test::relative_max_difference(z.to_host(), solve_with_factors(f, b)), 1e-13);
  // The synchronization-free solves: the same factors, the same solution (another summation
  // order on cuda), no levels formed.
  IlutPreconditioner::Parameters sync_free;
  sync_free.solve = TriangularSolve::sync_free;
  IlutPreconditioner free_solves(sync_free);
  free_solves.setup(*A);
  EXPECT_EQ(free_solves.factors().stored(), f.stored());
  EXPECT_EQ(free_solves.lower_levels(), 0);
  Vector w(backend, x.size());
  free_solves.apply(Vector::from_host(backend, b), w);
  EXPECT_LE(test::relative_max_difference(w.to_host(), solve_with_factors(f, b)), 1e-12);
  // A larger drop tolerance keeps fewer entries.
  IlutPreconditioner::Parameters coarse;
  coarse.ilut.drop_tolerance = 0.2;
  IlutPreconditioner sparse(coarse);
  sparse.setup(*A);
  EXPECT_LT(sparse.factors().stored(), f.stored());
}

TEST(Ilut, AZeroPivotNamesItsRow) {
  const Backend backend = test::backend_under_test();
  CooMatrix coo;
  coo.num_rows = coo.num_cols = 4;
  for (index_t i = 0; i < 4; ++i) {
    if (i != 2) coo.push_back(i, i, 4.0);
    if (i > 0) coo.push_back(i, i - 1, 1.0);
  }
  const auto A = as_operator(coo, 1, Precision::float64, backend);
  IlutPreconditioner ilut;
  try {
    ilut.setup(*A);
    FAIL() << "a zero pivot was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("row 3 "), std::string::npos) << e.what();
  }
  IlutPreconditioner::Parameters bad;
  bad.ilut.drop_tolerance = -1.0;
  EXPECT_THROW(IlutPreconditioner{bad}, ConfigError);
}

TEST(Ilut, GmresWithIlutConvergesWhereJacobiIsSlow) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  // Convection-diffusion-like: a 2D 5-point pattern with nonsymmetric random blocks (B = 2),
  // factored point-wise from the BSR matrix.
  const int B = 2;
  const CooMatrix coo = kronecker_block(poisson2d(24), B, seed, false);
  const std::vector<double> b = test::random_vector(coo.num_rows, seed + 1);
  const auto A = as_operator(coo, B, Precision::float64, backend);
  StopCriteria criteria;
  criteria.relative_tolerance = 1e-9;
  criteria.max_iterations = 2000;
  auto solve = [&](Preconditioner& M) {
    M.setup(*A);
    Gmres gmres(criteria, 30, false);
    Vector x = Vector::constant(backend, b.size(), 0.0);
    const SolveReport report = gmres.solve(*A, M, Vector::from_host(backend, b), x);
    EXPECT_EQ(report.status, SolveStatus::converged) << report.reason;
    EXPECT_LE(test::true_relative_residual(coo, x.to_host(), b), 2e-9);
    return report.iterations;
  };
  IlutPreconditioner ilut;
  BlockJacobiPreconditioner bj;
  const int ilut_iterations = solve(ilut);
  EXPECT_LT(ilut_iterations, solve(bj));
  config::SolverSetup setup = config::build_solver(config::load_preset("gmres_ilut"));
  setup.preconditioner->setup(*A);
  Vector x = Vector::constant(backend, b.size(), 0.0);
  const SolveReport report =
      setup.solver->solve(*A, *setup.preconditioner, Vector::from_host(backend, b), x);
  EXPECT_EQ(report.status, SolveStatus::converged) << report.reason;
  EXPECT_LE(test::true_relative_residual(coo, x.to_host(), b), 2e-8);
}

TEST(BlockRelaxation, MulticolorGaussSeidelSmoothsAnAlgebraicMultigrid) {
  // AMG with the multicolor smoother (forward before, backward after: a symmetric V-cycle) as
  // the PCG preconditioner of 3D Poisson, by the true residual, against PCG-Jacobi.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Backend backend = test::backend_under_test();
  const CooMatrix coo = poisson3d(14);
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  const std::vector<double> b = test::random_vector(coo.num_rows, seed);
  auto solve = [&](const char* preset, const char* smoother) {
    nlohmann::json json = config::load_preset(preset);
    if (smoother != nullptr) json["solver"]["preconditioner"]["smoother"] = smoother;
    config::SolverSetup setup = config::build_solver(json);
    setup.preconditioner->setup(A);
    Vector x = Vector::constant(backend, b.size(), 0.0);
    const SolveReport report =
        setup.solver->solve(A, *setup.preconditioner, Vector::from_host(backend, b), x);
    EXPECT_EQ(report.status, SolveStatus::converged) << report.reason;
    EXPECT_LE(test::true_relative_residual(coo, x.to_host(), b), 2e-8);
    return report.iterations;
  };
  const int amg = solve("pcg_amg", "multicolor_gauss_seidel");
  EXPECT_LT(amg, 20);
  EXPECT_LT(amg, solve("pcg_jacobi", nullptr) / 2);
}

}  // namespace
}  // namespace kryflow
