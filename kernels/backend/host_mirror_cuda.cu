// The cuda side of HostMirror: mapped pinned host memory written by a one-block kernel (a
// dependent launch, so the kernels queued after it start while it runs, which a cudaMemcpyAsync
// would not allow), and one event.
#include <cuda_runtime.h>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/host_mirror.hpp"

namespace kryflow::kernels::cuda {

double* allocate_pinned(const Backend& backend, std::size_t count, void** event) {
  KRYFLOW_CUDA_CHECK(cudaSetDevice(backend.cuda_context()->device));
  double* host = nullptr;
  if (cudaHostAlloc(&host, sizeof(double) * count, cudaHostAllocMapped) != cudaSuccess) {
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

namespace {

/// host[0..count) = device[0..count), host mapped pinned memory; one block.
__global__ void __launch_bounds__(128)
    mirror_kernel(const double* device, double* host, int count) {
  wait_for_prerequisites();
  allow_dependents();
  for (int i = static_cast<int>(threadIdx.x); i < count; i += static_cast<int>(blockDim.x)) {
    host[i] = device[i];
  }
}

}  // namespace

void copy_to_pinned_async(const Backend& backend, double* host, const double* device,
                          std::size_t count, void* event) {
  Context& context = *backend.cuda_context();
  double* mapped = nullptr;
  KRYFLOW_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped), host, 0));
  launch_dependent(context, mirror_kernel, 1, 128, "host mirror copy", device, mapped,
                   static_cast<int>(count));
  KRYFLOW_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), context.stream));
}

void wait_for_event(const Backend& backend, void* event) {
  ++backend.cuda_context()->host_waits;
  KRYFLOW_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
}

}  // namespace kryflow::kernels::cuda
