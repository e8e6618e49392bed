// Right-preconditioned BiCGStab (van der Vorst, SIAM J. Sci. Stat. Comput. 13, 1992; Saad,
// Iterative Methods, 2nd ed., Algorithm 7.7 applied to A M^-1 u = b, x = M^-1 u).
//
// A vanishing denominator is a breakdown; a non-finite scalar is nan_detected, and x is never
// updated with one. Failures found while computing iteration k + 1 are reported "at iteration
// k", k = report.iterations (the completed iterations).
#include <cmath>
#include <string>

#include "kryflow/solvers/krylov_solver.hpp"

namespace kryflow {

void Bicgstab::iterate(const LinearOperator& A, const Preconditioner& M, const Vector& b, Vector& x,
                       SolveReport& report) const {
  const Backend& backend = A.backend();
  const std::size_t n = b.size();
  Vector r(backend, n);
  Vector r_hat(backend, n);
  Vector p(backend, n);
  Vector v(backend, n);
  Vector p_hat(backend, n);
  Vector s(backend, n);
  Vector s_hat(backend, n);
  Vector t(backend, n);

  A.residual(b, x, r);  // r0 = b - A x0
  if (check(0, norm2(r), report)) return;
  copy(r, r_hat);  // shadow residual r^ = r0
  double rho_previous = 1.0;
  double alpha = 1.0;
  double omega = 1.0;

  for (int k = 1;; ++k) {
    const double rho = dot(r_hat, r);  // rho = r^·r
    if (!std::isfinite(rho)) {
      nan_detected(report, "rho = r^·r = " + number(rho));
      return;
    }
    if (rho == 0.0) {
      breakdown(report, "rho = r^·r vanished");
      return;
    }
    if (k == 1) {
      copy(r, p);  // p = r
    } else {
      const double beta = (rho / rho_previous) * (alpha / omega);
      axpbypcz(1.0, r, -beta * omega, v, beta, p);  // p = r + beta (p - omega v)
    }
    M.apply(p, p_hat);  // p^ = M^-1 p
    A.apply(p_hat, v);  // v = A p^
    const double r_hat_v = dot(r_hat, v);
    if (!std::isfinite(r_hat_v)) {
      nan_detected(report, "r^·v = " + number(r_hat_v));
      return;
    }
    if (r_hat_v == 0.0) {
      breakdown(report, "r^·v vanished");
      return;
    }
    alpha = rho / r_hat_v;
    axpbypcz(1.0, r, -alpha, v, 0.0, s);  // s = r - alpha v
    const double s_norm = norm2(s);
    if (!std::isfinite(s_norm)) {
      nan_detected(report, "||s|| = " + number(s_norm));
      return;
    }
    if (s_norm <= target(report)) {
      axpby(alpha, p_hat, 1.0, x);  // x += alpha p^ (converged at the half step)
      check(k, s_norm, report);
      return;
    }
    M.apply(s, s_hat);  // s^ = M^-1 s
    A.apply(s_hat, t);  // t = A s^
    const double tt = dot(t, t);
    if (!std::isfinite(tt)) {
      nan_detected(report, "t·t = " + number(tt));
      return;
    }
    if (tt == 0.0) {
      breakdown(report, "t·t vanished");
      return;
    }
    omega = dot(t, s) / tt;
    if (!std::isfinite(omega)) {
      nan_detected(report, "omega = t·s / t·t = " + number(omega));
      return;
    }
    axpbypcz(alpha, p_hat, omega, s_hat, 1.0, x);  // x += alpha p^ + omega s^
    axpbypcz(1.0, s, -omega, t, 0.0, r);           // r = s - omega t
    if (check(k, norm2(r), report)) return;
    if (omega == 0.0) {
      breakdown(report, "omega vanished");
      return;
    }
    rho_previous = rho;
  }
}

}  // namespace kryflow
