// The gather-scatter Q Q^T of a spectral-element discretisation as an operator on local
// vectors (Deville, Fischer and Mund, High-Order Methods for Incompressible Fluid Flow, 2002,
// sec. 4.5.1).
#pragma once

#include <cstdint>

#include "kryflow/core/array.hpp"
#include "kryflow/linalg/vector.hpp"
#include "kryflow/sem/numbering.hpp"

namespace kryflow::sem {

/// u <- Q Q^T u for local vectors of num_local() = elements x N^3 entries (the layout of
/// GlobalNumbering::local_to_global): each local point shared with others receives the sum of
/// the values of all of them, added in increasing local index (the same bits on every backend).
/// Points of multiplicity 1 are untouched. Built once per mesh and order; the kernels visit
/// only shared points, one cuda thread each, without atomics.
class GatherScatter {
 public:
  GatherScatter() = default;
  /// Builds the shared-point lists on `backend` from a numbering. Throws NotSupported when the
  /// local points exceed the 32-bit index range; OutOfMemory when the lists do not fit.
  GatherScatter(const Backend& backend, const GlobalNumbering& numbering);

  /// u <- Q Q^T u in place. u has num_local() entries on backend(); throws DimensionMismatch
  /// or InvalidInput otherwise.
  void apply(Vector& u) const;

  std::int64_t num_local() const noexcept { return num_local_; }
  std::int64_t num_global() const noexcept { return num_global_; }
  /// Global points of multiplicity > 1.
  index_t num_shared() const noexcept { return num_shared_; }
  const Backend& backend() const noexcept { return locals_.backend(); }

 private:
  std::int64_t num_local_ = 0;
  std::int64_t num_global_ = 0;
  index_t num_shared_ = 0;
  Array<std::int64_t> offsets_;
  Array<index_t> locals_;
};

}  // namespace kryflow::sem
