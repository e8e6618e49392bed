// Programmatic dependent launch (Hopper and later; CUDA Programming Guide, "Programmatic
// Dependent Launch and Synchronization"): a kernel launched by launch_dependent may be scheduled
// while the kernel before it in the stream (or in the recorded graph) finishes, instead of after
// that kernel has completed and its completion has reached the device's front end. Its blocks
// then become resident on the SMs that the other kernel's last blocks free, and wait there
// (dependent_launch_prologue) until that kernel has completed and its writes are visible. A
// chain of short dependent kernels (a multigrid cycle: about 50 a Krylov iteration on the
// spectral-element Kershaw case) then pays less of each launch's latency and of each kernel's
// tail of partly filled waves.
//
// Contract: every kernel launched by launch_dependent calls dependent_launch_prologue() as its
// first statement (before any global read or write and before any early return), so it neither
// reads what the kernel before it has not yet written nor writes what that kernel still reads;
// and since it cannot complete before that kernel has, the kernels after it are ordered after
// both. A kernel that calls the prologue but is launched normally waits for nothing (the
// instructions then return at once).
#pragma once

#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "kernels/backend/cuda_context.cuh"

namespace kryflow::kernels::cuda {

/// Whether launch_dependent asks for programmatic dependent launch: yes unless the environment
/// variable KRYFLOW_DEPENDENT_LAUNCH is 0 (read once; 0 gives plain launches, as before).
inline bool dependent_launch_enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("KRYFLOW_DEPENDENT_LAUNCH");
    return value == nullptr || std::strcmp(value, "0") != 0;
  }();
  return enabled;
}

/// kernel<<<grid, block, shared_bytes, stream>>>(args...), with programmatic stream
/// serialization when dependent_launch_enabled(). kernel must follow the file's contract.
/// Throws BackendError when the launch fails.
template <typename... Params, typename... Args>
void launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes,
                      cudaStream_t stream, Args&&... args) {
  if (!dependent_launch_enabled()) {
    kernel<<<grid, block, shared_bytes, stream>>>(std::forward<Args>(args)...);
    return;
  }
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  KRYFLOW_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

/// The first statement of a kernel launched by launch_dependent: waits for the kernel before it
/// (griddepcontrol.wait), then lets the kernel after it be scheduled once every block of this
/// one has started (griddepcontrol.launch_dependents). No-ops before sm_90.
__device__ __forceinline__ void dependent_launch_prologue() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

}  // namespace kryflow::kernels::cuda
