// The C interface (bindings/c/kryflow.h): solves checked by the true residual on the host, value
// updates, BSR input, device arrays, and every documented error code with its message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "kryflow.h"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "test_support.hpp"

namespace {

using kryflow::index_t;

/// A CSR matrix on the host as the C interface takes it.
struct HostCsr {
  int32_t n = 0;
  std::vector<int32_t> row_ptr, col_idx;
  std::vector<double> values;
};

HostCsr to_host_csr(const kryflow::CooMatrix& coo) {
  const kryflow::CsrMatrix A = kryflow::CsrMatrix::from_coo(kryflow::Backend::reference(), coo);
  const kryflow::HostCsrMatrix h = A.to_host_csr();
  return {coo.num_rows, h.row_ptr, h.col_idx, h.values};
}

/// ||b - A x|| / ||b||, computed here from the CSR arrays.
double true_residual(const HostCsr& A, const std::vector<double>& x, const std::vector<double>& b) {
  double rr = 0.0, bb = 0.0;
  for (int32_t i = 0; i < A.n; ++i) {
    double r = b[i];
    for (int32_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) r -= A.values[k] * x[A.col_idx[k]];
    rr += r * r;
    bb += b[i] * b[i];
  }
  return std::sqrt(rr / bb);
}

/// The backend under test by name, as a C program names it.
kryflow_backend make_backend() {
  kryflow_backend backend = nullptr;
  EXPECT_EQ(kryflow_backend_create(KRYFLOW_TEST_BACKEND, &backend), KRYFLOW_SUCCESS)
      << kryflow_last_error();
  return backend;
}

kryflow_matrix make_matrix(kryflow_backend backend, const HostCsr& A, const char* format = "csr") {
  kryflow_matrix matrix = nullptr;
  EXPECT_EQ(kryflow_matrix_create_csr(backend, A.n, A.n, static_cast<int64_t>(A.values.size()),
                                      A.row_ptr.data(), A.col_idx.data(), A.values.data(),
                                      KRYFLOW_MEMORY_HOST, format, KRYFLOW_FLOAT64, &matrix),
            KRYFLOW_SUCCESS)
      << kryflow_last_error();
  return matrix;
}

/// Solves with `solver` set up on `matrix` for b; returns x on the host.
std::vector<double> solve(kryflow_backend backend, kryflow_solver solver,
                          const std::vector<double>& b, kryflow_solve_info* info) {
  kryflow_vector bv = nullptr, xv = nullptr;
  EXPECT_EQ(kryflow_vector_create(backend, static_cast<int64_t>(b.size()), b.data(),
                                  KRYFLOW_MEMORY_HOST, &bv),
            KRYFLOW_SUCCESS);
  EXPECT_EQ(kryflow_vector_create(backend, static_cast<int64_t>(b.size()), nullptr,
                                  KRYFLOW_MEMORY_HOST, &xv),
            KRYFLOW_SUCCESS);
  EXPECT_EQ(kryflow_solver_solve(solver, bv, xv, info), KRYFLOW_SUCCESS) << kryflow_last_error();
  std::vector<double> x(b.size());
  EXPECT_EQ(
      kryflow_vector_download(xv, x.data(), static_cast<int64_t>(x.size()), KRYFLOW_MEMORY_HOST),
      KRYFLOW_SUCCESS);
  kryflow_vector_destroy(bv);
  kryflow_vector_destroy(xv);
  return x;
}

TEST(CApi, PresetSolveConvergesAndAValueUpdateIsSeenByTheSolver) {
  const HostCsr A = to_host_csr(kryflow::poisson2d(40));
  const std::vector<double> b = kryflow::test::random_vector(static_cast<std::size_t>(A.n), 7);
  kryflow_backend backend = make_backend();
  kryflow_matrix matrix = make_matrix(backend, A);
  kryflow_solver solver = nullptr;
  const char* overrides[] = {"solver.relative_tolerance=1e-10"};
  ASSERT_EQ(kryflow_solver_create("pcg_amg", overrides, 1, &solver), KRYFLOW_SUCCESS)
      << kryflow_last_error();
  ASSERT_EQ(kryflow_solver_setup(solver, matrix), KRYFLOW_SUCCESS) << kryflow_last_error();
  kryflow_solve_info info{};
  const std::vector<double> x = solve(backend, solver, b, &info);
  EXPECT_EQ(info.status, KRYFLOW_SOLVE_CONVERGED);
  EXPECT_GT(info.iterations, 0);
  EXPECT_LT(info.iterations, 40);  // AMG: far fewer than Jacobi's ~130 on this grid
  EXPECT_LE(true_residual(A, x, b), 1e-9);
  EXPECT_NEAR(info.rhs_norm, std::sqrt(std::inner_product(b.begin(), b.end(), b.begin(), 0.0)),
              1e-9 * info.rhs_norm);

  // The resolved configuration echoes the override.
  int32_t length = 0;
  ASSERT_EQ(kryflow_solver_configuration(solver, nullptr, 0, &length), KRYFLOW_SUCCESS);
  std::string json(static_cast<std::size_t>(length) + 1, '\0');
  ASSERT_EQ(kryflow_solver_configuration(solver, json.data(), length + 1, nullptr),
            KRYFLOW_SUCCESS);
  EXPECT_NE(json.find("\"relative_tolerance\":1e-10"), std::string::npos) << json;

  // 2A x' = b gives x' = x / 2; the matrix handle may go once the solver is set up.
  std::vector<double> doubled = A.values;
  for (double& v : doubled) v *= 2.0;
  ASSERT_EQ(kryflow_matrix_update_values(matrix, static_cast<int64_t>(doubled.size()),
                                         doubled.data(), KRYFLOW_MEMORY_HOST),
            KRYFLOW_SUCCESS);
  ASSERT_EQ(kryflow_solver_update_values(solver), KRYFLOW_SUCCESS) << kryflow_last_error();
  kryflow_matrix_destroy(matrix);
  kryflow_solve_info info2{};
  const std::vector<double> half = solve(backend, solver, b, &info2);
  EXPECT_EQ(info2.status, KRYFLOW_SOLVE_CONVERGED);
  double worst = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    worst = std::max(worst, std::abs(half[i] - 0.5 * x[i]));
  }
  EXPECT_LE(worst, 1e-7);
  kryflow_solver_destroy(solver);
  kryflow_backend_destroy(backend);
}

