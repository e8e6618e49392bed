// BSR matrices on the backend under test against the CSR reference on the same (filled) matrix,
// bit for bit: docs/decisions/002-formats-sum-like-csr.md makes every format add row i's entries
// in increasing column order, so y, r and the diagonal must equal the reference CSR kernels'
// exactly, for every block size, both value precisions and (cuda) both kernels. The fused x·y
// follows the group tree of kernels/bsr/bsr.hpp, modelled here; conversion, round trip, tiling
// errors, block-size detection and whole solves are checked as well. Outputs start as NaN.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/bsr/bsr.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/bsr_matrix.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "test_support.hpp"

namespace kryflow {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr int kBlockSizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 11};
constexpr Precision kPrecisions[] = {Precision::float64, Precision::float32};

std::uint64_t bits(double v) {
  return std::bit_cast<std::uint64_t>(v);
}

/// The kernels to run on the backend under test: both cuda variants, else the one kernel.
std::vector<BsrKernel> kernels_under_test() {
#ifdef KRYFLOW_TEST_BACKEND_IS_CUDA
  return {BsrKernel::block_row, BsrKernel::coefficient};
#else
  return {BsrKernel::automatic};
#endif
}

const char* kernel_name(BsrKernel kernel) {
  switch (kernel) {
    case BsrKernel::block_row:
      return "block_row";
    case BsrKernel::coefficient:
      return "coefficient";
    case BsrKernel::automatic:
      return "automatic";
  }
  return "?";
}

/// A random block pattern of num_block_rows x num_block_cols blocks: about a third of the block
/// rows empty, the others 1..8 random blocks, block row `long_block_row` (when >= 0) holding
/// every block column. Each stored block keeps each of its B^2 entries with probability
/// `density` (at least one), so the CSR matrix needs fill-in unless density is 1. Values are
/// random and never zero.
CooMatrix random_block_matrix(index_t num_block_rows, index_t num_block_cols, int B,
                              index_t long_block_row, double density, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> magnitude(0.1, 1.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<index_t> column(0, num_block_cols - 1);
  CooMatrix coo;
  coo.num_rows = num_block_rows * B;
  coo.num_cols = num_block_cols * B;
  for (index_t I = 0; I < num_block_rows; ++I) {
    std::vector<index_t> blocks;
    if (I == long_block_row) {
      for (index_t J = 0; J < num_block_cols; ++J) blocks.push_back(J);
    } else if (unit(rng) > 1.0 / 3.0) {
      const int count = 1 + static_cast<int>(unit(rng) * 8);
      for (int b = 0; b < count; ++b) blocks.push_back(column(rng));
    }
    std::sort(blocks.begin(), blocks.end());
    blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
    for (index_t J : blocks) {
      const int keep_anyway = static_cast<int>(unit(rng) * B * B);
      for (int e = 0; e < B * B; ++e) {
        if (e != keep_anyway && unit(rng) >= density) continue;
        const double v = unit(rng) < 0.5 ? -magnitude(rng) : magnitude(rng);
        coo.push_back(I * B + e / B, J * B + e % B, v);
      }
    }
  }
  return coo;
}

/// A BSR matrix under test and the reference CSR of the same filled matrix (its to_csr(), i.e.
/// float-rounded values for float32 storage).
struct Pair {
  BsrMatrix bsr;
  CsrMatrix filled;
};

Pair make_bsr_and_filled_csr(const Backend& backend, const CooMatrix& coo, int B,
                             Precision precision) {
  const CsrMatrix csr = CsrMatrix::from_coo(backend, coo);
  BsrMatrix bsr = BsrMatrix::from_csr_filled(csr, B, precision);
  CsrMatrix filled = bsr.to_csr().copy_to(Backend::reference());
  return {std::move(bsr), std::move(filled)};
}

void expect_bitwise_equal(const std::vector<double>& actual, const std::vector<double>& expected,
                          const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    ASSERT_FALSE(std::isnan(actual[i])) << what << ": row " << i << " not written";
    ASSERT_EQ(bits(actual[i]), bits(expected[i]))
        << what << ": row " << i << ": " << actual[i] << " vs " << expected[i];
  }
}

