// When a Krylov iteration stops, and the report it returns.
#pragma once

#include <string>
#include <vector>

namespace kryflow {

/// Stopping rules shared by every Krylov solver. The iteration converges when the residual norm
/// ||r_k||_2 <= max(relative_tolerance * ||b||_2, absolute_tolerance) (the "target"); the solver
/// then confirms it with the true residual ||b - A x||_2 (see KrylovSolver::solve).
struct StopCriteria {
  /// Iteration limit (>= 0). 0 computes the initial residual r_0 = b - A x_0 only and returns:
  /// status converged when r_0 already meets the target, max_iterations otherwise (x unchanged).
  int max_iterations = 1000;
  double relative_tolerance = 1e-8;  ///< relative to ||b||_2 (>= 0)
  double absolute_tolerance = 0.0;   ///< on ||r_k||_2 (>= 0)
  double divergence_factor = 1e10;   ///< diverged when ||r_k|| > factor * ||r_0|| (> 1)
  int stagnation_window = 500;       ///< stagnated when the residual has not fallen below
  double stagnation_factor = 1e-3;   ///< (1 - factor) x its last low for this many iterations
                                     ///< (window 0 or factor 0: test off)

  /// Throws ConfigError naming the field when a value is out of range (a negative
  /// max_iterations or stagnation_window, a negative or NaN tolerance, divergence_factor <= 1,
  /// stagnation_factor outside [0, 1)), or when both tolerances and max_iterations are 0.
  void validate() const;
};

enum class SolveStatus { converged, max_iterations, breakdown, diverged, stagnated, nan_detected };
const char* to_string(SolveStatus status);

/// What a solve did. Norms are 2-norms; times in seconds.
///
/// `status` is `converged` only when the recursive residual met the target and the true residual
/// ||b - A x|| recomputed after the iteration agrees: a true residual above
/// true_residual_slack x target (recursive residual drift, i.e. the accuracy is not attainable in
/// floating point) turns `converged` into `stagnated`, and a non-finite one into `nan_detected`;
/// the reason then quotes both norms. When b = 0 the solve returns x = 0, `converged`, 0
/// iterations and residual 0.
struct SolveReport {
  /// How far (as a factor) the true residual may exceed the target of a converged solve before
  /// the status is downgraded to `stagnated`.
  static constexpr double true_residual_slack = 10.0;

  SolveStatus status = SolveStatus::max_iterations;
  std::string reason;     ///< one sentence on why the iteration stopped; "at iteration k" quotes
                          ///< `iterations` (the completed iterations) at that moment; unless
                          ///< converged it ends with "; hint: <what to try>" (solve_hint)
  int iterations = 0;     ///< completed iterations (one Arnoldi step for GMRES); r_0 is 0
  double rhs_norm = 0.0;  ///< ||b||
  double initial_residual_norm = 0.0;    ///< ||b - A x0||
  double residual_norm = 0.0;            ///< the solver's recursive (or preconditioned) estimate
  double true_residual_norm = 0.0;       ///< ||b - A x|| recomputed after the iteration
  std::vector<double> residual_history;  ///< recursive residual norm per iteration, [0] = r0
                                         ///< (iterations + 1 entries)
  double setup_seconds = 0.0;
  double solve_seconds = 0.0;
  /// Bookkeeping of the stagnation test: the last significant residual low and its iteration.
  struct Progress {
    double anchor = 0.0;
    int anchor_iteration = 0;
  } progress;

  bool converged() const noexcept { return status == SolveStatus::converged; }
  /// residual_norm / rhs_norm; defined as 0 when b = 0 (the solve then returns x = 0 exactly).
  double relative_residual() const noexcept;
  /// true_residual_norm / rhs_norm; defined as 0 when b = 0 (the solve then returns x = 0).
  double true_relative_residual() const noexcept;
  /// Geometric mean reduction per iteration, (||r_k|| / ||r_0||)^(1/k).
  double convergence_rate() const noexcept;
};

}  // namespace kryflow
