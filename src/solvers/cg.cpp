// Preconditioned conjugate gradients (Saad, Iterative Methods for Sparse Linear Systems, 2nd ed.,
// Algorithm 9.1), with the point-Jacobi preconditioner fused into the vector updates.
//
// Memory traffic per iteration with Jacobi (n rows): SpMV fused with p·q (matrix + p + q),
// one pass updating x and r and reducing r·z and r·r (reads x p r q d, writes x r), one pass
// p = D^-1 r + beta p (reads d r p, writes p): 13 vector sweeps besides the matrix.
//
// Iteration numbers: report.iterations counts completed iterations; a failure detected while
// computing iteration k + 1 is reported "at iteration k" (the breakdown and nan_detected helpers
// quote report.iterations).
#include <cmath>
#include <string>

#include "kernels/blas/blas.hpp"
#include "kryflow/solvers/krylov_solver.hpp"

namespace kryflow {

void Cg::iterate(const LinearOperator& A, const Preconditioner& M, const Vector& b, Vector& x,
                 SolveReport& report) const {
  const Backend& backend = A.backend();
  const std::size_t n = b.size();
  Vector r(backend, n);
  Vector p(backend, n);
  Vector q(backend, n);

  A.residual(b, x, r);  // r0 = b - A x0
  double rr = dot(r, r);
  if (check(0, std::sqrt(rr), report)) return;

  const Vector* d = M.inverse_diagonal();
  Vector z;
  double rz = 0.0;
  if (d != nullptr) {
    kernels::blas::cg_jacobi_direction(backend, 0.0, d->span(), r.span(), p.span());  // p = D^-1 r
    rz = dot(r, p);
  } else {
    z = Vector(backend, n);
    M.apply(r, z);  // z0 = M^-1 r0
    rz = dot(r, z);
    copy(z, p);  // p0 = z0
  }

  // A and M may both be negative definite (e.g. a finite-volume Laplacian as assembled):
  // CG then runs on -A, -M unchanged. `sign` is fixed by the first r·z.
  const double sign = rz < 0.0 ? -1.0 : 1.0;
  for (int k = 1;; ++k) {
    if (!std::isfinite(rz)) {
      nan_detected(report, "r·z = " + number(rz));
      return;
    }
    if (!(sign * rz > 0.0)) {
      breakdown(report, "r·z = " + number(rz) +
                            " changed sign or vanished: the preconditioner is not definite");
      return;
    }
    const double pq = A.apply_dot(p, q);  // q = A p, pq = p·A p
    if (!std::isfinite(pq)) {
      nan_detected(report, "p·Ap = " + number(pq));
      return;
    }
    if (!(sign * pq > 0.0)) {
      breakdown(report, "p·Ap = " + number(pq) +
                            " has the wrong sign: A is not positive (or negative) definite");
      return;
    }
    const double alpha = rz / pq;
    double rz_next = 0.0;
    if (d != nullptr) {
      // x += alpha p; r -= alpha q; rz = r·D^-1 r; rr = r·r (one pass)
      const auto dots = kernels::blas::cg_jacobi_update(backend, alpha, p.span(), q.span(),
                                                        d->span(), x.span(), r.span());
      rz_next = dots.rz;
      rr = dots.rr;
    } else {
      axpby(alpha, p, 1.0, x);   // x += alpha p
      axpby(-alpha, q, 1.0, r);  // r -= alpha q
      rr = dot(r, r);
    }
    if (check(k, std::sqrt(rr), report)) return;
    if (d != nullptr) {
      const double beta = rz_next / rz;
      kernels::blas::cg_jacobi_direction(backend, beta, d->span(), r.span(), p.span());
    } else {
      M.apply(r, z);  // z = M^-1 r
      rz_next = dot(r, z);
      const double beta = rz_next / rz;
      axpby(1.0, z, beta, p);  // p = z + beta p
    }
    rz = rz_next;
  }
}

}  // namespace kryflow
