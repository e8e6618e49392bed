// Core API behaviour on tiny hand-checked data: errors, arrays, backends, CSR construction.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <thread>

#include "kryflow/core/array.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/core/timing.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/linalg/matrix_analysis.hpp"
#include "kryflow/linalg/vector.hpp"

namespace kryflow {
namespace {

TEST(Errors, ParseErrorNamesFileAndLine) {
  const ParseError e("a.mtx", 12, "expected 3 tokens");
  EXPECT_EQ(std::string(e.what()), "a.mtx:12: expected 3 tokens");
  EXPECT_EQ(e.file(), "a.mtx");
  EXPECT_EQ(e.line(), 12);
}

TEST(Errors, OutOfMemoryCarriesBytes) {
  const OutOfMemory e(1000, 10, "cuda:0");
  EXPECT_EQ(e.bytes_requested(), 1000u);
  EXPECT_EQ(e.bytes_free(), 10u);
  EXPECT_NE(std::string(e.what()).find("1000"), std::string::npos);
}

TEST(Backend, ParsesNamesAndRejectsUnknown) {
  EXPECT_EQ(parse_backend_kind("cpu"), BackendKind::cpu);
  EXPECT_EQ(parse_backend_kind("cuda"), BackendKind::cuda);
  EXPECT_THROW(parse_backend_kind("opencl"), InvalidInput);
}

TEST(Backend, HostAllocationFailureIsOutOfMemory) {
  const Backend cpu = Backend::cpu();
  EXPECT_THROW(cpu.allocate(std::size_t{1} << 62), OutOfMemory);
}

TEST(Timing, TimePerCallCountsEveryCallOfTheBatch) {
  // Each call sleeps at least 0.5 ms: the per-call time can be no less, whatever the batch size,
  // and replaying a recorded batch (the host's launch graph) counts the same calls.
  const Backend backend = Backend::reference();
  int calls = 0;
  const auto sleep = [&] {
    ++calls;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  };
  const double seconds = time_per_call(backend, sleep, 2e-3, 3);
  EXPECT_GE(seconds, 0.5e-3);
  EXPECT_LT(seconds, 1.0);
  EXPECT_GE(calls, 3 + 4 + 3);  // warm-up, the estimate's batch, three batches of one or more
  EXPECT_GE(time_per_call_in_graph(backend, sleep, 2e-3, 3), 0.5e-3);
  EXPECT_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(median({}), 0.0);
}

TEST(Backend, CacheBytesIsTheHostsLastLevelCacheOrZero) {
  const std::size_t bytes = Backend::cpu().cache_bytes();
  EXPECT_TRUE(bytes == 0 || bytes >= 64 * 1024) << bytes;
}

TEST(Array, CopiesRoundTripExactly) {
  const std::vector<double> host = {1.5, -2.25, 3.0};
  const Array<double> a = Array<double>::from_host(Backend::cpu(), host);
  const Array<double> b = a.copy_to(Backend::reference());
  EXPECT_EQ(b.to_host(), host);
  EXPECT_EQ(a.to_host(), host);  // the source is unchanged
}

TEST(Array, MoveTransfersTheBuffer) {
  const std::vector<double> host = {1.5, -2.25, 3.0};
  Array<double> a = Array<double>::from_host(Backend::cpu(), host);
  const double* buffer = a.data();
  Array<double> moved = std::move(a);
  EXPECT_EQ(moved.size(), 3u);
  EXPECT_EQ(moved.data(), buffer);
  EXPECT_EQ(moved.to_host(), host);
}

TEST(Vector, ZeroBetaOrGammaIgnoresTheOutputsOldContentOnEveryHostBackend) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Backend& backend : {Backend::reference(), Backend::cpu()}) {
    const Vector x = Vector::from_host(backend, {1.0, -2.0, 3.0});
    const Vector y = Vector::from_host(backend, {0.5, 0.5, 0.5});
    Vector out = Vector::from_host(backend, {nan, INFINITY, nan});

    axpby(2.0, x, 0.0, out);
    EXPECT_EQ(out.to_host(), (std::vector<double>{2.0, -4.0, 6.0})) << backend.name();

    fill(out, nan);
    axpbypcz(1.0, x, 2.0, y, 0.0, out);
    EXPECT_EQ(out.to_host(), (std::vector<double>{2.0, -1.0, 4.0})) << backend.name();
  }
}

