// The CUDA execution context behind a cuda Backend; included by .cu files only.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <cusparse.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/backend/reduction_order.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::cuda {

/// Most blocks a deterministic reduction launches, and most sums one reduction returns: they
/// size the persistent reduction buffers below (see reduction_order.hpp).
using kernels::kMaxReductionBlocks;
using kernels::kMaxReductionValues;
/// Doubles the pinned staging area of read_to_host holds.
inline constexpr std::size_t kStagingValues = 4096;

/// The context's cache of small device blocks (see allocate in backend_cuda.cu): blocks of
/// kSmallBlockBytes << k bytes, k < kSmallBlockClasses (256 B to 1 MiB), are kept on the host's
/// free lists when released and handed out again without a call into the driver; at most
/// kMaxCachedBytes are kept, the rest goes back to the stream-ordered pool.
inline constexpr std::size_t kSmallBlockBytes = 256;
inline constexpr int kSmallBlockClasses = 13;
inline constexpr std::size_t kMaxCachedBytes = std::size_t{64} << 20;

struct SmallBlockCache {
  std::mutex mutex;
  std::array<std::vector<void*>, kSmallBlockClasses> free;  // by class
  std::unordered_map<void*, int> class_of;  // every block of the cache, live or free
  std::size_t free_bytes = 0;               // bytes on the free lists
};

struct Context {
  int device = 0;
  cudaStream_t stream = nullptr;
  cudaMemPool_t pool = nullptr;
  cudaDeviceProp properties{};
  cublasHandle_t cublas = nullptr;        // created on first use by cublas_handle()
  cusparseHandle_t cusparse = nullptr;    // created on first use by cusparse_handle()
  cusolverDnHandle_t cusolver = nullptr;  // created on first use by cusolver_handle()
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
  // Small blocks kept for reuse (allocate, deallocate): all of them are used on `stream` alone,
  // so a block released there and handed out again is ordered after its earlier uses. While
  // the stream is captured into a graph (record_graph) the cache is bypassed: an allocation
  // must then be the graph's own allocation node, made again at each replay.
  SmallBlockCache small_blocks;
  std::atomic<int> capturing{0};
  ~Context();
};

cublasHandle_t cublas_handle(Context& context);
cusparseHandle_t cusparse_handle(Context& context);
/// The dense cuSOLVER handle on the context's stream (the coarse solver's factorizations).
cusolverDnHandle_t cusolver_handle(Context& context);

/// Throws BackendError naming the call and CUDA's message when `status` is not cudaSuccess.
void check(cudaError_t status, const char* what);
/// Checks the last launch error (launch configuration and sticky errors).
void check_launch(const char* kernel);
/// Waits for the context's stream and counts the wait (Context::host_waits).
void wait_for_stream(Context& context);

// Programmatic dependent launch (sm_90; CUDA Programming Guide, "Programmatic Dependent Launch
// and Synchronization"). A kernel launched by launch_dependent may start while the kernel before
// it on the stream is finishing: its blocks become resident and do what does not depend on
// earlier work (loading a matrix's row pointers and entries), then wait_for_prerequisites()
// until the earlier kernel has completed and its writes are visible. Every kernel launched so
// must call wait_for_prerequisites() before it reads or writes any memory an earlier kernel may
// write or read (vectors, scalars, the shared reduction buffers); reading data that no kernel of
// the stream writes (a matrix during a solve) may come first. allow_dependents(), called after
// the wait, lets the next kernel's blocks launch; a kernel that writes a matrix must not call
// it. A kernel of one block may call it before its wait: its block is resident, every block of
// the kernel before it has started, so the blocks it lets in (which wait for it) cannot take
// the place of a block that has yet to run. Where no earlier kernel allowed it, a kernel starts as
// after an ordinary launch and the wait returns at once.

/// Waits until the kernels this one depends on have completed, their writes visible.
__device__ __forceinline__ void wait_for_prerequisites() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Lets the next kernel on the stream, if launched by launch_dependent, start its blocks.
__device__ __forceinline__ void allow_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// Launches `kernel` on `blocks` blocks of `threads` threads on the context's stream with
/// programmatic stream serialization (see above); the kernel must follow the rules above.
/// Recorded into a CUDA graph as a programmatic edge. Throws BackendError naming `name`.
template <class... Params, class... Args>
void launch_dependent(Context& context, void (*kernel)(Params...), unsigned int blocks,
                      unsigned int threads, const char* name, Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = 0;
  config.stream = context.stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  check(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...), name);
}

}  // namespace kryflow::kernels::cuda

#define KRYFLOW_CUDA_CHECK(call) ::kryflow::kernels::cuda::check((call), #call)
