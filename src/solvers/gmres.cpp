// Restarted GMRES(m) with right preconditioning (Saad, Iterative Methods, 2nd ed., Algorithm 9.5)
// and its flexible variant FGMRES (Algorithm 9.6): modified Gram-Schmidt Arnoldi, Givens
// rotations on the Hessenberg matrix, residual norm read off |g_{j+1}| at no extra cost.
//
// Per Arnoldi step j: one application of M and of A, j + 2 dot products (||A z_j|| for the
// happy-breakdown test, then j + 1 in modified Gram-Schmidt), one norm, j + 2 axpys. Whatever
// ends a cycle (convergence, the iteration limit, breakdown, NaN), x is first updated with the
// least-squares solution over the columns built so far.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "kryflow/core/error.hpp"
#include "kryflow/solvers/krylov_solver.hpp"

namespace kryflow {

Gmres::Gmres(StopCriteria criteria, int restart, bool flexible)
    : KrylovSolver(criteria), restart_(restart), flexible_(flexible) {
  if (restart_ < 1) throw ConfigError("restart", "must be >= 1");
}

void Gmres::iterate(const LinearOperator& A, const Preconditioner& M, const Vector& b, Vector& x,
                    SolveReport& report) const {
  const Backend& backend = A.backend();
  const std::size_t n = b.size();
  // The Krylov space of an n x n operator is invariant after at most n steps: a larger basis is
  // never used, and restart may be anything up to INT_MAX.
  const std::size_t m = std::max<std::size_t>(1, std::min(static_cast<std::size_t>(restart_), n));
  std::vector<Vector> V;  // Arnoldi basis v_0 .. v_m
  std::vector<Vector> Z;  // preconditioned directions z_j = M^-1 v_j (flexible only)
  V.reserve(m + 1);
  for (std::size_t j = 0; j <= m; ++j) V.emplace_back(backend, n);
  if (flexible_) {
    Z.reserve(m);
    for (std::size_t j = 0; j < m; ++j) Z.emplace_back(backend, n);
  }
  Vector w(backend, n);
  Vector z(backend, n);
  // Hessenberg matrix (column-major, (m+1) x m), Givens cosines/sines, right-hand side g, and
  // the least-squares solution y.
  std::vector<double> H((m + 1) * m);
  std::vector<double> cs(m);
  std::vector<double> sn(m);
  std::vector<double> g(m + 1);
  std::vector<double> y(m);
  auto h = [&](std::size_t i, std::size_t j) -> double& { return H[j * (m + 1) + i]; };
  const double goal = target(report);
  const double eps = std::numeric_limits<double>::epsilon();
  constexpr double happy_breakdown_factor = 10.0;

  A.residual(b, x, V[0]);  // r0 = b - A x0
  double beta = norm2(V[0]);
  if (check(0, beta, report)) return;
  int iteration = 0;

  for (;;) {
    axpby(1.0 / beta, V[0], 0.0, V[0]);  // v_0 = r / beta
    std::fill(g.begin(), g.end(), 0.0);
    g[0] = beta;
    double h_norm = 0.0;      // ||H||_F of the columns built (rotations preserve it)
    std::size_t columns = 0;  // columns of the least-squares problem solved below
    bool stop = false;
    for (std::size_t j = 0; j < m; ++j) {
      Vector& zj = flexible_ ? Z[j] : z;
      M.apply(V[j], zj);                // z_j = M^-1 v_j
      A.apply(zj, w);                   // w = A z_j
      const double az_norm = norm2(w);  // ||A z_j||, the scale of the happy-breakdown test
      if (!std::isfinite(az_norm)) {
        nan_detected(report, "||A M^-1 v_j|| = " + number(az_norm));
        stop = true;
        break;
      }
      for (std::size_t i = 0; i <= j; ++i) {  // modified Gram-Schmidt
        h(i, j) = dot(w, V[i]);
        axpby(-h(i, j), V[i], 1.0, w);
      }
      const double w_norm = norm2(w);
      h(j + 1, j) = w_norm;
      for (std::size_t i = 0; i <= j + 1; ++i) h_norm = std::hypot(h_norm, h(i, j));
      for (std::size_t i = 0; i < j; ++i) {  // apply the previous rotations to column j
        const double t = cs[i] * h(i, j) + sn[i] * h(i + 1, j);
        h(i + 1, j) = -sn[i] * h(i, j) + cs[i] * h(i + 1, j);
        h(i, j) = t;
      }
      const double r_jj = std::hypot(h(j, j), h(j + 1, j));  // R(j,j) after this rotation
      if (!std::isfinite(r_jj) || !std::isfinite(h_norm)) {
        nan_detected(report, "the Hessenberg column " + std::to_string(j) + " is not finite");
        stop = true;
        break;
      }
      if (r_jj <= eps * h_norm) {
        // R is numerically rank deficient: A M^-1 is singular on the Krylov space, and column j
        // cannot lower the residual. Keep the least-squares solution over columns 0 .. j-1.
        breakdown(report, "the Hessenberg matrix is singular (|R(j,j)| = " + number(r_jj) +
                              " <= eps ||H||_F with ||H||_F = " + number(h_norm) +
                              ", j = " + std::to_string(j) +
                              "): A M^-1 is singular on the Krylov space; x holds the "
                              "least-squares solution over the columns before it");
        stop = true;
        break;
      }
      cs[j] = h(j, j) / r_jj;
      sn[j] = h(j + 1, j) / r_jj;
      h(j, j) = r_jj;
      h(j + 1, j) = 0.0;
      g[j + 1] = -sn[j] * g[j];
      g[j] = cs[j] * g[j];
      columns = j + 1;
      ++iteration;
      stop = check(iteration, std::abs(g[j + 1]), report);
      // Happy breakdown: w vanished relative to A z_j (up to the rounding of j + 1 Gram-Schmidt
      // steps), so the Krylov space is invariant and the least-squares solution below is exact
      // (R is nonsingular, tested above).
      const bool happy_breakdown =
          w_norm <= happy_breakdown_factor * static_cast<double>(j + 1) * eps * az_norm;
      if (stop || happy_breakdown) break;
      axpby(1.0 / w_norm, w, 0.0, V[j + 1]);  // v_{j+1} = w / h_{j+1,j}
    }
    // Solve the triangular system R y = g and update x += Z y (x += M^-1 V y when not flexible).
    if (columns > 0) {
      for (std::size_t i = columns; i-- > 0;) {
        double sum = g[i];
        for (std::size_t k = i + 1; k < columns; ++k) sum -= h(i, k) * y[k];
        y[i] = sum / h(i, i);
      }
      if (flexible_) {
        for (std::size_t i = 0; i < columns; ++i) axpby(y[i], Z[i], 1.0, x);
      } else {
        fill(w, 0.0);
        for (std::size_t i = 0; i < columns; ++i) axpby(y[i], V[i], 1.0, w);
        M.apply(w, z);
        axpby(1.0, z, 1.0, x);
      }
    }
    if (stop && report.status != SolveStatus::converged) return;
    // Restart from the true residual; a converged estimate must be confirmed by it.
    A.residual(b, x, V[0]);
    beta = norm2(V[0]);
    if (stop && beta <= goal) return;
    if (!std::isfinite(beta)) {
      nan_detected(report, "the true residual at the restart is " + number(beta));
      return;
    }
    if (beta <= goal) {  // happy breakdown reached the solution
      report.status = SolveStatus::converged;
      report.residual_norm = beta;
      report.reason = "the Krylov space contains the solution: true residual " + number(beta) +
                      " <= target " + number(goal);
      return;
    }
    if (iteration >= criteria().max_iterations) {
      report.status = SolveStatus::max_iterations;
      report.reason = "reached max_iterations = " + std::to_string(criteria().max_iterations);
      return;
    }
    report.residual_norm = beta;  // estimate replaced by the true residual at restart
    report.status = SolveStatus::max_iterations;
  }
}

}  // namespace kryflow