TEST(Vector, ZeroCoefficientOnAnInputStillPropagatesNan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Backend backend = Backend::cpu();
  const Vector x = Vector::from_host(backend, {1.0, 1.0});
  const Vector y = Vector::from_host(backend, {nan, 1.0});
  Vector z = Vector::from_host(backend, {0.0, 0.0});

  axpbypcz(1.0, x, 0.0, y, 0.0, z);  // beta == 0 does not hide the NaN in y

  EXPECT_TRUE(std::isnan(z.to_host()[0]));
  EXPECT_EQ(z.to_host()[1], 1.0);
}

TEST(Vector, MismatchedOperandsThrowBeforeWriting) {
  const Vector x = Vector::from_host(Backend::cpu(), {1.0, 2.0});
  Vector shorter = Vector::from_host(Backend::cpu(), {7.0});
  Vector elsewhere = Vector::from_host(Backend::reference(), {7.0, 8.0});

  EXPECT_THROW(axpby(1.0, x, 0.0, shorter), DimensionMismatch);
  EXPECT_THROW(copy(x, shorter), DimensionMismatch);
  EXPECT_THROW(dot(x, shorter), DimensionMismatch);
  EXPECT_THROW(axpby(1.0, x, 0.0, elsewhere), InvalidInput);

  EXPECT_EQ(shorter.to_host(), (std::vector<double>{7.0}));
  EXPECT_EQ(elsewhere.to_host(), (std::vector<double>{7.0, 8.0}));
}

TEST(CsrMatrix, FromCooSortsAndSumsDuplicates) {
  CooMatrix coo;
  coo.num_rows = 2;
  coo.num_cols = 3;
  coo.push_back(1, 2, 1.0);
  coo.push_back(0, 1, 2.0);
  coo.push_back(1, 0, 3.0);
  coo.push_back(1, 2, 4.0);  // duplicate of (1, 2)
  const CsrMatrix A = CsrMatrix::from_coo(Backend::reference(), coo);
  EXPECT_EQ(A.row_ptr().to_host(), (std::vector<index_t>{0, 1, 3}));
  EXPECT_EQ(A.col_idx().to_host(), (std::vector<index_t>{1, 0, 2}));
  EXPECT_EQ(A.values().to_host(), (std::vector<double>{2.0, 3.0, 5.0}));
}

TEST(CsrMatrix, RejectsOutOfRangeAndUnsortedColumns) {
  EXPECT_THROW(CsrMatrix::from_host(Backend::reference(), 1, 2, {0, 1}, {2}, {1.0}), InvalidInput);
  EXPECT_THROW(CsrMatrix::from_host(Backend::reference(), 1, 3, {0, 2}, {2, 1}, {1.0, 1.0}),
               InvalidInput);
  EXPECT_THROW(CsrMatrix::from_host(Backend::reference(), 2, 2, {0, 1}, {0}, {1.0}), InvalidInput);
}

TEST(CsrMatrix, AppliesHandCheckedProduct) {
  // [2 -1; -1 2] * [1; 3] = [-1; 5]
  const CsrMatrix A = CsrMatrix::from_host(Backend::reference(), 2, 2, {0, 2, 4}, {0, 1, 0, 1},
                                           {2.0, -1.0, -1.0, 2.0});
  const Vector x = Vector::from_host(A.backend(), {1.0, 3.0});
  Vector y(A.backend(), 2);
  A.apply(x, y);
  EXPECT_EQ(y.to_host(), (std::vector<double>{-1.0, 5.0}));
  EXPECT_DOUBLE_EQ(A.apply_dot(x, y), 14.0);
  Vector wrong(A.backend(), 3);
  EXPECT_THROW(A.apply(x, wrong), DimensionMismatch);
}

TEST(CsrMatrix, RejectsAliasedOrMisplacedOperands) {
  const CsrMatrix A =
      CsrMatrix::from_host(Backend::cpu(), 2, 2, {0, 2, 4}, {0, 1, 0, 1}, {2.0, -1.0, -1.0, 2.0});
  Vector x = Vector::from_host(Backend::cpu(), {1.0, 3.0});
  const Vector b_elsewhere = Vector::from_host(Backend::reference(), {1.0, 1.0});
  Vector r(Backend::cpu(), 2);
  Vector d_elsewhere(Backend::reference(), 2);

  EXPECT_THROW(A.apply(x, x), InvalidInput);
  EXPECT_THROW(A.apply_dot(x, x), InvalidInput);
  EXPECT_THROW(A.residual(x, x, x), InvalidInput);
  EXPECT_THROW(A.residual(b_elsewhere, x, r), InvalidInput);
  EXPECT_THROW(A.diagonal(d_elsewhere), InvalidInput);
  EXPECT_EQ(x.to_host(), (std::vector<double>{1.0, 3.0}));
}

