// Dense vectors on a backend and the free functions of BLAS level 1 on them.
#pragma once

#include <cstdint>

#include <vector>

#include "kryflow/core/array.hpp"

namespace kryflow {

/// A dense vector of doubles on one backend (its partition is trivial in serial runs).
/// Move-only; `copy_to` copies explicitly. A default-constructed Vector is empty (size 0, on
/// the reference backend), to be assigned to.
class Vector {
 public:
  Vector() = default;
  /// `size` uninitialised entries on `backend`. Throws OutOfMemory when they do not fit.
  Vector(const Backend& backend, std::size_t size) : values_(backend, size) {}
  /// Takes ownership of `values` (no copy).
  explicit Vector(Array<double> values) : values_(std::move(values)) {}
  /// A copy of host data on `backend`. Throws OutOfMemory when it does not fit.
  static Vector from_host(const Backend& backend, const std::vector<double>& values) {
    return Vector(Array<double>::from_host(backend, values));
  }
  /// `size` entries equal to `value`. Throws OutOfMemory when they do not fit.
  static Vector constant(const Backend& backend, std::size_t size, double value);

  std::size_t size() const noexcept { return values_.size(); }
  const Backend& backend() const noexcept { return values_.backend(); }
  /// The entries in the backend's memory (dereference on that backend only).
  Span<double> span() noexcept { return values_.span(); }
  Span<const double> span() const noexcept { return values_.span(); }
  /// The entries copied to the host (waits for the copy).
  std::vector<double> to_host() const { return values_.to_host(); }
  /// A deep copy on `target` (which may be this vector's backend).
  Vector copy_to(const Backend& target) const { return Vector(values_.copy_to(target)); }
  const Array<double>& values() const noexcept { return values_; }

 private:
  Array<double> values_;
};

// BLAS level 1 on Vectors. Every operand of one call must have the same size and live on the
// same backend: a size difference throws DimensionMismatch, operands on different backends
// throw InvalidInput (both before anything is written). Output operands may alias inputs
// (the operations are elementwise). IEEE arithmetic throughout: NaN and Inf propagate, except
// that beta == 0 in axpby and gamma == 0 in axpbypcz mean the output's old content is not read
// at all (so NaN or Inf in it, or uninitialised memory, do not matter). A zero coefficient on
// an input still multiplies: alpha == 0 with NaN in x gives NaN (0 * NaN = NaN).
// On cuda any of them may also throw BackendError when the device reports a failure.

/// x_i = value for every i.
void fill(Vector& x, double value);
/// x_i = a uniform number in [-1, 1) from a splitmix64 hash of (seed, i), formed where x lives
/// (no host transfer); the same bits on every backend. A start vector with every frequency
/// present, e.g. for eigenvalue estimates (Steele, Lea, Flood, OOPSLA 2014).
void fill_pseudo_random(Vector& x, std::uint64_t seed);
/// y_k = x_{map_k} for every k < y.size() (map: y.size() indices into x, on the vectors'
/// backend). Throws DimensionMismatch when map and y differ in length, InvalidInput when an
/// operand lives on another backend. The indices are not checked: each must be in 0..x.size()-1.
void gather(const Vector& x, const Array<index_t>& map, Vector& y);
/// y = x. Same size and backend; the old y is not read.
void copy(const Vector& x, Vector& y);
/// y = alpha x + beta y. Same size and backend. When beta == 0, y's old content is not read:
/// y = alpha x exactly, even where y held NaN or Inf.
void axpby(double alpha, const Vector& x, double beta, Vector& y);
/// z = alpha x + beta y + gamma z. Same size and backend. When gamma == 0, z's old content is
/// not read (z = alpha x + beta y, even where z held NaN or Inf). y is always read: beta == 0
/// does not hide NaN or Inf in y.
void axpbypcz(double alpha, const Vector& x, double beta, const Vector& y, double gamma, Vector& z);
/// y_i = d_i x_i. Same size and backend; the old y is not read.
void pointwise_multiply(const Vector& d, const Vector& x, Vector& y);
/// x·y = sum_i x_i y_i in a fixed summation order (same input, same bits, whatever the thread
/// count; cpu and cuda agree bit for bit, kernels/blas/blas.hpp). 0 for empty vectors. Same
/// size and backend.
double dot(const Vector& x, const Vector& y);
/// ||x||_2 = sqrt(x·x), with dot's summation order; no scaling, so it overflows to Inf when
/// sum_i x_i^2 exceeds the double range (|x_i| around 1e154).
double norm2(const Vector& x);

}  // namespace kryflow
