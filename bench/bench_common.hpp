// Helpers shared by the benchmark drivers: timing of enqueued work, result agreement, cache
// size, comma-separated options and the UTC date. Header-only; each driver includes it once.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "kryflow/core/backend.hpp"

#ifdef KRYFLOW_WITH_CUDA
#include "bench/cusparse_spmv.hpp"
#endif

namespace kryflow::bench {

/// The real matrices of the SpMV benchmarks, relative to the corpus folder.
inline const std::vector<std::string> kSpmvCorpus = {
    "matrices/suitesparse/ex10hs/ex10hs.mtx.gz",
    "matrices/openfoam/pressure_23325/openfoam_p_23325.mtx.gz",
    "matrices/suitesparse/airfoil_2d/airfoil_2d.mtx.gz",
    "matrices/fvens/2dcyl1/2dcyl1.mtx.gz",
    "matrices/petsc_ex19/ex19_cavity_33.mtx.gz",
    "matrices/petsc_ex19/ex19_cavity_129.mtx.gz",
    "matrices/petsc_ex19/ex19_cavity_257.mtx.gz",
};

/// Median seconds per call of `enqueue` over `batches` batches sized to last about
/// `batch_seconds` each, after a warm-up. Device work is timed with CUDA events on the
/// backend's stream, host work with a steady clock.
inline double time_per_call(const Backend& backend, const std::function<void()>& enqueue,
                            double batch_seconds = 5e-3, int batches = 11) {
  for (int i = 0; i < 3; ++i) enqueue();  // warm-up: code loaded, caches and pools settled
  backend.synchronize();
  auto measure = [&](int batch_size, int count) {
#ifdef KRYFLOW_WITH_CUDA
    if (backend.is_device()) return median_seconds_per_call(backend, enqueue, batch_size, count);
#endif
    std::vector<double> samples;
    for (int b = 0; b < count; ++b) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < batch_size; ++i) enqueue();
      backend.synchronize();
      const auto stop = std::chrono::steady_clock::now();
      samples.push_back(std::chrono::duration<double>(stop - start).count() / batch_size);
    }
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
  };
  const double estimate = measure(4, 1);
  const int batch_size =
      static_cast<int>(std::clamp(std::ceil(batch_seconds / estimate), 1.0, 2000.0));
  return measure(batch_size, batches);
}

/// max_i |a_i - b_i| / max_i |b_i| (infinite when either holds NaN).
inline double max_relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double difference = 0.0;
  double scale = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) return INFINITY;
    difference = std::max(difference, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return scale > 0.0 ? difference / scale : difference;
}

/// The last-level cache in bytes: L2 on the device, L3 on the host (0 when unknown).
inline std::size_t cache_bytes(const Backend& backend) {
#ifdef KRYFLOW_WITH_CUDA
  if (backend.is_device()) return l2_cache_bytes(backend);
#endif
  (void)backend;
#ifdef _SC_LEVEL3_CACHE_SIZE
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0) return static_cast<std::size_t>(l3);
#endif
  return 0;
}

/// The items of a comma-separated list (empty items dropped).
inline std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> items;
  for (std::size_t pos = 0; pos <= list.size();) {
    const std::size_t comma = std::min(list.find(',', pos), list.size());
    if (comma > pos) items.push_back(list.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return items;
}

/// Now as "YYYY-MM-DDTHH:MM:SSZ".
inline std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return date;
}

}  // namespace kryflow::bench