// ---- The group tree of bsr_spmv_dot, simulated lane by lane ----

double model_warp_sum(std::array<double, 32> v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    std::array<double, 32> next{};
    for (int l = 0; l < 32; ++l) next[l] = v[l] + v[l + offset < 32 ? l + offset : l];
    v = next;
  }
  return v[0];
}

double model_block_sum(const std::array<double, 256>& threads) {
  std::array<double, 32> warp_sums{};
  for (int w = 0; w < 8; ++w) {
    std::array<double, 32> lanes{};
    std::copy_n(threads.begin() + 32 * w, 32, lanes.begin());
    warp_sums[w] = model_warp_sum(lanes);
  }
  return model_warp_sum(warp_sums);
}

/// Groups of 256 / B block rows; thread j of group g holds x_i y_i, i = g (256 / B) B + j.
double model_dot(int B, const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t rows_per_group = static_cast<std::size_t>(256 / B) * B;
  std::vector<double> partials;
  for (std::size_t first = 0; first < y.size(); first += rows_per_group) {
    std::array<double, 256> terms{};
    for (std::size_t j = 0; j < rows_per_group && first + j < y.size(); ++j) {
      terms[j] = x[first + j] * y[first + j];
    }
    partials.push_back(model_block_sum(terms));
  }
  std::array<double, 256> lanes{};
  for (std::size_t q = 0; q < partials.size(); ++q) lanes[q % 256] = lanes[q % 256] + partials[q];
  return model_block_sum(lanes);
}

class BsrTest : public ::testing::Test {
 protected:
  Backend backend = test::backend_under_test();
  Backend reference = Backend::reference();
};

TEST_F(BsrTest, ProductResidualDotAndDiagonalEqualCsrReferenceOnFilledMatrix) {
  for (int B : kBlockSizes) {
    for (Precision precision : kPrecisions) {
      // Arrange: square (one block row holding every block column) and rectangular matrices
      // with empty block rows and partly populated blocks (fill-in).
      const std::uint64_t seed = 1000 + static_cast<std::uint64_t>(B);
      struct Case {
        std::string name;
        CooMatrix coo;
      };
      std::vector<Case> cases;
      cases.push_back(
          {"square with a long block row", random_block_matrix(700, 700, B, 351, 0.7, seed)});
      cases.push_back({"rectangular", random_block_matrix(90, 250, B, -1, 0.5, seed + 1)});
      for (const Case& c : cases) {
        SCOPED_TRACE("B = " + std::to_string(B) + ", " + std::string(to_string(precision)) + ", " +
                     c.name);
        Pair m = make_bsr_and_filled_csr(backend, c.coo, B, precision);
        const auto rows = static_cast<std::size_t>(m.bsr.num_rows());
        const auto cols = static_cast<std::size_t>(m.bsr.num_cols());
        const std::vector<double> x = test::random_vector(cols, seed + 2);
        const std::vector<double> b = test::random_vector(rows, seed + 3);
        Vector y_ref = Vector::constant(reference, rows, kNaN);
        Vector r_ref = Vector::constant(reference, rows, kNaN);
        Vector d_ref = Vector::constant(reference, rows, kNaN);
        const Vector x_ref = Vector::from_host(reference, x);
        m.filled.apply(x_ref, y_ref);
        m.filled.residual(Vector::from_host(reference, b), x_ref, r_ref);
        m.filled.diagonal(d_ref);
        const std::vector<double> y_expected = y_ref.to_host();
        Vector d = Vector::constant(backend, rows, kNaN);
        m.bsr.diagonal(d);
        expect_bitwise_equal(d.to_host(), d_ref.to_host(), "diagonal");

        for (BsrKernel kernel : kernels_under_test()) {
          SCOPED_TRACE(kernel_name(kernel));
          m.bsr.set_kernel(kernel);
          const Vector xv = Vector::from_host(backend, x);
          Vector y = Vector::constant(backend, rows, kNaN);
          Vector r = Vector::constant(backend, rows, kNaN);

          // Act
          m.bsr.apply(xv, y);
          m.bsr.residual(Vector::from_host(backend, b), xv, r);

          // Assert
          expect_bitwise_equal(y.to_host(), y_expected, "apply");
          expect_bitwise_equal(r.to_host(), r_ref.to_host(), "residual");
          if (rows == cols) {
            Vector y_dot = Vector::constant(backend, rows, kNaN);
            const double dot = m.bsr.apply_dot(xv, y_dot);
            expect_bitwise_equal(y_dot.to_host(), y_expected, "apply_dot");
            EXPECT_EQ(bits(dot), bits(model_dot(B, x, y_expected))) << dot;
            double magnitude = 0.0;
            double sequential = 0.0;
            for (std::size_t i = 0; i < rows; ++i) {
              magnitude += std::abs(x[i] * y_expected[i]);
              sequential += x[i] * y_expected[i];
            }
            EXPECT_LE(std::abs(dot - sequential), 2.0 * (rows + 2.0) * kEps * magnitude);
          }
        }
      }
    }
  }
}

