// Reference (oracle) vector kernels: single-threaded, sequential summation order.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/blas/blas.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::blas::reference {

void fill(const Backend&, Span<double> x, double value) {
  for (double& xi : x) xi = value;
}

void fill_pseudo_random(const Backend&, Span<double> x, std::uint64_t seed,
                        Span<const double> balance) {
  const double* b = balance.empty() ? nullptr : balance.data();
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = balanced_uniform(seed, i, b);
}

void chebyshev_update(const Backend&, Span<const double> dinv, Span<const double> r, double alpha,
                      double beta, Span<double> d, Span<double> x, bool x_is_zero) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double z = dinv[i] * r[i];
    d[i] = beta == 0.0 ? alpha * z : alpha * z + beta * d[i];
    x[i] = x_is_zero ? d[i] : d[i] + x[i];
  }
}

void chebyshev_step_update(const Backend&, Span<const double> dinv, Span<const double> x,
                           double alpha, double beta, Span<double> d, Span<double> y) {
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double z = dinv[i] * y[i];
    d[i] = beta == 0.0 ? alpha * z : alpha * z + beta * d[i];
    y[i] = d[i] + x[i];
  }
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

index_t invert_diagonal(const Backend&, Span<const double> d, Span<double> dinv,
                        unsigned int* first_bad_out) {
  index_t first_bad = -1;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (d[i] == 0.0 || !std::isfinite(d[i])) {
      if (first_bad < 0) first_bad = static_cast<index_t>(i);
      dinv[i] = 0.0;
    } else {
      dinv[i] = 1.0 / d[i];
    }
  }
  return deliver_first_index(first_bad, first_bad_out);
}

index_t round_to_float(const Backend&, Span<const double> x, Span<float> y,
                       unsigned int* first_overflow_out) {
  index_t first_overflow = -1;
  for (std::size_t i = 0; i < x.size(); ++i) {
    bool overflow = false;
    y[i] = round_to_float_entry(x[i], &overflow);
    if (overflow && first_overflow < 0) first_overflow = static_cast<index_t>(i);
  }
  return deliver_first_index(first_overflow, first_overflow_out);
}

void widen_to_double(const Backend&, Span<const float> x, Span<double> y) {
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = static_cast<double>(x[i]);
}

double copy_bandwidth(const Backend&, std::size_t bytes) {
  if (bytes == 0) throw InvalidInput("copy_bandwidth: bytes must be positive");
  std::vector<unsigned char> source(bytes, 1);
  std::vector<unsigned char> target(bytes, 0);
  std::memcpy(target.data(), source.data(), bytes);  // warm-up
  std::vector<double> seconds;
  for (int repeat = 0; repeat < 11; ++repeat) {
    const auto start = std::chrono::steady_clock::now();
    std::memcpy(target.data(), source.data(), bytes);
    const auto stop = std::chrono::steady_clock::now();
    seconds.push_back(std::chrono::duration<double>(stop - start).count());
    source[repeat % bytes] = target[(repeat + 1) % bytes];  // keeps the copies observable
  }
  std::nth_element(seconds.begin(), seconds.begin() + 5, seconds.end());
  return 2.0 * static_cast<double>(bytes) / seconds[5];
}

void multi_dot(const Backend&, std::size_t n, const DotList& dots, double* results) {
  for (int k = 0; k < dots.count; ++k) {
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) sum += dots.x[k][i] * dots.y[k][i];
    results[k] = sum;
  }
}

void read_scalars(const Backend&, const double* source, std::size_t count, double* host) {
  std::copy(source, source + count, host);
}

}  // namespace kryflow::kernels::blas::reference
