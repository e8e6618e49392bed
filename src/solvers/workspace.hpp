// The reusable work vectors and device-resident scalars of a Krylov solver.
#pragma once

#include <cstddef>
#include <vector>

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
      : backend_(backend), n_(n), scalars_(backend, scalars) {
    vectors_.reserve(vectors);
    for (std::size_t i = 0; i < vectors; ++i) vectors_.emplace_back(backend, n);
  }
  Vector& vector(std::size_t i) { return vectors_.at(i); }
  DeviceScalars& scalars() { return scalars_; }

 private:
  Backend backend_;
  std::size_t n_;
  std::vector<Vector> vectors_;
  DeviceScalars scalars_;
};

}  // namespace kryflow
