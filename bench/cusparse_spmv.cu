// cuSPARSE SpMV on a kryflow CSR matrix and CUDA event timing, for the SpMV benchmark.
#include "bench/cusparse_spmv.hpp"

#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/backend/cuda_context.cuh"
#include "kryflow/core/error.hpp"

namespace kryflow::bench {
namespace {

void check_cusparse(cusparseStatus_t status, const char* what) {
  if (status != CUSPARSE_STATUS_SUCCESS) {
    throw BackendError(std::string(what) + ": " + cusparseGetErrorString(status));
  }
}

}  // namespace

struct CusparseSpmv::State {
  kernels::cuda::Context* context = nullptr;
  cusparseHandle_t handle = nullptr;
  cusparseConstSpMatDescr_t matrix = nullptr;
  cusparseConstDnVecDescr_t x = nullptr;
  cusparseDnVecDescr_t y = nullptr;
  void* workspace = nullptr;
  double alpha = 1.0;
  double beta = 0.0;

  ~State() {
    if (workspace != nullptr) cudaFree(workspace);
    if (y != nullptr) cusparseDestroyDnVec(y);
    if (x != nullptr) cusparseDestroyDnVec(x);
    if (matrix != nullptr) cusparseDestroySpMat(matrix);
  }
};

CusparseSpmv::CusparseSpmv(const CsrMatrix& A, const double* x, double* y)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.context = A.backend().cuda_context();
  if (s.context == nullptr) throw InvalidInput("CusparseSpmv: the matrix is not on a cuda backend");
  s.handle = kernels::cuda::cusparse_handle(*s.context);
  check_cusparse(
      cusparseCreateConstCsr(&s.matrix, A.num_rows(), A.num_cols(), A.nnz(), A.row_ptr().data(),
                             A.col_idx().data(), A.values().data(), CUSPARSE_INDEX_32I,
                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
      "cusparseCreateConstCsr");
  check_cusparse(cusparseCreateConstDnVec(&s.x, A.num_cols(), x, CUDA_R_64F),
                 "cusparseCreateConstDnVec");
  check_cusparse(cusparseCreateDnVec(&s.y, A.num_rows(), y, CUDA_R_64F), "cusparseCreateDnVec");
  std::size_t bytes = 0;
  check_cusparse(
      cusparseSpMV_bufferSize(s.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &s.alpha, s.matrix, s.x,
                              &s.beta, s.y, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes),
      "cusparseSpMV_bufferSize");
  if (bytes > 0) KRYFLOW_CUDA_CHECK(cudaMalloc(&s.workspace, bytes));
  check_cusparse(
      cusparseSpMV_preprocess(s.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &s.alpha, s.matrix, s.x,
                              &s.beta, s.y, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, s.workspace),
      "cusparseSpMV_preprocess");
  KRYFLOW_CUDA_CHECK(cudaStreamSynchronize(s.context->stream));
}

CusparseSpmv::~CusparseSpmv() = default;

void CusparseSpmv::apply() {
  State& s = *state_;
  check_cusparse(cusparseSpMV(s.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &s.alpha, s.matrix, s.x,
                              &s.beta, s.y, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, s.workspace),
                 "cusparseSpMV");
}

}  // namespace kryflow::bench
