// AINV (approximate_inverse.hpp): the factors against a dense computation, the apply on the
// backend under test against the host product of the factors, PCG and BiCGStab with AINV by
// true residual, and the errors.
//
// Tolerances: with no dropping W^T (S A S) Z = D up to rounding, |entry| <= 1e-10 max|D| for the
// well-conditioned random matrices here; the apply in float64 matches the host product to
// 1e-12 relative (sums in another order), in float32 to 1e-6 (each factor entry rounded once).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <stop_token>
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
#include "src/preconditioners/ainv_parallel.hpp"
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

/// max over i, j of |w_i^T (S B S) z_j - d_i delta_ij|, S = diag(f.scale), B = `matrix` (in
/// the factors' numbering), z and w the dense columns of the factors.
double conjugation_error(const CooMatrix& matrix, const AinvFactors& f,
                         const std::vector<std::vector<double>>& z,
                         const std::vector<std::vector<double>>& w) {
  const auto n = static_cast<std::size_t>(matrix.num_rows);
  std::vector<std::vector<double>> sbs(n, std::vector<double>(n, 0.0));
  for (std::size_t k = 0; k < matrix.values.size(); ++k) {
    const index_t i = matrix.row_idx[k], j = matrix.col_idx[k];
    sbs[i][j] = f.scale[i] * matrix.values[k] * f.scale[j];
  }
  double worst = 0.0;
  std::vector<double> bz(n);
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t r = 0; r < n; ++r) {
      double sum = 0.0;
      for (std::size_t c = 0; c < n; ++c) sum += sbs[r][c] * z[j][c];
      bz[r] = sum;
    }
    for (std::size_t i = 0; i < n; ++i) {
      double entry = 0.0;
      for (std::size_t r = 0; r < n; ++r) entry += w[i][r] * bz[r];
      worst = std::max(worst, std::abs(entry - (i == j ? f.pivots[i] : 0.0)));
    }
  }
  return worst;
}