TEST_F(BsrTest, ReferenceDotAddsSequentially) {
  const CooMatrix coo = random_block_matrix(40, 40, 3, 7, 0.6, 77);
  const CsrMatrix csr = CsrMatrix::from_coo(reference, coo);
  const BsrMatrix bsr = BsrMatrix::from_csr_filled(csr, 3);
  const std::vector<double> x = test::random_vector(120, 78);
  Vector y = Vector::constant(reference, 120, kNaN);
  const double dot = bsr.apply_dot(Vector::from_host(reference, x), y);
  const std::vector<double> yh = y.to_host();
  double expected = 0.0;
  for (std::size_t i = 0; i < yh.size(); ++i) expected += x[i] * yh[i];
  EXPECT_EQ(bits(dot), bits(expected));
}

TEST_F(BsrTest, FusedDotGivesIdenticalBitsOnRepeatedCallsAndAcrossKernels) {
  Pair m = make_bsr_and_filled_csr(backend, random_block_matrix(2000, 2000, 5, 3, 0.8, 5), 5,
                                   Precision::float64);
  const std::vector<double> x = test::random_vector(10000, 6);
  const Vector xv = Vector::from_host(backend, x);
  Vector y = Vector::constant(backend, 10000, kNaN);
  const double first = m.bsr.apply_dot(xv, y);
  for (BsrKernel kernel : {BsrKernel::block_row, BsrKernel::coefficient, BsrKernel::automatic}) {
    m.bsr.set_kernel(kernel);
    EXPECT_EQ(bits(m.bsr.apply_dot(xv, y)), bits(first)) << kernel_name(kernel);
  }
}

TEST_F(BsrTest, StrictConversionRoundTripsExactly) {
  for (int B : {2, 4, 5, 7}) {
    for (Precision precision : kPrecisions) {
      SCOPED_TRACE("B = " + std::to_string(B) + ", " + std::string(to_string(precision)));
      const CooMatrix coo = kronecker_block(poisson3d(4), B, 11, false);
      const CsrMatrix csr = CsrMatrix::from_coo(backend, coo);
      const BsrMatrix bsr = BsrMatrix::from_csr(csr, B, precision);
      EXPECT_EQ(bsr.fill_ratio(), 1.0);
      EXPECT_EQ(bsr.stored_entries(), csr.nnz());
      EXPECT_EQ(bsr.num_blocks(), CsrMatrix::from_coo(reference, poisson3d(4)).nnz());
      const CsrMatrix back = bsr.to_csr();
      EXPECT_EQ(back.row_ptr().to_host(), csr.row_ptr().to_host());
      EXPECT_EQ(back.col_idx().to_host(), csr.col_idx().to_host());
      const std::vector<double> original = csr.values().to_host();
      const std::vector<double> round_trip = back.values().to_host();
      ASSERT_EQ(round_trip.size(), original.size());
      for (std::size_t k = 0; k < original.size(); ++k) {
        const double expected = precision == Precision::float32
                                    ? static_cast<double>(static_cast<float>(original[k]))
                                    : original[k];
        ASSERT_EQ(bits(round_trip[k]), bits(expected)) << "entry " << k;
      }
    }
  }
}

