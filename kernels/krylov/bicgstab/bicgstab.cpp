// Dispatch of the fused BiCGStab kernels to the backend that owns the data.
#include "kernels/krylov/bicgstab/bicgstab.hpp"

#include "kernels/krylov/dispatch.hpp"

namespace kryflow::kernels::krylov::bicgstab {

void start(const Backend& backend, Span<const double> r, Span<double> r_hat, const Scalars& s,
           double* rr) {
  KRYFLOW_KRYLOV_DISPATCH(start, backend, r, r_hat, s, rr);
}

void direction(const Backend& backend, Span<const double> dinv, Span<const double> r,
               Span<const double> v, Span<double> p, Span<double> p_hat, const Scalars& s) {
  KRYFLOW_KRYLOV_DISPATCH(direction, backend, dinv, r, v, p, p_hat, s);
}

void half_step(const Backend& backend, Span<const double> dinv, Span<const double> r,
               Span<const double> v, Span<double> sv, Span<double> s_hat, const Scalars& s,
               const double* shadow_v, double* ss) {
  KRYFLOW_KRYLOV_DISPATCH(half_step, backend, dinv, r, v, sv, s_hat, s, shadow_v, ss);
}

void finish_step(const Backend& backend, Span<const double> p_hat, Span<const double> s_hat,
                 Span<const double> sv, Span<const double> t, Span<const double> r_hat,
                 Span<double> x, Span<double> r, const Scalars& s, double* ss, double* tt,
                 const DeviceSum& sums, const IterationSlots& out) {
  KRYFLOW_KRYLOV_DISPATCH(finish_step, backend, p_hat, s_hat, sv, t, r_hat, x, r, s, ss, tt, sums,
                          out);
}

}  // namespace kryflow::kernels::krylov::bicgstab