/// A block matrix (B = 4 blocks on the pattern of a 6x6 Poisson grid) as scalar CSR and as BSR
/// arrays: the scalar pattern's blocks, each block row-major from the CSR values.
struct BlockProblem {
  static constexpr int B = 4;
  HostCsr csr, pattern;
  std::vector<double> blocks;
  BlockProblem() {
    const kryflow::CooMatrix scalar = kryflow::poisson2d(6);
    csr = to_host_csr(kryflow::kronecker_block(scalar, B, 3, false));
    pattern = to_host_csr(scalar);
    blocks.assign(pattern.col_idx.size() * B * B, 0.0);
    for (int32_t I = 0; I < pattern.n; ++I) {
      for (int32_t k = pattern.row_ptr[I]; k < pattern.row_ptr[I + 1]; ++k) {
        const int32_t J = pattern.col_idx[k];
        for (int r = 0; r < B; ++r) {
          const int32_t row = I * B + r;
          for (int32_t p = csr.row_ptr[row]; p < csr.row_ptr[row + 1]; ++p) {
            const int32_t c = csr.col_idx[p] - J * B;
            if (c >= 0 && c < B)
              blocks[(static_cast<std::size_t>(k) * B + r) * B + c] = csr.values[p];
          }
        }
      }
    }
  }
};

