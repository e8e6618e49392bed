// The CUDA execution context behind a cuda Backend; included by .cu files only.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <string>

#include "kryflow/core/error.hpp"

namespace kryflow::kernels::cuda {

struct Context {
  int device = 0;
  cudaStream_t stream = nullptr;
  cudaMemPool_t pool = nullptr;
  cudaDeviceProp properties{};
  cublasHandle_t cublas = nullptr;      // created on first use by cublas_handle()
  cusparseHandle_t cusparse = nullptr;  // created on first use by cusparse_handle()
  ~Context();
};

cublasHandle_t cublas_handle(Context& context);
cusparseHandle_t cusparse_handle(Context& context);

/// Throws BackendError naming the call and CUDA's message when `status` is not cudaSuccess.
void check(cudaError_t status, const char* what);
/// Checks the last launch error (launch configuration and sticky errors).
void check_launch(const char* kernel);

}  // namespace kryflow::kernels::cuda

#define KRYFLOW_CUDA_CHECK(call) ::kryflow::kernels::cuda::check((call), #call)
