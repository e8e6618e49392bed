// OpenMP vector kernels; reductions add in exactly the order of the cuda kernels.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/backend/ordered_sum.hpp"
#include "kernels/backend/parallel.hpp"
#include "kernels/backend/reduction_emulation.hpp"
#include "kernels/blas/blas.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::blas::cpu {
namespace {

using kernels::cpu::ordered_sum;

using size_type = std::int64_t;
using parallel::chunk_for;
using parallel::for_each;
using parallel::threads_for;

size_type ssize(Span<const double> x) {
  return static_cast<size_type>(x.size());
}

}  // namespace

void fill(const Backend& backend, Span<double> x, double value) {
  const size_type n = static_cast<size_type>(x.size());
  for_each(backend, n, n, [&](size_type i) { x[i] = value; });
}

void fill_pseudo_random(const Backend& backend, Span<double> x, std::uint64_t seed,
                        Span<const double> balance) {
  const size_type n = static_cast<size_type>(x.size());
  const double* b = balance.empty() ? nullptr : balance.data();
  for_each(backend, n, n,
           [&](size_type i) { x[i] = balanced_uniform(seed, static_cast<std::uint64_t>(i), b); });
}

void chebyshev_update(const Backend& backend, Span<const double> dinv, Span<const double> r,
                      double alpha, double beta, Span<double> d, Span<double> x, bool x_is_zero) {
  const size_type n = ssize(x);
  for_each(backend, 3 * n, n, [&](size_type i) {
    const double z = dinv[i] * r[i];
    d[i] = beta == 0.0 ? alpha * z : alpha * z + beta * d[i];
    x[i] = x_is_zero ? d[i] : d[i] + x[i];
  });
}

void chebyshev_step_update(const Backend& backend, Span<const double> dinv, Span<const double> x,
                           double alpha, double beta, Span<double> d, Span<double> y) {
  const size_type n = ssize(y);
  for_each(backend, 3 * n, n, [&](size_type i) {
    const double z = dinv[i] * y[i];
    d[i] = beta == 0.0 ? alpha * z : alpha * z + beta * d[i];
    y[i] = d[i] + x[i];
  });
}

void copy(const Backend& backend, Span<const double> x, Span<double> y) {
  const size_type n = ssize(x);
  for_each(backend, n, n, [&](size_type i) { y[i] = x[i]; });
}

void axpby(const Backend& backend, double alpha, Span<const double> x, double beta,
           Span<double> y) {
  const size_type n = ssize(x);
  if (beta == 0.0) {
    for_each(backend, n, n, [&](size_type i) { y[i] = alpha * x[i]; });
  } else {
    for_each(backend, n, n, [&](size_type i) { y[i] = alpha * x[i] + beta * y[i]; });
  }
}

void axpbypcz(const Backend& backend, double alpha, Span<const double> x, double beta,
              Span<const double> y, double gamma, Span<double> z) {
  const size_type n = ssize(x);
  if (gamma == 0.0) {
    for_each(backend, n, n, [&](size_type i) { z[i] = alpha * x[i] + beta * y[i]; });
  } else {
    for_each(backend, n, n, [&](size_type i) { z[i] = alpha * x[i] + beta * y[i] + gamma * z[i]; });
  }
}

void pointwise_multiply(const Backend& backend, Span<const double> d, Span<const double> x,
                        Span<double> y) {
  const size_type n = ssize(x);
  for_each(backend, n, n, [&](size_type i) { y[i] = d[i] * x[i]; });
}

double dot(const Backend& backend, Span<const double> x, Span<const double> y) {
  return ordered_sum<1>(backend, ssize(x),
                        [&](size_type i) { return std::array<double, 1>{x[i] * y[i]}; })[0];
}

double norm2(const Backend& backend, Span<const double> x) {
  return std::sqrt(dot(backend, x, x));
}

namespace {

template <int K>
void multi_dot_k(const Backend& backend, size_type n, const DotList& dots, double* results) {
  const auto sums = ordered_sum<K>(backend, n, [&](size_type i) {
    std::array<double, K> t;
    for (int k = 0; k < K; ++k) t[k] = dots.x[k][i] * dots.y[k][i];
    return t;
  });
  for (int k = 0; k < K; ++k) results[k] = sums[k];
}

}  // namespace