TEST_F(BsrTest, FilledConversionStoresWholeBlocksAndReportsFill) {
  const CooMatrix coo = random_block_matrix(50, 60, 4, -1, 0.5, 21);
  const CsrMatrix csr = CsrMatrix::from_coo(backend, coo);
  const BsrMatrix bsr = BsrMatrix::from_csr_filled(csr, 4);
  EXPECT_EQ(bsr.source_nnz(), csr.nnz());
  EXPECT_EQ(bsr.stored_entries(), bsr.num_blocks() * 16);
  EXPECT_GT(bsr.fill_ratio(), 1.0);
  const CsrMatrix back = bsr.to_csr();
  EXPECT_EQ(back.nnz(), bsr.stored_entries());
  // Every original entry survives with its value; the added entries are zeros.
  std::vector<double> nonzero;
  for (double value : back.values().to_host()) {
    if (value != 0.0) nonzero.push_back(value);
  }
  std::vector<double> original = coo.values;
  std::sort(nonzero.begin(), nonzero.end());
  std::sort(original.begin(), original.end());
  EXPECT_EQ(nonzero, original);
}

TEST_F(BsrTest, NonTilingPatternThrowsNamingTheBlockRowAndBlockSize) {
  // Block row 6 (1-based) of a 4 x 4 block matrix loses one entry, (22, 22) 0-based.
  CooMatrix coo = kronecker_block(poisson3d(3), 4, 3, false);
  const CsrMatrix full = CsrMatrix::from_coo(reference, coo);
  CooMatrix holed = coo;
  holed.row_idx.clear();
  holed.col_idx.clear();
  holed.values.clear();
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    if (coo.row_idx[k] == 22 && coo.col_idx[k] == 22) continue;
    holed.push_back(coo.row_idx[k], coo.col_idx[k], coo.values[k]);
  }
  const CsrMatrix csr = CsrMatrix::from_coo(backend, holed);
  try {
    (void)BsrMatrix::from_csr(csr, 4);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("block row 6 "), std::string::npos) << message;
    EXPECT_NE(message.find("4 x 4"), std::string::npos) << message;
  }
  // With fill-in the hole becomes an explicit zero and the product is unchanged.
  const BsrMatrix filled = BsrMatrix::from_csr_filled(csr, 4);
  EXPECT_EQ(filled.stored_entries(), full.nnz());
  EXPECT_GT(filled.fill_ratio(), 1.0);
  // Rows or columns that are not multiples of B.
  EXPECT_THROW((void)BsrMatrix::from_csr(CsrMatrix::from_coo(backend, poisson3d(3)), 2),
               InvalidInput);
  EXPECT_THROW((void)BsrMatrix::from_csr(csr, 0), InvalidInput);
  EXPECT_THROW((void)BsrMatrix::from_csr(csr, 33), InvalidInput);
}

TEST_F(BsrTest, DetectBlockSizeFindsTheKroneckerBlock) {
  for (int B = 1; B <= 8; ++B) {
    const CsrMatrix csr = CsrMatrix::from_coo(backend, kronecker_block(poisson3d(3), B, 9, true));
    EXPECT_EQ(BsrMatrix::detect_block_size(csr), B) << "B = " << B;
  }
  EXPECT_EQ(BsrMatrix::detect_block_size(CsrMatrix::from_coo(backend, poisson3d(4))), 1);
  // The host-array entry point of the CLI advisor.
  const CsrMatrix host = CsrMatrix::from_coo(reference, kronecker_block(poisson2d(6), 6, 1));
  EXPECT_EQ(detect_block_size(host.num_rows(), host.num_cols(), host.row_ptr().span(),
                              host.col_idx().span()),
            6);
}

