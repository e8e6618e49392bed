// Contract of the fused kernels of pipelined preconditioned conjugate gradients (Ghysels and
// Vanroose, "Hiding global synchronization latency in the preconditioned Conjugate Gradient
// algorithm", Parallel Computing 40, 2014, Algorithm 4 in Saad's notation), src/solvers/pipecg.cpp.
//
// Vectors: x, r (residual), u = M^-1 r, w = A u, m = M^-1 w, n = A m, and the recurrences
// p (direction), s = A p, q = M^-1 s, z = A q. One iteration is n = A m, then update(): one pass
// that computes alpha and beta from device scalars, updates z, q, s, p, x, r, u, w (and m = D^-1 w
// with point Jacobi) and reduces, in the same pass, every inner product the next iteration needs:
// gamma = r·u, delta = w·u and r·r. That single reduction is the only global synchronization of
// the iteration; with a distributed vector it overlaps the next preconditioner and product.
//
// Scalars: beta_i = gamma_i / gamma_{i-1} (beta_0 = 0), alpha_i = gamma_i / (p_i·s_i). The
// denominator p_i·s_i, with p_i = u_i + beta_i p_{i-1} and s_i = w_i + beta_i s_{i-1}, is expanded
// as delta_i + beta_i (u_i·s_{i-1} + p_{i-1}·w_i) + beta_i^2 (p_{i-1}·s_{i-1}), whose inner
// products all come out of the previous update's reduction: still one reduction per iteration,
// but without the recurrence delta_i - beta_i gamma_i / alpha_{i-1} of Ghysels and Vanroose
// (Chronopoulos and Gear), which on ill-conditioned systems (ex10hs, condition 5e11) delayed
// convergence by 75% against CG; with the expansion the iterations stay within 2% of CG's.
// The denominator and gamma must be finite and of the sign of gamma_0 (A and M definite), or the
// kernel sets *stop = 1 and writes nothing, as in kernels/krylov/cg/cg.hpp.
#pragma once

#include "kryflow/core/array.hpp"

namespace kryflow::kernels::krylov::pipecg {

/// Addresses of the pipelined CG scalars on the backend.
struct Scalars {
  double* gamma = nullptr;           ///< r·u of the current residual
  double* gamma_previous = nullptr;  ///< r·u of the residual before
  double* delta = nullptr;           ///< w·u
  double* us = nullptr;              ///< u·s_{i-1} (new u, the previous s)
  double* pw = nullptr;              ///< p_{i-1}·w (the previous p, new w)
  double* ps = nullptr;              ///< p_{i-1}·s_{i-1}
  double* gamma0 = nullptr;          ///< r0·u0: its sign is the sign of the definite A and M
  double* first = nullptr;           ///< 1 until the first update (then beta = 0)
  double* stop = nullptr;            ///< 0; 1 once a kernel found an invalid coefficient
};

/// The vectors of one update, all of one length on the backend.
struct Vectors {
  Span<const double> dinv;  ///< empty: a general preconditioner (m is then set by the caller)
  Span<const double> n;
  Span<double> m, w, u, r, x, z, q, s, p;
};

#define KRYFLOW_PIPECG_DECLARATIONS                                                                \
  /** With dinv: m = dinv w. Then gamma = r·u, delta = w·u, *rr = r·r, us = u·s, pw = p·w,    \
      ps = p·s. `reset` (iteration 0): also gamma0 = gamma_previous = gamma, first = 1,           \
      stop = 0; otherwise (residual replacement) nothing happens when stop is set. */              \
  void start(const Backend& backend, Span<const double> dinv, Span<const double> r,                \
             Span<const double> u, Span<const double> w, Span<const double> sv,                    \
             Span<const double> p, Span<double> m, const Scalars& s, double* rr, bool reset);      \
  /** One fused update (file comment); *denominator_out = the denominator of alpha,                \
   *gamma_out = r·u and *rr_out = r·r of the new residual. */                                    \
  void update(const Backend& backend, const Vectors& v, const Scalars& s, double* denominator_out, \
              double* rr_out, double* gamma_out);

KRYFLOW_PIPECG_DECLARATIONS

namespace reference {
KRYFLOW_PIPECG_DECLARATIONS
}
namespace cpu {
KRYFLOW_PIPECG_DECLARATIONS
}
namespace cuda {
KRYFLOW_PIPECG_DECLARATIONS
}

#undef KRYFLOW_PIPECG_DECLARATIONS

}  // namespace kryflow::kernels::krylov::pipecg
