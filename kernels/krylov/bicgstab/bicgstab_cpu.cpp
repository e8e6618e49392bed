// OpenMP BiCGStab kernels: element-wise loops, sums in the order of the cuda kernels.
#include <array>
#include <cstdint>

#include "kernels/backend/ordered_sum.hpp"
#include "kernels/backend/parallel.hpp"
#include "kernels/krylov/bicgstab/bicgstab.hpp"
#include "kernels/krylov/bicgstab/bicgstab_scalars.hpp"

namespace kryflow::kernels::krylov::bicgstab::cpu {
namespace {

using kernels::cpu::ordered_sum;
using size_type = std::int64_t;

size_type ssize(Span<const double> x) {
  return static_cast<size_type>(x.size());
}

}  // namespace

void start(const Backend& backend, Span<const double> r, Span<double> r_hat, const Scalars& s,
           double* rr) {
  const auto sums = ordered_sum<1>(backend, ssize(r), [&](size_type i) {
    r_hat[i] = r[i];
    return std::array<double, 1>{r[i] * r[i]};
  });
  *s.rho = sums[0];
  *s.rho_previous = sums[0];
  *s.alpha = 1.0;
  *s.omega = 1.0;
  *s.first = 1.0;
  *s.stop = 0.0;
  *rr = sums[0];
}

void direction(const Backend& backend, Span<const double> dinv, Span<const double> r,
               Span<const double> v, Span<double> p, Span<double> p_hat, const Scalars& s) {
  const DirectionCoefficients c = direction_coefficients(s, true);
  if (!c.run) return;
  const size_type n = ssize(r);
  const bool jacobi = !dinv.empty();
  parallel::for_each(backend, n, n, [&](size_type i) {
    p[i] = c.first ? r[i] : (r[i] + c.beta_omega * v[i]) + c.beta * p[i];
    if (jacobi) p_hat[i] = dinv[i] * p[i];
  });
}

void half_step(const Backend& backend, Span<const double> dinv, Span<const double> r,
               Span<const double> v, Span<double> sv, Span<double> s_hat, const Scalars& s,
               const double* shadow_v, double* ss) {
  double alpha = 0.0;
  if (!half_step_alpha(s, shadow_v, true, alpha)) return;
  const bool jacobi = !dinv.empty();
  *ss = ordered_sum<1>(backend, ssize(r), [&](size_type i) {
    const double si = r[i] + -alpha * v[i];
    sv[i] = si;
    if (jacobi) s_hat[i] = dinv[i] * si;
    return std::array<double, 1>{si * si};
  })[0];
}

void finish_step(const Backend& backend, Span<const double> p_hat, Span<const double> s_hat,
                 Span<const double> sv, Span<const double> t, Span<const double> r_hat,
                 Span<double> x, Span<double> r, const Scalars& s, double* ss, double* tt,
                 const DeviceSum& /*sums: complete on the host*/, const IterationSlots& out) {
  const FinishCoefficients c =
      finish_coefficients(finish_inputs(s, out), *ss, tt[0], tt[1], s, out, true);
  if (!c.run) return;
  const size_type n = ssize(x);
  if (c.half) {
    parallel::for_each(backend, n, n, [&](size_type i) { x[i] = c.alpha * p_hat[i] + x[i]; });
    *s.stop = 2.0;
    return;
  }
  const auto sums = ordered_sum<2>(backend, n, [&](size_type i) {
    x[i] = (c.alpha * p_hat[i] + c.omega * s_hat[i]) + x[i];
    const double ri = sv[i] + -c.omega * t[i];
    r[i] = ri;
    return std::array<double, 2>{ri * ri, r_hat[i] * ri};
  });
  *s.rho_previous = *s.rho;
  *s.rho = sums[1];
  *s.first = 0.0;
  *out.rr = sums[0];
  *out.rho = sums[1];
}

}  // namespace kryflow::kernels::krylov::bicgstab::cpu
