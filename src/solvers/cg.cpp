// Preconditioned conjugate gradients (Saad, Iterative Methods for Sparse Linear Systems, 2nd ed.,
// Algorithm 9.1) with device-resident scalars: alpha and beta never reach the host.
//
// One iteration (kernels/krylov/cg/cg.hpp), for an operator that fuses the direction into its
// product (a CsrMatrix small enough for its product to be bound by latency): q = A (D^-1 r + beta
// p) with p·q into a device scalar, the direction never stored by the product; p = D^-1 r + beta p,
// x += alpha p, r -= alpha q with r·z and r·r (point Jacobi fused: z = D^-1 r is never stored).
// Another preconditioner opens the iteration with z = M^-1 r and r·z (r0·z0 in the first one), so
// that the window ends on the residual the host tests and no M^-1 r follows the converged
// iteration (a multigrid cycle saved per solve). Other operators get the direction p = z + beta p
// as a pass of its own before q = A p. The host reads the scalars of a window of check_every
// iterations at once (the only wait for the device), tests them in order and stops at the first
// iteration that converged or failed; on cuda the window's launches are recorded once as a CUDA
// graph and replayed (use_graphs). Flexible CG (fcg) differs only in beta, computed with r·z in one
// pass: beta = -(z·q) / (p·q) (the class comment).
//
// Memory traffic per iteration with Jacobi (n rows), fused: the product (matrix; d, r and p
// gathered, q written), the update (reads p q d x r, writes p x r): 12 vector sweeps besides
// the matrix, in two launches. Unfused (bandwidth-bound sizes, where three gathers per stored
// entry cost more than the pass they save): the direction (reads d r p, writes p), the product (p
// gathered, q written), the update (reads p q d x r, writes x r): 13.
//
// Iteration numbers: report.iterations counts completed iterations; a failure detected while
// computing iteration k + 1 is reported "at iteration k" (the breakdown and nan_detected helpers
// quote report.iterations).
#include <cmath>
#include <string>
#include <vector>

#include "kernels/krylov/cg/cg.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "window_loop.hpp"
#include "workspace.hpp"

namespace kryflow {
namespace {

/// Scalar slots: the five of kernels::krylov::cg::Scalars, then per iteration j of a window
/// p·Ap, r·r and r·z.
struct CgSlots {
  std::size_t window;
  static constexpr std::size_t kFixed = 5;
  std::size_t pq(std::size_t j) const { return kFixed + j; }
  std::size_t rr(std::size_t j) const { return kFixed + window + j; }
  std::size_t rz(std::size_t j) const { return kFixed + 2 * window + j; }
  std::size_t count() const { return kFixed + 3 * window; }
};

}  // namespace

void Cg::iterate(const LinearOperator& A, const Preconditioner& M, const Vector& b, Vector& x,
                 SolveReport& report) const {
  const Backend& backend = A.backend();
  const std::size_t n = b.size();
  const Vector* d = M.inverse_diagonal();
  const CgSlots slots{static_cast<std::size_t>(options().check_every)};
  Workspace& ws = workspace(backend, n, d != nullptr ? 3 : 4, slots.count());
  Vector& r = ws.vector(0);
  Vector& p = ws.vector(1);
  Vector& q = ws.vector(2);
  Vector* z = d != nullptr ? nullptr : &ws.vector(3);
  DeviceScalars& s = ws.scalars();
  const kernels::krylov::cg::Scalars scalars{s.slot(0).address, s.slot(1).address,
                                             s.slot(2).address, s.slot(3).address,
                                             s.slot(4).address};
  const Span<const double> dinv = d != nullptr ? d->span() : Span<const double>();
  const Span<const double> z_span = z != nullptr ? Span<const double>(z->span()) : dinv.first(0);
  auto at = [&](std::size_t i) { return s.slot(i).address; };

  A.residual(b, x, r);  // r0 = b - A x0
  // With a general preconditioner, z = M^-1 r is the first step of an iteration (below), so a
  // solve that converges at iteration k applies M k times, not k + 1: start leaves p = 0 and
  // r0·z0 to the first window (rz0 = 0 until then).
  kernels::krylov::cg::start(backend, dinv, r.span(), dinv.first(0), p.span(), scalars,
                             at(slots.rr(0)));
  std::vector<double> host(slots.count());
  s.read(0, host);
  if (check(0, std::sqrt(host[slots.rr(0)]), report)) return;
  // A and M may both be negative definite (e.g. a finite-volume Laplacian as assembled): CG
  // then runs on -A, -M unchanged. `sign` is fixed by r0·z0 (with z: in the first window).
  double sign = host[0] < 0.0 ? -1.0 : 1.0;
  auto rz_fails = [&](double rz) {
    return definite_fails(rz, sign, "r·z", kPreconditionerNotDefinite, report);
  };
  if (z == nullptr && rz_fails(host[0])) return;

  const bool fused = A.fuses_combination();
  auto enqueue = [&](std::size_t j) {
    if (z != nullptr) {
      M.apply(r, *z);  // z = M^-1 r
      // r·z, and beta for the direction below: flexible, beta = -(z·q) / (p·q) with the q and
      // p·q of the update before (the previous window's last one for j = 0: every window but
      // the last has check_every iterations); 0 in the first iteration.
      const std::size_t before = j == 0 ? slots.window - 1 : j - 1;
      kernels::krylov::cg::residual_dot(
          backend, r.span(), z->span(),
          flexible_ ? Span<const double>(q.span()) : Span<const double>(), at(slots.pq(before)),
          scalars, at(slots.rz(j)));
    }
    DeviceSum pq{at(slots.pq(j)), 0};
    if (fused) {  // q = A v, v = D^-1 r + beta p (or z + beta p), v·q; p = v in the update
      pq = A.apply_combination_dot(d, z != nullptr ? *z : r, s.slot(4), p, q, s.slot(slots.pq(j)),
                                   true);  // v·q may stay as partials for the update to add
    } else {
      kernels::krylov::cg::direction(backend, dinv, r.span(), z_span, p.span(), scalars);
      A.apply_dot(p, q, s.slot(slots.pq(j)));  // q = A p, p·q
    }
    kernels::krylov::cg::update(backend, p.span(), q.span(), dinv, z_span, x.span(), r.span(),
                                scalars, pq, at(slots.pq(j)), at(slots.rr(j)), at(slots.rz(j)),
                                fused);
  };
  WindowLoop loop(backend, ws, options(), criteria().max_iterations, use_graphs(A, M), enqueue);
  loop.likely_done = [&](int queued) { return likely_converged_by(queued, report); };
  loop.inspect = [&](int done, std::size_t window, const double* values) {
    for (std::size_t j = 0; j < window; ++j) {
      if (z != nullptr) {  // r·z opens the iteration
        if (done == 0 && j == 0) sign = values[slots.rz(0)] < 0.0 ? -1.0 : 1.0;
        if (rz_fails(values[slots.rz(j)])) return true;
      }
      if (definite_fails(values[slots.pq(j)], sign, "p·Ap", kOperatorNotDefinite, report))
        return true;
      if (check(done + static_cast<int>(j) + 1, std::sqrt(values[slots.rr(j)]), report)) {
        return true;
      }
      if (z == nullptr && rz_fails(values[slots.rz(j)])) return true;
    }
    return false;
  };
  run_windows(loop);
}

}  // namespace kryflow
