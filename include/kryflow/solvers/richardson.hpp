// Preconditioned Richardson iteration: a multigrid cycle used as a standalone solver.
#pragma once

#include "kryflow/solvers/krylov_solver.hpp"

namespace kryflow {

/// The stationary iteration x_{k+1} = x_k + M^-1 (b - A x_k) (Saad, Iterative Methods, 2nd ed.,
/// sec. 4.1; Richardson's method preconditioned by M). With a multigrid preconditioner each
/// iteration is one cycle, so this is multigrid as a standalone solver; the residual falls by
/// the cycle's convergence factor per iteration. Any square A and M; it converges when the
/// spectral radius of I - M^-1 A is below 1, and otherwise stops as `diverged` (divergence
/// factor) or at the iteration limit, never hangs. Memory: 2 work vectors. One iteration = one
/// application of M and of A (the residual), and one norm read by the host.
class Richardson final : public KrylovSolver {
 public:
  using KrylovSolver::KrylovSolver;
  std::string name() const override { return "richardson"; }

 protected:
  void iterate(const LinearOperator& A, const Preconditioner& M, const Vector& b, Vector& x,
               SolveReport& report) const override;
};

}  // namespace kryflow
