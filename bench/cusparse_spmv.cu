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

double median_seconds_per_call(const Backend& backend, const std::function<void()>& enqueue,
                               int batch_size, int batches) {
  kernels::cuda::Context& context = *backend.cuda_context();
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  KRYFLOW_CUDA_CHECK(cudaEventCreate(&start));
  KRYFLOW_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> samples;
  try {
    for (int b = 0; b < batches; ++b) {
      KRYFLOW_CUDA_CHECK(cudaEventRecord(start, context.stream));
      for (int i = 0; i < batch_size; ++i) enqueue();
      KRYFLOW_CUDA_CHECK(cudaEventRecord(stop, context.stream));
      KRYFLOW_CUDA_CHECK(cudaEventSynchronize(stop));
      float milliseconds = 0.0f;
      KRYFLOW_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start, stop));
      samples.push_back(1e-3 * milliseconds / batch_size);
    }
  } catch (...) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    throw;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

double median_seconds_per_call_graph(const Backend& backend, const std::function<void()>& enqueue,
                                     int batch_size, int batches) {
  kernels::cuda::Context& context = *backend.cuda_context();
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  auto release = [&] {
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
    if (start != nullptr) cudaEventDestroy(start);
    if (stop != nullptr) cudaEventDestroy(stop);
  };
  std::vector<double> samples;
  try {
    KRYFLOW_CUDA_CHECK(cudaStreamBeginCapture(context.stream, cudaStreamCaptureModeThreadLocal));
    try {
      for (int i = 0; i < batch_size; ++i) enqueue();
    } catch (...) {
      cudaStreamEndCapture(context.stream, &graph);
      throw;
    }
    KRYFLOW_CUDA_CHECK(cudaStreamEndCapture(context.stream, &graph));
    KRYFLOW_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    KRYFLOW_CUDA_CHECK(cudaEventCreate(&start));
    KRYFLOW_CUDA_CHECK(cudaEventCreate(&stop));
    KRYFLOW_CUDA_CHECK(cudaGraphLaunch(exec, context.stream));  // warm-up (upload)
    for (int b = 0; b < batches; ++b) {
      KRYFLOW_CUDA_CHECK(cudaEventRecord(start, context.stream));
      KRYFLOW_CUDA_CHECK(cudaGraphLaunch(exec, context.stream));
      KRYFLOW_CUDA_CHECK(cudaEventRecord(stop, context.stream));
      KRYFLOW_CUDA_CHECK(cudaEventSynchronize(stop));
      float milliseconds = 0.0f;
      KRYFLOW_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start, stop));
      samples.push_back(1e-3 * milliseconds / batch_size);
    }
  } catch (...) {
    release();
    throw;
  }
  release();
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

std::size_t l2_cache_bytes(const Backend& backend) {
  return static_cast<std::size_t>(backend.cuda_context()->properties.l2CacheSize);
}

}  // namespace kryflow::bench
