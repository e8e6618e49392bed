// What to try after a solve that did not converge: the hint that ends a SolveReport's reason.
#pragma once

#include <string>
#include <string_view>

#include "kryflow/solvers/stop_criteria.hpp"

namespace kryflow {

/// A short hint, in the CLI's terms (presets and -p overrides), of what to try after a solve by
/// `solver` (KrylovSolver::name(): "pcg", "bicgstab", "gmres", "fgmres") that ended with `status`:
/// e.g. a CG breakdown (A nonsymmetric or indefinite) -> "try --preset bicgstab_jacobi".
/// `drifted`: the recursive residual met the target but the true residual did not (a
/// `stagnated` status set by KrylovSolver::solve), so a looser tolerance is the remedy.
/// Returns "" for `converged`. KrylovSolver::solve appends it to the reason as "; <hint>".
std::string solve_hint(std::string_view solver, SolveStatus status, bool drifted = false);

}  // namespace kryflow
