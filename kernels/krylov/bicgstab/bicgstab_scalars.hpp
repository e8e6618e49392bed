// The scalar logic of the fused BiCGStab kernels, shared by every backend (host and device).
// Each function reads every scalar it may need before it tests any: on a GPU the reads then
// travel together (one memory round trip at the start of a kernel instead of two or three,
// which is what a small system's iteration time is made of).
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
  const double stop = *s.stop;
  const double rho = *s.rho;
  const double first = *s.first;
  const double rho_previous = *s.rho_previous;
  const double alpha = *s.alpha;
  const double omega = *s.omega;
  const double rr_before = s.rr_before != nullptr ? *s.rr_before : 0.0;
  const double target = *s.target;
  if (stop != 0.0) return c;
  using std::sqrt;
  if (s.rr_before != nullptr && sqrt(rr_before) <= target) {
    if (writer) *s.stop = 3.0;
    return c;
  }
  if (!usable(rho)) {
    if (writer) *s.stop = 1.0;
    return c;
  }
  c.run = true;
  c.first = first != 0.0;
  if (!c.first) {
    c.beta = (rho / rho_previous) * (alpha / omega);
    c.beta_omega = -c.beta * omega;
  }
  return c;
}

/// half_step(): alpha = rho / r^·v, recorded by the writer.
KRYFLOW_BICGSTAB_HD inline bool half_step_alpha(const Scalars& s, const double* shadow_v,
                                                bool writer, double& alpha) {
  const double stop = *s.stop;
  const double denominator = *shadow_v;
  const double rho = *s.rho;
  if (stop != 0.0) return false;
  if (!usable(denominator)) {
    if (writer) *s.stop = 1.0;
    return false;
  }
  alpha = rho / denominator;
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
/// The scalars finish_step reads before its sums (one memory round trip on a GPU).
struct FinishInputs {
  double stop = 0.0;
  double rho = 0.0;
  double denominator = 0.0;  ///< r^·v
  double target = 0.0;
};
KRYFLOW_BICGSTAB_HD inline FinishInputs finish_inputs(const Scalars& s, const IterationSlots& out) {
  return {*s.stop, *s.rho, *out.shadow_v, *s.target};
}
/// s_squared = s·s, t_t = t·t, t_s = t·s.
KRYFLOW_BICGSTAB_HD inline FinishCoefficients finish_coefficients(const FinishInputs& in,
                                                                  double s_squared, double t_t,
                                                                  double t_s, const Scalars& s,
                                                                  const IterationSlots& out,
                                                                  bool writer) {
  FinishCoefficients c;
  const double stop = in.stop;
  const double rho = in.rho;
  const double denominator = in.denominator;
  const double target = in.target;
  if (stop != 0.0) return c;
  // alpha again (half_step_alpha's value): the half step may have run inside the product
  // (LinearOperator::apply_shifted_dots), which records no alpha.
  if (!usable(denominator)) {
    if (writer) *s.stop = 1.0;
    return c;
  }
  c.alpha = rho / denominator;
  if (writer) *s.alpha = c.alpha;
  using std::sqrt;
  const double s_norm = sqrt(s_squared);
  if (s_norm - s_norm != 0.0) {  // not finite: the host reports it
    if (writer) *s.stop = 1.0;
    return c;
  }
  if (s_norm <= target) {
    c.run = true;
    c.half = true;  // the kernel sets stop = 2 once every block has read stop
    return c;
  }
  if (!usable(t_t)) {
    if (writer) *s.stop = 1.0;
    return c;
  }
  c.omega = t_s / t_t;
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