double largest_pivot(const AinvFactors& f) {
  double largest = 0.0;
  for (const double d : f.pivots) largest = std::max(largest, std::abs(d));
  return largest;
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
    EXPECT_LE(conjugation_error(coo, f, z, w), 1e-10 * largest_pivot(f));
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

/// M r on the host from the factors: S Z D^-1 W^T S r (P^T S Z D^-1 W^T S P r when permuted).
std::vector<double> host_apply(const AinvFactors& f, const std::vector<double>& r_original) {
  const index_t n = f.n;
  std::vector<double> r = r_original;
  for (std::size_t k = 0; k < f.permutation.size(); ++k) r[k] = r_original[f.permutation[k]];
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
  if (f.permutation.empty()) return z;
  std::vector<double> z_original(n);
  for (index_t k = 0; k < n; ++k) z_original[f.permutation[k]] = z[k];
  return z_original;
}

/// ainv_factor's parallel form from `rows` rows on (restores the threshold when it ends).
class ParallelFromRows {
 public:
  explicit ParallelFromRows(index_t rows) : saved_(ainv_detail::parallel_min_rows()) {
    ainv_detail::set_parallel_min_rows(rows);
  }
  ~ParallelFromRows() { ainv_detail::set_parallel_min_rows(saved_); }
  ParallelFromRows(const ParallelFromRows&) = delete;
  ParallelFromRows& operator=(const ParallelFromRows&) = delete;

 private:
  index_t saved_;
};

TEST(AinvPreconditioner, ApplyMatchesTheHostProductOfTheFactors) {
  const Backend backend = test::backend_under_test();
  const ParallelFromRows parallel(1000);
  for (const bool symmetric : {true, false}) {
    for (const Precision precision : {Precision::float64, Precision::float32}) {
      for (const int threads : {1, 3}) {
        const std::uint64_t seed = test::fresh_seed();
        SCOPED_TRACE("seed " + std::to_string(seed) +
                     (symmetric ? " symmetric " : " nonsymmetric ") +
                     std::string(to_string(precision)) + " threads " + std::to_string(threads));
        const index_t n = 3000;
        const CsrMatrix A = CsrMatrix::from_coo(backend, random_dominant(n, symmetric, seed));
        AinvPreconditioner::Parameters parameters;
        parameters.ainv.drop_tolerance = 0.01;
        parameters.ainv.threads = threads;
        parameters.factor_precision = precision;
        AinvPreconditioner M(parameters);
        M.setup(A);
        EXPECT_EQ(M.factors().symmetric, symmetric);
        EXPECT_EQ(M.factors().permutation.size(), threads == 1 ? 0u : static_cast<std::size_t>(n));
        const std::vector<double> r = test::random_vector(static_cast<std::size_t>(n), seed + 1);
        Vector z(backend, static_cast<std::size_t>(n));
        M.apply(Vector::from_host(backend, r), z);
        const double tolerance = precision == Precision::float64 ? 1e-12 : 1e-6;
        EXPECT_LE(test::relative_max_difference(z.to_host(), host_apply(M.factors(), r)),
                  tolerance);
      }
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
            2e-8);  // the recursive residual met 1e-8; the true one drifts (float factors)
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
  EXPECT_EQ(report.status, SolveStatus::converged) << report.reason;
  EXPECT_LE(residual,
            2e-8)  // the recursive residual met 1e-8; the true one drifts (float factors)
      << report.iterations << " iterations";
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
  parameters.ainv.drop_tolerance = 0.1;
  parameters.ainv.threads = -1;
  EXPECT_THROW(AinvPreconditioner{parameters}, ConfigError);
  nlohmann::json config = config::load_preset("pcg_ainv");
  config["solver"]["preconditioner"]["threads"] = -1;
  EXPECT_THROW(config::build_solver(config), ConfigError);
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

// The parallel form (AinvParameters::threads > 1): the factors of P A P^T, computed block by
// block with the separator last.

/// A random sparse n x n matrix with its entries within `band` of the diagonal, diagonally
/// dominant (positive diagonal); symmetric when asked (then SPD). A banded pattern leaves the
/// blocks of the parallel form interiors to work on.
CooMatrix random_banded(index_t n, index_t band, bool symmetric, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::uniform_int_distribution<index_t> offset(-band, band);
  std::vector<std::vector<std::pair<index_t, double>>> rows(n);
  const auto add = [&](index_t i, index_t j, double v) {
    for (auto& [c, x] : rows[i]) {
      if (c == j) {
        x += v;
        return;
      }
    }
    rows[i].emplace_back(j, v);
  };
  for (index_t i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) {
      const index_t j = i + offset(random);
      if (j == i || j < 0 || j >= n) continue;
      const double v = value(random);
      add(i, j, v);
      if (symmetric) add(j, i, v);
    }
  }
  std::vector<double> absolute(n, 0.0);
  for (index_t i = 0; i < n; ++i) {
    for (const auto& [j, v] : rows[i]) {
      absolute[i] += std::abs(v);
      absolute[j] += std::abs(v);
    }
  }
  CooMatrix a;
  a.num_rows = a.num_cols = n;
  for (index_t i = 0; i < n; ++i) {
    a.push_back(i, i, absolute[i] + 0.5 + std::abs(value(random)));
    for (const auto& [j, v] : rows[i]) a.push_back(i, j, v);
  }
  return a;
}

/// P A P^T for the factors' permutation (row k is row f.permutation[k] of A).
CooMatrix permuted(const CooMatrix& a, const std::vector<index_t>& permutation) {
  std::vector<index_t> inverse(permutation.size());
  for (std::size_t k = 0; k < permutation.size(); ++k) inverse[permutation[k]] = k;
  CooMatrix b;
  b.num_rows = a.num_rows;
  b.num_cols = a.num_cols;
  for (std::size_t k = 0; k < a.values.size(); ++k) {
    b.push_back(inverse[a.row_idx[k]], inverse[a.col_idx[k]], a.values[k]);
  }
  return b;
}

/// A permutation of 0..n-1 that is not the identity (the parallel form ran).
void expect_a_permutation(const std::vector<index_t>& permutation, index_t n) {
  ASSERT_EQ(permutation.size(), static_cast<std::size_t>(n));
  std::vector<char> seen(n, 0);
  bool identity = true;
  for (index_t k = 0; k < n; ++k) {
    ASSERT_GE(permutation[k], 0);
    ASSERT_LT(permutation[k], n);
    ASSERT_FALSE(seen[permutation[k]]) << "row " << permutation[k] << " twice";
    seen[permutation[k]] = 1;
    identity = identity && permutation[k] == k;
  }
  EXPECT_FALSE(identity);
}

/// Column j of each factor: rows increasing, the unit diagonal last.
void expect_unit_upper_triangular(index_t n, const std::vector<index_t>& ptr,
                                  const std::vector<index_t>& row,
                                  const std::vector<double>& values) {
  ASSERT_EQ(ptr.size(), static_cast<std::size_t>(n) + 1);
  for (index_t j = 0; j < n; ++j) {
    ASSERT_LT(ptr[j], ptr[j + 1]) << "column " << j;
    ASSERT_EQ(row[ptr[j + 1] - 1], j) << "column " << j;
    ASSERT_EQ(values[ptr[j + 1] - 1], 1.0) << "column " << j;
    for (index_t k = ptr[j]; k + 1 < ptr[j + 1]; ++k) ASSERT_LT(row[k], row[k + 1]);
  }
}

template <class T>
bool same_bits(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size() &&
         (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0);
}

/// Every field of the factors, bit for bit.
void expect_same_factors(const AinvFactors& x, const AinvFactors& y) {
  EXPECT_EQ(x.n, y.n);
  EXPECT_EQ(x.symmetric, y.symmetric);
  EXPECT_TRUE(same_bits(x.scale, y.scale));
  EXPECT_TRUE(same_bits(x.z_ptr, y.z_ptr));
  EXPECT_TRUE(same_bits(x.z_row, y.z_row));
  EXPECT_TRUE(same_bits(x.z_values, y.z_values));
  EXPECT_TRUE(same_bits(x.w_ptr, y.w_ptr));
  EXPECT_TRUE(same_bits(x.w_row, y.w_row));
  EXPECT_TRUE(same_bits(x.w_values, y.w_values));
  EXPECT_TRUE(same_bits(x.pivots, y.pivots));
  EXPECT_TRUE(same_bits(x.shifted, y.shifted));
  EXPECT_TRUE(same_bits(x.permutation, y.permutation));
}

TEST(AinvParallel, WithoutDroppingTheFactorsOfThePermutedMatrixAreExactlyConjugate) {
  const ParallelFromRows parallel(16);
  for (const bool symmetric : {true, false}) {
    const std::uint64_t seed = test::fresh_seed();
    const std::vector<std::pair<std::string, CooMatrix>> matrices = {
        {"random", random_dominant(150, symmetric, seed)},
        {"banded", random_banded(300, 12, symmetric, seed)},
        {"poisson3d(7)", poisson3d(7)}};
    for (const auto& [name, coo] : matrices) {
      for (const int threads : {2, 3, 4}) {
        SCOPED_TRACE("seed " + std::to_string(seed) +
                     (symmetric ? " symmetric " : " nonsymmetric ") + name + ", threads " +
                     std::to_string(threads));
        const index_t n = coo.num_rows;
        const HostMatrix a = to_host_csr(coo);
        AinvParameters parameters;
        parameters.drop_tolerance = 0.0;
        parameters.fill = -1;
        parameters.threads = threads;
        parameters.symmetry = symmetric ? AinvSymmetry::symmetric : AinvSymmetry::nonsymmetric;
        const AinvFactors f = ainv_factor(n, a.row_ptr, a.col_idx, a.values, parameters);
        ASSERT_EQ(f.n, n);
        EXPECT_EQ(f.symmetric, symmetric);
        EXPECT_TRUE(f.shifted.empty());
        expect_a_permutation(f.permutation, n);
        expect_unit_upper_triangular(n, f.z_ptr, f.z_row, f.z_values);
        if (!symmetric) expect_unit_upper_triangular(n, f.w_ptr, f.w_row, f.w_values);
        if (HasFatalFailure()) return;
        const auto z = dense_columns(n, f.z_ptr, f.z_row, f.z_values);
        const auto w = symmetric ? z : dense_columns(n, f.w_ptr, f.w_row, f.w_values);
        // The factors' scale is in P A P^T's numbering.
        EXPECT_LE(conjugation_error(permuted(coo, f.permutation), f, z, w),
                  1e-10 * largest_pivot(f));
      }
    }
  }
}

TEST(AinvParallel, IsTheSequentialAlgorithmOnThePermutedMatrixBitForBit) {
  // With fill -1 every dot product and update sums the same terms in the same order as the
  // sequential biconjugation of P A P^T; dropping by tau included, and pivot shifts.
  const ParallelFromRows parallel(16);
  const std::uint64_t seed = test::fresh_seed();
  // Blocks [[1, 2], [2, 1]] (symmetric indefinite: the second pivot, -3, is shifted to +1)
  // along the diagonal, chained by 0.01 (where the factors stay finite: with infinities, inf * 0
  // in a skipped term would make the two forms differ).
  CooMatrix indefinite;
  indefinite.num_rows = indefinite.num_cols = 1000;
  for (index_t i = 0; i < 1000; i += 2) {
    indefinite.push_back(i, i, 1.0);
    indefinite.push_back(i, i + 1, 2.0);
    indefinite.push_back(i + 1, i, 2.0);
    indefinite.push_back(i + 1, i + 1, 1.0);
    if (i + 2 < 1000) {
      indefinite.push_back(i + 1, i + 2, 0.01);
      indefinite.push_back(i + 2, i + 1, 0.01);
    }
  }
  struct Case {
    std::string name;
    CooMatrix coo;
    double tau;
    AinvSymmetry symmetry;
  };
  const std::vector<Case> cases = {
      {"poisson3d(12), tau 0.1", poisson3d(12), 0.1, AinvSymmetry::automatic},
      {"poisson3d(12), tau 0.01", poisson3d(12), 0.01, AinvSymmetry::automatic},
      {"poisson3d(12) nonsymmetric, tau 0.01", poisson3d(12), 0.01, AinvSymmetry::nonsymmetric},
      {"indefinite", indefinite, 0.01, AinvSymmetry::symmetric},
      {"banded symmetric", random_banded(2000, 30, true, seed), 0.01, AinvSymmetry::automatic},
      {"banded nonsymmetric", random_banded(2000, 30, false, seed), 0.01, AinvSymmetry::automatic},
      {"random nonsymmetric", random_dominant(400, false, seed), 0.01, AinvSymmetry::automatic}};
  for (const Case& c : cases) {
    for (const int threads : {2, 3, 4}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " " + c.name + ", threads " +
                   std::to_string(threads));
      const index_t n = c.coo.num_rows;
      const HostMatrix a = to_host_csr(c.coo);
      AinvParameters parameters;
      parameters.drop_tolerance = c.tau;
      parameters.symmetry = c.symmetry;
      parameters.threads = threads;
      const AinvFactors f = ainv_factor(n, a.row_ptr, a.col_idx, a.values, parameters);
      expect_a_permutation(f.permutation, n);
      if (HasFatalFailure()) return;
      const HostMatrix b = to_host_csr(permuted(c.coo, f.permutation));
      parameters.threads = 1;
      AinvFactors g = ainv_factor(n, b.row_ptr, b.col_idx, b.values, parameters);
      EXPECT_TRUE(g.permutation.empty());
      for (index_t& row : g.shifted) row = f.permutation[row];  // to A's rows
      std::sort(g.shifted.begin(), g.shifted.end());
      g.permutation = f.permutation;
      expect_same_factors(f, g);
      if (c.name == "indefinite") EXPECT_EQ(f.shifted.size(), 500u);
    }
  }
}

TEST(AinvParallel, TheFillLimitHoldsInEveryColumn) {
  // fill >= 0 is the one place where the parallel form differs from the sequential one (the cut
  // of a separator column, per block, then on the merged column): the limit still holds.
  const ParallelFromRows parallel(16);
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const bool symmetric : {true, false}) {
    const CooMatrix coo = random_banded(2000, 30, symmetric, seed);
    const HostMatrix a = to_host_csr(coo);
    AinvParameters parameters;
    parameters.drop_tolerance = 1e-3;
    parameters.fill = 3;
    parameters.threads = 3;
    const AinvFactors f = ainv_factor(coo.num_rows, a.row_ptr, a.col_idx, a.values, parameters);
    expect_a_permutation(f.permutation, coo.num_rows);
    expect_unit_upper_triangular(coo.num_rows, f.z_ptr, f.z_row, f.z_values);
    if (!symmetric) expect_unit_upper_triangular(coo.num_rows, f.w_ptr, f.w_row, f.w_values);
    for (index_t j = 0; j < coo.num_rows; ++j) {
      ASSERT_LE(f.z_ptr[j + 1] - f.z_ptr[j], 4) << "column " << j;
      if (!symmetric) ASSERT_LE(f.w_ptr[j + 1] - f.w_ptr[j], 4) << "column " << j;
    }
  }
}

