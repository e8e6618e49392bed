// Split-phase reductions: start the inner products of an iteration in one kernel, leave their
// results in device memory, and bring them to the host only when the host needs them.
//
// Every inner product a solver takes goes through this header: today a reduction is complete
// when its kernel ends; a distributed vector adds its MPI_Iallreduce between start and
// complete() (as PETSc's VecDotBegin/VecDotEnd, src/ksp/ksp/impls/cg/pipecg/pipecg.c), so that
// the preconditioner and the product can run while it is in flight.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "kryflow/linalg/scalars.hpp"
#include "kryflow/linalg/vector.hpp"

namespace kryflow {

/// Reduction results in `count` consecutive scalars of a DeviceScalars set, started and not yet
/// known to the host. Kernels launched after complete() may read them in device memory.
class PendingReduction {
 public:
  PendingReduction(DeviceScalars& scalars, std::size_t first, std::size_t count)
      : scalars_(&scalars), first_(first), count_(count) {}

  /// Finishes the reduction across the vector's partition (serial vectors: nothing to do; the
  /// kernel wrote global sums). Returns *this.
  PendingReduction& complete() { return *this; }
  /// complete(), then copies the results to the host: one wait on the backend. Use it for the
  /// stopping test only; everything else reads the results on the device.
  std::vector<double> wait();
  std::size_t first() const noexcept { return first_; }
  std::size_t count() const noexcept { return count_; }

 private:
  DeviceScalars* scalars_;
  std::size_t first_;
  std::size_t count_;
};

/// Most inner products one fused multi-dot computes.
inline constexpr std::size_t kMaxFusedDots = 8;

/// One inner product x·y of a fused multi-dot (both vectors of one size, on one backend).
struct DotPair {
  const Vector* x;
  const Vector* y;
};

/// Starts x_k·y_k for the pairs (1 <= pairs.size() <= kMaxFusedDots, every vector of one size
/// and on the scalars' backend) in one kernel that reads each vector of every pair once,
/// writing sum k to scalars slot first + k; nothing waits for the device. Same summation order
/// as dot() (kernels/backend/reduction_order.hpp). Throws DimensionMismatch or InvalidInput
/// (before launching) for sizes, backends or a slot range that do not fit, InvalidInput for 0
/// or more than kMaxFusedDots pairs.
PendingReduction start_dots(std::span<const DotPair> pairs, DeviceScalars& scalars,
                            std::size_t first);

}  // namespace kryflow
