// Contract of the fused kernels of preconditioned conjugate gradients with device-resident
// scalars (src/solvers/cg.cpp; Saad, Iterative Methods, 2nd ed., Algorithm 9.1).
//
// One iteration is [for a general preconditioner: z = M^-1 r and residual_dot()], then, when
// the operator fuses the direction into its product (LinearOperator::fuses_combination): q = A v
// with v = dinv r + beta p (or z + beta p) never stored, and v·q into a scalar; update() with the
// direction, which stores p = v. Otherwise: direction(), q = A p with p·q
// (LinearOperator::apply_dot), update() without the direction. The kernel that computes the new
// r·z (update with Jacobi, residual_dot otherwise) also computes beta = rz / rz_previous for the
// next direction, so every coefficient is computed on the device from scalars in the backend's
// memory: the host never sees alpha or beta and the launches of an iteration can be recorded
// once and replayed. At start beta = 0, so iteration 0's direction is dinv r (or z). With a
// general preconditioner z comes first so that an iteration ends with the residual the host
// tests: M is applied once per iteration and not after the converged one (besides the window
// queued ahead of the host's last check, if any: src/solvers/window_loop.hpp).
//
// Validity and the stop flag: a kernel that finds a coefficient invalid (p·Ap or r·z not
// finite, or not of the sign of r0·z0, i.e. A or M not definite) sets *stop = 1 and writes
// nothing more; update, residual_dot and direction return at once while *stop != 0. So x is never
// updated with an invalid coefficient, and the host, which applies the same tests to the
// recorded scalars in order, reports the first failure at the iteration where it happened.
//
// Arithmetic and order are those of the unfused PCG this replaces: alpha = rz / pq,
// p_i = dinv_i r_i + beta p_i (or z_i + beta p_i), x_i += alpha p_i, r_i -= alpha q_i,
// rz = sum (r_i dinv_i) r_i, rr = sum r_i r_i, beta = rz / rz_previous; sums in the fixed order
// of kernels/backend/reduction_order.hpp, so cpu and cuda give identical bits and the reference
// sums sequentially. Same layout as kernels/blas: namespaces reference, cpu, cuda and a
// dispatching unqualified function per operation.
#pragma once

#include "kryflow/core/array.hpp"
#include "kryflow/linalg/scalars.hpp"

