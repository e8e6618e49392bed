// Work recorded once and replayed many times: the launches of one or more Krylov iterations.
//
// On cuda a LaunchGraph is a CUDA graph captured from the backend's stream
// (cudaStreamBeginCapture / cudaGraphInstantiate) and replayed with one cudaGraphLaunch, which
// removes the per-kernel launch gaps that dominate small systems. On the host backends the work
// is simply run again. What is captured must not wait for the device or allocate: kernels and
// device-to-device copies whose arguments (pointers, sizes, coefficients) stay valid and fixed
// for every replay; coefficients that change between iterations must live in device memory
// (DeviceScalars).
#pragma once

#include <functional>
#include <memory>

#include "kryflow/core/backend.hpp"

namespace kryflow::kernels {

class LaunchGraph {
 public:
  LaunchGraph() = default;
  /// Records the work `enqueue` queues on `backend`. cuda: the stream is captured and nothing
  /// runs now; host backends: `enqueue` is kept and nothing runs now. Throws what `enqueue`
  /// throws (the capture is ended and discarded first) and BackendError when the capture or
  /// the instantiation fails (an operation that cannot be captured).
  static LaunchGraph record(const Backend& backend, std::function<void()> enqueue);
  /// Queues the recorded work once more (asynchronously on cuda). Throws BackendError when the
  /// launch fails; InvalidInput on an empty LaunchGraph.
  void replay() const;
  bool empty() const noexcept { return state_ == nullptr; }

  /// Host backends keep `enqueue`; cuda keeps the graph and its executable (opaque here).
  struct State {
    Backend backend = Backend::reference();
    std::function<void()> enqueue;
    void* graph = nullptr;
    void* exec = nullptr;
    State() = default;
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    ~State();
  };

 private:
  std::shared_ptr<State> state_;
};

namespace cuda {
/// The cuda side of LaunchGraph::record and replay (kernels/backend/graph_cuda.cu).
std::shared_ptr<LaunchGraph::State> record_graph(const Backend& backend,
                                                 const std::function<void()>& enqueue);
void replay_graph(const Backend& backend, const LaunchGraph::State& state);
void destroy_graph(LaunchGraph::State& state) noexcept;
}  // namespace cuda

}  // namespace kryflow::kernels
