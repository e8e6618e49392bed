// Default (unfused) residual and apply_dot of LinearOperator, and its shape checks.
#include "kryflow/linalg/linear_operator.hpp"

#include <string>
#include <typeinfo>

#include "kryflow/core/error.hpp"

namespace kryflow {

void LinearOperator::residual(const Vector& b, const Vector& x, Vector& r) const {
  apply(x, r);
  axpby(1.0, b, -1.0, r);
}

double LinearOperator::apply_dot(const Vector& x, Vector& y) const {
  apply(x, y);
  return dot(x, y);
}

void LinearOperator::diagonal(Vector& /*d*/) const {
  throw NotSupported("this linear operator (" + std::string(typeid(*this).name()) +
                     ") does not provide its diagonal");
}

void LinearOperator::check_apply_shapes(const Vector& x, const Vector& y,
                                        const char* operation) const {
  if (x.size() != static_cast<std::size_t>(num_cols()) ||
      y.size() != static_cast<std::size_t>(num_rows())) {
    throw DimensionMismatch(std::string(operation) + ": operator is " + std::to_string(num_rows()) +
                            " x " + std::to_string(num_cols()) + ", vectors have " +
                            std::to_string(x.size()) + " (input) and " + std::to_string(y.size()) +
                            " (output) entries");
  }
  if (!(x.backend() == backend()) || !(y.backend() == backend())) {
    throw InvalidInput(std::string(operation) + ": vectors must live on the operator's backend (" +
                       backend().name() + ")");
  }
}

}  // namespace kryflow
