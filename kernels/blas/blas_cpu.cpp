// OpenMP vector kernels; reductions add in exactly the order of the cuda kernels.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/backend/parallel.hpp"
#include "kernels/backend/reduction_emulation.hpp"
#include "kernels/blas/blas.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::blas::cpu {
namespace {

using size_type = std::int64_t;
using parallel::chunk_for;
using parallel::for_each;
using parallel::threads_for;

size_type ssize(Span<const double> x) {
  return static_cast<size_type>(x.size());
}

/// Sums the K-valued terms term(i), i in [0, n), in exactly the order of the cuda reduction
/// (kernels/backend/reduction_order.hpp): emulated blocks run in parallel, each with its
/// kReductionThreads emulated threads; the result does not depend on the OpenMP thread count.
template <int K, class Term>
std::array<double, K> ordered_sum(const Backend& backend, size_type n, Term term) {
  std::array<double, K> result{};
  if (n == 0) return result;
  constexpr size_type threads = kReductionThreads;
  const size_type per_block = threads * kReductionElementsPerThread;
  const size_type blocks =
      std::min<size_type>((n + per_block - 1) / per_block, kMaxReductionBlocks);
  const size_type num_pairs = n / 2;
  const size_type stride = blocks * threads;
  std::vector<double> partial(static_cast<std::size_t>(blocks * K));
  // Each emulated block writes its own partial, so any schedule gives the same bits.
  for_each(backend, n, blocks, [&](size_type b) {
    double sums[K][threads] = {};
    for (size_type first = b * threads; first < num_pairs; first += stride) {
      const size_type count = std::min(threads, num_pairs - first);
      for (size_type j = 0; j < count; ++j) {
        const std::array<double, K> t0 = term(2 * (first + j));
        const std::array<double, K> t1 = term(2 * (first + j) + 1);
        for (int k = 0; k < K; ++k) sums[k][j] = (sums[k][j] + t0[k]) + t1[k];
      }
    }
    if (b == 0 && n % 2 == 1) {
      const std::array<double, K> t = term(n - 1);
      for (int k = 0; k < K; ++k) sums[k][0] = sums[k][0] + t[k];
    }
    for (int k = 0; k < K; ++k) partial[b * K + k] = emulation::block_sum(sums[k]);
  });
  for (int k = 0; k < K; ++k) {
    double totals[threads] = {};
    for (size_type j = 0; j < threads; ++j) {
      for (size_type bb = j; bb < blocks; bb += threads)
        totals[j] = totals[j] + partial[bb * K + k];
    }
    result[k] = emulation::block_sum(totals);
  }
  return result;
}

}  // namespace

void fill(const Backend& backend, Span<double> x, double value) {
  const size_type n = static_cast<size_type>(x.size());
  for_each(backend, n, n, [&](size_type i) { x[i] = value; });
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

CgJacobiDots cg_jacobi_update(const Backend& backend, double alpha, Span<const double> p,
                              Span<const double> q, Span<const double> inverse_diagonal,
                              Span<double> x, Span<double> r) {
  const auto dots = ordered_sum<2>(backend, ssize(p), [&](size_type i) {
    x[i] += alpha * p[i];
    r[i] -= alpha * q[i];
    const double ri = r[i];
    return std::array<double, 2>{ri * inverse_diagonal[i] * ri, ri * ri};
  });
  return {dots[0], dots[1]};
}

void cg_jacobi_direction(const Backend& backend, double beta, Span<const double> inverse_diagonal,
                         Span<const double> r, Span<double> p) {
  const size_type n = ssize(r);
  if (beta == 0.0) {
    for_each(backend, n, n, [&](size_type i) { p[i] = inverse_diagonal[i] * r[i]; });
  } else {
    for_each(backend, n, n, [&](size_type i) { p[i] = inverse_diagonal[i] * r[i] + beta * p[i]; });
  }
}

index_t invert_diagonal(const Backend& backend, Span<const double> d, Span<double> dinv) {
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
  return first_bad == n ? -1 : static_cast<index_t>(first_bad);
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

}  // namespace kryflow::kernels::blas::cpu
