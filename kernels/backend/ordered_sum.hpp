// The cpu backend's reductions: sums in exactly the order of the cuda kernels
// (kernels/backend/reduction_order.hpp), so cpu and cuda give identical bits.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "kernels/backend/parallel.hpp"
#include "kernels/backend/reduction_emulation.hpp"
#include "kernels/backend/reduction_order.hpp"
#include "kryflow/core/backend.hpp"

namespace kryflow::kernels::cpu {

/// Sums the K-valued terms term(i), i in [0, n), in exactly the order of the cuda reduction
/// (kernels/backend/reduction_order.hpp): emulated blocks run in parallel, each with its
/// kReductionThreads emulated threads; the result does not depend on the OpenMP thread count.
template <int K, class Term>
inline std::array<double, K> ordered_sum(const Backend& backend, std::int64_t n, Term term) {
  std::array<double, K> result{};
  if (n == 0) return result;
  constexpr std::int64_t threads = kReductionThreads;
  const std::int64_t per_block = threads * kReductionElementsPerThread;
  const std::int64_t blocks =
      std::min<std::int64_t>((n + per_block - 1) / per_block, kMaxReductionBlocks);
  const std::int64_t num_pairs = n / 2;
  const std::int64_t stride = blocks * threads;
  std::vector<double> partial(static_cast<std::size_t>(blocks * K));
  // Each emulated block writes its own partial, so any schedule gives the same bits.
  parallel::for_each(backend, n, blocks, [&](std::int64_t b) {
    double sums[K][threads] = {};
    for (std::int64_t first = b * threads; first < num_pairs; first += stride) {
      const std::int64_t count = std::min(threads, num_pairs - first);
      for (std::int64_t j = 0; j < count; ++j) {
        const std::array<double, K> t0 = term(2 * (first + j));
        const std::array<double, K> t1 = term(2 * (first + j) + 1);
        for (int k = 0; k < K; ++k) sums[k][j] = (sums[k][j] + t0[k]) + t1[k];
      }
    }
    if (b == 0 && n % 2 == 1) {
      const std::array<double, K> t = term(n - 1);
      for (int k = 0; k < K; ++k) sums[k][0] = sums[k][0] + t[k];
    }
    for (int k = 0; k < K; ++k) partial[b * K + k] = emulation::block_sum(sums[k]);
  });
  for (int k = 0; k < K; ++k) {
    double totals[threads] = {};
    for (std::int64_t j = 0; j < threads; ++j) {
      for (std::int64_t bb = j; bb < blocks; bb += threads)
        totals[j] = totals[j] + partial[bb * K + k];
    }
    result[k] = emulation::block_sum(totals);
  }
  return result;
}

}  // namespace kryflow::kernels::cpu
