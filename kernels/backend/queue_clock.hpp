// Times intervals of the work queued on a backend without waiting between them.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "kryflow/core/backend.hpp"

namespace kryflow::kernels {

/// Marks on a backend's queue: mark() records a point after the work queued so far and returns
/// at once (a timing event on the cuda stream; the steady clock on the host backends, whose
/// work is done when a call returns); seconds(begin, end) gives the time between two marks, on
/// cuda after one wait for the later one (counted in Backend::host_waits). A setup timed in
/// phases this way waits once at the end instead of after every phase.
class QueueClock {
 public:
  explicit QueueClock(const Backend& backend) : backend_(backend) {}
  ~QueueClock();
  QueueClock(const QueueClock&) = delete;
  QueueClock& operator=(const QueueClock&) = delete;

  /// The index of a new mark. Throws BackendError when the event cannot be recorded.
  std::size_t mark();
  /// Seconds from mark `begin` to mark `end` (indices from mark()); waits for `end` on cuda.
  /// Throws BackendError when queued device work failed.
  double seconds(std::size_t begin, std::size_t end);

 private:
  Backend backend_;
  std::vector<void*> events_;
  std::vector<std::chrono::steady_clock::time_point> times_;
};

namespace cuda {
/// The cuda side of QueueClock (kernels/backend/queue_clock_cuda.cu).
void* record_timing_event(const Backend& backend);
/// Milliseconds from `begin` to `end` after waiting for `end`.
float elapsed_milliseconds(const Backend& backend, void* begin, void* end);
void destroy_timing_event(void* event) noexcept;
}  // namespace cuda

}  // namespace kryflow::kernels
