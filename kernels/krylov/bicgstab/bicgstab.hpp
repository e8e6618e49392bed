// Contract of the fused kernels of right-preconditioned BiCGStab with device-resident scalars
// (src/solvers/bicgstab.cpp; van der Vorst 1992; Saad, Iterative Methods, 2nd ed., Algorithm
// 7.7 applied to A M^-1 u = b, x = M^-1 u).
//
// One iteration: direction() (p, and p^ = D^-1 p with point Jacobi), [p^ = M^-1 p], v = A p^
// with r^·v (LinearOperator::apply_dots), half_step() (s, and s^ = D^-1 s, with s·s),
// [s^ = M^-1 s], t = A s^ with t·t and t·s (apply_dots), finish_step() (x, r, r·r and the next
// rho = r^·r). Every
// coefficient is computed from device scalars by the kernel that uses it:
//   beta = (rho / rho_previous) (alpha / omega), p = (r - beta omega v) + beta p (p = r first),
//   alpha = rho / r^·v, s = r - alpha v, omega = t·s / t·t,
//   x = (alpha p^ + omega s^) + x, r = s - omega t;
// when ||s|| <= target (the scalar `target`), finish_step ends at the half step: x = alpha p^ + x,
// and sets stop = 2; the direction after a full step whose ||r|| <= target sets stop = 3
// (Scalars::rr_before), so that the iterations queued ahead of the host's test leave x as the
// converged iterate. A vanishing or non-finite denominator sets stop = 1 and the kernel writes
// nothing; every kernel does nothing while stop != 0 (see kernels/krylov/cg/cg.hpp).
#pragma once

#include "kryflow/core/array.hpp"
#include "kryflow/linalg/scalars.hpp"

namespace kryflow::kernels::krylov::bicgstab {

struct Scalars {
  double* rho = nullptr;           ///< r^·r of the current residual
  double* rho_previous = nullptr;  ///< r^·r of the residual before
  double* alpha = nullptr;
  double* omega = nullptr;
  double* stop = nullptr;    ///< 0; 1 after an invalid coefficient; 2 after a half-step end;
                             ///< 3 after a full step that met the target (rr_before)
  double* first = nullptr;   ///< 1 until the first finish_step (then p = r)
  double* target = nullptr;  ///< the convergence target on ||r|| (set by the caller)
  /// r·r of the residual direction() starts from (the last finish_step's, or start's), or
  /// null: direction() then sets stop = 3 and does nothing when sqrt(r·r) <= target, the host's
  /// convergence test, so that iterations queued ahead of that test leave x at the converged
  /// iterate whatever check_every (the residual-gap restart starts from it).
  const double* rr_before = nullptr;
};

/// Slots of one iteration's values for the host's tests.
struct IterationSlots {
  double* shadow_v = nullptr;  ///< r^·v
  double* ss = nullptr;        ///< s·s
  double* tt = nullptr;        ///< t·t
  double* omega = nullptr;     ///< omega
  double* rr = nullptr;        ///< r·r after the step
  double* rho = nullptr;       ///< r^·r after the step
};

#define KRYFLOW_BICGSTAB_DECLARATIONS                                                            \
  /** r^ = r; rho = rho_previous = *rr = r·r; alpha = omega = 1; first = 1; stop = 0. */        \
  void start(const Backend& backend, Span<const double> r, Span<double> r_hat, const Scalars& s, \
             double* rr);                                                                        \
  /** p = r (first) or (r - beta omega v) + beta p; with dinv also p_hat = dinv p. Sets stop     \
      when rho is not finite or 0. */                                                            \
  void direction(const Backend& backend, Span<const double> dinv, Span<const double> r,          \
                 Span<const double> v, Span<double> p, Span<double> p_hat, const Scalars& s);    \
  /** alpha = rho / *shadow_v (stop when not finite or 0); s = r - alpha v; with dinv also       \
      s_hat = dinv s; *ss = s·s. */                                                             \
  void half_step(const Backend& backend, Span<const double> dinv, Span<const double> r,          \
                 Span<const double> v, Span<double> sv, Span<double> s_hat, const Scalars& s,    \
                 const double* shadow_v, double* ss);                                            \
  /** The end of the step (file comment): reads *ss, tt[0..1] (s·s, t·t, t·s), or, when       \
      sums.count > 0, adds them from sums (three runs of sums.count partial sums, s·s first) in \
      the fixed order and writes them there; writes the IterationSlots' omega, rr and rho;       \
      rho_previous = rho, rho = r^·r. */                                                        \
  void finish_step(const Backend& backend, Span<const double> p_hat, Span<const double> s_hat,   \
                   Span<const double> sv, Span<const double> t, Span<const double> r_hat,        \
                   Span<double> x, Span<double> r, const Scalars& s, double* ss, double* tt,     \
                   const DeviceSum& sums, const IterationSlots& out);

KRYFLOW_BICGSTAB_DECLARATIONS

namespace reference {
KRYFLOW_BICGSTAB_DECLARATIONS
}
namespace cpu {
KRYFLOW_BICGSTAB_DECLARATIONS
}
namespace cuda {
KRYFLOW_BICGSTAB_DECLARATIONS
}

#undef KRYFLOW_BICGSTAB_DECLARATIONS

}  // namespace kryflow::kernels::krylov::bicgstab
