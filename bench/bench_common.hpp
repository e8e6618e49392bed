// Helpers shared by the SpMV benchmark drivers: batch timing, agreement, dates and list options.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "kryflow/core/backend.hpp"

#ifdef KRYFLOW_WITH_CUDA
#include "bench/cusparse_spmv.hpp"
#endif

namespace kryflow::bench {

/// Each timed batch of calls lasts about this long, so event resolution and launch gaps vanish.
inline constexpr double kBatchSeconds = 5e-3;
inline constexpr int kBatches = 11;

/// Median seconds per call of `enqueue` over kBatches batches sized to last ~kBatchSeconds,
/// after a warm-up. Device work is timed with events, host work with a steady clock.
inline double time_per_call(const Backend& backend, const std::function<void()>& enqueue) {
  for (int i = 0; i < 3; ++i) enqueue();
  backend.synchronize();
  auto measure = [&](int batch_size, int batches) {
#ifdef KRYFLOW_WITH_CUDA
    if (backend.is_device()) return median_seconds_per_call(backend, enqueue, batch_size, batches);
#endif
    std::vector<double> samples;
    for (int b = 0; b < batches; ++b) {
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
      static_cast<int>(std::clamp(std::ceil(kBatchSeconds / estimate), 1.0, 2000.0));
  return measure(batch_size, kBatches);
}

/// max_i |a_i - b_i| / max_i |b_i| (Inf when either holds NaN).
inline double max_relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double difference = 0.0;
  double scale = 0.0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) return INFINITY;
    difference = std::max(difference, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return scale > 0.0 ? difference / scale : difference;
}

/// The current UTC time as 2024-06-01T12:00:00Z.
inline std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return date;
}

/// The items of a comma-separated list (empty items dropped).
inline std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> items;
  for (std::size_t pos = 0; pos <= list.size();) {
    const std::size_t comma = list.find(',', pos);
    const std::string item = list.substr(pos, comma == std::string::npos ? comma : comma - pos);
    if (!item.empty()) items.push_back(item);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return items;
}

/// A comma-separated list of integers.
inline std::vector<int> parse_ints(const std::string& list) {
  std::vector<int> values;
  for (const std::string& item : split_list(list)) values.push_back(std::stoi(item));
  return values;
}

}  // namespace kryflow::bench
