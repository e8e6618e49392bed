// Base class of the Krylov solvers: stopping rules, monitoring and the final true residual.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "kryflow/linalg/linear_operator.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"
#include "kryflow/solvers/stop_criteria.hpp"

namespace kryflow {

/// Called once per iteration with (iteration, recursive residual norm, ||b||). Solvers never
/// print; the CLI's progress line is a monitor.
using IterationMonitor = std::function<void(int iteration, double residual_norm, double rhs_norm)>;

/// solve(A, M, b, x): improves x in place (x holds the initial guess) and returns a SolveReport.
/// A, M, b and x must share one backend; A square with b and x of its size (DimensionMismatch
/// otherwise). M must be set up for A. Numerical outcomes (breakdown, divergence, stagnation,
/// NaN, iteration limit) are reported in the status, never thrown.
class KrylovSolver {
 public:
  explicit KrylovSolver(StopCriteria criteria) : criteria_(criteria) { criteria_.validate(); }
  virtual ~KrylovSolver() = default;

  SolveReport solve(const LinearOperator& A, const Preconditioner& M, const Vector& b,
                    Vector& x) const;
  virtual std::string name() const = 0;

  void set_monitor(IterationMonitor monitor) { monitor_ = std::move(monitor); }
  const StopCriteria& criteria() const noexcept { return criteria_; }

 protected:
  /// The method itself: fills status, reason, iterations, residual_norm and residual_history.
  virtual void iterate(const LinearOperator& A, const Preconditioner& M, const Vector& b, Vector& x,
                       SolveReport& report) const = 0;

  /// Records ||r_k|| for iteration k, calls the monitor and decides whether to stop.
  /// Returns true (and sets report.status / reason) when the iteration must end.
  bool check(int iteration, double residual_norm, SolveReport& report) const;
  /// Marks a breakdown (a zero denominator) with its reason.
  static void breakdown(SolveReport& report, const std::string& reason);

 private:
  StopCriteria criteria_;
  IterationMonitor monitor_;
};

/// Preconditioned conjugate gradients for SPD A and M (Saad, Iterative Methods, 2nd ed.,
/// Algorithm 9.1). With point Jacobi the preconditioner is fused into the vector updates.
/// A and M must be both positive definite or both negative definite (the sign is taken from
/// the first r·z). Reports breakdown when p·Ap or r·z has the wrong sign or vanishes.
class Cg final : public KrylovSolver {
 public:
  using KrylovSolver::KrylovSolver;
  std::string name() const override { return "pcg"; }

 protected:
  void iterate(const LinearOperator& A, const Preconditioner& M, const Vector& b, Vector& x,
               SolveReport& report) const override;
};

/// Right-preconditioned BiCGStab (van der Vorst 1992; Saad, Algorithm 7.7 with right
/// preconditioning). Reports breakdown when rho or r0·v vanish, or omega = 0.
class Bicgstab final : public KrylovSolver {
 public:
  using KrylovSolver::KrylovSolver;
  std::string name() const override { return "bicgstab"; }

 protected:
  void iterate(const LinearOperator& A, const Preconditioner& M, const Vector& b, Vector& x,
               SolveReport& report) const override;
};

/// Restarted GMRES(m) with right preconditioning, modified Gram-Schmidt and Givens rotations
/// (Saad, Algorithm 6.9 / 9.5); `flexible` stores the preconditioned vectors (FGMRES, Saad,
/// Algorithm 9.6) so M may change from one iteration to the next.
class Gmres final : public KrylovSolver {
 public:
  Gmres(StopCriteria criteria, int restart, bool flexible);
  std::string name() const override { return flexible_ ? "fgmres" : "gmres"; }
  int restart() const noexcept { return restart_; }

 protected:
  void iterate(const LinearOperator& A, const Preconditioner& M, const Vector& b, Vector& x,
               SolveReport& report) const override;

 private:
  int restart_;
  bool flexible_;
};

}  // namespace kryflow