TEST(CApi, BsrInputGivesTheProductOfTheExpandedMatrix) {
  constexpr int B = BlockProblem::B;
  BlockProblem problem;
  const HostCsr& csr = problem.csr;
  const HostCsr& pattern = problem.pattern;
  std::vector<double>& blocks = problem.blocks;
  kryflow_backend backend = make_backend();
  kryflow_matrix matrix = nullptr;
  ASSERT_EQ(kryflow_matrix_create_bsr(backend, pattern.n, pattern.n, B,
                                      static_cast<int64_t>(pattern.col_idx.size()),
                                      pattern.row_ptr.data(), pattern.col_idx.data(), blocks.data(),
                                      KRYFLOW_MEMORY_HOST, KRYFLOW_FLOAT64, &matrix),
            KRYFLOW_SUCCESS)
      << kryflow_last_error();
  int32_t rows = 0, cols = 0;
  int64_t nnz = 0;
  ASSERT_EQ(kryflow_matrix_size(matrix, &rows, &cols, &nnz), KRYFLOW_SUCCESS);
  EXPECT_EQ(rows, csr.n);
  EXPECT_EQ(nnz, static_cast<int64_t>(blocks.size()));
  const std::vector<double> x = kryflow::test::random_vector(static_cast<std::size_t>(csr.n), 5);
  kryflow_vector xv = nullptr, yv = nullptr;
  ASSERT_EQ(kryflow_vector_create(backend, csr.n, x.data(), KRYFLOW_MEMORY_HOST, &xv),
            KRYFLOW_SUCCESS);
  ASSERT_EQ(kryflow_vector_create(backend, csr.n, nullptr, KRYFLOW_MEMORY_HOST, &yv),
            KRYFLOW_SUCCESS);
  ASSERT_EQ(kryflow_matrix_apply(matrix, xv, yv), KRYFLOW_SUCCESS) << kryflow_last_error();
  std::vector<double> y(x.size());
  ASSERT_EQ(kryflow_vector_download(yv, y.data(), csr.n, KRYFLOW_MEMORY_HOST), KRYFLOW_SUCCESS);
  for (int32_t i = 0; i < csr.n; ++i) {
    double expected = 0.0;
    for (int32_t k = csr.row_ptr[i]; k < csr.row_ptr[i + 1]; ++k)
      expected += csr.values[k] * x[csr.col_idx[k]];
    ASSERT_NEAR(y[i], expected, 1e-12 * (1.0 + std::abs(expected))) << "row " << i;
  }
  // A BSR value update in block order: every value negated gives -y.
  for (double& v : blocks) v = -v;
  ASSERT_EQ(kryflow_matrix_update_values(matrix, nnz, blocks.data(), KRYFLOW_MEMORY_HOST),
            KRYFLOW_SUCCESS);
  ASSERT_EQ(kryflow_matrix_apply(matrix, xv, yv), KRYFLOW_SUCCESS);
  std::vector<double> negated(x.size());
  ASSERT_EQ(kryflow_vector_download(yv, negated.data(), csr.n, KRYFLOW_MEMORY_HOST),
            KRYFLOW_SUCCESS);
  for (int32_t i = 0; i < csr.n; ++i) ASSERT_EQ(negated[i], -y[i]);
  kryflow_vector_destroy(xv);
  kryflow_vector_destroy(yv);
  kryflow_matrix_destroy(matrix);
  kryflow_backend_destroy(backend);
}

