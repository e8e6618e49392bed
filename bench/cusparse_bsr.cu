// cusparseDbsrmv on a kryflow BSR matrix, for the BSR benchmark.
#include "bench/cusparse_bsr.hpp"

#include <cuda_runtime.h>
#include <cusparse.h>

#include <string>

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

struct CusparseBsrmv::State {
  cusparseHandle_t handle = nullptr;
  cusparseMatDescr_t descr = nullptr;
  const BsrMatrix* A = nullptr;
  const double* x = nullptr;
  double* y = nullptr;
  double alpha = 1.0;
  double beta = 0.0;
  ~State() {
    if (descr != nullptr) cusparseDestroyMatDescr(descr);
  }
};

CusparseBsrmv::CusparseBsrmv(const BsrMatrix& A, const double* x, double* y)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  kernels::cuda::Context* context = A.backend().cuda_context();
  if (context == nullptr) throw InvalidInput("CusparseBsrmv: the matrix is not on a cuda backend");
  if (A.precision() != Precision::float64) {
    throw InvalidInput("CusparseBsrmv: cusparseDbsrmv needs float64 values");
  }
  if (A.block_size() < 2) throw InvalidInput("CusparseBsrmv: cusparseDbsrmv needs blockDim > 1");
  s.handle = kernels::cuda::cusparse_handle(*context);
  check_cusparse(cusparseCreateMatDescr(&s.descr), "cusparseCreateMatDescr");
  check_cusparse(cusparseSetMatType(s.descr, CUSPARSE_MATRIX_TYPE_GENERAL), "cusparseSetMatType");
  check_cusparse(cusparseSetMatIndexBase(s.descr, CUSPARSE_INDEX_BASE_ZERO),
                 "cusparseSetMatIndexBase");
  s.A = &A;
  s.x = x;
  s.y = y;
}

CusparseBsrmv::~CusparseBsrmv() = default;

void CusparseBsrmv::apply() {
  State& s = *state_;
  const BsrMatrix& A = *s.A;
  check_cusparse(
      cusparseDbsrmv(s.handle, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE,
                     A.num_block_rows(), A.num_block_cols(), static_cast<int>(A.num_blocks()),
                     &s.alpha, s.descr, A.values_float64().data(), A.block_row_ptr().data(),
                     A.block_col_idx().data(), A.block_size(), s.x, &s.beta, s.y),
      "cusparseDbsrmv");
}

}  // namespace kryflow::bench