TEST(CsrMatrix, FromCooRejectsNegativeDimensions) {
  CooMatrix coo;
  coo.num_rows = -3;
  coo.num_cols = 2;
  EXPECT_THROW(CsrMatrix::from_coo(Backend::reference(), coo), InvalidInput);
}

TEST(Generators, Poisson3dHasSevenPointStencil) {
  const CooMatrix coo = poisson3d(3);
  EXPECT_EQ(coo.num_rows, 27);
  // 27 diagonals + 6 directions * (3*3*2) neighbour pairs
  EXPECT_EQ(coo.num_entries(), 27u + 6u * 18u);
  const CsrMatrix A = CsrMatrix::from_coo(Backend::reference(), coo);
  const MatrixProperties p = analyse(A);
  EXPECT_TRUE(p.numerically_symmetric());
  EXPECT_EQ(p.positive_diagonal, 27);
  EXPECT_EQ(p.diagonally_dominant_rows, 27);
  EXPECT_EQ(p.suggested_solver, "pcg_jacobi");
  EXPECT_THROW(poisson3d(0), InvalidInput);
}

TEST(Analysis, Float32MatrixIsAnalysedAsTheDoublesOfItsValues) {
  // Poisson scaled by 1/3 (values not exactly floats): rounding makes the centre row, exactly
  // weakly dominant in double (2 = 6 * 1/3), lose dominance (6 * float(1/3) > 2).
  CooMatrix coo = poisson3d(3);
  for (double& v : coo.values) v /= 3.0;
  CooMatrix rounded = coo;
  for (double& v : rounded.values) v = static_cast<double>(static_cast<float>(v));
  const CsrMatrix A = CsrMatrix::from_coo(Backend::reference(), coo, Precision::float32);

  const MatrixProperties p = analyse(A);
  const MatrixProperties expected = analyse(CsrMatrix::from_coo(Backend::reference(), rounded));

  EXPECT_TRUE(p.numerically_symmetric());
  EXPECT_EQ(p.positive_diagonal, 27);
  EXPECT_EQ(p.diagonally_dominant_rows, 26);
  EXPECT_EQ(p.diagonally_dominant_rows, expected.diagonally_dominant_rows);
  EXPECT_EQ(p.asymmetry, expected.asymmetry);
  EXPECT_EQ(p.suggested_solver, expected.suggested_solver);
}

TEST(Generators, Poisson3d27HasTwentySevenPointStencil) {
  const CooMatrix coo = poisson3d27(3);
  // the centre point couples to all 27 points; 8 corners to 8 each
  const CsrMatrix A = CsrMatrix::from_coo(Backend::reference(), coo);
  EXPECT_EQ(A.row_length_stats().max, 27);
  EXPECT_EQ(A.row_length_stats().min, 8);
}

TEST(Generators, StoreTheDocumentedNumberOfEntries) {
  for (index_t n = 1; n <= 5; ++n) {
    const std::size_t m = static_cast<std::size_t>(n);
    EXPECT_EQ(poisson2d(n).num_entries(), 5 * m * m - 4 * m) << "n = " << n;
    EXPECT_EQ(poisson3d(n).num_entries(), 7 * m * m * m - 6 * m * m) << "n = " << n;
    EXPECT_EQ(poisson3d27(n).num_entries(), (3 * m - 2) * (3 * m - 2) * (3 * m - 2)) << "n = " << n;
  }
}

