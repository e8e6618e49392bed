// Timing and comparison helpers shared by the benchmark drivers and `kryflow bench`.
#include "bench/timing.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

#include "kryflow/core/error.hpp"

#ifdef KRYFLOW_WITH_CUDA
#include "bench/cusparse_spmv.hpp"
#endif

namespace kryflow::bench {

double seconds_since(const Backend& backend, std::chrono::steady_clock::time_point start) {
  backend.synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double time_per_call(const Backend& backend, const std::function<void()>& enqueue,
                     double batch_seconds, int batches) {
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
  return measure(batch_size, std::max(1, batches));
}

double time_per_call_in_graph(const Backend& backend, const std::function<void()>& enqueue,
                              double batch_seconds, int batches) {
#ifdef KRYFLOW_WITH_CUDA
  if (backend.is_device()) {
    for (int i = 0; i < 3; ++i) enqueue();
    backend.synchronize();
    const double estimate = median_seconds_per_call_graph(backend, enqueue, 16, 1);
    const int batch_size =
        static_cast<int>(std::clamp(std::ceil(batch_seconds / estimate), 16.0, 2000.0));
    return median_seconds_per_call_graph(backend, enqueue, batch_size, std::max(1, batches));
  }
#endif
  (void)enqueue;
  (void)batch_seconds;
  (void)batches;
  throw NotSupported("time_per_call_in_graph needs a cuda backend (" + backend.name() + ")");
}

std::size_t cache_bytes(const Backend& backend) {
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

double max_relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double difference = 0.0;
  double scale = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) return INFINITY;
    difference = std::max(difference, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return scale > 0.0 ? difference / scale : difference;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return date;
}

std::vector<std::string> split_list(const std::string& list) {
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

std::vector<int> parse_ints(const std::string& list) {
  std::vector<int> values;
  for (const std::string& item : split_list(list)) {
    std::size_t used = 0;
    int value = 0;
    try {
      value = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size())
      throw InvalidInput("'" + item + "' in '" + list + "' is not an integer");
    values.push_back(value);
  }
  return values;
}

#ifndef KRYFLOW_WITH_CUDA
void profiler_capture(bool) {}
#endif

}  // namespace kryflow::bench