TEST(CApi, BsrArraysInDeviceMemoryAreCheckedAndExpandedWhereTheyLive) {
  // The same block matrix from host arrays and from arrays in the backend's memory (device
  // pointers on cuda): the same products; then a block row with unsorted block columns.
  constexpr int B = BlockProblem::B;
  const BlockProblem problem;
  const HostCsr& pattern = problem.pattern;
  const kryflow::Backend backend_cpp = kryflow::test::backend_under_test();
  const auto rows = kryflow::Array<index_t>::from_host(backend_cpp, pattern.row_ptr);
  const auto cols = kryflow::Array<index_t>::from_host(backend_cpp, pattern.col_idx);
  const auto values = kryflow::Array<double>::from_host(backend_cpp, problem.blocks);
  const auto nnzb = static_cast<int64_t>(pattern.col_idx.size());
  kryflow_backend backend = make_backend();
  kryflow_matrix from_host = nullptr, from_device = nullptr;
  ASSERT_EQ(
      kryflow_matrix_create_bsr(backend, pattern.n, pattern.n, B, nnzb, pattern.row_ptr.data(),
                                pattern.col_idx.data(), problem.blocks.data(), KRYFLOW_MEMORY_HOST,
                                KRYFLOW_FLOAT64, &from_host),
      KRYFLOW_SUCCESS)
      << kryflow_last_error();
  ASSERT_EQ(kryflow_matrix_create_bsr(backend, pattern.n, pattern.n, B, nnzb, rows.data(),
                                      cols.data(), values.data(), KRYFLOW_MEMORY_DEVICE,
                                      KRYFLOW_FLOAT64, &from_device),
            KRYFLOW_SUCCESS)
      << kryflow_last_error();
  const int32_t n = problem.csr.n;
  const std::vector<double> x = kryflow::test::random_vector(static_cast<std::size_t>(n), 11);
  const auto product = [&](kryflow_matrix matrix) {
    kryflow_vector xv = nullptr, yv = nullptr;
    EXPECT_EQ(kryflow_vector_create(backend, n, x.data(), KRYFLOW_MEMORY_HOST, &xv),
              KRYFLOW_SUCCESS);
    EXPECT_EQ(kryflow_vector_create(backend, n, nullptr, KRYFLOW_MEMORY_HOST, &yv),
              KRYFLOW_SUCCESS);
    EXPECT_EQ(kryflow_matrix_apply(matrix, xv, yv), KRYFLOW_SUCCESS) << kryflow_last_error();
    std::vector<double> y(x.size());
    EXPECT_EQ(kryflow_vector_download(yv, y.data(), n, KRYFLOW_MEMORY_HOST), KRYFLOW_SUCCESS);
    kryflow_vector_destroy(xv);
    kryflow_vector_destroy(yv);
    return y;
  };
  const std::vector<double> expected = product(from_host);
  EXPECT_EQ(product(from_device), expected);
  // A value update from device memory in block order: every value doubled gives 2 y.
  std::vector<double> doubled = problem.blocks;
  for (double& v : doubled) v *= 2.0;
  const auto doubled_on = kryflow::Array<double>::from_host(backend_cpp, doubled);
  ASSERT_EQ(kryflow_matrix_update_values(from_device, nnzb * B * B, doubled_on.data(),
                                         KRYFLOW_MEMORY_DEVICE),
            KRYFLOW_SUCCESS)
      << kryflow_last_error();
  const std::vector<double> twice = product(from_device);
  for (int32_t i = 0; i < n; ++i) ASSERT_EQ(twice[i], 2.0 * expected[i]) << "row " << i;

  std::vector<int32_t> bad = pattern.col_idx;
  std::swap(bad[pattern.row_ptr[4]], bad[pattern.row_ptr[4] + 1]);  // block row 5 unsorted
  const auto bad_cols = kryflow::Array<index_t>::from_host(backend_cpp, bad);
  kryflow_matrix matrix = nullptr;
  EXPECT_EQ(kryflow_matrix_create_bsr(backend, pattern.n, pattern.n, B, nnzb, rows.data(),
                                      bad_cols.data(), values.data(), KRYFLOW_MEMORY_DEVICE,
                                      KRYFLOW_FLOAT64, &matrix),
            KRYFLOW_ERROR_INVALID_INPUT);
  EXPECT_EQ(matrix, nullptr);
  EXPECT_NE(std::string(kryflow_last_error()).find("block row 5"), std::string::npos)
      << kryflow_last_error();
  EXPECT_EQ(
      kryflow_matrix_create_bsr(backend, pattern.n, pattern.n, 0, nnzb, rows.data(), cols.data(),
                                values.data(), KRYFLOW_MEMORY_DEVICE, KRYFLOW_FLOAT64, &matrix),
      KRYFLOW_ERROR_INVALID_INPUT);
  kryflow_matrix_destroy(from_host);
  kryflow_matrix_destroy(from_device);
  kryflow_backend_destroy(backend);
}

