// cuSPARSE SpGEMM for the Galerkin product R (A P) of the AMG benchmark.
#include "bench/cusparse_spgemm.hpp"

#include <cuda_runtime.h>
#include <cusparse.h>

#include <chrono>
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

/// Device memory from the backend's pool, freed with the owner.
struct Buffers {
  const Backend& backend;
  std::vector<void*> pointers;
  explicit Buffers(const Backend& b) : backend(b) {}
  ~Buffers() {
    for (void* p : pointers) backend.deallocate(p);
  }
  void* get(std::size_t bytes) {
    void* p = backend.allocate(bytes);
    pointers.push_back(p);
    return p;
  }
};

/// A product C = A B with its descriptors; the arrays of C live in `buffers`.
struct Product {
  cusparseSpMatDescr_t c = nullptr;
  cusparseSpGEMMDescr_t descr = nullptr;
  std::int64_t nnz = 0;
  ~Product() {
    if (descr != nullptr) cusparseSpGEMM_destroyDescr(descr);
    if (c != nullptr) cusparseDestroySpMat(c);
  }
};

void multiply(cusparseHandle_t handle, Buffers& buffers, cusparseConstSpMatDescr_t a,
              cusparseConstSpMatDescr_t b, std::int64_t rows, std::int64_t cols, Product& out) {
  const double alpha = 1.0, beta = 0.0;
  const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  check_cusparse(
      cusparseCreateCsr(&out.c, rows, cols, 0, nullptr, nullptr, nullptr, CUSPARSE_INDEX_32I,
                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
      "cusparseCreateCsr");
  check_cusparse(cusparseSpGEMM_createDescr(&out.descr), "cusparseSpGEMM_createDescr");
  std::size_t bytes1 = 0, bytes2 = 0;
  check_cusparse(
      cusparseSpGEMM_workEstimation(handle, op, op, &alpha, a, b, &beta, out.c, CUDA_R_64F,
                                    CUSPARSE_SPGEMM_DEFAULT, out.descr, &bytes1, nullptr),
      "cusparseSpGEMM_workEstimation");
  void* buffer1 = buffers.get(bytes1 > 0 ? bytes1 : 1);
  check_cusparse(
      cusparseSpGEMM_workEstimation(handle, op, op, &alpha, a, b, &beta, out.c, CUDA_R_64F,
                                    CUSPARSE_SPGEMM_DEFAULT, out.descr, &bytes1, buffer1),
      "cusparseSpGEMM_workEstimation");
  check_cusparse(cusparseSpGEMM_compute(handle, op, op, &alpha, a, b, &beta, out.c, CUDA_R_64F,
                                        CUSPARSE_SPGEMM_DEFAULT, out.descr, &bytes2, nullptr),
                 "cusparseSpGEMM_compute");
  void* buffer2 = buffers.get(bytes2 > 0 ? bytes2 : 1);
  check_cusparse(cusparseSpGEMM_compute(handle, op, op, &alpha, a, b, &beta, out.c, CUDA_R_64F,
                                        CUSPARSE_SPGEMM_DEFAULT, out.descr, &bytes2, buffer2),
                 "cusparseSpGEMM_compute");
  std::int64_t c_rows = 0, c_cols = 0;
  check_cusparse(cusparseSpMatGetSize(out.c, &c_rows, &c_cols, &out.nnz), "cusparseSpMatGetSize");
  void* row_ptr = buffers.get(sizeof(int) * static_cast<std::size_t>(rows + 1));
  void* col_idx = buffers.get(sizeof(int) * static_cast<std::size_t>(out.nnz > 0 ? out.nnz : 1));
  void* values = buffers.get(sizeof(double) * static_cast<std::size_t>(out.nnz > 0 ? out.nnz : 1));
  check_cusparse(cusparseCsrSetPointers(out.c, row_ptr, col_idx, values), "cusparseCsrSetPointers");
  check_cusparse(cusparseSpGEMM_copy(handle, op, op, &alpha, a, b, &beta, out.c, CUDA_R_64F,
                                     CUSPARSE_SPGEMM_DEFAULT, out.descr),
                 "cusparseSpGEMM_copy");
}

/// A const descriptor of a kryflow CSR matrix (float64 values), destroyed with the owner.
struct ConstCsr {
  cusparseConstSpMatDescr_t descr = nullptr;
  explicit ConstCsr(const CsrMatrix& m) {
    check_cusparse(cusparseCreateConstCsr(&descr, m.num_rows(), m.num_cols(), m.nnz(),
                                          m.row_ptr().span().data(), m.col_idx().span().data(),
                                          m.values().span().data(), CUSPARSE_INDEX_32I,
                                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
                   "cusparseCreateConstCsr");
  }
  ~ConstCsr() {
    if (descr != nullptr) cusparseDestroySpMat(descr);
  }
};

}  // namespace

GalerkinTiming cusparse_galerkin_product(const CsrMatrix& R, const CsrMatrix& A,
                                         const CsrMatrix& P) {
  const Backend& backend = A.backend();
  kernels::cuda::Context* context = backend.cuda_context();
  if (context == nullptr || !(R.backend() == backend) || !(P.backend() == backend)) {
    throw InvalidInput("cusparse_galerkin_product: R, A and P must live on one cuda backend");
  }
  if (A.num_cols() != P.num_rows() || R.num_cols() != A.num_rows()) {
    throw InvalidInput("cusparse_galerkin_product: R A P does not chain");
  }
  cusparseHandle_t handle = kernels::cuda::cusparse_handle(*context);
  const ConstCsr r(R), a(A), p(P);
  backend.synchronize();
  const auto start = std::chrono::steady_clock::now();
  GalerkinTiming timing;
  {
    Buffers buffers(backend);
    Product ap, rap;
    multiply(handle, buffers, a.descr, p.descr, A.num_rows(), P.num_cols(), ap);
    multiply(handle, buffers, r.descr, ap.c, R.num_rows(), P.num_cols(), rap);
    backend.synchronize();
    timing.product_nnz = ap.nnz;
    timing.coarse_nnz = rap.nnz;
  }
  timing.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return timing;
}

}  // namespace kryflow::bench
