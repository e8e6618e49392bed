// Contract of the fused kernels of preconditioned conjugate gradients with device-resident
// scalars (src/solvers/cg.cpp; Saad, Iterative Methods, 2nd ed., Algorithm 9.1).
//
// One iteration is: q = A p with p·q into a scalar (LinearOperator::apply_dot), update(),
// [z = M^-1 r and residual_dot() for a general preconditioner], direction(). Every coefficient is
// computed by the kernel that needs it from scalars in the backend's memory, so the host never
// sees alpha or beta and the launches of an iteration can be recorded once and replayed.
//
// Validity and the stop flag: a kernel that finds its coefficient invalid (p·Ap or r·z not
// finite, or not of the sign of r0·z0, i.e. A or M not definite) sets *stop = 1 and writes
// nothing; every kernel returns at once while *stop != 0. So x is never updated with an invalid
// coefficient, and the host, which applies the same tests to the recorded scalars in order,
// reports the first failure at the iteration where it happened.
//
// Arithmetic and order are those of the unfused PCG this replaces: alpha = rz / pq,
// x_i += alpha p_i, r_i -= alpha q_i, rz = sum (r_i dinv_i) r_i, rr = sum r_i r_i,
// beta = rz / rz_previous, p_i = dinv_i r_i + beta p_i (or z_i + beta p_i); sums in the fixed
// order of kernels/backend/reduction_order.hpp, so cpu and cuda give identical bits and the
// reference sums sequentially. Same layout as kernels/blas: namespaces reference, cpu, cuda and
// a dispatching unqualified function per operation.
#pragma once

#include "kryflow/core/array.hpp"

namespace kryflow::kernels::krylov::cg {

/// Addresses of PCG's scalars on the backend.
struct Scalars {
  double* rz = nullptr;           ///< r·z of the current residual
  double* rz_previous = nullptr;  ///< r·z of the residual before
  double* rz0 = nullptr;          ///< r0·z0: its sign is the sign of the definite A and M
  double* stop = nullptr;         ///< 0; 1 once a kernel found an invalid coefficient
};

#define KRYFLOW_CG_DECLARATIONS                                                                 \
  /** Iteration 0. With dinv (non-empty): p = dinv r; otherwise p = z. Then rz = rz0 = r·p     \
      (= r·z), *rr = r·r, stop = 0. */                                                        \
  void start(const Backend& backend, Span<const double> dinv, Span<const double> r,             \
             Span<const double> z, Span<double> p, const Scalars& s, double* rr);               \
  /** alpha = rz / *pq; x += alpha p; r -= alpha q. With dinv: rz_previous = rz,                \
      rz = *rz_out = r·(dinv r) of the new r. Always *rr_out = r·r of the new r. Does nothing \
      when stop is set; sets stop (and writes nothing) when *pq is invalid. */                  \
  void update(const Backend& backend, Span<const double> p, Span<const double> q,               \
              Span<const double> dinv, Span<double> x, Span<double> r, const Scalars& s,        \
              const double* pq, double* rr_out, double* rz_out);                                \
  /** General preconditioner, z = M^-1 r given: rz_previous = rz, rz = *rz_out = r·z. Does     \
      nothing when stop is set. */                                                              \
  void residual_dot(const Backend& backend, Span<const double> r, Span<const double> z,         \
                    const Scalars& s, double* rz_out);                                          \
  /** beta = rz / rz_previous; p = dinv r + beta p (dinv non-empty) or p = z + beta p. Does     \
      nothing when stop is set; sets stop (and writes nothing) when rz is invalid. */           \
  void direction(const Backend& backend, Span<const double> dinv, Span<const double> r,         \
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

/// The validity test of a coefficient's denominator (shared by every backend): finite and of
/// the sign of r0·z0.
inline bool definite(double value, double rz0) {
  const double sign = rz0 < 0.0 ? -1.0 : 1.0;
  return value - value == 0.0 && sign * value > 0.0;
}

}  // namespace kryflow::kernels::krylov::cg
