// The hints that end the reason of a solve that did not converge.
#include "kryflow/solvers/solve_hint.hpp"

namespace kryflow {
namespace {

constexpr const char* kTryBicgstab = "try --preset bicgstab_jacobi";
constexpr const char* kTryLongGmres = "try --preset gmres_jacobi -p solver.restart=100";

std::string cg_hint(SolveStatus status) {
  switch (status) {
    case SolveStatus::breakdown:
    case SolveStatus::diverged:
      return std::string(
                 "CG needs A symmetric and definite (a singular matrix with zero row "
                 "sums needs --pin-unknown 1); ") +
             kTryBicgstab + " for a nonsymmetric or indefinite A";
    case SolveStatus::stagnated:
      return "CG's residual can plateau for thousands of iterations on an ill-conditioned "
             "matrix: try -p solver.stagnation_window=5000 -p solver.max_iterations=100000 "
             "(kryflow info advises a budget), or " +
             std::string(kTryBicgstab) + " if A may be nonsymmetric";
    default:
      return "";
  }
}

std::string bicgstab_hint(SolveStatus status) {
  switch (status) {
    case SolveStatus::breakdown:
    case SolveStatus::diverged:
    case SolveStatus::stagnated:
      return std::string("BiCGStab's short recurrences failed on this matrix: ") + kTryLongGmres +
             " (restarted GMRES minimises the residual and does not break down)";
    default:
      return "";
  }
}

std::string gmres_hint(SolveStatus status) {
  switch (status) {
    case SolveStatus::breakdown:
      return std::string(
                 "A M^-1 is singular on the Krylov space: if every row of A sums to zero "
                 "(a constant null space), try --pin-unknown 1; otherwise ") +
             kTryBicgstab;
    case SolveStatus::stagnated:
    case SolveStatus::diverged:
      return std::string("restarted GMRES stalls when its restart is short for A: ") +
             kTryBicgstab + ", or a longer restart (-p solver.restart=100)";
    default:
      return "";
  }
}

}  // namespace

std::string solve_hint(std::string_view solver, SolveStatus status, bool drifted) {
  std::string hint;
  if (status == SolveStatus::converged) return hint;
  if (status == SolveStatus::max_iterations) {
    hint = "try a larger -p solver.max_iterations (kryflow info advises one for the matrix)";
  } else if (status == SolveStatus::nan_detected) {
    hint =
        "check A and b for NaN or Inf; if they are finite, A or the preconditioner is "
        "singular or badly scaled: try another preset (kryflow info advises one)";
  } else if (drifted) {
    hint =
        "the attainable accuracy is about the true residual: try a looser -p "
        "solver.relative_tolerance";
  } else if (solver == "pcg" || solver == "fcg") {
    hint = cg_hint(status);
  } else if (solver == "bicgstab") {
    hint = bicgstab_hint(status);
  } else if (solver == "gmres" || solver == "fgmres") {
    hint = gmres_hint(status);
  }
  if (hint.empty()) hint = "try another preset (kryflow info advises one for the matrix)";
  return "hint: " + hint;
}

}  // namespace kryflow
