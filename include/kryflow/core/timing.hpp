// Timing work queued on a backend: the method kryflow's benchmarks and `kryflow bench` use.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

#include "kryflow/core/backend.hpp"

namespace kryflow {

/// Median seconds per call of `enqueue`, a function that only queues work on `backend` (or runs
/// it, on the host backends). Method: three warm-up calls, one batch of 4 calls to estimate the
/// cost, then `batches` batches of N calls, N chosen so that one batch lasts about
/// `batch_seconds` (1 <= N <= 2000); each batch is timed between two marks on the backend's queue
/// (CUDA events on cuda, the steady clock on the host), so launch gaps between calls are hidden
/// by the queue as in a solver's loop, and the host waits once per batch. Throws what `enqueue`
/// throws and BackendError when queued device work failed.
double time_per_call(const Backend& backend, const std::function<void()>& enqueue,
                     double batch_seconds = 5e-3, int batches = 11);

/// As time_per_call, but each batch (16 <= N <= 2000 calls) is recorded once into a launch graph
/// (a CUDA graph on cuda) and the replay is timed: the kernels' own time, without the host's
/// launch cost of several microseconds per kernel. On the host backends it equals
/// time_per_call. `enqueue` must be capturable (no host wait, allocation or host copy); throws
/// BackendError otherwise.
double time_per_call_in_graph(const Backend& backend, const std::function<void()>& enqueue,
                              double batch_seconds = 5e-3, int batches = 11);

/// Seconds since `start` once the work queued on `backend` has finished (one wait on a device).
double seconds_since(const Backend& backend, std::chrono::steady_clock::time_point start);

/// The median of `values` (the upper middle one for an even count); 0 when empty.
double median(std::vector<double> values);

}  // namespace kryflow