namespace kryflow::kernels::krylov::cg {

/// Addresses of PCG's scalars on the backend.
struct Scalars {
  double* rz = nullptr;           ///< r·z of the current residual
  double* rz_previous = nullptr;  ///< r·z of the residual before
  double* rz0 = nullptr;          ///< r0·z0: its sign is the sign of the definite A and M
  double* stop = nullptr;         ///< 0; 1 once a kernel found an invalid coefficient
  double* beta = nullptr;         ///< rz / rz_previous for the next direction (0 at start)
};

#define KRYFLOW_CG_DECLARATIONS                                                                    \
  /** Iteration 0. With dinv (non-empty): p = dinv r; otherwise p = z. Then rz = rz0 = r·p        \
      (= r·z), *rr = r·r, stop = 0, beta = 0. With dinv and z both empty (z not yet computed:    \
      the first residual_dot will compute r0·z0): p = 0, rz = rz0 = 0, *rr = r·r, stop = 0,      \
      beta = 0. */                                                                                 \
  void start(const Backend& backend, Span<const double> dinv, Span<const double> r,                \
             Span<const double> z, Span<double> p, const Scalars& s, double* rr);                  \
  /** p·q from pq (complete, or partials added in the fixed order), recorded in *pq_out;          \
      alpha = rz / p·q; with_direction: p = dinv r + beta p (or z + beta p, z the M^-1 r of       \
      the r before this update); x += alpha p; r -= alpha q. With dinv: rz_previous = rz,          \
      rz = *rz_out = r·(dinv r) of the new r, then beta = rz / rz_previous or stop when rz is     \
      invalid. Always *rr_out = r·r of the new r. Does nothing when stop is set; sets stop (and   \
      writes nothing) when *pq is invalid. z may be empty unless with_direction and no dinv; x     \
      may be empty (not updated: an eigenvalue estimate needs only the coefficients). */           \
  void update(const Backend& backend, Span<double> p, Span<const double> q,                        \
              Span<const double> dinv, Span<const double> z, Span<double> x, Span<double> r,       \
              const Scalars& s, const DeviceSum& pq, double* pq_out, double* rr_out,               \
              double* rz_out, bool with_direction);                                                \
  /** General preconditioner, z = M^-1 r given: rz_previous = rz, rz = *rz_out = r·z, then        \
      beta = rz / rz_previous or stop when rz is invalid. Flexible (q non-empty, q = A p of the    \
      update just made, pq its p·q): also z·q in the same pass, and beta = -(z·q) / pq. After a \
      start without z (rz0 = 0): the first r·z is r0·z0, so rz0 = rz_previous = rz = r·z, beta  \
      = 0 (q and pq not used), or stop when it is invalid. Does nothing when stop is set. */       \
  void residual_dot(const Backend& backend, Span<const double> r, Span<const double> z,            \
                    Span<const double> q, const double* pq, const Scalars& s, double* rz_out);     \
  /** p = dinv r + beta p (dinv non-empty) or p = z + beta p, beta from the scalars. Does          \
      nothing when stop is set. */                                                                 \
  void direction(const Backend& backend, Span<const double> dinv, Span<const double> r,            \
                 Span<const double> z, Span<double> p, const Scalars& s);

KRYFLOW_CG_DECLARATIONS

namespace reference {
KRYFLOW_CG_DECLARATIONS
}
namespace cpu {
KRYFLOW_CG_DECLARATIONS
}
namespace cuda {
KRYFLOW_CG_DECLARATIONS
}

#undef KRYFLOW_CG_DECLARATIONS

#ifdef __CUDACC__
#define KRYFLOW_CG_HD __host__ __device__
#else
#define KRYFLOW_CG_HD
#endif

/// The validity test of a coefficient's denominator (shared by every backend): finite and of
/// the sign of r0·z0.
KRYFLOW_CG_HD inline bool definite(double value, double rz0) {
  const double sign = rz0 < 0.0 ? -1.0 : 1.0;
  return value - value == 0.0 && sign * value > 0.0;
}

/// The end of the kernel that computes the new r·z, on every backend (one thread): rz_previous
/// = rz, rz = value, then beta = rz / rz_previous, or stop when rz is invalid (file comment).
/// After a start without z (rz0 = 0, a value no definite A and M give): r0·z0, the first r·z,
/// becomes rz0 (its sign that of A and M), beta = 0; or stop when it is zero or not finite.
/// Returns true when it did.
KRYFLOW_CG_HD inline bool first_residual_dot(const Scalars& s, double value) {
  if (*s.rz0 != 0.0) return false;
  *s.rz0 = value;
  *s.rz_previous = value;
  *s.rz = value;
  *s.beta = 0.0;
  if (!definite(value, value)) *s.stop = 1.0;
  return true;
}

KRYFLOW_CG_HD inline void new_residual_dot(const Scalars& s, double value) {
  if (first_residual_dot(s, value)) return;
  const double previous = *s.rz;
  *s.rz_previous = previous;
  *s.rz = value;
  if (definite(value, *s.rz0)) {
    *s.beta = value / previous;
  } else {
    *s.stop = 1.0;
  }
}

/// The same for flexible CG: beta = -(z·q) / (p·q), the Polak-Ribiere form
/// z_{k+1}·(r_{k+1} - r_k) / (r_k·z_k) with r_{k+1} - r_k = -alpha_k q_k (Notay, "Flexible
/// conjugate gradients", SIAM J. Sci. Comput. 22, 2000, FCG with one stored direction; Golub
/// and Ye, SIAM J. Sci. Comput. 21, 1999). It keeps the new direction A-orthogonal to the last
/// one when the preconditioner changes between iterations or is not symmetric.
/// Returns the r·z to record for the host: rz, or NaN when z·q or beta is not finite, so that
/// the host's test of the recorded r·z reports the iteration where the device stopped.
KRYFLOW_CG_HD inline double new_flexible_residual_dot(const Scalars& s, double rz, double zq,
                                                      double pq) {
  if (first_residual_dot(s, rz)) return rz;
  const double previous = *s.rz;
  *s.rz_previous = previous;
  const double beta = -zq / pq;
  const double recorded = beta - beta == 0.0 ? rz : beta - beta;  // NaN when not finite
  *s.rz = recorded;
  if (definite(recorded, *s.rz0)) {
    *s.beta = beta;
  } else {
    *s.stop = 1.0;
  }
  return recorded;
}

}  // namespace kryflow::kernels::krylov::cg
