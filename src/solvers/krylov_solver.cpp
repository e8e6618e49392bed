// KrylovSolver: shape checks, timing, the stopping test and the final true residual.
#include "kryflow/solvers/krylov_solver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "kryflow/core/error.hpp"
#include "kryflow/solvers/solve_hint.hpp"
#include "workspace.hpp"

namespace kryflow {
namespace {

void check_problem(const LinearOperator& A, const Preconditioner& M, const Vector& b,
                   const Vector& x) {
  if (A.num_rows() != A.num_cols()) {
    throw DimensionMismatch("Krylov solvers need a square operator, got " +
                            std::to_string(A.num_rows()) + " x " + std::to_string(A.num_cols()));
  }
  const auto n = static_cast<std::size_t>(A.num_rows());
  if (b.size() != n || x.size() != n) {
    throw DimensionMismatch("operator has " + std::to_string(n) + " rows but b has " +
                            std::to_string(b.size()) + " and x " + std::to_string(x.size()) +
                            " entries");
  }
  if (M.num_rows() != A.num_rows()) {
    throw DimensionMismatch("preconditioner size " + std::to_string(M.num_rows()) +
                            " differs from the operator's " + std::to_string(A.num_rows()) +
                            " (was setup(A) called?)");
  }
  if (!(b.backend() == A.backend()) || !(x.backend() == A.backend()) ||
      !(M.backend() == A.backend())) {
    throw InvalidInput("operator, preconditioner, b and x must live on one backend");
  }
}

}  // namespace

KrylovSolver::KrylovSolver(StopCriteria criteria) : criteria_(criteria) {
  criteria_.validate();
}

KrylovSolver::~KrylovSolver() = default;

GraphMode parse_graph_mode(const std::string& name) {
  if (name == "automatic") return GraphMode::automatic;
  if (name == "always") return GraphMode::always;
  if (name == "never") return GraphMode::never;
  throw ConfigError("cuda_graphs", "'" + name + "' is not one of automatic, always, never");
}

const char* to_string(GraphMode mode) {
  switch (mode) {
    case GraphMode::automatic:
      return "automatic";
    case GraphMode::always:
      return "always";
    case GraphMode::never:
      return "never";
  }
  return "?";
}

void IterationOptions::validate() const {
  if (check_every < 1) throw ConfigError("check_every", "must be >= 1");
}

void KrylovSolver::set_options(IterationOptions options) {
  options.validate();
  options_ = options;
}

bool KrylovSolver::use_graphs(const LinearOperator& A, const Preconditioner& M) const {
  if (!A.supports_recording() || !M.supports_recording()) return false;
  switch (options_.graphs) {
    case GraphMode::never:
      return false;
    case GraphMode::always:
      return true;
    case GraphMode::automatic:
      // Measured on the H200: a multigrid cycle's many small launches replay faster; so do
      // windows of several iterations of a product bound by latency (PCG-Jacobi on
      // openfoam_p_23325 9.0 against 9.9-10.4 us per iteration with check_every 10,
      // BiCGStab-Jacobi on 2dcyl1 17.7-18.4 against 21.9-22.5 us). With one iteration per
      // window, or a product bound by bandwidth, plain dependent launches are as fast or
      // faster (bench/results/h200_krylov/NOTES.md).
      return A.prefers_recording() || M.prefers_recording() ||
             (options_.check_every > 1 && (A.fuses_combination() || A.fuses_shifted_product()));
  }
  return false;
}

KrylovSolver::Workspace& KrylovSolver::workspace(const Backend& backend, std::size_t n,
                                                 std::size_t vectors, std::size_t scalars) const {
  if (!workspace_ || !workspace_->fits(backend, n, vectors, scalars)) {
    workspace_.reset();  // free the old one first
    workspace_ = std::make_unique<Workspace>(backend, n, vectors, scalars);
  }
  return *workspace_;
}

void KrylovSolver::setup(const LinearOperator& A, const Preconditioner& M) {
  const auto n = static_cast<std::size_t>(A.num_rows());
  const Vector b = Vector::constant(A.backend(), n, 1.0);
  Vector x = Vector::constant(A.backend(), n, 0.0);
  // One full window, stopped by its iteration limit only; no monitor. Restored on every exit.
  const StopCriteria criteria = criteria_;
  IterationMonitor monitor = std::move(monitor_);
  monitor_ = {};
  struct Restore {
    KrylovSolver& solver;
    const StopCriteria& criteria;
    IterationMonitor& monitor;
    ~Restore() {
      solver.criteria_ = criteria;
      solver.monitor_ = std::move(monitor);
    }
  } restore{*this, criteria, monitor};
  criteria_.max_iterations = options_.check_every;
  criteria_.relative_tolerance = 0.0;
  criteria_.absolute_tolerance = 0.0;
  criteria_.divergence_factor = std::numeric_limits<double>::infinity();
  criteria_.stagnation_window = 0;  // none
  solve(A, M, b, x);
}

SolveReport KrylovSolver::solve(const LinearOperator& A, const Preconditioner& M, const Vector& b,
                                Vector& x) const {
  check_problem(A, M, b, x);
  SolveReport report;
  // The history grows as needed; reserving for max_iterations (up to 2^31) could be absurd.
  constexpr std::size_t history_reserve_cap = std::size_t{1} << 16;
  report.residual_history.reserve(
      std::min(static_cast<std::size_t>(criteria_.max_iterations) + 1, history_reserve_cap));
  const auto start = std::chrono::steady_clock::now();
  report.rhs_norm = norm2(b);
  if (report.rhs_norm == 0.0) {
    // b = 0: x = 0 is the exact solution, whatever the initial guess and the tolerances.
    fill(x, 0.0);
    check(0, 0.0, report);
    report.status = SolveStatus::converged;
    report.reason = "b = 0, so x = 0 is the exact solution";
  } else {
    iterate(A, M, b, x, report);
  }
  // The true residual, recomputed independently of the iteration's recursion.
  if (true_residual_.size() != b.size() || !(true_residual_.backend() == A.backend())) {
    true_residual_ = Vector();
    true_residual_ = Vector(A.backend(), b.size());
  }
  A.residual(b, x, true_residual_);
  report.true_residual_norm = norm2(true_residual_);
  A.backend().synchronize();
  report.solve_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bool drifted = false;
  if (report.status == SolveStatus::converged) {
    const double goal = target(report);
    if (!std::isfinite(report.true_residual_norm)) {
      report.status = SolveStatus::nan_detected;
      report.reason = "the recursive residual " + number(report.residual_norm) +
                      " met the target but the true residual is " +
                      number(report.true_residual_norm);
    } else if (report.true_residual_norm > SolveReport::true_residual_slack * goal) {
      // Recursive residual drift: the updated residual kept falling while the true one stalled
      // at the accuracy attainable in floating point. Not converged: say so, with both norms.
      report.status = SolveStatus::stagnated;
      drifted = true;
      report.reason = "recursive residual " + number(report.residual_norm) + " <= target " +
                      number(goal) + " but true residual " + number(report.true_residual_norm) +
                      " > " + number(SolveReport::true_residual_slack) +
                      " x target (the recursive residual drifted; this accuracy is not "
                      "attainable)";
    }
  }
  if (!report.converged()) report.reason += "; " + solve_hint(name(), report.status, drifted);
  return report;
}

bool KrylovSolver::likely_converged_by(int iteration, const SolveReport& report) const {
  const std::vector<double>& h = report.residual_history;
  if (h.size() < 2 || iteration <= report.iterations) return false;
  const std::size_t span = std::min<std::size_t>(3, h.size() - 1);
  const double last = h.back();
  const double before = h[h.size() - 1 - span];
  if (!(last > 0.0) || !(before > last) || !std::isfinite(before)) return false;
  const double rate = std::pow(last / before, 1.0 / static_cast<double>(span));
  return last * std::pow(rate, iteration - report.iterations) <= target(report);
}

double KrylovSolver::target(const SolveReport& report) const {
  return std::max(criteria_.relative_tolerance * report.rhs_norm, criteria_.absolute_tolerance);
}

bool KrylovSolver::check(int iteration, double residual_norm, SolveReport& report) const {
  report.iterations = iteration;
  report.residual_norm = residual_norm;
  report.residual_history.push_back(residual_norm);
  if (iteration == 0) report.initial_residual_norm = residual_norm;
  if (monitor_) monitor_(iteration, residual_norm, report.rhs_norm);

  if (!std::isfinite(residual_norm)) {
    report.status = SolveStatus::nan_detected;
    report.reason = "the residual norm became " + number(residual_norm) + " at iteration " +
                    std::to_string(iteration);
    return true;
  }
  const double goal = target(report);
  if (residual_norm <= goal) {
    report.status = SolveStatus::converged;
    report.reason = "residual norm " + number(residual_norm) + " <= target " + number(goal);
    return true;
  }
  if (report.initial_residual_norm > 0.0 &&
      residual_norm > criteria_.divergence_factor * report.initial_residual_norm) {
    report.status = SolveStatus::diverged;
    report.reason =
        "the residual grew by more than divergence_factor = " + number(criteria_.divergence_factor);
    return true;
  }
  // Stagnation: the residual has not fallen below (1 - stagnation_factor) times the last
  // significant low for stagnation_window iterations.
  if (iteration == 0 ||
      residual_norm < (1.0 - criteria_.stagnation_factor) * report.progress.anchor) {
    report.progress.anchor = residual_norm;
    report.progress.anchor_iteration = iteration;
  }
  const int window = criteria_.stagnation_window;
  if (window > 0 && criteria_.stagnation_factor > 0.0 &&
      iteration - report.progress.anchor_iteration >= window) {
    report.status = SolveStatus::stagnated;
    report.reason = "the residual fell by less than a factor " +
                    number(criteria_.stagnation_factor) + " over the last " +
                    std::to_string(window) + " iterations";
    return true;
  }
  if (iteration >= criteria_.max_iterations) {
    report.status = SolveStatus::max_iterations;
    report.reason = "reached max_iterations = " + std::to_string(criteria_.max_iterations);
    return true;
  }
  return false;
}

void KrylovSolver::breakdown(SolveReport& report, const std::string& reason) {
  report.status = SolveStatus::breakdown;
  report.reason = reason + " at iteration " + std::to_string(report.iterations);
}

void KrylovSolver::nan_detected(SolveReport& report, const std::string& reason) {
  report.status = SolveStatus::nan_detected;
  report.reason = reason + " at iteration " + std::to_string(report.iterations);
}

bool KrylovSolver::definite_fails(double value, double sign, const char* name,
                                  const char* wrong_sign, SolveReport& report) {
  if (!std::isfinite(value)) {
    nan_detected(report, std::string(name) + " = " + number(value));
    return true;
  }
  if (!(sign * value > 0.0)) {
    breakdown(report, std::string(name) + " = " + number(value) + " " + wrong_sign);
    return true;
  }
  return false;
}

std::string KrylovSolver::number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3e", value);
  return buffer;
}

}  // namespace kryflow
