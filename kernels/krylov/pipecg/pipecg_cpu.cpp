// OpenMP pipelined CG kernels: one element-wise pass, sums in the order of the cuda kernels.
#include <array>
#include <cstdint>

#include "kernels/backend/ordered_sum.hpp"
#include "kernels/krylov/pipecg/pipecg.hpp"
#include "kernels/krylov/pipecg/pipecg_scalars.hpp"

namespace kryflow::kernels::krylov::pipecg::cpu {

using kernels::cpu::ordered_sum;
using size_type = std::int64_t;

void start(const Backend& backend, Span<const double> dinv, Span<const double> r,
           Span<const double> u, Span<const double> w, Span<const double> sv, Span<const double> p,
           Span<double> m, const Scalars& s, double* rr, bool reset) {
  if (!reset && *s.stop != 0.0) return;
  const bool jacobi = !dinv.empty();
  const auto sums = ordered_sum<6>(backend, static_cast<size_type>(r.size()), [&](size_type i) {
    if (jacobi) m[i] = dinv[i] * w[i];
    return std::array<double, 6>{r[i] * u[i],  w[i] * u[i], r[i] * r[i],
                                 u[i] * sv[i], p[i] * w[i], p[i] * sv[i]};
  });
  if (reset) {
    *s.gamma0 = sums[0];
    *s.gamma_previous = sums[0];
    *s.first = 1.0;
    *s.stop = 0.0;
  }
  *s.gamma = sums[0];
  *s.delta = sums[1];
  *rr = sums[2];
  *s.us = sums[3];
  *s.pw = sums[4];
  *s.ps = sums[5];
}

void update(const Backend& backend, const Vectors& v, const Scalars& s, double* denominator_out,
            double* rr_out, double* gamma_out) {
  if (*s.stop != 0.0) return;
  const Coefficients c = coefficients(s);
  *denominator_out = c.denominator;
  if (!c.valid) {
    *s.stop = 1.0;
    return;
  }
  const bool jacobi = !v.dinv.empty();
  const auto sums = ordered_sum<6>(backend, static_cast<size_type>(v.r.size()), [&](size_type i) {
    const double zi = v.n[i] + c.beta * v.z[i];
    const double qi = v.m[i] + c.beta * v.q[i];
    const double si = v.w[i] + c.beta * v.s[i];
    const double pi = v.u[i] + c.beta * v.p[i];
    v.z[i] = zi;
    v.q[i] = qi;
    v.s[i] = si;
    v.p[i] = pi;
    v.x[i] += c.alpha * pi;
    const double ri = v.r[i] - c.alpha * si;
    const double ui = v.u[i] - c.alpha * qi;
    const double wi = v.w[i] - c.alpha * zi;
    v.r[i] = ri;
    v.u[i] = ui;
    v.w[i] = wi;
    if (jacobi) v.m[i] = v.dinv[i] * wi;
    return std::array<double, 6>{ri * ui, wi * ui, ri * ri, ui * si, pi * wi, pi * si};
  });
  *s.gamma_previous = *s.gamma;
  *s.gamma = sums[0];
  *s.delta = sums[1];
  *s.us = sums[3];
  *s.pw = sums[4];
  *s.ps = sums[5];
  *s.first = 0.0;
  *gamma_out = sums[0];
  *rr_out = sums[2];
}

}  // namespace kryflow::kernels::krylov::pipecg::cpu
