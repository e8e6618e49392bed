// The interface every matrix, matrix-free operator and preconditioner implements.
#pragma once

#include "kryflow/linalg/vector.hpp"

namespace kryflow {

/// A linear map y = A x between vectors on `backend()`.
class LinearOperator {
 public:
  virtual ~LinearOperator() = default;
  virtual index_t num_rows() const = 0;
  virtual index_t num_cols() const = 0;
  virtual const Backend& backend() const = 0;

  /// y = A x. x has num_cols() entries and y num_rows(); both on backend(). x and y must not
  /// alias. Throws DimensionMismatch on wrong sizes.
  virtual void apply(const Vector& x, Vector& y) const = 0;

  /// r = b - A x (override to fuse into one pass).
  virtual void residual(const Vector& b, const Vector& x, Vector& r) const;

  /// y = A x and returns x·y, for square A (override to fuse into one pass).
  virtual double apply_dot(const Vector& x, Vector& y) const;

 protected:
  void check_apply_shapes(const Vector& x, const Vector& y, const char* operation) const;
};

}  // namespace kryflow
