// cusparseSpSV on ILU factors (cusparse_spsv.hpp).
#include "bench/cusparse_spsv.hpp"

#include <cuda_runtime.h>
#include <cusparse.h>

#include <chrono>
#include <string>
#include <vector>

#include "kernels/backend/cuda_context.cuh"
#include "kryflow/core/array.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::bench {
namespace {

void check_cusparse(cusparseStatus_t status, const char* what) {
  if (status != CUSPARSE_STATUS_SUCCESS) {
    throw BackendError(std::string(what) + ": " + cusparseGetErrorString(status));
  }
}

/// One triangular factor on the device with its SpSV descriptor and workspace.
struct Factor {
  Array<index_t> row_ptr, col_idx;
  Array<double> values;
  cusparseSpMatDescr_t matrix = nullptr;
  cusparseSpSVDescr_t spsv = nullptr;
  void* workspace = nullptr;
  ~Factor() {
    if (workspace != nullptr) cudaFree(workspace);
    if (spsv != nullptr) cusparseSpSV_destroyDescr(spsv);
    if (matrix != nullptr) cusparseDestroySpMat(matrix);
  }
};

}  // namespace

struct CusparseIluSolve::State {
  kernels::cuda::Context* context = nullptr;
  cusparseHandle_t handle = nullptr;
  Factor lower, upper;
  Array<double> y;
  cusparseDnVecDescr_t r = nullptr, y_vec = nullptr, z = nullptr;
  double one = 1.0;
  ~State() {
    if (z != nullptr) cusparseDestroyDnVec(z);
    if (y_vec != nullptr) cusparseDestroyDnVec(y_vec);
    if (r != nullptr) cusparseDestroyDnVec(r);
  }
};

CusparseIluSolve::CusparseIluSolve(const Backend& backend, const IlutFactors& f, const double* r,
                                   double* z)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.context = backend.cuda_context();
  if (s.context == nullptr) throw InvalidInput("CusparseIluSolve: the backend is not cuda");
  s.handle = kernels::cuda::cusparse_handle(*s.context);
  const index_t n = f.n;
  // U with its diagonal first in each row (columns increasing).
  std::vector<index_t> u_ptr(1, 0), u_col;
  std::vector<double> u_val;
  for (index_t i = 0; i < n; ++i) {
    u_col.push_back(i);
    u_val.push_back(f.diagonal[i]);
    for (index_t k = f.upper_ptr[i]; k < f.upper_ptr[i + 1]; ++k) {
      u_col.push_back(f.upper_col[k]);
      u_val.push_back(f.upper_values[k]);
    }
    u_ptr.push_back(static_cast<index_t>(u_col.size()));
  }
  auto upload = [&](Factor& factor, const std::vector<index_t>& ptr,
                    const std::vector<index_t>& col, const std::vector<double>& val,
                    cusparseFillMode_t fill, cusparseDiagType_t diag) {
    factor.row_ptr = Array<index_t>::from_host(backend, ptr);
    factor.col_idx = Array<index_t>::from_host(backend, col);
    factor.values = Array<double>::from_host(backend, val);
    check_cusparse(cusparseCreateCsr(&factor.matrix, n, n, static_cast<std::int64_t>(col.size()),
                                     factor.row_ptr.span().data(), factor.col_idx.span().data(),
                                     factor.values.span().data(), CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
                   "cusparseCreateCsr");
    check_cusparse(
        cusparseSpMatSetAttribute(factor.matrix, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof fill),
        "cusparseSpMatSetAttribute");
    check_cusparse(
        cusparseSpMatSetAttribute(factor.matrix, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof diag),
        "cusparseSpMatSetAttribute");
    check_cusparse(cusparseSpSV_createDescr(&factor.spsv), "cusparseSpSV_createDescr");
  };
  upload(s.lower, f.lower_ptr, f.lower_col, f.lower_values, CUSPARSE_FILL_MODE_LOWER,
         CUSPARSE_DIAG_TYPE_UNIT);
  upload(s.upper, u_ptr, u_col, u_val, CUSPARSE_FILL_MODE_UPPER, CUSPARSE_DIAG_TYPE_NON_UNIT);
  s.y = Array<double>(backend, static_cast<std::size_t>(n));
  check_cusparse(cusparseCreateDnVec(&s.r, n, const_cast<double*>(r), CUDA_R_64F),
                 "cusparseCreateDnVec");
  check_cusparse(cusparseCreateDnVec(&s.y_vec, n, s.y.span().data(), CUDA_R_64F),
                 "cusparseCreateDnVec");
  check_cusparse(cusparseCreateDnVec(&s.z, n, z, CUDA_R_64F), "cusparseCreateDnVec");
  KRYFLOW_CUDA_CHECK(cudaStreamSynchronize(s.context->stream));
  const auto start = std::chrono::steady_clock::now();
  for (Factor* factor : {&s.lower, &s.upper}) {
    cusparseDnVecDescr_t in = factor == &s.lower ? s.r : s.y_vec;
    cusparseDnVecDescr_t out = factor == &s.lower ? s.y_vec : s.z;
    std::size_t bytes = 0;
    check_cusparse(cusparseSpSV_bufferSize(s.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &s.one,
                                           factor->matrix, in, out, CUDA_R_64F,
                                           CUSPARSE_SPSV_ALG_DEFAULT, factor->spsv, &bytes),
                   "cusparseSpSV_bufferSize");
    if (bytes > 0) KRYFLOW_CUDA_CHECK(cudaMalloc(&factor->workspace, bytes));
    check_cusparse(cusparseSpSV_analysis(
                       s.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &s.one, factor->matrix, in, out,
                       CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, factor->spsv, factor->workspace),
                   "cusparseSpSV_analysis");
  }
  KRYFLOW_CUDA_CHECK(cudaStreamSynchronize(s.context->stream));
  analysis_seconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

CusparseIluSolve::~CusparseIluSolve() = default;

void CusparseIluSolve::solve() {
  State& s = *state_;
  check_cusparse(
      cusparseSpSV_solve(s.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &s.one, s.lower.matrix, s.r,
                         s.y_vec, CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, s.lower.spsv),
      "cusparseSpSV_solve (L)");
  check_cusparse(
      cusparseSpSV_solve(s.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &s.one, s.upper.matrix,
                         s.y_vec, s.z, CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, s.upper.spsv),
      "cusparseSpSV_solve (U)");
}

}  // namespace kryflow::bench
