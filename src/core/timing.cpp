// Timing work queued on a backend (kryflow/core/timing.hpp).
#include "kryflow/core/timing.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/backend/graph.hpp"
#include "kernels/backend/queue_clock.hpp"

namespace kryflow {

namespace {

// Median over `batches` timed runs, one after the other, of `run_batch` (which queues `batch_size`
// calls), per call.
double median_per_call(const Backend& backend, const std::function<void()>& run_batch,
                       int batch_size, int batches) {
  kernels::QueueClock clock(backend);
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(batches));
  for (int b = 0; b < batches; ++b) {
    const std::size_t begin = clock.mark();
    run_batch();
    const std::size_t end = clock.mark();
    samples.push_back(clock.seconds(begin, end) / batch_size);  // waits for this batch
  }
  return median(std::move(samples));
}

int batch_size_for(double batch_seconds, double estimate, double smallest) {
  if (!(estimate > 0.0)) return 2000;
  return static_cast<int>(std::clamp(std::ceil(batch_seconds / estimate), smallest, 2000.0));
}

}  // namespace

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
  auto timed = [&](int batch_size, int count) {
    return median_per_call(
        backend,
        [&] {
          for (int i = 0; i < batch_size; ++i) enqueue();
        },
        batch_size, count);
  };
  const int batch_size = batch_size_for(batch_seconds, timed(4, 1), 1.0);
  return timed(batch_size, std::max(1, batches));
}

double time_per_call_in_graph(const Backend& backend, const std::function<void()>& enqueue,
                              double batch_seconds, int batches) {
  for (int i = 0; i < 3; ++i) enqueue();
  backend.synchronize();
  auto timed = [&](int batch_size, int count) {
    const kernels::LaunchGraph graph = kernels::LaunchGraph::record(backend, [&] {
      for (int i = 0; i < batch_size; ++i) enqueue();
    });
    graph.replay();  // the first launch uploads the graph
    backend.synchronize();
    return median_per_call(
        backend, [&] { graph.replay(); }, batch_size, count);
  };
  const int batch_size = batch_size_for(batch_seconds, timed(16, 1), 16.0);
  return timed(batch_size, std::max(1, batches));
}

}  // namespace kryflow
