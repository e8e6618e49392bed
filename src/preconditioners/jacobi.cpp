// Point-Jacobi preconditioner: the inverted (damped) diagonal of a matrix.
#include "kryflow/preconditioners/jacobi.hpp"

#include <string>

#include "kernels/blas/blas.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow {

JacobiPreconditioner::JacobiPreconditioner() : JacobiPreconditioner(Parameters{}) {}

JacobiPreconditioner::JacobiPreconditioner(Parameters parameters) : parameters_(parameters) {
  if (!(parameters_.omega > 0.0)) throw ConfigError("omega", "must be > 0");
}

void JacobiPreconditioner::setup(const LinearOperator& A) {
  if (A.num_rows() != A.num_cols()) {
    throw DimensionMismatch("JacobiPreconditioner needs a square matrix, got " +
                            std::to_string(A.num_rows()) + " x " + std::to_string(A.num_cols()));
  }
  const Backend& backend = A.backend();
  Vector d(backend, static_cast<std::size_t>(A.num_rows()));
  A.diagonal(d);
  Vector inverse(backend, d.size());
  const index_t bad = kernels::blas::invert_diagonal(backend, d.span(), inverse.span());
  if (bad >= 0) {
    const double value = d.values().copy_to(Backend::reference()).span()[bad];
    throw InvalidInput("Jacobi: the diagonal entry of row " + std::to_string(bad + 1) + " is " +
                       (value == 0.0 ? std::string("zero or missing") : std::to_string(value)));
  }
  if (parameters_.omega != 1.0) axpby(0.0, inverse, parameters_.omega, inverse);
  inverse_diagonal_ = std::move(inverse);
}

void JacobiPreconditioner::apply(const Vector& r, Vector& z) const {
  check_apply_shapes(r, z, "JacobiPreconditioner::apply");
  pointwise_multiply(inverse_diagonal_, r, z);
}

}  // namespace kryflow