/// Runs `generate` and returns the InvalidInput message ("" when nothing was thrown).
template <class Generate>
std::string invalid_input_message(Generate generate) {
  try {
    generate();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

TEST(Generators, RejectIndexOverflowBeforeAllocating) {
  const index_t huge = std::numeric_limits<index_t>::max();
  // n^d overflows 32 (and for n^3 even 64) bits: rejected without allocating.
  for (const std::string& message :
       {invalid_input_message([&] { poisson2d(huge); }),
        invalid_input_message([&] { poisson3d(huge); }),
        invalid_input_message([&] { poisson3d27(huge); }),
        invalid_input_message([] { poisson2d(46341); })}) {  // 46341^2 > 2^31 - 1
    EXPECT_NE(message.find("rows exceed"), std::string::npos) << message;
    EXPECT_NE(message.find("2147483647"), std::string::npos) << message;
  }
  // The rows fit, the stored entries do not (one above each generator's largest n).
  const std::string p2 = invalid_input_message([] { poisson2d(20725); });
  const std::string p3 = invalid_input_message([] { poisson3d(675); });
  const std::string p27 = invalid_input_message([] { poisson3d27(431); });
  EXPECT_NE(p2.find("poisson2d(n = 20725): 2147545225 nonzeros exceed"), std::string::npos) << p2;
  EXPECT_NE(p3.find("poisson3d(n = 675): 2150094375 nonzeros exceed"), std::string::npos) << p3;
  EXPECT_NE(p27.find("poisson3d27(n = 431): 2151685171 nonzeros exceed"), std::string::npos) << p27;
  EXPECT_THROW(poisson2d(0), InvalidInput);
  EXPECT_THROW(poisson3d27(-3), InvalidInput);
}

TEST(MatrixAnalysis, DetectsAsymmetryAndMissingDiagonal) {
  const CsrMatrix A =
      CsrMatrix::from_host(Backend::reference(), 2, 2, {0, 1, 3}, {1, 0, 1}, {1.0, 2.0, 3.0});
  const MatrixProperties p = analyse(A);
  EXPECT_FALSE(p.numerically_symmetric());
  EXPECT_EQ(p.missing_diagonal, 1);
  EXPECT_EQ(p.suggested_solver, "gmres");
  EXPECT_NE(p.suggestion_reason.find("Jacobi preconditioner cannot be used"), std::string::npos)
      << p.suggestion_reason;
}

TEST(MatrixAnalysis, SuggestsCgAsIsForSymmetricNegativeDiagonal) {
  CooMatrix coo = poisson2d(4);
  for (double& v : coo.values) v = -v;  // negative definite
  const MatrixProperties p = analyse(CsrMatrix::from_coo(Backend::reference(), coo));
  EXPECT_EQ(p.negative_diagonal, 16);
  EXPECT_EQ(p.suggested_solver, "pcg_jacobi");
  EXPECT_NE(p.suggestion_reason.find("CG handles directly"), std::string::npos)
      << p.suggestion_reason;
  EXPECT_EQ(p.suggestion_reason.find("negate A and b, then"), std::string::npos)
      << p.suggestion_reason;
}

TEST(MatrixAnalysis, SymmetricWithMixedDiagonalSignsIsNotSentToCg) {
  // [2 1 0; 1 -2 1; 0 1 3]: symmetric, diagonal of both signs (indefinite), every row
  // diagonally dominant (|-2| >= 1 + 1).
  const CsrMatrix A =
      CsrMatrix::from_host(Backend::reference(), 3, 3, {0, 2, 5, 7}, {0, 1, 0, 1, 2, 1, 2},
                           {2.0, 1.0, 1.0, -2.0, 1.0, 1.0, 3.0});
  const MatrixProperties p = analyse(A);
  EXPECT_TRUE(p.numerically_symmetric());
  EXPECT_EQ(p.suggested_solver, "bicgstab_jacobi");
  EXPECT_NE(p.suggestion_reason.find("both signs"), std::string::npos) << p.suggestion_reason;
}

TEST(MatrixAnalysis, JacobiCouplingIsTheMedianOfTheRowsOffDiagonalOverDiagonalSums) {
  // Rows [2 -1 0], [1 -4 -3], [0 3 1]: sum_{j != i} |a_ij| / |a_ii| = 0.5, 1, 3, median 1 (not
  // weak for B = 1: no ILUT probe). Scaled by 3 off the diagonal: 1.5, 3, 9, median 3 (weak:
  // the probe runs and reports a growth of at least 1).
  const auto matrix = [](double s) {
    return CsrMatrix::from_host(Backend::reference(), 3, 3, {0, 2, 5, 7}, {0, 1, 0, 1, 2, 1, 2},
                                {2.0, -1.0 * s, 1.0 * s, -4.0, -3.0 * s, 3.0 * s, 1.0});
  };
  const MatrixProperties mild = analyse(matrix(1.0));
  EXPECT_EQ(mild.block_size, 1);
  EXPECT_DOUBLE_EQ(mild.jacobi_coupling, 1.0);
  EXPECT_EQ(mild.ilut_growth, 0.0);
  const MatrixProperties weak = analyse(matrix(3.0));
  EXPECT_DOUBLE_EQ(weak.jacobi_coupling, 3.0);
  EXPECT_GE(weak.ilut_growth, 1.0);
  EXPECT_TRUE(weak.suggested_solver == "gmres_ilut" || weak.suggested_solver == "bicgstab_mcgs")
      << weak.suggestion_reason;
}

TEST(MatrixAnalysis, NonsymmetricGoesToBicgstabDominantOrNot) {
  // [4 1; 0 4] is diagonally dominant; [1 3; 0 1] is not. Right-preconditioned GMRES(30) with
  // Jacobi stagnates on some nonsymmetric CFD matrices (airfoil_2d) where BiCGStab converges.
  const MatrixProperties dominant = analyse(
      CsrMatrix::from_host(Backend::reference(), 2, 2, {0, 2, 3}, {0, 1, 1}, {4.0, 1.0, 4.0}));
  const MatrixProperties weak = analyse(
      CsrMatrix::from_host(Backend::reference(), 2, 2, {0, 2, 3}, {0, 1, 1}, {1.0, 3.0, 1.0}));
  EXPECT_FALSE(dominant.numerically_symmetric());
  EXPECT_EQ(dominant.suggested_solver, "bicgstab_jacobi");
  EXPECT_EQ(weak.suggested_solver, "bicgstab_jacobi");
  EXPECT_TRUE(weak.suggested_overrides.empty());
  EXPECT_EQ(weak.suggested_pin_unknown, 0);
}

TEST(MatrixAnalysis, ZeroRowSumsMeanAConstantNullSpaceAndAPinnedUnknown) {
  // The pure-Neumann Laplacian: poisson2d's stencil with each diagonal set to minus the sum of
  // its row's off-diagonal entries, rounded to 6 significant digits (as OpenFOAM dumps it).
  CooMatrix coo = poisson2d(6);
  std::vector<double> off_sum(36, 0.0);
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    coo.values[k] *= 1.0 + 1e-7 * ((coo.row_idx[k] + coo.col_idx[k]) % 7);  // 6-digit rounding
    if (coo.row_idx[k] != coo.col_idx[k]) off_sum[coo.row_idx[k]] += coo.values[k];
  }
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    if (coo.row_idx[k] == coo.col_idx[k]) coo.values[k] = -off_sum[coo.row_idx[k]] * (1 + 2e-6);
  }
  const MatrixProperties p = analyse(CsrMatrix::from_coo(Backend::reference(), coo));
  EXPECT_EQ(p.zero_row_sum_rows, 36);
  EXPECT_TRUE(p.constant_null_space);
  EXPECT_EQ(p.suggested_pin_unknown, 1);
  EXPECT_NE(p.suggestion_reason.find("--pin-unknown 1"), std::string::npos) << p.suggestion_reason;

  // One Dirichlet cell (a row with a nonzero sum): nonsingular, nothing to pin.
  CooMatrix anchored = coo;
  anchored.push_back(0, 0, 1.0);
  const MatrixProperties q = analyse(CsrMatrix::from_coo(Backend::reference(), anchored));
  EXPECT_EQ(q.zero_row_sum_rows, 35);
  EXPECT_FALSE(q.constant_null_space);
  EXPECT_EQ(q.suggested_pin_unknown, 0);
  EXPECT_EQ(q.suggestion_reason.find("--pin-unknown"), std::string::npos) << q.suggestion_reason;
}

