// Reference BiCGStab kernels: sequential loops and sums.
#include "kernels/krylov/bicgstab/bicgstab.hpp"
#include "kernels/krylov/bicgstab/bicgstab_scalars.hpp"

namespace kryflow::kernels::krylov::bicgstab::reference {

void start(const Backend&, Span<const double> r, Span<double> r_hat, const Scalars& s, double* rr) {
  double sum = 0.0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    r_hat[i] = r[i];
    sum += r[i] * r[i];
  }
  *s.rho = sum;
  *s.rho_previous = sum;
  *s.alpha = 1.0;
  *s.omega = 1.0;
  *s.first = 1.0;
  *s.stop = 0.0;
  *rr = sum;
}

void direction(const Backend&, Span<const double> dinv, Span<const double> r, Span<const double> v,
               Span<double> p, Span<double> p_hat, const Scalars& s) {
  const DirectionCoefficients c = direction_coefficients(s, true);
  if (!c.run) return;
  for (std::size_t i = 0; i < r.size(); ++i) {
    p[i] = c.first ? r[i] : (r[i] + c.beta_omega * v[i]) + c.beta * p[i];
    if (!dinv.empty()) p_hat[i] = dinv[i] * p[i];
  }
}

void half_step(const Backend&, Span<const double> dinv, Span<const double> r, Span<const double> v,
               Span<double> sv, Span<double> s_hat, const Scalars& s, const double* shadow_v,
               double* ss) {
  double alpha = 0.0;
  if (!half_step_alpha(s, shadow_v, true, alpha)) return;
  double sum = 0.0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    sv[i] = r[i] + -alpha * v[i];
    if (!dinv.empty()) s_hat[i] = dinv[i] * sv[i];
    sum += sv[i] * sv[i];
  }
  *ss = sum;
}

void finish_step(const Backend&, Span<const double> p_hat, Span<const double> s_hat,
                 Span<const double> sv, Span<const double> t, Span<const double> r_hat,
                 Span<double> x, Span<double> r, const Scalars& s, double* ss, double* tt,
                 const DeviceSum& /*sums: complete on the host*/, const IterationSlots& out) {
  const FinishCoefficients c =
      finish_coefficients(finish_inputs(s, out), *ss, tt[0], tt[1], s, out, true);
  if (!c.run) return;
  if (c.half) {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = c.alpha * p_hat[i] + x[i];
    *s.stop = 2.0;
    return;
  }
  double rr = 0.0;
  double rho = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = (c.alpha * p_hat[i] + c.omega * s_hat[i]) + x[i];
    r[i] = sv[i] + -c.omega * t[i];
    rr += r[i] * r[i];
    rho += r_hat[i] * r[i];
  }
  *s.rho_previous = *s.rho;
  *s.rho = rho;
  *s.first = 0.0;
  *out.rr = rr;
  *out.rho = rho;
}

}  // namespace kryflow::kernels::krylov::bicgstab::reference
