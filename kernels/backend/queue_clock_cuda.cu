// The cuda side of QueueClock: timing events recorded on the context's stream.
#include <cuda_runtime.h>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/queue_clock.hpp"

namespace kryflow::kernels::cuda {

void* record_timing_event(const Backend& backend) {
  Context& context = *backend.cuda_context();
  cudaEvent_t event = nullptr;
  KRYFLOW_CUDA_CHECK(cudaEventCreate(&event));
  const cudaError_t status = cudaEventRecord(event, context.stream);
  if (status != cudaSuccess) {
    cudaEventDestroy(event);
    check(status, "cudaEventRecord");
  }
  return event;
}

float elapsed_milliseconds(const Backend& backend, void* begin, void* end) {
  const cudaError_t done = cudaEventQuery(static_cast<cudaEvent_t>(end));
  if (done == cudaErrorNotReady) {
    ++backend.cuda_context()->host_waits;
    KRYFLOW_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(end)));
  } else {
    check(done, "cudaEventQuery");
  }
  float milliseconds = 0.0f;
  KRYFLOW_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, static_cast<cudaEvent_t>(begin),
                                          static_cast<cudaEvent_t>(end)));
  return milliseconds;
}

void destroy_timing_event(void* event) noexcept {
  cudaEventDestroy(static_cast<cudaEvent_t>(event));
}

}  // namespace kryflow::kernels::cuda
