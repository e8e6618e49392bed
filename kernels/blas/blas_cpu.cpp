// OpenMP vector kernels; reductions sum fixed blocks of kReductionBlock, then the blocks in order.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/blas/blas.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::blas::cpu {
namespace {

using size_type = std::int64_t;

size_type ssize(Span<const double> x) {
  return static_cast<size_type>(x.size());
}

/// Sums f(i) over [0, n) block by block: deterministic whatever the number of threads.
template <class Result, class Term>
Result blocked_sum(const Backend& backend, size_type n, Term term) {
  const size_type block = static_cast<size_type>(kReductionBlock);
  const size_type num_blocks = (n + block - 1) / block;
  std::vector<Result> partial(static_cast<std::size_t>(num_blocks));
#pragma omp parallel for schedule(static) num_threads(backend.num_threads())
  for (size_type b = 0; b < num_blocks; ++b) {
    Result sum{};
    const size_type end = std::min(n, (b + 1) * block);
    for (size_type i = b * block; i < end; ++i) term(i, sum);
    partial[static_cast<std::size_t>(b)] = sum;
  }
  Result total{};
  for (const Result& p : partial) total += p;
  return total;
}

struct DotPair {
  double rz = 0.0;
  double rr = 0.0;
  DotPair& operator+=(const DotPair& o) {
    rz += o.rz;
    rr += o.rr;
    return *this;
  }
};

}  // namespace

void fill(const Backend& backend, Span<double> x, double value) {
  const size_type n = static_cast<size_type>(x.size());
#pragma omp parallel for schedule(static) num_threads(backend.num_threads())
  for (size_type i = 0; i < n; ++i) x[i] = value;
}

void copy(const Backend& backend, Span<const double> x, Span<double> y) {
  const size_type n = ssize(x);
#pragma omp parallel for schedule(static) num_threads(backend.num_threads())
  for (size_type i = 0; i < n; ++i) y[i] = x[i];
}

void axpby(const Backend& backend, double alpha, Span<const double> x, double beta,
           Span<double> y) {
  const size_type n = ssize(x);
  if (beta == 0.0) {
#pragma omp parallel for schedule(static) num_threads(backend.num_threads())
    for (size_type i = 0; i < n; ++i) y[i] = alpha * x[i];
  } else {
#pragma omp parallel for schedule(static) num_threads(backend.num_threads())
    for (size_type i = 0; i < n; ++i) y[i] = alpha * x[i] + beta * y[i];
  }
}

void axpbypcz(const Backend& backend, double alpha, Span<const double> x, double beta,
              Span<const double> y, double gamma, Span<double> z) {
  const size_type n = ssize(x);
  if (gamma == 0.0) {
#pragma omp parallel for schedule(static) num_threads(backend.num_threads())
    for (size_type i = 0; i < n; ++i) z[i] = alpha * x[i] + beta * y[i];
  } else {
#pragma omp parallel for schedule(static) num_threads(backend.num_threads())
    for (size_type i = 0; i < n; ++i) z[i] = alpha * x[i] + beta * y[i] + gamma * z[i];
  }
}

void pointwise_multiply(const Backend& backend, Span<const double> d, Span<const double> x,
                        Span<double> y) {
  const size_type n = ssize(x);
#pragma omp parallel for schedule(static) num_threads(backend.num_threads())
  for (size_type i = 0; i < n; ++i) y[i] = d[i] * x[i];
}

double dot(const Backend& backend, Span<const double> x, Span<const double> y) {
  return blocked_sum<double>(backend, ssize(x), [&](size_type i, double& s) { s += x[i] * y[i]; });
}

double norm2(const Backend& backend, Span<const double> x) {
  return std::sqrt(dot(backend, x, x));
}

CgJacobiDots cg_jacobi_update(const Backend& backend, double alpha, Span<const double> p,
                              Span<const double> q, Span<const double> inverse_diagonal,
                              Span<double> x, Span<double> r) {
  const DotPair dots = blocked_sum<DotPair>(backend, ssize(p), [&](size_type i, DotPair& s) {
    x[i] += alpha * p[i];
    const double ri = r[i] - alpha * q[i];
    r[i] = ri;
    s.rz += ri * inverse_diagonal[i] * ri;
    s.rr += ri * ri;
  });
  return {dots.rz, dots.rr};
}

void cg_jacobi_direction(const Backend& backend, double beta, Span<const double> inverse_diagonal,
                         Span<const double> r, Span<double> p) {
  const size_type n = ssize(r);
  if (beta == 0.0) {
#pragma omp parallel for schedule(static) num_threads(backend.num_threads())
    for (size_type i = 0; i < n; ++i) p[i] = inverse_diagonal[i] * r[i];
  } else {
#pragma omp parallel for schedule(static) num_threads(backend.num_threads())
    for (size_type i = 0; i < n; ++i) p[i] = inverse_diagonal[i] * r[i] + beta * p[i];
  }
}

index_t invert_diagonal(const Backend& backend, Span<const double> d, Span<double> dinv) {
  const size_type n = ssize(d);
  size_type first_bad = n;
#pragma omp parallel for schedule(static) reduction(min          \
                                                    : first_bad) \
    num_threads(backend.num_threads())
  for (size_type i = 0; i < n; ++i) {
    if (d[i] == 0.0 || !std::isfinite(d[i])) {
      dinv[i] = 0.0;
      first_bad = std::min(first_bad, i);
    } else {
      dinv[i] = 1.0 / d[i];
    }
  }
  return first_bad == n ? -1 : static_cast<index_t>(first_bad);
}

double copy_bandwidth(const Backend& backend, std::size_t bytes) {
  if (bytes == 0) throw InvalidInput("copy_bandwidth: bytes must be positive");
  const size_type n = static_cast<size_type>((bytes + sizeof(double) - 1) / sizeof(double));
  Array<double> source(backend, static_cast<std::size_t>(n));
  Array<double> target(backend, static_cast<std::size_t>(n));
  double* src = source.data();
  double* dst = target.data();
  // First touch with the schedule of the copy, so pages sit near the threads that use them.
#pragma omp parallel for schedule(static) num_threads(backend.num_threads())
  for (size_type i = 0; i < n; ++i) {
    src[i] = 1.0;
    dst[i] = 0.0;
  }
  auto copy_once = [&] {
#pragma omp parallel for schedule(static) num_threads(backend.num_threads())
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

}  // namespace kryflow::kernels::blas::cpu