TEST(CApi, DeviceMemoryArraysAreCheckedWhereTheyLive) {
  // Arrays in the backend's memory (device pointers on cuda), one row unsorted.
  const kryflow::Backend backend_cpp = kryflow::test::backend_under_test();
  const HostCsr A = to_host_csr(kryflow::poisson2d(5));
  std::vector<int32_t> bad = A.col_idx;
  std::swap(bad[A.row_ptr[7]], bad[A.row_ptr[7] + 1]);  // row 8 (1-based) unsorted
  const auto rows = kryflow::Array<index_t>::from_host(backend_cpp, A.row_ptr);
  const auto good_cols = kryflow::Array<index_t>::from_host(backend_cpp, A.col_idx);
  const auto bad_cols = kryflow::Array<index_t>::from_host(backend_cpp, bad);
  const auto values = kryflow::Array<double>::from_host(backend_cpp, A.values);
  kryflow_backend backend = make_backend();
  kryflow_matrix matrix = nullptr;
  const auto nnz = static_cast<int64_t>(A.values.size());
  EXPECT_EQ(
      kryflow_matrix_create_csr(backend, A.n, A.n, nnz, rows.data(), bad_cols.data(), values.data(),
                                KRYFLOW_MEMORY_DEVICE, nullptr, KRYFLOW_FLOAT64, &matrix),
      KRYFLOW_ERROR_INVALID_INPUT);
  EXPECT_EQ(matrix, nullptr);
  EXPECT_NE(std::string(kryflow_last_error()).find("row 8"), std::string::npos)
      << kryflow_last_error();
  ASSERT_EQ(kryflow_matrix_create_csr(backend, A.n, A.n, nnz, rows.data(), good_cols.data(),
                                      values.data(), KRYFLOW_MEMORY_DEVICE, "auto", KRYFLOW_FLOAT32,
                                      &matrix),
            KRYFLOW_SUCCESS)
      << kryflow_last_error();
  kryflow_solver solver = nullptr;
  ASSERT_EQ(kryflow_solver_create("{\"solver\": {\"type\": \"pcg\"}}", nullptr, 0, &solver),
            KRYFLOW_SUCCESS)
      << kryflow_last_error();
  ASSERT_EQ(kryflow_solver_setup(solver, matrix), KRYFLOW_SUCCESS) << kryflow_last_error();
  const std::vector<double> b = kryflow::test::random_vector(static_cast<std::size_t>(A.n), 9);
  kryflow_solve_info info{};
  const std::vector<double> x = solve(backend, solver, b, &info);
  EXPECT_EQ(info.status, KRYFLOW_SOLVE_CONVERGED);
  EXPECT_LE(true_residual(A, x, b), 1e-6);  // float32 values: the system solved is A rounded
  kryflow_solver_destroy(solver);
  kryflow_matrix_destroy(matrix);
  kryflow_backend_destroy(backend);
}