TEST_F(BsrTest, UpdateValuesEqualsConvertingTheNewValues) {
  for (Precision precision : kPrecisions) {
    const CooMatrix coo = random_block_matrix(120, 120, 3, 10, 0.6, 31);
    CooMatrix changed = coo;
    for (double& v : changed.values) v = 1.5 * v + 0.25;
    const CsrMatrix csr = CsrMatrix::from_coo(backend, coo);
    const CsrMatrix csr_changed = CsrMatrix::from_coo(backend, changed);
    BsrMatrix bsr = BsrMatrix::from_csr_filled(csr, 3, precision);
    bsr.update_values(csr_changed.values().copy_to(reference));  // from another backend
    const BsrMatrix expected = BsrMatrix::from_csr_filled(csr_changed, 3, precision);
    EXPECT_EQ(bsr.to_csr().values().to_host(), expected.to_csr().values().to_host());
    EXPECT_THROW(bsr.update_values(Array<double>(reference, 3)), DimensionMismatch);
  }
}

TEST_F(BsrTest, MisuseThrowsBeforeWriting) {
  const BsrMatrix bsr =
      BsrMatrix::from_csr(CsrMatrix::from_coo(backend, kronecker_block(poisson2d(3), 2, 1)), 2);
  Vector x = Vector::constant(backend, 18, 1.0);
  Vector short_y = Vector::constant(backend, 17, 0.0);
  EXPECT_THROW(bsr.apply(x, short_y), DimensionMismatch);
  EXPECT_THROW(bsr.apply(x, x), InvalidInput);
  Vector d = Vector::constant(backend, 17, 0.0);
  EXPECT_THROW(bsr.diagonal(d), DimensionMismatch);
  const BsrMatrix rectangular = BsrMatrix::from_csr_filled(
      CsrMatrix::from_coo(backend, random_block_matrix(3, 5, 2, -1, 0.5, 2)), 2);
  Vector x10 = Vector::constant(backend, 10, 1.0);
  Vector y6 = Vector::constant(backend, 6, 0.0);
  EXPECT_THROW((void)rectangular.apply_dot(x10, y6), DimensionMismatch);
}

TEST_F(BsrTest, SpmvBytesCountsBlocksIndicesAndVectors) {
  const BsrMatrix bsr = BsrMatrix::from_csr(
      CsrMatrix::from_coo(backend, kronecker_block(poisson2d(3), 4, 1)), 4, Precision::float32);
  const double blocks = static_cast<double>(bsr.num_blocks());
  EXPECT_EQ(bsr.spmv_bytes(), 4.0 * 16 * blocks + 4.0 * blocks + 4.0 * 10 + 8.0 * 36 * 2);
}

// ---- Whole solves: BSR and CSR take the same iterations ----

struct SolveOutcome {
  SolveReport report;
  std::vector<double> x;
};

template <class Matrix>
SolveOutcome solve(const Matrix& A, KrylovSolver& solver, const std::vector<double>& b) {
  IdentityPreconditioner M;
  M.setup(A);
  const Vector bv = Vector::from_host(A.backend(), b);
  Vector x = Vector::constant(A.backend(), b.size(), 0.0);
  SolveOutcome out;
  out.report = solver.solve(A, M, bv, x);
  out.x = x.to_host();
  return out;
}

enum class Method { cg, bicgstab, gmres };

std::unique_ptr<KrylovSolver> make_solver(Method method, const StopCriteria& criteria) {
  switch (method) {
    case Method::cg:
      return std::make_unique<Cg>(criteria);
    case Method::bicgstab:
      return std::make_unique<Bicgstab>(criteria);
    case Method::gmres:
      return std::make_unique<Gmres>(criteria, 30, false);
  }
  return nullptr;
}

