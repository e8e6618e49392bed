// Default (unfused) residual and apply_dot of LinearOperator, and its shape checks.
#include "kryflow/linalg/linear_operator.hpp"

#include <string>
#include <typeinfo>

#include "kernels/blas/blas.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow {

void LinearOperator::residual(const Vector& b, const Vector& x, Vector& r) const {
  apply(x, r);
  axpby(1.0, b, -1.0, r);
}

void LinearOperator::check_chebyshev_step(const Vector& b, const Vector& x, const Vector& dinv,
                                          const Vector& d, const Vector& y) const {
  const auto n = static_cast<std::size_t>(num_rows());
  if (num_rows() != num_cols() || b.size() != n || x.size() != n || dinv.size() != n ||
      d.size() != n || y.size() != n) {
    throw DimensionMismatch("chebyshev_step: operator is " + std::to_string(num_rows()) + " x " +
                            std::to_string(num_cols()) + ", b, x, dinv, d, y have " +
                            std::to_string(b.size()) + ", " + std::to_string(x.size()) + ", " +
                            std::to_string(dinv.size()) + ", " + std::to_string(d.size()) + ", " +
                            std::to_string(y.size()) + " entries");
  }
  const Vector* inputs[] = {&b, &x, &dinv, &d};
  for (const Vector* v : inputs) {
    if (v->span().data() == y.span().data() && n > 0) {
      throw InvalidInput("chebyshev_step: y must be distinct from b, x, dinv and d");
    }
  }
  for (const Vector* v : {&b, &x, &dinv, &d, &y}) {
    if (!(v->backend() == backend())) {
      throw InvalidInput("chebyshev_step: vectors must live on the operator's backend (" +
                         backend().name() + ")");
    }
  }
}

void LinearOperator::chebyshev_step(const Vector& b, const Vector& x, const Vector& dinv,
                                    double alpha, double beta, Vector& d, Vector& y) const {
  check_chebyshev_step(b, x, dinv, d, y);
  residual(b, x, y);
  kernels::blas::chebyshev_step_update(backend(), dinv.span(), x.span(), alpha, beta, d.span(),
                                       y.span());
}

void LinearOperator::apply(double alpha, const Vector& x, double beta, Vector& y) const {
  if (beta == 0.0) {
    apply(x, y);
    if (alpha != 1.0) axpby(0.0, y, alpha, y);
    return;
  }
  check_apply_shapes(x, y, "LinearOperator::apply(alpha, x, beta, y)");
  Vector product(backend(), y.size());
  apply(x, product);
  axpby(alpha, product, beta, y);
}

void LinearOperator::apply_dot(const Vector& x, Vector& y, DeviceScalar xy) const {
  apply(x, y);
  if (x.size() != y.size()) {
    throw DimensionMismatch("apply_dot needs a square operator, got " + std::to_string(num_rows()) +
                            " x " + std::to_string(num_cols()));
  }
  kernels::blas::DotList list;
  list.count = 1;
  list.x[0] = x.span().data();
  list.y[0] = y.span().data();
  kernels::blas::multi_dot(backend(), x.size(), list, xy.address);
}

void LinearOperator::apply_dots(const Vector& x, Vector& y, std::span<const Vector* const> with,
                                DeviceScalar first) const {
  if (with.empty() || with.size() > static_cast<std::size_t>(kMaxProductDots)) {
    throw InvalidInput("apply_dots: 1 to " + std::to_string(kMaxProductDots) +
                       " inner products, got " + std::to_string(with.size()));
  }
  apply(x, y);
  if (x.size() != y.size()) {
    throw DimensionMismatch("apply_dots needs a square operator, got " +
                            std::to_string(num_rows()) + " x " + std::to_string(num_cols()));
  }
  kernels::blas::DotList list;
  list.count = static_cast<int>(with.size());
  for (std::size_t k = 0; k < with.size(); ++k) {
    const Vector& w = with[k] != nullptr ? *with[k] : y;
    if (w.size() != y.size()) throw DimensionMismatch("apply_dots: w has the wrong size");
    list.x[k] = w.span().data();
    list.y[k] = y.span().data();
  }
  kernels::blas::multi_dot(backend(), x.size(), list, first.address);
}

double LinearOperator::apply_dot(const Vector& x, Vector& y) const {
  DeviceScalars result(backend(), 1);
  apply_dot(x, y, result.slot(0));
  double host = 0.0;
  result.read(0, std::span<double>(&host, 1));
  return host;
}

DeviceSum LinearOperator::apply_combination_dot(const Vector* /*scale*/, const Vector& /*u*/,
                                                DeviceScalar /*c*/, const Vector& /*w*/,
                                                Vector& /*y*/, DeviceScalar /*vy*/,
                                                bool /*partials_ok*/) const {
  throw NotSupported("this linear operator (" + std::string(typeid(*this).name()) +
                     ") has no fused apply_combination_dot");
}

DeviceSum LinearOperator::apply_shifted_dots(const Vector& /*d*/, const Vector& /*u*/,
                                             DeviceScalar /*numerator*/,
                                             DeviceScalar /*denominator*/, const Vector& /*w*/,
                                             Vector& /*s*/, Vector& /*z*/, Vector& /*y*/,
                                             DeviceScalar /*sums*/, bool /*partials_ok*/) const {
  throw NotSupported("this linear operator (" + std::string(typeid(*this).name()) +
                     ") has no fused apply_shifted_dots");
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