void multi_dot(const Backend& backend, std::size_t n, const DotList& dots, double* results) {
  const auto size = static_cast<size_type>(n);
  switch (dots.count) {
    case 1:
      return multi_dot_k<1>(backend, size, dots, results);
    case 2:
      return multi_dot_k<2>(backend, size, dots, results);
    case 3:
      return multi_dot_k<3>(backend, size, dots, results);
    case 4:
      return multi_dot_k<4>(backend, size, dots, results);
    case 5:
      return multi_dot_k<5>(backend, size, dots, results);
    case 6:
      return multi_dot_k<6>(backend, size, dots, results);
    case 7:
      return multi_dot_k<7>(backend, size, dots, results);
    case 8:
      return multi_dot_k<8>(backend, size, dots, results);
    default:
      throw InvalidInput("blas::multi_dot: 1 to 8 pairs");
  }
}

index_t invert_diagonal(const Backend& backend, Span<const double> d, Span<double> dinv,
                        unsigned int* first_bad_out) {
  const size_type n = ssize(d);
  size_type first_bad = n;
  const int t = threads_for(backend, n);
#pragma omp parallel for schedule(dynamic, chunk_for(n, t)) reduction(min          \
                                                                      : first_bad) \
    num_threads(t) if (t > 1)
  for (size_type i = 0; i < n; ++i) {
    if (d[i] == 0.0 || !std::isfinite(d[i])) {
      dinv[i] = 0.0;
      first_bad = std::min(first_bad, i);
    } else {
      dinv[i] = 1.0 / d[i];
    }
  }
  return deliver_first_index(first_bad == n ? -1 : static_cast<index_t>(first_bad), first_bad_out);
}

index_t round_to_float(const Backend& backend, Span<const double> x, Span<float> y,
                       unsigned int* first_overflow_out) {
  const size_type n = ssize(x);
  size_type first_overflow = n;
  const int t = threads_for(backend, n);
#pragma omp parallel for schedule(static) reduction(min : first_overflow) num_threads(t) if (t > 1)
  for (size_type i = 0; i < n; ++i) {
    bool overflow = false;
    y[i] = round_to_float_entry(x[i], &overflow);
    if (overflow) first_overflow = std::min(first_overflow, i);
  }
  return deliver_first_index(first_overflow == n ? -1 : static_cast<index_t>(first_overflow),
                             first_overflow_out);
}

void widen_to_double(const Backend& backend, Span<const float> x, Span<double> y) {
  const auto n = static_cast<size_type>(x.size());
  const int t = threads_for(backend, n);
#pragma omp parallel for schedule(static) num_threads(t) if (t > 1)
  for (size_type i = 0; i < n; ++i) y[i] = static_cast<double>(x[i]);
}

double copy_bandwidth(const Backend& backend, std::size_t bytes) {
  if (bytes == 0) throw InvalidInput("copy_bandwidth: bytes must be positive");
  const size_type n = static_cast<size_type>((bytes + sizeof(double) - 1) / sizeof(double));
  Array<double> source(backend, static_cast<std::size_t>(n));
  Array<double> target(backend, static_cast<std::size_t>(n));
  double* src = source.data();
  double* dst = target.data();
  // A static schedule, as STREAM: pages are first touched by the thread that copies them.
  const int t = threads_for(backend, n);
#pragma omp parallel for schedule(static) num_threads(t) if (t > 1)
  for (size_type i = 0; i < n; ++i) {
    src[i] = 1.0;
    dst[i] = 0.0;
  }
  auto copy_once = [&] {
#pragma omp parallel for schedule(static) num_threads(t) if (t > 1)
    for (size_type i = 0; i < n; ++i) dst[i] = src[i];
  };
  copy_once();  // warm-up
  std::vector<double> seconds;
  for (int repeat = 0; repeat < 11; ++repeat) {
    const auto start = std::chrono::steady_clock::now();
    copy_once();
    const auto stop = std::chrono::steady_clock::now();
    seconds.push_back(std::chrono::duration<double>(stop - start).count());
  }
  std::nth_element(seconds.begin(), seconds.begin() + 5, seconds.end());
  return 2.0 * static_cast<double>(n) * sizeof(double) / seconds[5];
}

void read_scalars(const Backend&, const double* source, std::size_t count, double* host) {
  std::copy(source, source + count, host);
}

}  // namespace kryflow::kernels::blas::cpu
