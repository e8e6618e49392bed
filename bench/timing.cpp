// Timing and comparison helpers shared by the benchmark drivers.
#include "bench/timing.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "kryflow/core/error.hpp"

namespace kryflow::bench {

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
