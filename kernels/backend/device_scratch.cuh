// Small helpers of the setup kernels' CUDA code: stream-ordered scratch from the backend's pool,
// grid sizes and reading a few integers back to the host with one counted wait.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"

namespace kryflow::kernels::cuda {

/// Device scratch from the backend's pool, released at scope exit (stream-ordered: kernels
/// queued before the release may still use it).
class DeviceScratch {
 public:
  DeviceScratch(Context& context, std::size_t bytes)
      : context_(context), data_(bytes > 0 ? allocate(context, bytes) : nullptr) {}
  ~DeviceScratch() {
    if (data_ != nullptr) deallocate(context_, data_);
  }
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  template <class U>
  U* as() const {
    return static_cast<U*>(data_);
  }

 private:
  Context& context_;
  void* data_;
};

/// Blocks of `threads_per_block` covering `items` work items, at least 1 and at most `cap`
/// (kernels loop grid-stride over the rest).
inline unsigned int blocks_for(long long items, int threads_per_block,
                               long long cap = (1LL << 20)) {
  const long long blocks = (std::max(items, 1LL) + threads_per_block - 1) / threads_per_block;
  return static_cast<unsigned int>(std::min(blocks, cap));
}

/// Copies `count` (<= kStagingValues) 8-byte integers from the device to `host` through the
/// context's pinned staging area, after the work queued on the stream: one counted wait.
inline void read_integers(Context& context, const long long* device, std::size_t count,
                          long long* host) {
  static_assert(sizeof(long long) == sizeof(double));
  KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(context.staging, device, sizeof(long long) * count,
                                     cudaMemcpyDeviceToHost, context.stream));
  wait_for_stream(context);
  std::memcpy(host, context.staging, sizeof(long long) * count);
}

}  // namespace kryflow::kernels::cuda
