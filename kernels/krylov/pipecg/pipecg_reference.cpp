// Reference pipelined CG kernels: sequential loops and sums.
#include "kernels/krylov/pipecg/pipecg.hpp"
#include "kernels/krylov/pipecg/pipecg_scalars.hpp"

namespace kryflow::kernels::krylov::pipecg::reference {

void start(const Backend&, Span<const double> dinv, Span<const double> r, Span<const double> u,
           Span<const double> w, Span<const double> sv, Span<const double> p, Span<double> m,
           const Scalars& s, double* rr, bool reset) {
  if (!reset && *s.stop != 0.0) return;
  double sums[6] = {};
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (!dinv.empty()) m[i] = dinv[i] * w[i];
    sums[0] += r[i] * u[i];
    sums[1] += w[i] * u[i];
    sums[2] += r[i] * r[i];
    sums[3] += u[i] * sv[i];
    sums[4] += p[i] * w[i];
    sums[5] += p[i] * sv[i];
  }
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

void update(const Backend&, const Vectors& v, const Scalars& s, double* denominator_out,
            double* rr_out, double* gamma_out) {
  if (*s.stop != 0.0) return;
  const Coefficients c = coefficients(s);
  *denominator_out = c.denominator;
  if (!c.valid) {
    *s.stop = 1.0;
    return;
  }
  double sums[6] = {};
  for (std::size_t i = 0; i < v.r.size(); ++i) {
    v.z[i] = v.n[i] + c.beta * v.z[i];
    v.q[i] = v.m[i] + c.beta * v.q[i];
    v.s[i] = v.w[i] + c.beta * v.s[i];
    v.p[i] = v.u[i] + c.beta * v.p[i];
    v.x[i] += c.alpha * v.p[i];
    v.r[i] -= c.alpha * v.s[i];
    v.u[i] -= c.alpha * v.q[i];
    v.w[i] -= c.alpha * v.z[i];
    if (!v.dinv.empty()) v.m[i] = v.dinv[i] * v.w[i];
    sums[0] += v.r[i] * v.u[i];
    sums[1] += v.w[i] * v.u[i];
    sums[2] += v.r[i] * v.r[i];
    sums[3] += v.u[i] * v.s[i];
    sums[4] += v.p[i] * v.w[i];
    sums[5] += v.p[i] * v.s[i];
  }
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

}  // namespace kryflow::kernels::krylov::pipecg::reference
