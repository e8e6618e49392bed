// Scalars that live where the vectors live: the inner products, coefficients and residual norms
// of an iterative method, kept in the backend's memory so that kernels read and write them
// without a round trip through the host.
#pragma once

#include <cstddef>
#include <span>

#include "kryflow/core/array.hpp"

namespace kryflow {

/// The address of one double in a backend's memory: where a kernel writes a sum or reads a
/// coefficient. Dereference only on that backend (kernels/ code).
struct DeviceScalar {
  double* address = nullptr;
};

/// A sum held in a backend's memory either complete (count == 0: values[0] is the sum) or as
/// `count` partial sums that the kernel reading it adds in kryflow's fixed order (the second
/// stage of a grid sum, kernels/backend/reduction_order.hpp). A product on a small matrix hands
/// its inner product over this way instead of completing it in its last block, which saves a
/// chain of memory round trips per product (LinearOperator::apply_combination_dot). The
/// partials stay valid until the next product of the same operator.
struct DeviceSum {
  const double* values = nullptr;
  int count = 0;
};

/// The value of `sum` on the host, added in the fixed order; one wait for the queued work.
/// Throws BackendError when queued device work failed.
double read_sum(const Backend& backend, const DeviceSum& sum);

/// A fixed set of doubles on one backend, allocated once (at a solver's setup) and zeroed.
/// Kernels address them through slot(); the host sees them only through read(), which waits for
/// the queued work that writes them: it is the one place an iteration synchronizes with the
/// device. Move-only, like Array.
class DeviceScalars {
 public:
  DeviceScalars() = default;
  /// `count` scalars on `backend`, all 0. Throws OutOfMemory when they do not fit.
  DeviceScalars(const Backend& backend, std::size_t count);

  std::size_t size() const noexcept { return values_.size(); }
  const Backend& backend() const noexcept { return values_.backend(); }
  /// Scalar i (i < size()). Throws InvalidInput for i out of range.
  DeviceScalar slot(std::size_t i);
  /// Copies scalars [first, first + host.size()) to `host` after the work queued on the backend
  /// has finished (one device-to-host transfer and one wait on cuda). Throws InvalidInput for a
  /// range outside the set, BackendError when queued device work failed.
  void read(std::size_t first, std::span<double> host) const;
  /// Sets scalars [first, first + host.size()) from the host, ordered after the queued work.
  /// Throws InvalidInput for a range outside the set.
  void write(std::size_t first, std::span<const double> host);

 private:
  void check_range(std::size_t first, std::size_t count, const char* operation) const;
  Array<double> values_;
};

}  // namespace kryflow
