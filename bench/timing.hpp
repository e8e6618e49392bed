// Timing and comparison helpers shared by the benchmark drivers and `kryflow bench`.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "kryflow/core/backend.hpp"

namespace kryflow::bench {

/// Median seconds per call of `enqueue` (which only enqueues work on the backend's stream, or
/// runs it on the host): after three warm-up calls, `batches` batches each sized to last about
/// `batch_seconds`, timed with CUDA events on a device and a steady clock on the host. Launch
/// gaps between calls are hidden by the queue, as in a solver's loop.
double time_per_call(const Backend& backend, const std::function<void()>& enqueue,
                     double batch_seconds = 5e-3, int batches = 11);

/// The cache that repeated products of a small matrix hit: the L2 of a device, the L3 of the
/// host (0 when unknown), in bytes.
std::size_t cache_bytes(const Backend& backend);

/// max_i |a_i - b_i| / max_i |b_i| (the absolute difference when b is all zero; +Inf for a NaN
/// or different lengths).
double max_relative_difference(const std::vector<double>& a, const std::vector<double>& b);

/// The current UTC time as 2026-01-31T12:00:00Z.
std::string utc_now();

/// The items of a comma-separated list (empty items dropped).
std::vector<std::string> split_list(const std::string& list);

/// A comma-separated list of integers. Throws InvalidInput naming a bad item.
std::vector<int> parse_ints(const std::string& list);

}  // namespace kryflow::bench
