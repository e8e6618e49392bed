// OpenMP PCG kernels: element-wise loops, sums in the order of the cuda kernels.
#include <array>
#include <cstdint>

#include "kernels/backend/ordered_sum.hpp"
#include "kernels/backend/parallel.hpp"
#include "kernels/backend/reduction_emulation.hpp"
#include "kernels/krylov/cg/cg.hpp"

namespace kryflow::kernels::krylov::cg::cpu {
namespace {

using kernels::cpu::ordered_sum;
using size_type = std::int64_t;

size_type ssize(Span<const double> x) {
  return static_cast<size_type>(x.size());
}

}  // namespace

void start(const Backend& backend, Span<const double> dinv, Span<const double> r,
           Span<const double> z, Span<double> p, const Scalars& s, double* rr) {
  const bool jacobi = !dinv.empty();
  const auto sums = ordered_sum<2>(backend, ssize(r), [&](size_type i) {
    p[i] = jacobi ? dinv[i] * r[i] : z.empty() ? 0.0 : z[i];
    return std::array<double, 2>{r[i] * p[i], r[i] * r[i]};
  });
  *s.rz = sums[0];
  *s.rz0 = sums[0];
  *s.rz_previous = sums[0];
  *s.stop = 0.0;
  *s.beta = 0.0;
  *rr = sums[1];
}

void update(const Backend& backend, Span<double> p, Span<const double> q, Span<const double> dinv,
            Span<const double> z, Span<double> x, Span<double> r, const Scalars& s,
            const DeviceSum& pq, double* pq_out, double* rr_out, double* rz_out,
            bool with_direction) {
  const double denominator =
      pq.count == 0 ? *pq.values : kernels::emulation::ordered_sum(pq.values, pq.count);
  *pq_out = denominator;
  if (*s.stop != 0.0) return;
  if (!definite(denominator, *s.rz0)) {
    *s.stop = 1.0;
    return;
  }
  const double alpha = *s.rz / denominator;
  const double beta = *s.beta;
  if (!dinv.empty()) {
    const auto sums = ordered_sum<2>(backend, ssize(r), [&](size_type i) {
      if (with_direction) p[i] = dinv[i] * r[i] + beta * p[i];
      if (!x.empty()) x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      const double ri = r[i];
      return std::array<double, 2>{ri * dinv[i] * ri, ri * ri};
    });
    new_residual_dot(s, sums[0]);
    *rz_out = sums[0];
    *rr_out = sums[1];
  } else {
    const auto sums = ordered_sum<1>(backend, ssize(r), [&](size_type i) {
      if (with_direction) p[i] = z[i] + beta * p[i];
      if (!x.empty()) x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      return std::array<double, 1>{r[i] * r[i]};
    });
    *rr_out = sums[0];
  }
}

void residual_dot(const Backend& backend, Span<const double> r, Span<const double> z,
                  Span<const double> q, const double* pq, const Scalars& s, double* rz_out) {
  if (*s.stop != 0.0) return;
  if (!q.empty()) {
    const auto sums = ordered_sum<2>(backend, ssize(r), [&](size_type i) {
      return std::array<double, 2>{r[i] * z[i], z[i] * q[i]};
    });
    *rz_out = new_flexible_residual_dot(s, sums[0], sums[1], *pq);
    return;
  }
  const auto sums = ordered_sum<1>(backend, ssize(r),
                                   [&](size_type i) { return std::array<double, 1>{r[i] * z[i]}; });
  new_residual_dot(s, sums[0]);
  *rz_out = sums[0];
}

void direction(const Backend& backend, Span<const double> dinv, Span<const double> r,
               Span<const double> z, Span<double> p, const Scalars& s) {
  if (*s.stop != 0.0) return;
  const double beta = *s.beta;
  const size_type n = ssize(p);
  if (!dinv.empty()) {
    parallel::for_each(backend, n, n, [&](size_type i) { p[i] = dinv[i] * r[i] + beta * p[i]; });
  } else {
    parallel::for_each(backend, n, n, [&](size_type i) { p[i] = z[i] + beta * p[i]; });
  }
}

}  // namespace kryflow::kernels::krylov::cg::cpu
