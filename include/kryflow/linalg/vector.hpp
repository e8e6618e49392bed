// Dense vectors on a backend and the free functions of BLAS level 1 on them.
#pragma once

#include <vector>

#include "kryflow/core/array.hpp"

namespace kryflow {

/// A dense vector of doubles on one backend (its partition is trivial in serial runs).
/// Move-only; `copy_to` copies explicitly.
class Vector {
 public:
  Vector() = default;
  /// `size` uninitialised entries on `backend`.
  Vector(const Backend& backend, std::size_t size) : values_(backend, size) {}
  explicit Vector(Array<double> values) : values_(std::move(values)) {}
  static Vector from_host(const Backend& backend, const std::vector<double>& values) {
    return Vector(Array<double>::from_host(backend, values));
  }
  /// `size` entries equal to `value`.
  static Vector constant(const Backend& backend, std::size_t size, double value);

  std::size_t size() const noexcept { return values_.size(); }
  const Backend& backend() const noexcept { return values_.backend(); }
  Span<double> span() noexcept { return values_.span(); }
  Span<const double> span() const noexcept { return values_.span(); }
  std::vector<double> to_host() const { return values_.to_host(); }
  Vector copy_to(const Backend& target) const { return Vector(values_.copy_to(target)); }
  const Array<double>& values() const noexcept { return values_; }

 private:
  Array<double> values_;
};

/// x_i = value.
void fill(Vector& x, double value);
/// y = x (same size; throws DimensionMismatch otherwise).
void copy(const Vector& x, Vector& y);
/// y = alpha x + beta y.
void axpby(double alpha, const Vector& x, double beta, Vector& y);
/// z = alpha x + beta y + gamma z.
void axpbypcz(double alpha, const Vector& x, double beta, const Vector& y, double gamma, Vector& z);
/// y_i = d_i x_i.
void pointwise_multiply(const Vector& d, const Vector& x, Vector& y);
/// x·y with a fixed summation order (same input, same bits).
double dot(const Vector& x, const Vector& y);
/// ||x||_2.
double norm2(const Vector& x);

}  // namespace kryflow
