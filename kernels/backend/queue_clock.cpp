// QueueClock on every backend: the steady clock on the host, timing events on cuda.
#include "kernels/backend/queue_clock.hpp"

#include "kryflow/core/error.hpp"

namespace kryflow::kernels {

QueueClock::~QueueClock() {
#ifdef KRYFLOW_WITH_CUDA
  for (void* event : events_) cuda::destroy_timing_event(event);
#endif
}

std::size_t QueueClock::mark() {
  if (backend_.is_device()) {
#ifdef KRYFLOW_WITH_CUDA
    events_.push_back(cuda::record_timing_event(backend_));
    return events_.size() - 1;
#else
    throw NotCompiled("QueueClock: cuda backend not compiled");
#endif
  }
  times_.push_back(std::chrono::steady_clock::now());
  return times_.size() - 1;
}

double QueueClock::seconds(std::size_t begin, std::size_t end) {
  if (backend_.is_device()) {
#ifdef KRYFLOW_WITH_CUDA
    return 1e-3 * cuda::elapsed_milliseconds(backend_, events_.at(begin), events_.at(end));
#endif
  }
  return std::chrono::duration<double>(times_.at(end) - times_.at(begin)).count();
}

}  // namespace kryflow::kernels
