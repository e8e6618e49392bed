// Preconditioned Richardson iteration x <- x + M^-1 (b - A x).
#include "kryflow/solvers/richardson.hpp"

#include "workspace.hpp"

namespace kryflow {

void Richardson::iterate(const LinearOperator& A, const Preconditioner& M, const Vector& b,
                         Vector& x, SolveReport& report) const {
  Workspace& ws = workspace(A.backend(), b.size(), 2, 0);
  Vector& r = ws.vector(0);
  Vector& z = ws.vector(1);
  A.residual(b, x, r);  // r_0 = b - A x_0
  if (check(0, norm2(r), report)) return;
  for (int k = 1;; ++k) {
    M.apply(r, z);          // z = M^-1 r_k
    axpby(1.0, z, 1.0, x);  // x_{k+1} = x_k + z
    A.residual(b, x, r);    // r_{k+1} = b - A x_{k+1}
    if (check(k, norm2(r), report)) return;
  }
}

}  // namespace kryflow