TEST_F(BsrTest, SolversTakeTheSameIterationsAsOnCsr) {
  StopCriteria criteria;
  criteria.relative_tolerance = 1e-10;
  criteria.max_iterations = 1000;
  for (Method method : {Method::cg, Method::bicgstab, Method::gmres}) {
    for (int B : {4, 5}) {
      SCOPED_TRACE("method " + std::to_string(static_cast<int>(method)) +
                   ", B = " + std::to_string(B));
      // Arrange: SPD for CG, nonsymmetric for BiCGStab and GMRES (diagonally dominant blocks on
      // the 3D Poisson pattern).
      const CooMatrix coo = kronecker_block(poisson3d(8), B, 41, method == Method::cg);
      const CsrMatrix csr = CsrMatrix::from_coo(backend, coo);
      const BsrMatrix bsr = BsrMatrix::from_csr(csr, B);
      const std::vector<double> b = test::random_vector(static_cast<std::size_t>(coo.num_rows), 42);

      // Act
      const SolveOutcome on_csr = solve(csr, *make_solver(method, criteria), b);
      const SolveOutcome on_bsr = solve(bsr, *make_solver(method, criteria), b);

      // Assert: converged, true residual computed independently, same iterations within one.
      EXPECT_EQ(on_bsr.report.status, SolveStatus::converged) << on_bsr.report.reason;
      EXPECT_LT(test::true_relative_residual(coo, on_bsr.x, b), 1e-9);
      EXPECT_LE(std::abs(on_bsr.report.iterations - on_csr.report.iterations), 1)
          << "bsr " << on_bsr.report.iterations << " csr " << on_csr.report.iterations;
    }
  }
}

TEST(BsrConversion, FromFloat32CsrEqualsFromDoubleCsr) {
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const Backend backend = test::backend_under_test();
  const CsrMatrix csr64 =
      CsrMatrix::from_coo(backend, kronecker_block(poisson2d(7), 4, seed, false));
  const CsrMatrix csr32 = csr64.with_precision(Precision::float32);
  const BsrMatrix a = BsrMatrix::from_csr(csr64, 4, Precision::float32);
  const BsrMatrix b = BsrMatrix::from_csr(csr32, 4, Precision::float32);
  const std::size_t n = static_cast<std::size_t>(csr64.num_rows());
  const Vector x = Vector::from_host(backend, test::random_vector(n, seed + 1));
  Vector ya(backend, n);
  Vector yb(backend, n);
  a.apply(x, ya);
  b.apply(x, yb);
  EXPECT_EQ(ya.to_host(), yb.to_host());
}

TEST(BsrLargeMatrix, ProductAndResidualEqualCsrReferenceOnEveryLaunchShape) {
  // 19600 block rows of 4: more groups than twice an H100's SMs, so the cuda block_row kernel
  // runs in 256-thread blocks here and in 64-thread blocks on the small matrices elsewhere.
  const std::uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(seed);
  const Backend backend = test::backend_under_test();
  const CooMatrix coo = kronecker_block(poisson2d(140), 4, seed, false);
  const CsrMatrix reference = CsrMatrix::from_coo(Backend::reference(), coo);
  const std::size_t n = static_cast<std::size_t>(reference.num_rows());
  const std::vector<double> x_host = test::random_vector(n, seed + 1);
  const std::vector<double> b_host = test::random_vector(n, seed + 2);
  Vector y_ref(Backend::reference(), n);
  Vector r_ref(Backend::reference(), n);
  const Vector x_ref = Vector::from_host(Backend::reference(), x_host);
  const Vector b_ref = Vector::from_host(Backend::reference(), b_host);
  reference.apply(x_ref, y_ref);
  reference.residual(b_ref, x_ref, r_ref);
  BsrMatrix A = BsrMatrix::from_csr(reference.copy_to(backend), 4);
  const Vector x = Vector::from_host(backend, x_host);
  const Vector b = Vector::from_host(backend, b_host);
  for (const BsrKernel kernel : {BsrKernel::block_row, BsrKernel::coefficient}) {
    A.set_kernel(kernel);
    Vector y(backend, n);
    Vector r(backend, n);
    A.apply(x, y);
    A.residual(b, x, r);
    EXPECT_EQ(y.to_host(), y_ref.to_host());
    EXPECT_EQ(r.to_host(), r_ref.to_host());
  }
}

}  // namespace
}  // namespace kryflow
