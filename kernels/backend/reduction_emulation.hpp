// Host emulation of the cuda reduction trees (warp_sum, block_sum in reduction.cuh), so that cpu
// kernels add in exactly the order the cuda kernels do.
#pragma once

#include <cstddef>

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

/// Thread 0's result of the second stage of a grid sum over n partial sums v: lane l adds
/// v[l], v[l + kReductionThreads], ... in order from 0, then block_sum over the lanes.
inline double ordered_sum(const double* v, long long n) {
  double lanes[kReductionThreads] = {};
  for (long long q = 0; q < n; ++q) {
    lanes[q % kReductionThreads] = lanes[q % kReductionThreads] + v[q];
  }
  return block_sum(lanes);
}

}  // namespace kryflow::kernels::emulation
