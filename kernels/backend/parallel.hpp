// How many OpenMP threads a cpu kernel uses for a given amount of work, and how it cuts the work.
//
// A parallel region costs a fork, a barrier and, on a loaded machine, waiting for a descheduled
// thread; below a work threshold a kernel runs on the calling thread alone. Every cpu kernel asks
// threads_for() instead of using backend.num_threads() directly: most through for_each(), which
// runs a loop on the calling thread below the threshold and otherwise in dynamic chunks; a
// kernel that needs its own region (a reduction clause, per-thread scratch) opens it with
//
//   const int threads = parallel::threads_for(backend, work);
//   #pragma omp parallel for schedule(dynamic, parallel::chunk_for(n, threads))
//                            num_threads(threads) if (threads > 1)
//
// `work` counts elements (vector entries, or stored matrix entries for matrix kernels), n the
// loop's iterations. Dynamic chunks let a thread that runs take the chunks of a peer the
// operating system has descheduled; no kernel's result depends on the schedule (reductions
// write one partial per emulated block, docs/decisions/004-cpu-backend-parallel-regions.md).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "kryflow/core/backend.hpp"

#if defined(KRYFLOW_WITH_OPENMP) && defined(__GNUC__)
// LLVM's and Intel's OpenMP runtimes: how long (ms) an idle thread spins before it sleeps, for the
// regions the calling thread opens. Null with a runtime that lacks it (GCC's libgomp).
extern "C" void kmp_set_blocktime(int milliseconds) __attribute__((weak));
#endif

namespace kryflow::kernels::parallel {

/// Elements each thread of a region gets at least: below 2 * kSerialBelow a region runs on the
/// calling thread alone. Measured on a 2-core AMD EPYC VM shared with other jobs, the waiting
/// passive (docs/decisions/004, bench/results/cpu_backend/): waking a sleeping thread and
/// joining it costs 10-15 us on an empty region and 30-120 us once that thread must wait for a
/// busy core (kryflow_bench_cpu_threshold), about what 30,000-100,000 elements of a streaming
/// kernel take; with one core busy, PCG and BiCGStab on the corpus with 2 threads ran up to 1.85x
/// slower than on the reference backend with 2^14 and 1.7x with 2^15, and within 1.1x with 2^17,
/// 2^18 and 2^19 (scripts/cpu_backend_check.sh). 2^17 keeps a woken thread's share of work at
/// 100-300 us, several times what it costs to wake it.
inline constexpr std::int64_t kSerialBelow = std::int64_t{1} << 17;

/// Dynamic chunks per thread of a parallel loop: enough that a running thread can take over the
/// chunks of a descheduled one, few enough that taking a chunk costs nothing measurable.
inline constexpr std::int64_t kChunksPerThread = 8;

/// Makes the threads of the OpenMP regions the calling thread opens sleep as soon as they are
/// idle, instead of spinning (a spinning thread takes the core a descheduled peer or another
/// process needs), unless the user chose a wait policy (OMP_WAIT_POLICY, KMP_BLOCKTIME). Once
/// per calling thread; a no-op where the runtime has no kmp_set_blocktime (libgomp reads
/// OMP_WAIT_POLICY only when it is loaded: docs/decisions/004-cpu-backend-parallel-regions.md).
inline void wait_passively() {
#if defined(KRYFLOW_WITH_OPENMP) && defined(__GNUC__)
  thread_local const bool done = [] {
    if (kmp_set_blocktime != nullptr && std::getenv("OMP_WAIT_POLICY") == nullptr &&
        std::getenv("KMP_BLOCKTIME") == nullptr) {
      kmp_set_blocktime(0);
    }
    return true;
  }();
  (void)done;
#endif
}

/// Threads for a region touching `elements` elements: one per kSerialBelow elements (so 1 below
/// 2 * kSerialBelow), at most backend.num_threads() (itself capped by the cores, Backend::cpu).
/// Before it returns more than one it calls wait_passively().
inline int threads_for(const Backend& backend, std::int64_t elements) {
  if (elements < kSerialBelow || backend.num_threads() <= 1) return 1;
  const std::int64_t by_work = elements / kSerialBelow;
  const auto threads = static_cast<int>(
      std::max<std::int64_t>(1, std::min<std::int64_t>(backend.num_threads(), by_work)));
  if (threads > 1) wait_passively();
  return threads;
}

/// Iterations per dynamic chunk of a loop of `iterations` iterations on `threads` threads: about
/// kChunksPerThread chunks per thread, at least one iteration; one chunk when serial.
inline std::int64_t chunk_for(std::int64_t iterations, int threads) {
  if (threads <= 1) return std::max<std::int64_t>(1, iterations);
  return std::max<std::int64_t>(1, iterations / (kChunksPerThread * threads));
}

/// Calls body(i) for i in [0, n), in no particular order: on the calling thread when
/// threads_for(backend, work) is 1 (no OpenMP region at all), otherwise in a region of that many
/// threads taking dynamic chunks of chunk_for(n, threads) iterations.
template <class Body>
void for_each(const Backend& backend, std::int64_t work, std::int64_t n, Body&& body) {
  const int threads = threads_for(backend, work);
  if (threads <= 1) {
    for (std::int64_t i = 0; i < n; ++i) body(i);
    return;
  }
#pragma omp parallel for schedule(dynamic, chunk_for(n, threads)) num_threads(threads)
  for (std::int64_t i = 0; i < n; ++i) body(i);
}

}  // namespace kryflow::kernels::parallel
