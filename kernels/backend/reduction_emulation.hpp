// Host emulation of the cuda reduction trees (warp_sum, block_sum in reduction.cuh), so that cpu
// kernels add in exactly the order the cuda kernels do.
#pragma once

#include "kernels/backend/reduction_order.hpp"

namespace kryflow::kernels::emulation {

/// Lane 0 of `for (offset = 16; offset > 0; offset /= 2) v += shfl_down(v, offset)` over the
/// 32 values `lanes` (overwritten).
inline double warp_sum(double* lanes) {
  for (int offset = 16; offset > 0; offset /= 2) {
    for (int l = 0; l < offset; ++l) lanes[l] = lanes[l] + lanes[l + offset];
  }
  return lanes[0];
}

/// Thread 0's result of block_sum over kReductionThreads values (overwritten): a warp tree per
/// warp, then the warp tree over the warp sums padded with zeros.
inline double block_sum(double* threads) {
  constexpr int kWarps = kReductionThreads / 32;
  double warp_sums[32] = {};
  for (int w = 0; w < kWarps; ++w) warp_sums[w] = warp_sum(threads + 32 * w);
  return warp_sum(warp_sums);
}

}  // namespace kryflow::kernels::emulation
