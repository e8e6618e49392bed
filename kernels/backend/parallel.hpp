// How many OpenMP threads a cpu kernel uses for a given amount of work.
//
// A parallel region costs a fork, a barrier and, on a loaded machine, waiting for a descheduled
// thread; below a work threshold a kernel runs on the calling thread alone. Every cpu kernel asks
// threads_for() instead of using backend.num_threads() directly.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kryflow/core/backend.hpp"

namespace kryflow::kernels::parallel {

/// Elements (vector entries or stored matrix entries) below which a region runs serially.
inline constexpr std::int64_t kSerialBelow = 1 << 15;

/// Threads for a region touching `elements` elements: 1 below kSerialBelow, otherwise at most
/// backend.num_threads() and at most one thread per kSerialBelow elements.
inline int threads_for(const Backend& backend, std::int64_t elements) {
  if (elements < kSerialBelow) return 1;
  const std::int64_t by_work = elements / kSerialBelow;
  return static_cast<int>(
      std::max<std::int64_t>(1, std::min<std::int64_t>(backend.num_threads(), by_work)));
}

}  // namespace kryflow::kernels::parallel
