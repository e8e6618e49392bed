// Contract of the fused kernels of restarted GMRES with device-resident scalars
// (src/solvers/gmres.cpp; Saad, Iterative Methods, 2nd ed., Algorithms 6.9, 9.4, 9.5 and 9.6).
//
// The Arnoldi basis v_0 .. v_m is a list of n-vectors on the backend, passed as a host array of
// their device addresses (Basis). The Hessenberg matrix, its Givens rotations, the rotated
// right-hand side g and the least-squares solution y live in device scalars (Scalars), so one
// Arnoldi step is a fixed sequence of launches that never waits for the host:
//
//   w = A M^-1 v_j (right) or M^-1 A v_j (left), by the operators;
//   classical Gram-Schmidt with one reorthogonalization (cgs2):
//     project(V, w -> column j, ||w||^2 -> az), subtract(V, column j, w),
//     project(V, w -> correction), subtract(V, correction, w, ||w||^2 -> wn);
//   or modified Gram-Schmidt (mgs): mgs_step for i = 0 .. j + 1, each one pass that removes the
//     component along v_{i-1} and takes the dot with v_i (the last one the norm of w);
//   givens(j): the column's rotations and the residual estimate |g_{j+1}|;
//   normalize: v_{j+1} = w / h_{j+1,j}.
//
// At the end of a cycle, solve_least_squares() solves R y = g on the device and
// add_combination() adds V y (or Z y) to its output, reading y and the number of columns from
// device memory.
//
// The stop flag: givens() sets *stop to a StopCode when column j cannot be used (a non-finite
// value, a singular R) or ends the cycle (happy breakdown); every Arnoldi kernel then does
// nothing until start_cycle() clears it, so the launches of a window of iterations may all be
// queued before the host reads what happened. solve_least_squares() and add_combination() run
// whatever the flag says, on the columns accepted so far.
//
// Order of operations, shared by every backend: element-wise updates take the terms in basis
// order (w_i = w_i - h_0 v_0,i - h_1 v_1,i - ...); sums follow the fixed order of
// kernels/backend/reduction_order.hpp on cpu and cuda (identical bits, fused multiply-add off on
// both sides) and are sequential on the reference backend; the scalar steps (givens,
// start_cycle, solve_least_squares) are one host-and-device function (gmres_scalars.hpp) run by
// one thread, so cpu and cuda agree bit for bit on every value. Sums are computed kGroup per
// launch (one pass over w per group of basis vectors); the grouping changes no bits.
//
// Same layout as kernels/blas: namespaces reference, cpu, cuda and a dispatching unqualified
// function per operation.
#pragma once

#include <cstddef>
#include <span>

#include "kryflow/core/array.hpp"

