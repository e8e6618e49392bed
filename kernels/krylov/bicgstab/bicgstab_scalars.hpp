// The scalar logic of the fused BiCGStab kernels, shared by every backend (host and device).
#pragma once

#include <cmath>

#include "kernels/krylov/bicgstab/bicgstab.hpp"

#ifdef __CUDACC__
#define KRYFLOW_BICGSTAB_HD __host__ __device__
#else
#define KRYFLOW_BICGSTAB_HD
#endif

namespace kryflow::kernels::krylov::bicgstab {

KRYFLOW_BICGSTAB_HD inline bool usable(double denominator) {
  return denominator - denominator == 0.0 && denominator != 0.0;
}

/// direction(): whether to run, and beta (first: p = r).
struct DirectionCoefficients {
  bool run = false;
  bool first = false;
  double beta = 0.0;
  double beta_omega = 0.0;  ///< -beta omega, the coefficient of v
};
KRYFLOW_BICGSTAB_HD inline DirectionCoefficients direction_coefficients(const Scalars& s,
                                                                        bool writer) {
  DirectionCoefficients c;
  if (*s.stop != 0.0) return c;
  const double rho = *s.rho;
  if (!usable(rho)) {
    if (writer) *s.stop = 1.0;
    return c;
  }
  c.run = true;
  c.first = *s.first != 0.0;
  if (!c.first) {
    c.beta = (rho / *s.rho_previous) * (*s.alpha / *s.omega);
    c.beta_omega = -c.beta * *s.omega;
  }
  return c;
}

/// half_step(): alpha = rho / r^·v, recorded by the writer.
KRYFLOW_BICGSTAB_HD inline bool half_step_alpha(const Scalars& s, const double* shadow_v,
                                                bool writer, double& alpha) {
  if (*s.stop != 0.0) return false;
  const double denominator = *shadow_v;
  if (!usable(denominator)) {
    if (writer) *s.stop = 1.0;
    return false;
  }
  alpha = *s.rho / denominator;
  if (writer) *s.alpha = alpha;
  return true;
}

/// finish_step(): the half-step end, or omega = t·s / t·t.
struct FinishCoefficients {
  bool run = false;
  bool half = false;  ///< ||s|| <= target: x = alpha p^ + x only
  double alpha = 0.0;
  double omega = 0.0;
};
KRYFLOW_BICGSTAB_HD inline FinishCoefficients finish_coefficients(
    const Scalars& s, const double* ss, const double* tt, const IterationSlots& out, bool writer) {
  FinishCoefficients c;
  if (*s.stop != 0.0) return c;
  c.alpha = *s.alpha;
  using std::sqrt;
  const double s_norm = sqrt(*ss);
  if (s_norm - s_norm != 0.0) {  // not finite: the host reports it
    if (writer) *s.stop = 1.0;
    return c;
  }
  if (s_norm <= *s.target) {
    c.run = true;
    c.half = true;  // the kernel sets stop = 2 once every block has read stop
    return c;
  }
  if (!usable(tt[0])) {
    if (writer) *s.stop = 1.0;
    return c;
  }
  c.omega = tt[1] / tt[0];
  if (writer) {
    *out.omega = c.omega;
    *s.omega = c.omega;
  }
  if (c.omega - c.omega != 0.0) {
    if (writer) *s.stop = 1.0;
    return c;
  }
  c.run = true;
  return c;
}

}  // namespace kryflow::kernels::krylov::bicgstab