TEST(AinvParallel, TwoRunsWithTheSameThreadsGiveTheSameFactors) {
  // poisson3d(30): 27000 rows, above the size from which ainv_factor runs in parallel.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<std::pair<CooMatrix, double>> matrices = {
      {poisson3d(30), 0.05}, {random_banded(30000, 40, false, seed), 0.01}};
  for (const auto& [coo, tau] : matrices) {
    const HostMatrix a = to_host_csr(coo);
    for (const int threads : {2, 3}) {
      AinvParameters parameters;
      parameters.drop_tolerance = tau;
      parameters.threads = threads;
      const AinvFactors first =
          ainv_factor(coo.num_rows, a.row_ptr, a.col_idx, a.values, parameters);
      const AinvFactors second =
          ainv_factor(coo.num_rows, a.row_ptr, a.col_idx, a.values, parameters);
      expect_a_permutation(first.permutation, coo.num_rows);
      expect_same_factors(first, second);
    }
  }
}

TEST(AinvParallel, AStopRequestedBeforeTheCallReturnsNoFactors) {
  const CooMatrix coo = poisson3d(30);
  const HostMatrix a = to_host_csr(coo);
  std::stop_source source;
  source.request_stop();
  for (const int threads : {1, 2, 4}) {
    for (const AinvSymmetry symmetry : {AinvSymmetry::symmetric, AinvSymmetry::nonsymmetric}) {
      AinvParameters parameters;
      parameters.threads = threads;
      parameters.symmetry = symmetry;
      const AinvFactors f =
          ainv_factor(coo.num_rows, a.row_ptr, a.col_idx, a.values, parameters, source.get_token());
      EXPECT_EQ(f.n, 0) << "threads " << threads;
      EXPECT_TRUE(f.z_row.empty());
      EXPECT_TRUE(f.permutation.empty());
    }
  }
}

