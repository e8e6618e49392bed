// Timing and comparison helpers shared by the benchmark drivers.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kryflow/core/backend.hpp"
#include "kryflow/core/timing.hpp"

namespace kryflow::bench {

// The timing method (time_per_call, time_per_call_in_graph, seconds_since, median) is public:
// kryflow/core/timing.hpp.
using kryflow::median;
using kryflow::seconds_since;
using kryflow::time_per_call;
using kryflow::time_per_call_in_graph;

/// The cache that repeated products of a small matrix hit (Backend::cache_bytes).
inline std::size_t cache_bytes(const Backend& backend) {
  return backend.cache_bytes();
}

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
