// LaunchGraph on every backend: host backends keep the work and run it again; cuda captures it.
#include "kernels/backend/graph.hpp"

#include "kryflow/core/error.hpp"

namespace kryflow::kernels {

LaunchGraph::State::~State() {
#ifdef KRYFLOW_WITH_CUDA
  if (graph != nullptr || exec != nullptr) cuda::destroy_graph(*this);
#endif
}

LaunchGraph LaunchGraph::record(const Backend& backend, std::function<void()> enqueue) {
  LaunchGraph recorded;
  if (backend.is_device()) {
#ifdef KRYFLOW_WITH_CUDA
    recorded.state_ = cuda::record_graph(backend, enqueue);
#else
    throw NotCompiled("LaunchGraph: cuda backend not compiled");
#endif
  } else {
    recorded.state_ = std::make_shared<State>();
    recorded.state_->backend = backend;
    recorded.state_->enqueue = std::move(enqueue);
  }
  return recorded;
}

void LaunchGraph::replay() const {
  if (!state_) throw InvalidInput("LaunchGraph::replay: nothing was recorded");
  if (state_->enqueue) {
    state_->enqueue();
    return;
  }
#ifdef KRYFLOW_WITH_CUDA
  cuda::replay_graph(state_->backend, *state_);
#endif
}

}  // namespace kryflow::kernels
