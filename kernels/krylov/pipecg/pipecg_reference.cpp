// Reference pipelined CG kernels: sequential loops and sums.
#include "kernels/krylov/pipecg/pipecg.hpp"
#include "kernels/krylov/pipecg/pipecg_scalars.hpp"

namespace kryflow::kernels::krylov::pipecg::reference {

void start(const Backend&, Span<const double> dinv, Span<const double> r, Span<const double> u,
           Span<const double> w, Span<double> m, const Scalars& s, double* rr, bool reset) {
  if (!reset && *s.stop != 0.0) return;
  double gamma = 0.0;
  double delta = 0.0;
  double rr_sum = 0.0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (!dinv.empty()) m[i] = dinv[i] * w[i];
    gamma += r[i] * u[i];
    delta += w[i] * u[i];
    rr_sum += r[i] * r[i];
  }
  if (reset) {
    *s.gamma0 = gamma;
    *s.gamma_previous = gamma;
    *s.alpha_previous = 1.0;
    *s.first = 1.0;
    *s.stop = 0.0;
  }
  *s.gamma = gamma;
  *s.delta = delta;
  *rr = rr_sum;
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
  double gamma = 0.0;
  double delta = 0.0;
  double rr = 0.0;
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
    gamma += v.r[i] * v.u[i];
    delta += v.w[i] * v.u[i];
    rr += v.r[i] * v.r[i];
  }
  *s.gamma_previous = *s.gamma;
  *s.alpha_previous = c.alpha;
  *s.gamma = gamma;
  *s.delta = delta;
  *s.first = 0.0;
  *gamma_out = gamma;
  *rr_out = rr;
}

}  // namespace kryflow::kernels::krylov::pipecg::reference