TEST(AinvParallel, BadInputIsReportedAsByTheSequentialForm) {
  const ParallelFromRows parallel(16);
  CooMatrix zero = poisson3d(5);  // zero diagonal in row 37
  CooMatrix nan = poisson3d(5);   // NaN in row 90
  CooMatrix nonsymmetric = poisson3d(5);
  for (std::size_t k = 0; k < zero.values.size(); ++k) {
    if (zero.row_idx[k] == 36 && zero.col_idx[k] == 36) zero.values[k] = 0.0;
    if (nan.row_idx[k] == 89 && nan.col_idx[k] != 89) nan.values[k] = std::nan("");
    if (nonsymmetric.row_idx[k] == 60 && nonsymmetric.col_idx[k] == 61) {
      nonsymmetric.values[k] = -2.0;
    }
  }
  const auto message = [](const CooMatrix& coo, int threads) {
    const HostMatrix a = to_host_csr(coo);
    AinvParameters parameters;
    parameters.symmetry = AinvSymmetry::symmetric;
    parameters.threads = threads;
    try {
      ainv_factor(coo.num_rows, a.row_ptr, a.col_idx, a.values, parameters);
    } catch (const InvalidInput& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  for (const CooMatrix* coo : {&zero, &nan, &nonsymmetric}) {
    const std::string sequential = message(*coo, 1);
    EXPECT_NE(sequential, "no exception");
    for (const int threads : {2, 3}) EXPECT_EQ(message(*coo, threads), sequential);
  }
  EXPECT_NE(message(zero, 1).find("row 37"), std::string::npos) << message(zero, 1);
}

/// pcg_ainv (tau 0.1) with `threads` on the matrix; the factors' permutation through `permuted`.
SolveReport solve_with_threads(int threads, const CooMatrix& coo, const std::vector<double>& b,
                               double* true_residual, bool* permuted_factors) {
  const Backend backend = test::backend_under_test();
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  nlohmann::json config = config::load_preset("pcg_ainv");
  config["solver"]["max_iterations"] = 5000;
  config["solver"]["preconditioner"]["threads"] = threads;
  config::SolverSetup setup = config::build_solver(config);
  setup.preconditioner->setup(A);
  const auto* ainv = dynamic_cast<const AinvPreconditioner*>(setup.preconditioner.get());
  *permuted_factors = ainv != nullptr && !ainv->factors().permutation.empty();
  Vector xv = Vector::constant(backend, b.size(), 0.0);
  const SolveReport report =
      setup.solver->solve(A, *setup.preconditioner, Vector::from_host(backend, b), xv);
  *true_residual = test::true_relative_residual(coo, xv.to_host(), b);
  return report;
}

TEST(AinvParallel, PcgAinvSolvesPoisson3dInAboutTheSequentialIterations) {
  const CooMatrix coo = poisson3d(30);  // 27000 rows: the parallel form runs by default
  const std::vector<double> b = test::random_vector(coo.num_rows);
  double residual = 0.0;
  bool permuted_factors = true;
  const SolveReport sequential = solve_with_threads(1, coo, b, &residual, &permuted_factors);
  ASSERT_EQ(sequential.status, SolveStatus::converged);
  EXPECT_FALSE(permuted_factors);
  for (const int threads : {2, 3, 4}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    const SolveReport report = solve_with_threads(threads, coo, b, &residual, &permuted_factors);
    EXPECT_TRUE(permuted_factors);
    EXPECT_EQ(report.status, SolveStatus::converged);
    EXPECT_LE(residual,
              2e-8);  // the recursive residual met 1e-8; the true one drifts (float factors)
    EXPECT_LE(report.iterations, sequential.iterations * 13 / 10)
        << "sequential " << sequential.iterations << ", parallel " << report.iterations;
  }
}

}  // namespace
}  // namespace kryflow
