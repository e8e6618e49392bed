// Lane groups of the CUDA kernels that give a row to kLanes consecutive lanes of a warp (kLanes a
// power of two <= 32): the group's mask for the *_sync intrinsics.
#pragma once

#include <cuda_runtime.h>

namespace kryflow::kernels::cuda {

/// The lanes of the calling thread's group of kLanes consecutive lanes, as a warp mask.
template <int kLanes>
__device__ __forceinline__ unsigned int lane_group_mask() {
  static_assert(kLanes >= 1 && kLanes <= 32 && (kLanes & (kLanes - 1)) == 0);
  if constexpr (kLanes == 32) {
    return 0xffffffffu;
  } else {
    const unsigned int first = (threadIdx.x % 32) / kLanes * kLanes;
    return ((1u << kLanes) - 1u) << first;
  }
}

}  // namespace kryflow::kernels::cuda
