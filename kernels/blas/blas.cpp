// Dispatch of the vector kernels to the backend that owns the data.
#include "kernels/blas/blas.hpp"

#include <string>

#include "kernels/backend/dispatch.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::blas {

void fill_pseudo_random(const Backend& backend, Span<double> x, std::uint64_t seed,
                        Span<const double> balance) {
  KRYFLOW_DISPATCH(blas, fill_pseudo_random, backend, x, seed, balance);
}

void fill(const Backend& backend, Span<double> x, double value) {
  KRYFLOW_DISPATCH(blas, fill, backend, x, value);
}

void copy(const Backend& backend, Span<const double> x, Span<double> y) {
  KRYFLOW_DISPATCH(blas, copy, backend, x, y);
}

void axpby(const Backend& backend, double alpha, Span<const double> x, double beta,
           Span<double> y) {
  KRYFLOW_DISPATCH(blas, axpby, backend, alpha, x, beta, y);
}

void axpbypcz(const Backend& backend, double alpha, Span<const double> x, double beta,
              Span<const double> y, double gamma, Span<double> z) {
  KRYFLOW_DISPATCH(blas, axpbypcz, backend, alpha, x, beta, y, gamma, z);
}

void pointwise_multiply(const Backend& backend, Span<const double> d, Span<const double> x,
                        Span<double> y) {
  KRYFLOW_DISPATCH(blas, pointwise_multiply, backend, d, x, y);
}

void chebyshev_update(const Backend& backend, Span<const double> dinv, Span<const double> r,
                      double alpha, double beta, Span<double> d, Span<double> x, bool x_is_zero) {
  KRYFLOW_DISPATCH(blas, chebyshev_update, backend, dinv, r, alpha, beta, d, x, x_is_zero);
}

void chebyshev_step_update(const Backend& backend, Span<const double> dinv, Span<const double> x,
                           double alpha, double beta, Span<double> d, Span<double> y) {
  KRYFLOW_DISPATCH(blas, chebyshev_step_update, backend, dinv, x, alpha, beta, d, y);
}

double dot(const Backend& backend, Span<const double> x, Span<const double> y) {
  KRYFLOW_DISPATCH(blas, dot, backend, x, y);
}

double norm2(const Backend& backend, Span<const double> x) {
  KRYFLOW_DISPATCH(blas, norm2, backend, x);
}

void multi_dot(const Backend& backend, std::size_t n, const DotList& dots, double* results) {
  if (dots.count < 1 || dots.count > kMaxDots) {
    throw InvalidInput("blas::multi_dot: 1 to " + std::to_string(kMaxDots) + " pairs, got " +
                       std::to_string(dots.count));
  }
  KRYFLOW_DISPATCH(blas, multi_dot, backend, n, dots, results);
}

void read_scalars(const Backend& backend, const double* source, std::size_t count, double* host) {
  KRYFLOW_DISPATCH(blas, read_scalars, backend, source, count, host);
}

index_t invert_diagonal(const Backend& backend, Span<const double> d, Span<double> dinv,
                        unsigned int* first_bad) {
  KRYFLOW_DISPATCH(blas, invert_diagonal, backend, d, dinv, first_bad);
}

index_t round_to_float(const Backend& backend, Span<const double> x, Span<float> y,
                       unsigned int* first_overflow) {
  KRYFLOW_DISPATCH(blas, round_to_float, backend, x, y, first_overflow);
}

void widen_to_double(const Backend& backend, Span<const float> x, Span<double> y) {
  KRYFLOW_DISPATCH(blas, widen_to_double, backend, x, y);
}

double copy_bandwidth(const Backend& backend, std::size_t bytes) {
  KRYFLOW_DISPATCH(blas, copy_bandwidth, backend, bytes);
}

}  // namespace kryflow::kernels::blas
