// LaunchGraph on cuda: stream capture into a CUDA graph, instantiated once, replayed with
// cudaGraphLaunch.
#include <cuda_runtime.h>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/graph.hpp"

namespace kryflow::kernels {

namespace cuda {

void destroy_graph(LaunchGraph::State& state) noexcept {
  if (state.exec != nullptr) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(state.exec));
  if (state.graph != nullptr) cudaGraphDestroy(static_cast<cudaGraph_t>(state.graph));
  state.exec = nullptr;
  state.graph = nullptr;
}

std::shared_ptr<LaunchGraph::State> record_graph(const Backend& backend,
                                                 const std::function<void()>& enqueue) {
  Context& context = *backend.cuda_context();
  auto state = std::make_shared<LaunchGraph::State>();
  state->backend = backend;
  KRYFLOW_CUDA_CHECK(cudaStreamBeginCapture(context.stream, cudaStreamCaptureModeThreadLocal));
  // Allocations while capturing bypass the small-block cache (Context::capturing).
  ++context.capturing;
  try {
    enqueue();
  } catch (...) {
    --context.capturing;
    cudaGraph_t discarded = nullptr;
    cudaStreamEndCapture(context.stream, &discarded);
    if (discarded != nullptr) cudaGraphDestroy(discarded);
    cudaGetLastError();
    throw;
  }
  --context.capturing;
  cudaGraph_t graph = nullptr;
  KRYFLOW_CUDA_CHECK(cudaStreamEndCapture(context.stream, &graph));
  state->graph = graph;
  cudaGraphExec_t exec = nullptr;
  KRYFLOW_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  state->exec = exec;
  return state;
}

void replay_graph(const Backend& backend, const LaunchGraph::State& state) {
  KRYFLOW_CUDA_CHECK(
      cudaGraphLaunch(static_cast<cudaGraphExec_t>(state.exec), backend.cuda_context()->stream));
}

}  // namespace cuda
}  // namespace kryflow::kernels
