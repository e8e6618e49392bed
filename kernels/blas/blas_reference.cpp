// Reference (oracle) vector kernels: single-threaded, sequential summation order.
#include <cmath>

#include "kernels/blas/blas.hpp"

namespace kryflow::kernels::blas::reference {

void fill(const Backend&, Span<double> x, double value) {
  for (double& xi : x) xi = value;
}

void copy(const Backend&, Span<const double> x, Span<double> y) {
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i];
}

void axpby(const Backend&, double alpha, Span<const double> x, double beta, Span<double> y) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    y[i] = beta == 0.0 ? alpha * x[i] : alpha * x[i] + beta * y[i];
  }
}

void axpbypcz(const Backend&, double alpha, Span<const double> x, double beta, Span<const double> y,
              double gamma, Span<double> z) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = alpha * x[i] + beta * y[i];
    z[i] = gamma == 0.0 ? v : v + gamma * z[i];
  }
}

void pointwise_multiply(const Backend&, Span<const double> d, Span<const double> x,
                        Span<double> y) {
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = d[i] * x[i];
}

double dot(const Backend&, Span<const double> x, Span<const double> y) {
  double sum = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) sum += x[i] * y[i];
  return sum;
}

double norm2(const Backend& backend, Span<const double> x) {
  return std::sqrt(dot(backend, x, x));
}

CgJacobiDots cg_jacobi_update(const Backend&, double alpha, Span<const double> p,
                              Span<const double> q, Span<const double> inverse_diagonal,
                              Span<double> x, Span<double> r) {
  CgJacobiDots dots;
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] += alpha * p[i];
    r[i] -= alpha * q[i];
    dots.rz += r[i] * inverse_diagonal[i] * r[i];
    dots.rr += r[i] * r[i];
  }
  return dots;
}

void cg_jacobi_direction(const Backend&, double beta, Span<const double> inverse_diagonal,
                         Span<const double> r, Span<double> p) {
  for (std::size_t i = 0; i < r.size(); ++i) {
    p[i] = beta == 0.0 ? inverse_diagonal[i] * r[i] : inverse_diagonal[i] * r[i] + beta * p[i];
  }
}

index_t invert_diagonal(const Backend&, Span<const double> d, Span<double> dinv) {
  index_t first_bad = -1;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (d[i] == 0.0 || !std::isfinite(d[i])) {
      if (first_bad < 0) first_bad = static_cast<index_t>(i);
      dinv[i] = 0.0;
    } else {
      dinv[i] = 1.0 / d[i];
    }
  }
  return first_bad;
}

}  // namespace kryflow::kernels::blas::reference
