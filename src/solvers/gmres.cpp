// Restarted GMRES(m) with right preconditioning (Saad, Iterative Methods, 2nd ed., Algorithm 9.5)
// and its flexible variant FGMRES (Algorithm 9.6): modified Gram-Schmidt Arnoldi, Givens
// rotations on the Hessenberg matrix, residual norm read off |g_{j+1}| at no extra cost.
#include <cmath>
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
  const int m = restart_;
  std::vector<Vector> V;  // Arnoldi basis v_0 .. v_m
  std::vector<Vector> Z;  // preconditioned directions z_j = M^-1 v_j (flexible only)
  V.reserve(static_cast<std::size_t>(m) + 1);
  for (int j = 0; j <= m; ++j) V.emplace_back(backend, n);
  if (flexible_) {
    for (int j = 0; j < m; ++j) Z.emplace_back(backend, n);
  }
  Vector w(backend, n);
  Vector z(backend, n);
  // Hessenberg matrix (column-major, (m+1) x m), Givens cosines/sines, right-hand side g.
  std::vector<double> H(static_cast<std::size_t>((m + 1) * m));
  std::vector<double> cs(static_cast<std::size_t>(m));
  std::vector<double> sn(static_cast<std::size_t>(m));
  std::vector<double> g(static_cast<std::size_t>(m) + 1);
  auto h = [&](int i, int j) -> double& { return H[static_cast<std::size_t>(j * (m + 1) + i)]; };
  const double target =
      std::max(criteria().relative_tolerance * report.rhs_norm, criteria().absolute_tolerance);

  A.residual(b, x, V[0]);  // r0 = b - A x0
  double beta = norm2(V[0]);
  if (check(0, beta, report)) return;
  int iteration = 0;

  for (;;) {
    axpby(1.0 / beta, V[0], 0.0, V[0]);  // v_0 = r / beta
    std::fill(g.begin(), g.end(), 0.0);
    g[0] = beta;
    int j = 0;
    bool stop = false;
    for (; j < m; ++j) {
      Vector& zj = flexible_ ? Z[static_cast<std::size_t>(j)] : z;
      M.apply(V[static_cast<std::size_t>(j)], zj);  // z_j = M^-1 v_j
      A.apply(zj, w);                               // w = A z_j
      for (int i = 0; i <= j; ++i) {                // modified Gram-Schmidt
        h(i, j) = dot(w, V[static_cast<std::size_t>(i)]);
        axpby(-h(i, j), V[static_cast<std::size_t>(i)], 1.0, w);
      }
      const double w_norm = norm2(w);
      h(j + 1, j) = w_norm;
      for (int i = 0; i < j; ++i) {  // apply the previous rotations to column j
        const double t = cs[i] * h(i, j) + sn[i] * h(i + 1, j);
        h(i + 1, j) = -sn[i] * h(i, j) + cs[i] * h(i + 1, j);
        h(i, j) = t;
      }
      const double denominator = std::hypot(h(j, j), h(j + 1, j));
      if (denominator == 0.0 || !std::isfinite(denominator)) {
        if (!std::isfinite(denominator)) {
          report.status = SolveStatus::nan_detected;
          report.reason = "the Arnoldi process produced a non-finite value";
        } else {
          breakdown(report, "the Hessenberg column vanished");
        }
        return;
      }
      cs[j] = h(j, j) / denominator;
      sn[j] = h(j + 1, j) / denominator;
      h(j, j) = denominator;
      h(j + 1, j) = 0.0;
      g[j + 1] = -sn[j] * g[j];
      g[j] = cs[j] * g[j];
      ++iteration;
      stop = check(iteration, std::abs(g[j + 1]), report);
      const bool happy_breakdown = w_norm <= 1e-14 * std::abs(h(j, j));
      if (stop || happy_breakdown) {
        ++j;
        break;
      }
      axpby(1.0 / w_norm, w, 0.0, V[static_cast<std::size_t>(j) + 1]);  // v_{j+1} = w / h
    }
    // Solve the triangular system R y = g and update x += Z y (x += M^-1 V y when not flexible).
    std::vector<double> y(static_cast<std::size_t>(j));
    for (int i = j - 1; i >= 0; --i) {
      double sum = g[i];
      for (int k = i + 1; k < j; ++k) sum -= h(i, k) * y[k];
      y[i] = sum / h(i, i);
    }
    if (flexible_) {
      for (int i = 0; i < j; ++i) axpby(y[i], Z[static_cast<std::size_t>(i)], 1.0, x);
    } else {
      fill(w, 0.0);
      for (int i = 0; i < j; ++i) axpby(y[i], V[static_cast<std::size_t>(i)], 1.0, w);
      M.apply(w, z);
      axpby(1.0, z, 1.0, x);
    }
    // Restart from the true residual; a converged estimate must be confirmed by it.
    A.residual(b, x, V[0]);
    beta = norm2(V[0]);
    if (stop && report.status != SolveStatus::converged) return;
    if (stop && beta <= target) return;
    if (!std::isfinite(beta)) {
      report.status = SolveStatus::nan_detected;
      report.reason = "the residual became non-finite";
      return;
    }
    if (beta <= target) {  // happy breakdown reached the solution
      report.status = SolveStatus::converged;
      report.residual_norm = beta;
      report.reason = "the Krylov space contains the solution";
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