TEST(MatrixAnalysis, TheIterationBudgetGrowsWithTheUnknowns) {
  // CG: 4n iterations, BiCGStab n, and a stagnation window of n (within 500..5000), each once
  // above the preset's 1000 and 500.
  const MatrixProperties small = analyse(CsrMatrix::from_coo(Backend::reference(), poisson2d(15)));
  EXPECT_TRUE(small.suggested_overrides.empty());  // 4 * 225 = 900 <= 1000
  const MatrixProperties cg = analyse(CsrMatrix::from_coo(Backend::reference(), poisson2d(40)));
  EXPECT_EQ(cg.suggested_solver, "pcg_jacobi");
  EXPECT_EQ(cg.suggested_overrides, (std::vector<std::string>{"solver.max_iterations=6400",
                                                              "solver.stagnation_window=1600"}));
  const MatrixProperties huge = analyse(CsrMatrix::from_coo(Backend::reference(), poisson2d(300)));
  EXPECT_EQ(huge.suggested_overrides, (std::vector<std::string>{"solver.max_iterations=100000",
                                                                "solver.stagnation_window=5000"}));
  CooMatrix convection = poisson2d(40);
  for (std::size_t k = 0; k < convection.num_entries(); ++k) {
    if (convection.col_idx[k] == convection.row_idx[k] + 1) convection.values[k] *= 0.5;
  }
  const MatrixProperties bicgstab = analyse(CsrMatrix::from_coo(Backend::reference(), convection));
  EXPECT_EQ(bicgstab.suggested_solver, "bicgstab_jacobi");
  EXPECT_EQ(
      bicgstab.suggested_overrides,
      (std::vector<std::string>{"solver.max_iterations=1600", "solver.stagnation_window=1600"}));
  EXPECT_NE(bicgstab.suggestion_reason.find("iteration limit of n = 1600"), std::string::npos)
      << bicgstab.suggestion_reason;
}