TEST(CApi, ErrorsReturnTheirCodesAndMessages) {
  const HostCsr A = to_host_csr(kryflow::poisson2d(8));
  kryflow_backend backend = make_backend();
  kryflow_matrix matrix = make_matrix(backend, A);
  kryflow_solver solver = nullptr;

  // Bad handles and output pointers.
  EXPECT_EQ(kryflow_solver_setup(nullptr, matrix), KRYFLOW_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kryflow_last_error()).find("solver is NULL"), std::string::npos);
  EXPECT_EQ(kryflow_backend_create("cpu", nullptr), KRYFLOW_ERROR_INVALID_ARGUMENT);
  kryflow_matrix no_matrix = nullptr;
  EXPECT_EQ(kryflow_matrix_create_csr(backend, A.n, A.n, 1, A.row_ptr.data(), A.col_idx.data(),
                                      A.values.data(), static_cast<kryflow_memory>(7), nullptr,
                                      KRYFLOW_FLOAT64, &no_matrix),
            KRYFLOW_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(no_matrix, nullptr);
  kryflow_backend no_backend = nullptr;
  EXPECT_EQ(kryflow_backend_create("tpu", &no_backend), KRYFLOW_ERROR_INVALID_INPUT);
  EXPECT_NE(std::string(kryflow_last_error()).find("tpu"), std::string::npos);
  EXPECT_EQ(std::string(kryflow_status_name(KRYFLOW_ERROR_CONFIG)), "KRYFLOW_ERROR_CONFIG");
  EXPECT_EQ(std::string(kryflow_solve_status_name(KRYFLOW_SOLVE_STAGNATED)), "stagnated");

  // Bad configurations: an unknown preset lists the available ones; a bad key names its path;
  // bad JSON text names the line and column.
  EXPECT_EQ(kryflow_solver_create("pcg_nonexistent", nullptr, 0, &solver), KRYFLOW_ERROR_CONFIG);
  EXPECT_NE(std::string(kryflow_last_error()).find("pcg_amg"), std::string::npos)
      << kryflow_last_error();
  const char* bad_override[] = {"solver.bogus=1"};
  EXPECT_EQ(kryflow_solver_create("pcg_jacobi", bad_override, 1, &solver), KRYFLOW_ERROR_CONFIG);
  EXPECT_NE(std::string(kryflow_last_error()).find("solver.bogus"), std::string::npos)
      << kryflow_last_error();
  EXPECT_EQ(kryflow_solver_create("{\"solver\": ", nullptr, 0, &solver), KRYFLOW_ERROR_CONFIG);
  EXPECT_NE(std::string(kryflow_last_error()).find("line 1"), std::string::npos)
      << kryflow_last_error();
  EXPECT_EQ(solver, nullptr);

  // Solving before setup; wrong sizes.
  ASSERT_EQ(kryflow_solver_create("pcg_jacobi", nullptr, 0, &solver), KRYFLOW_SUCCESS);
  kryflow_vector b = nullptr, x = nullptr, short_x = nullptr;
  ASSERT_EQ(kryflow_vector_create(backend, A.n, nullptr, KRYFLOW_MEMORY_HOST, &b), KRYFLOW_SUCCESS);
  ASSERT_EQ(kryflow_vector_create(backend, A.n, nullptr, KRYFLOW_MEMORY_HOST, &x), KRYFLOW_SUCCESS);
  ASSERT_EQ(kryflow_vector_create(backend, A.n - 1, nullptr, KRYFLOW_MEMORY_HOST, &short_x),
            KRYFLOW_SUCCESS);
  EXPECT_EQ(kryflow_solver_solve(solver, b, x, nullptr), KRYFLOW_ERROR_INVALID_INPUT);
  EXPECT_NE(std::string(kryflow_last_error()).find("setup"), std::string::npos);
  ASSERT_EQ(kryflow_solver_setup(solver, matrix), KRYFLOW_SUCCESS);
  EXPECT_EQ(kryflow_solver_solve(solver, b, short_x, nullptr), KRYFLOW_ERROR_DIMENSION_MISMATCH);
  EXPECT_EQ(kryflow_matrix_update_values(matrix, 3, A.values.data(), KRYFLOW_MEMORY_HOST),
            KRYFLOW_ERROR_DIMENSION_MISMATCH);
  std::vector<double> room(3);
  EXPECT_EQ(kryflow_vector_download(x, room.data(), 3, KRYFLOW_MEMORY_HOST),
            KRYFLOW_ERROR_DIMENSION_MISMATCH);

  // A zero diagonal entry: Jacobi's setup names the row.
  HostCsr zero = A;
  for (int32_t k = zero.row_ptr[4]; k < zero.row_ptr[5]; ++k) {
    if (zero.col_idx[k] == 4) zero.values[k] = 0.0;
  }
  kryflow_matrix singular = make_matrix(backend, zero);
  EXPECT_EQ(kryflow_solver_setup(solver, singular), KRYFLOW_ERROR_INVALID_INPUT);
  EXPECT_NE(std::string(kryflow_last_error()).find("5"), std::string::npos) << kryflow_last_error();

  // A solve that does not converge is not an error: its status says so.
  kryflow_solver limited = nullptr;
  const char* two[] = {"solver.max_iterations=2"};
  ASSERT_EQ(kryflow_solver_create("pcg_jacobi", two, 1, &limited), KRYFLOW_SUCCESS);
  ASSERT_EQ(kryflow_solver_setup(limited, matrix), KRYFLOW_SUCCESS);
  std::vector<double> ones(static_cast<std::size_t>(A.n), 1.0);
  ASSERT_EQ(kryflow_vector_upload(b, ones.data(), A.n, KRYFLOW_MEMORY_HOST), KRYFLOW_SUCCESS);
  kryflow_solve_info info{};
  EXPECT_EQ(kryflow_solver_solve(limited, b, x, &info), KRYFLOW_SUCCESS);
  EXPECT_EQ(info.status, KRYFLOW_SOLVE_MAX_ITERATIONS);
  EXPECT_EQ(info.iterations, 2);
  char reason[256];
  ASSERT_EQ(kryflow_solver_reason(limited, reason, sizeof reason), KRYFLOW_SUCCESS);
  EXPECT_NE(std::string(reason).find("2"), std::string::npos) << reason;

  // A malformed Matrix Market file: PARSE naming the file and line.
  const std::string file = testing::TempDir() + "/c_api_bad.mtx";
  std::ofstream(file) << "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 x 1.0\n";
  kryflow_matrix read = nullptr;
  EXPECT_EQ(kryflow_matrix_read(backend, file.c_str(), KRYFLOW_FLOAT64, &read),
            KRYFLOW_ERROR_PARSE);
  EXPECT_NE(std::string(kryflow_last_error()).find(file + ":3"), std::string::npos)
      << kryflow_last_error();

  for (kryflow_vector v : {b, x, short_x}) kryflow_vector_destroy(v);
  kryflow_solver_destroy(solver);
  kryflow_solver_destroy(limited);
  kryflow_matrix_destroy(matrix);
  kryflow_matrix_destroy(singular);
  kryflow_backend_destroy(backend);
}

}  // namespace
