// StopCriteria validation and SolveReport helpers.
#include "kryflow/solvers/stop_criteria.hpp"

#include <cmath>

#include "kryflow/core/error.hpp"

namespace kryflow {

void StopCriteria::validate() const {
  if (max_iterations < 0) throw ConfigError("max_iterations", "must be >= 0");
  if (!(relative_tolerance >= 0.0)) throw ConfigError("relative_tolerance", "must be >= 0");
  if (!(absolute_tolerance >= 0.0)) throw ConfigError("absolute_tolerance", "must be >= 0");
  if (relative_tolerance == 0.0 && absolute_tolerance == 0.0 && max_iterations == 0) {
    throw ConfigError("relative_tolerance", "a tolerance or an iteration limit is needed");
  }
  if (!(divergence_factor > 1.0)) throw ConfigError("divergence_factor", "must be > 1");
  if (stagnation_window < 0) throw ConfigError("stagnation_window", "must be >= 0");
  if (!(stagnation_factor >= 0.0 && stagnation_factor < 1.0)) {
    throw ConfigError("stagnation_factor", "must be in [0, 1)");
  }
}

const char* to_string(SolveStatus status) {
  switch (status) {
    case SolveStatus::converged:
      return "converged";
    case SolveStatus::max_iterations:
      return "max_iterations";
    case SolveStatus::breakdown:
      return "breakdown";
    case SolveStatus::diverged:
      return "diverged";
    case SolveStatus::stagnated:
      return "stagnated";
    case SolveStatus::nan_detected:
      return "nan_detected";
  }
  return "?";
}

// b = 0: the solve returns x = 0, the exact solution, so the relative residual is defined as 0
// (rather than 0 / 0). A NaN ||b|| propagates.
double SolveReport::relative_residual() const noexcept {
  return rhs_norm == 0.0 ? 0.0 : residual_norm / rhs_norm;
}

double SolveReport::true_relative_residual() const noexcept {
  return rhs_norm == 0.0 ? 0.0 : true_residual_norm / rhs_norm;
}

double SolveReport::convergence_rate() const noexcept {
  if (iterations <= 0 || initial_residual_norm <= 0.0 || residual_norm <= 0.0) return 0.0;
  return std::pow(residual_norm / initial_residual_norm, 1.0 / iterations);
}

}  // namespace kryflow