TEST(PinUnknown, RemovesRowAndColumnAndKeepsDiagonal) {
  CooMatrix coo = poisson2d(2);  // 4 x 4
  std::vector<double> b = {1.0, 2.0, 3.0, 4.0};
  pin_unknown(coo, &b, 0);
  const CsrMatrix A = CsrMatrix::from_coo(Backend::reference(), coo);
  EXPECT_EQ(A.row_ptr().to_host()[1], 1);  // row 0 holds only the diagonal, unchanged
  EXPECT_EQ(A.values().to_host()[0], 4.0);
  EXPECT_EQ(b[0], 0.0);
  for (std::size_t k = 0; k < coo.num_entries(); ++k) {
    if (coo.col_idx[k] == 0) EXPECT_EQ(coo.row_idx[k], 0);
  }
  EXPECT_THROW(pin_unknown(coo, &b, 4), InvalidInput);
}

/// Equal triplets, entry by entry.
void expect_same_triplets(const CooMatrix& actual, const CooMatrix& expected) {
  EXPECT_EQ(actual.num_rows, expected.num_rows);
  EXPECT_EQ(actual.num_cols, expected.num_cols);
  EXPECT_EQ(actual.row_idx, expected.row_idx);
  EXPECT_EQ(actual.col_idx, expected.col_idx);
  EXPECT_EQ(actual.values, expected.values);
}

TEST(PinUnknown, WrongSizeRhsThrowsAndLeavesMatrixUntouched) {
  const CooMatrix original = poisson2d(2);  // 4 x 4
  CooMatrix coo = original;
  std::vector<double> b = {1.0, 2.0, 3.0};  // one entry short

  EXPECT_THROW(pin_unknown(coo, &b, 1), DimensionMismatch);

  expect_same_triplets(coo, original);
  EXPECT_EQ(b, (std::vector<double>{1.0, 2.0, 3.0}));
}

TEST(PinUnknown, OutOfRangeRowOrNonSquareThrowsAndLeavesInputsUntouched) {
  const CooMatrix original = poisson2d(2);
  CooMatrix coo = original;
  std::vector<double> b = {1.0, 2.0, 3.0, 4.0};

  EXPECT_THROW(pin_unknown(coo, &b, -1), InvalidInput);
  EXPECT_THROW(pin_unknown(coo, &b, 4), InvalidInput);
  expect_same_triplets(coo, original);
  EXPECT_EQ(b, (std::vector<double>{1.0, 2.0, 3.0, 4.0}));

  CooMatrix rectangular = original;
  rectangular.num_cols = 5;
  EXPECT_THROW(pin_unknown(rectangular, nullptr, 0), InvalidInput);
  EXPECT_EQ(rectangular.values, original.values);
}

TEST(PinUnknown, KeepsNegativeDiagonalAndReplacesZeroDiagonalByOne) {
  CooMatrix coo;
  coo.num_rows = 2;
  coo.num_cols = 2;
  coo.push_back(0, 0, -2.0);
  coo.push_back(0, 1, 1.0);
  coo.push_back(1, 0, 1.0);
  // row 1 stores no diagonal entry

  CooMatrix negative = coo;
  pin_unknown(negative, nullptr, 0);
  pin_unknown(coo, nullptr, 1);

  EXPECT_EQ(negative.values, (std::vector<double>{-2.0}));
  EXPECT_EQ(coo.values, (std::vector<double>{-2.0, 1.0}));
  EXPECT_EQ(coo.row_idx, (std::vector<index_t>{0, 1}));
  EXPECT_EQ(coo.col_idx, (std::vector<index_t>{0, 1}));
}

}  // namespace
}  // namespace kryflow
