// The cuda side of HostMirror: pinned host memory, cudaMemcpyAsync and one event.
#include <cuda_runtime.h>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/host_mirror.hpp"

namespace kryflow::kernels::cuda {

double* allocate_pinned(const Backend& backend, std::size_t count, void** event) {
  KRYFLOW_CUDA_CHECK(cudaSetDevice(backend.cuda_context()->device));
  double* host = nullptr;
  if (cudaHostAlloc(&host, sizeof(double) * count, cudaHostAllocDefault) != cudaSuccess) {
    cudaGetLastError();
    throw OutOfMemory(sizeof(double) * count, 0, "pinned host memory");
  }
  cudaEvent_t created = nullptr;
  const cudaError_t status = cudaEventCreateWithFlags(&created, cudaEventDisableTiming);
  if (status != cudaSuccess) {
    cudaFreeHost(host);
    check(status, "cudaEventCreateWithFlags");
  }
  *event = created;
  return host;
}

void free_pinned(double* host, void* event) noexcept {
  cudaEventDestroy(static_cast<cudaEvent_t>(event));
  cudaFreeHost(host);
}

void copy_to_pinned_async(const Backend& backend, double* host, const double* device,
                          std::size_t count, void* event) {
  Context& context = *backend.cuda_context();
  KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(host, device, sizeof(double) * count, cudaMemcpyDeviceToHost,
                                     context.stream));
  KRYFLOW_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), context.stream));
}

void wait_for_event(const Backend& backend, void* event) {
  ++backend.cuda_context()->host_waits;
  KRYFLOW_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
}

}  // namespace kryflow::kernels::cuda
