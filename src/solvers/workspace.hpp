// The reusable work vectors and device-resident scalars of a Krylov solver.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/backend/host_mirror.hpp"
#include "kryflow/linalg/scalars.hpp"
#include "kryflow/linalg/vector.hpp"
#include "kryflow/solvers/krylov_solver.hpp"

namespace kryflow {

class KrylovSolver::Workspace {
 public:
  /// True when this workspace already has `vectors` vectors of n entries and `scalars`
  /// scalars on `backend`.
  bool fits(const Backend& backend, std::size_t n, std::size_t vectors, std::size_t scalars) const {
    return backend_ == backend && n_ == n && vectors_.size() == vectors &&
           scalars_.size() == scalars;
  }
  Workspace(const Backend& backend, std::size_t n, std::size_t vectors, std::size_t scalars)
      : backend_(backend),
        n_(n),
        scalars_(backend, scalars),
        mirrors_{kernels::HostMirror(backend, scalars), kernels::HostMirror(backend, scalars)} {
    vectors_.reserve(vectors);
    for (std::size_t i = 0; i < vectors; ++i) vectors_.emplace_back(backend, n);
  }
  Vector& vector(std::size_t i) { return vectors_.at(i); }
  DeviceScalars& scalars() { return scalars_; }
  /// Two host copies of the scalars, for checking one window while the next runs.
  kernels::HostMirror& mirror(std::size_t i) { return mirrors_[i % 2]; }

 private:
  Backend backend_;
  std::size_t n_;
  std::vector<Vector> vectors_;
  DeviceScalars scalars_;
  kernels::HostMirror mirrors_[2];
};

}  // namespace kryflow
