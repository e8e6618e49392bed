// The CUDA execution context behind a cuda Backend; included by .cu files only.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <string>

#include "kernels/backend/reduction_order.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::cuda {

/// Most blocks a deterministic reduction launches, and most sums one reduction returns: they
/// size the persistent reduction buffers below (see reduction_order.hpp).
using kernels::kMaxReductionBlocks;
using kernels::kMaxReductionValues;
/// Doubles the pinned staging area of read_to_host holds.
inline constexpr std::size_t kStagingValues = 4096;

struct Context {
  int device = 0;
  cudaStream_t stream = nullptr;
  cudaMemPool_t pool = nullptr;
  cudaDeviceProp properties{};
  cublasHandle_t cublas = nullptr;      // created on first use by cublas_handle()
  cusparseHandle_t cusparse = nullptr;  // created on first use by cusparse_handle()
  // Persistent buffers of the deterministic reductions, allocated by create_context. Kernels
  // on the one stream use them in turn; a reduction waits for its result before returning.
  double* reduction_partials = nullptr;       // device: kMaxReductionValues * kMaxReductionBlocks
  unsigned int* reduction_counter = nullptr;  // device: blocks done; the last block resets it
  unsigned int* first_index = nullptr;        // device: smallest index found (invert_diagonal)
  double* host_results = nullptr;  // pinned, mapped: kMaxReductionValues final sums + 1 index
  double* host_results_on_device = nullptr;  // the device's address of host_results
  // Pinned staging area of read_to_host (DeviceScalars::read): kStagingValues doubles.
  double* staging = nullptr;
  // Times the host waited for this stream (stream synchronizations, including those of every
  // synchronous copy and scalar read): what a solver's iteration must not do except to test
  // convergence. Read through Backend::host_waits().
  unsigned long long host_waits = 0;
  ~Context();
};

cublasHandle_t cublas_handle(Context& context);
cusparseHandle_t cusparse_handle(Context& context);

/// Throws BackendError naming the call and CUDA's message when `status` is not cudaSuccess.
void check(cudaError_t status, const char* what);
/// Checks the last launch error (launch configuration and sticky errors).
void check_launch(const char* kernel);
/// Waits for the context's stream and counts the wait (Context::host_waits).
void wait_for_stream(Context& context);

}  // namespace kryflow::kernels::cuda

#define KRYFLOW_CUDA_CHECK(call) ::kryflow::kernels::cuda::check((call), #call)