namespace kryflow::kernels::krylov::gmres {

/// Sums (inner products and norms) one launch computes, and basis vectors one update pass
/// reads: the limit of the deterministic reduction buffers (kernels/backend/reduction_order.hpp).
inline constexpr std::size_t kGroup = 8;

/// Device addresses of basis vectors, in basis order (the array itself is on the host).
using Basis = std::span<const double* const>;

/// Why the Arnoldi steps of a cycle stopped (the value of *Scalars::stop).
enum StopCode : int {
  kRunning = 0,
  kNonFiniteProduct = 1,  ///< ||w|| before orthogonalization is not finite
  kNonFiniteColumn = 2,   ///< the Hessenberg column (or ||H||_F) is not finite
  kSingular = 3,          ///< |R(j,j)| <= eps ||H||_F: column j is not accepted
  kHappyBreakdown = 4,    ///< h_{j+1,j} <= 10 (j + 1) eps ||w||: column j accepted, cycle ends
};

/// Addresses of the GMRES scalars on the backend; m is the basis size of a cycle.
struct Scalars {
  double* stop = nullptr;         ///< a StopCode
  double* stop_column = nullptr;  ///< the column j whose givens() set stop
  double* columns = nullptr;      ///< columns of the least-squares problem accepted so far
  double* h_norm = nullptr;       ///< ||H||_F of the columns built (rotations preserve it)
  double* az = nullptr;           ///< ||w||^2 before orthogonalization (w = A M^-1 v_j)
  double* wn = nullptr;           ///< ||w||^2 after orthogonalization: h_{j+1,j}^2
  double* r_jj = nullptr;         ///< |R(j,j)| of the column that stopped the cycle
  double* beta = nullptr;         ///< ||r||^2 of the residual the cycle starts from
  double* hessenberg = nullptr;   ///< (m + 1) x m, column-major; R after the rotations
  double* correction = nullptr;   ///< m + 1: the reorthogonalization coefficients of a column
  double* cs = nullptr;           ///< m Givens cosines
  double* sn = nullptr;           ///< m Givens sines
  double* g = nullptr;            ///< m + 1: the rotated right-hand side ||r|| e_1
  double* y = nullptr;            ///< m: the least-squares solution
  int m = 0;
};

#define KRYFLOW_GMRES_DECLARATIONS                                                                 \
  /** Unless stop is set: h[i] = v_i·w for i < basis.size(), and *norm = w·w when norm is not    \
      null. */                                                                                     \
  void project(const Backend& backend, Basis basis, Span<const double> w, double* h, double* norm, \
               const Scalars& s);                                                                  \
  /** Unless stop is set: w = w - sum_i h[i] v_i (terms in basis order), then *norm = w·w of the  \
      new w when norm is not null. */                                                              \
  void subtract(const Backend& backend, Basis basis, const double* h, Span<double> w,              \
                double* norm, const Scalars& s);                                                   \
  /** One pass of modified Gram-Schmidt, unless stop is set: w = w - *h_previous previous (when    \
      previous is not empty), then *h_next = next·w (when next is not empty) and *norm = w·w     \
      (when norm is not null), both of the new w. */                                               \
  void mgs_step(const Backend& backend, Span<const double> previous, const double* h_previous,     \
                Span<double> w, Span<const double> next, double* h_next, double* norm,             \
                const Scalars& s);                                                                 \
  /** Unless stop is set: v = (1 / sqrt(*norm)) w; v may be w. */                                  \
  void normalize(const Backend& backend, Span<const double> w, const double* norm, Span<double> v, \
                 const Scalars& s);                                                                \
  /** Column j of the Hessenberg matrix from the orthogonalization (with the correction added      \
      when `corrected`, and h_{j+1,j} = sqrt(*wn)): rotations, stop tests and g; writes            \
      |g_{j+1}| to *residual when the column is accepted (gmres_scalars.hpp, givens_step). One     \
      thread; does nothing when stop is set. */                                                    \
  void givens(const Backend& backend, const Scalars& s, int j, bool corrected, double* residual);  \
  /** A new cycle from the residual of squared norm *beta: g = sqrt(*beta) e_1, no columns,        \
      ||H|| = 0, stop cleared. One thread. */                                                      \
  void start_cycle(const Backend& backend, const Scalars& s);                                      \
  /** y = R^-1 g over the accepted columns (back substitution). One thread. */                     \
  void solve_least_squares(const Backend& backend, const Scalars& s);                              \
  /** out = out + sum_i y[i] v_i (out = sum_i y[i] v_i when !accumulate) over the first            \
      min(basis.size(), *columns) vectors, terms in basis order; whatever stop says. */            \
  void add_combination(const Backend& backend, Basis basis, const Scalars& s, Span<double> out,    \
                       bool accumulate);

KRYFLOW_GMRES_DECLARATIONS

namespace reference {
KRYFLOW_GMRES_DECLARATIONS
}
namespace cpu {
KRYFLOW_GMRES_DECLARATIONS
}
namespace cuda {
KRYFLOW_GMRES_DECLARATIONS
}

#undef KRYFLOW_GMRES_DECLARATIONS

/// The sums of one projection launch: sum k is x[k]·w, written to *out[k].
struct SumGroup {
  int count = 0;
  const double* x[kGroup] = {};
  double* out[kGroup] = {};
};

/// Calls f(SumGroup) for the sums of project(): w·w first (when norm is not null), then v_i·w,
/// kGroup per group. The grouping is shared by the cpu and cuda backends.
template <class F>
void for_each_projection_group(Basis basis, const double* w, double* h, double* norm, F f) {
  SumGroup group;
  auto add = [&](const double* x, double* out) {
    group.x[group.count] = x;
    group.out[group.count] = out;
    if (++group.count == static_cast<int>(kGroup)) {
      f(group);
      group = SumGroup{};
    }
  };
  if (norm != nullptr) add(w, norm);
  for (std::size_t i = 0; i < basis.size(); ++i) add(basis[i], h + i);
  if (group.count > 0) f(group);
}

}  // namespace kryflow::kernels::krylov::gmres
