// Internal: the fused CG-Lanczos estimates of several Chebyshev smoothers launched together
// (kernels::smoothers::cg_lanczos over all of them: one cooperative launch on cuda, each level
// on its own group of blocks). The AMG setup gives its levels' smoothers one batch: the levels'
// steps are grid barriers more than work, and they take them together instead of one level
// after another.
#pragma once

#include <map>
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
  /// until the launch.
  void add(const Backend& backend, int steps, const kernels::smoothers::LanczosSystem& system,
           Vector p_next, Vector q) {
    queued_[steps].push_back({backend, system});
    work_.push_back(std::move(p_next));
    work_.push_back(std::move(q));
  }

  /// Launches every queued system (per number of steps and backend, in the order queued), then
  /// forgets them.
  void launch() {
    for (auto& [steps, entries] : queued_) {
      while (!entries.empty()) {
        const Backend backend = entries.front().backend;
        std::vector<kernels::smoothers::LanczosSystem> now;
        std::vector<Entry> later;
        for (const Entry& e : entries) {
          if (e.backend == backend) {
            now.push_back(e.system);
          } else {
            later.push_back(e);
          }
        }
        kernels::smoothers::cg_lanczos(backend, now, steps);
        entries = std::move(later);
      }
    }
    queued_.clear();
    work_.clear();
  }

 private:
  struct Entry {
    Backend backend;
    kernels::smoothers::LanczosSystem system;
  };
  std::map<int, std::vector<Entry>> queued_;
  std::vector<Vector> work_;
};

}  // namespace kryflow::detail
