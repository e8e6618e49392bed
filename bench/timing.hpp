// Timing and comparison helpers shared by the benchmark drivers and `kryflow bench`.
#pragma once

#include <chrono>
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

/// As time_per_call on a device, with each batch of calls replayed from a CUDA graph
/// (median_seconds_per_call_graph): the kernels' own time, without the host's launch cost.
/// Throws NotSupported on a host backend or without CUDA; BackendError when `enqueue` cannot be
/// captured.
double time_per_call_in_graph(const Backend& backend, const std::function<void()>& enqueue,
                              double batch_seconds = 5e-3, int batches = 11);

/// Seconds since `start` once the work queued on `backend` has finished (one wait on a device).
double seconds_since(const Backend& backend, std::chrono::steady_clock::time_point start);

/// The median of `values` (the upper middle one for an even count); 0 when empty.
double median(std::vector<double> values);

/// The cache that repeated products of a small matrix hit: the L2 of a device, the L3 of the
/// host (0 when unknown), in bytes.
std::size_t cache_bytes(const Backend& backend);

/// max_i |a_i - b_i| / max_i |b_i| (the absolute difference when b is all zero; +Inf for a NaN
/// or different lengths).
double max_relative_difference(const std::vector<double>& a, const std::vector<double>& b);

/// The real matrices of the SpMV benchmarks, relative to the data folder (KRYFLOW_DATA_DIR).
inline const std::vector<std::string> kSpmvCorpus = {
    "matrices/suitesparse/ex10hs/ex10hs.mtx.gz",
    "matrices/openfoam/pressure_23325/openfoam_p_23325.mtx.gz",
    "matrices/suitesparse/airfoil_2d/airfoil_2d.mtx.gz",
    "matrices/fvens/2dcyl1/2dcyl1.mtx.gz",
    "matrices/petsc_ex19/ex19_cavity_33.mtx.gz",
    "matrices/petsc_ex19/ex19_cavity_129.mtx.gz",
    "matrices/petsc_ex19/ex19_cavity_257.mtx.gz",
};

/// Starts (true) or stops (false) the CUDA profiler's capture (cudaProfilerStart / Stop), so
/// that a profiler run with its capture off at start (Nsight Compute's --profile-from-start
/// off) records only the bracketed work; does nothing without CUDA.
void profiler_capture(bool on);

/// The current UTC time as 2026-01-31T12:00:00Z.
std::string utc_now();

/// The items of a comma-separated list (empty items dropped).
std::vector<std::string> split_list(const std::string& list);

/// A comma-separated list of integers. Throws InvalidInput naming a bad item.
std::vector<int> parse_ints(const std::string& list);

}  // namespace kryflow::bench
