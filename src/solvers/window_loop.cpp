// The windowed iteration loop of the Krylov solvers (window_loop.hpp).
#include "window_loop.hpp"

#include <algorithm>
#include <deque>

#include "kernels/backend/graph.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow {

void run_windows(const WindowLoop& loop) {
  const Backend& backend = *loop.backend;
  DeviceScalars& scalars = loop.workspace->scalars();
  const std::size_t count = scalars.size();
  const double* device_scalars = scalars.slot(0).address;
  bool graphs = loop.graphs;
  kernels::LaunchGraph recorded;
  auto window_after = [&](int done) {
    int window = std::min(loop.check_every, loop.max_iterations - done);
    if (loop.limit) window = std::min(window, loop.limit(done));
    return window;
  };
  auto queue = [&](int window, std::size_t mirror) {
    const bool full = graphs && window == loop.check_every;
    if (full && !recorded.empty()) {
      recorded.replay();
    } else {
      for (int j = 0; j < window; ++j) loop.enqueue(static_cast<std::size_t>(j));
      // The first full window runs launch by launch, and is recorded for the next ones while
      // the device runs it (recording launches nothing), so the device does not wait for the
      // capture and the instantiation.
      if (full) {
        try {
          // By value: host backends keep this function and call it at each replay.
          recorded = kernels::LaunchGraph::record(backend, [&loop, window] {
            for (int j = 0; j < window; ++j) loop.enqueue(static_cast<std::size_t>(j));
          });
        } catch (const BackendError&) {
          graphs = false;  // an operation that cannot be recorded: launch every kernel
        }
      }
    }
    loop.workspace->mirror(mirror).copy_async(device_scalars, count);
  };

  struct Queued {
    int done;    // iterations completed before the window
    int window;  // its iterations
    std::size_t mirror;
  };
  std::deque<Queued> pending;
  int queued = 0;
  std::size_t windows = 0;
  auto queue_next = [&] {
    if (queued >= loop.max_iterations) return;
    if (queued > 0 && loop.between) loop.between(queued);
    const int window = window_after(queued);
    if (window <= 0) return;
    queue(window, windows % 2);
    pending.push_back({queued, window, windows % 2});
    queued += window;
    ++windows;
  };
  queue_next();
  while (!pending.empty()) {
    // The device works on the next window while the host checks this one, unless the queued
    // iterations will probably end the method.
    if (!(loop.likely_done && loop.likely_done(queued))) queue_next();
    const Queued current = pending.front();
    pending.pop_front();
    const double* host = loop.workspace->mirror(current.mirror).wait();
    if (loop.inspect(current.done, static_cast<std::size_t>(current.window), host)) {
      // The window queued ahead, if any, finishes: BiCGStab's does nothing after a stop, CG's
      // and pipelined CG's update x (x then holds up to check_every iterations more).
      backend.synchronize();
      return;
    }
    if (pending.empty()) queue_next();  // held back by likely_done, which guessed wrong
  }
}

}  // namespace kryflow
