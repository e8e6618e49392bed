// Internal: the fused CG-Lanczos estimates of several Chebyshev smoothers launched together
// (kernels::smoothers::cg_lanczos over all of them: one cooperative launch on cuda, each level
// on its own group of blocks). The AMG setup gives its levels' smoothers one batch: the levels'
// steps are grid barriers more than work, and they take them together instead of one level
// after another.
#pragma once

#include <utility>
#include <vector>

#include "kernels/smoothers/smoothers.hpp"
#include "kryflow/linalg/vector.hpp"

namespace kryflow::detail {

class LanczosBatch {
 public:
  LanczosBatch() = default;
  LanczosBatch(const LanczosBatch&) = delete;
  LanczosBatch& operator=(const LanczosBatch&) = delete;
  /// What was not launched is dropped (a setup that failed before launch()).
  ~LanczosBatch() = default;

  /// Queues `system` for `steps` steps on `backend`; p_next and q are its work vectors, kept
  /// until the launch. A system of another backend or step count than those queued launches
  /// them first (one launch takes one of each).
  void add(const Backend& backend, int steps, const kernels::smoothers::LanczosSystem& system,
           Vector p_next, Vector q) {
    if (!systems_.empty() && (!(backend == backend_) || steps != steps_)) launch();
    backend_ = backend;
    steps_ = steps;
    systems_.push_back(system);
    work_.push_back(std::move(p_next));
    work_.push_back(std::move(q));
  }

  /// Launches every queued system, in the order queued, then forgets them.
  void launch() {
    if (!systems_.empty()) kernels::smoothers::cg_lanczos(backend_, systems_, steps_);
    systems_.clear();
    work_.clear();
  }

 private:
  Backend backend_ = Backend::reference();
  int steps_ = 0;
  std::vector<kernels::smoothers::LanczosSystem> systems_;
  std::vector<Vector> work_;
};

}  // namespace kryflow::detail
