// What `kryflow solve`, `kryflow sem` and `kryflow info` print: text and JSON summaries, and the
// live progress line.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kryflow/core/backend.hpp"
#include "kryflow/linalg/format_advisor.hpp"
#include "kryflow/linalg/matrix_analysis.hpp"
#include "kryflow/multigrid/multigrid.hpp"
#include "kryflow/solver.hpp"
#include "kryflow/solvers/stop_criteria.hpp"

namespace kryflow::cli {

/// Everything a solve reports.
struct SolveSummary {
  std::string matrix;  ///< the file, or a description of the built-in problem
  MatrixProperties properties;
  std::string rhs;  ///< the file, or how b was made (see solve_command.cpp)
  std::string backend;
  std::string device;
  std::string format;                  ///< "CSR", "SELL-32-1", "BSR-4", with the stored precision
  std::string format_reason;           ///< why (the advisor's reason, or "chosen with --format")
  std::string solver_choice;           ///< "advice", "preset" or "config file"
  std::string solver_choice_reason;    ///< which preset, and why (the advice's reason)
  std::string preconditioner_summary;  ///< Preconditioner::summary() after setup (may be empty)
  nlohmann::json config;               ///< the fully resolved configuration
  SolveReport report;
  std::optional<double> max_error;  ///< max_i |x_i - x*_i| when b = A x* for a known x*
  double spmv_bytes = 0.0;          ///< bytes one SpMV moves at least
  double spmv_seconds = 0.0;        ///< mean time of one SpMV after the solve
  CopyBandwidth copy;               ///< the backend's copy bandwidth, or why it is missing
};

/// A level of a multigrid preconditioner's cycle, as the component table names it.
struct CycleLevel {
  std::int64_t unknowns = 0;
  int order = 0;  ///< a p-multigrid level's polynomial order; 0 for other hierarchies
};

/// Everything `kryflow sem` reports: the mesh, the discretization, the solve, the time per
/// component of a multigrid cycle and the operator's own speed.
struct SemSummary {
  std::string mesh_source;   ///< the file, or "box NXxNYxNZ on the unit cube"
  std::string mesh_version;  ///< the .re2 header's version tag; empty for a box
  std::int64_t elements = 0;
  std::int64_t curved_side_records = 0;  ///< in the file; ignored (elements are trilinear)
  std::array<double, 3> lower{};         ///< bounding box of the (deformed) mesh
  std::array<double, 3> upper{};
  std::string deformation;  ///< "none", or what was applied
  int order = 0;
  double wavenumber = 0.0;  ///< k = pi / L of the manufactured solution
  double extent = 0.0;      ///< L, the largest bounding-box extent
  std::string dirichlet;    ///< which boundary faces are Dirichlet
  std::int64_t dofs = 0;    ///< global points, A.num_rows()
  std::int64_t local_points = 0;
  std::int64_t dirichlet_points = 0;
  std::string backend;
  std::string device;
  std::string kernels;  ///< SemPoissonOperator::kernel_description()
  std::string solver;
  std::string preconditioner;
  std::string preconditioner_summary;  ///< Preconditioner::summary() (p-multigrid: its levels)
  nlohmann::json configuration;        ///< the resolved configuration (null without one)
  double relative_tolerance = 0.0;
  int max_iterations = 0;
  double operator_setup_seconds = 0.0;        ///< SemPoissonOperator construction
  double preconditioner_setup_seconds = 0.0;  ///< M.setup(A)
  double solver_setup_seconds = 0.0;          ///< KrylovSolver::setup(A, M); 0: not run
  SolveReport report;
  double true_relative_residual = 0.0;  ///< ||b - A x|| / ||b|| from a separate apply
  double max_error = 0.0;               ///< max over all points of |x - u|
  double apply_seconds = 0.0;           ///< median seconds per A.apply (bench::time_per_call)
  double apply_bytes = 0.0;             ///< SemPoissonOperator::apply_bytes()
  CopyBandwidth copy;
  /// A multigrid preconditioner's time per level and component of its cycle
  /// (Multigrid::profile_cycle on the solve's right-hand side, after the solve); empty when the
  /// preconditioner is not a multigrid cycle.
  std::vector<CycleComponentTime> cycle_components;
  std::vector<CycleLevel> cycle_levels;  ///< the levels of cycle_components, the finest first
  int profiled_cycles = 0;
  /// --repeat: the solve times (seconds) of the solves after the first, all from x0 = 0.
  std::vector<double> repeated_solve_seconds;
  std::vector<int> repeated_iterations;     ///< their iterations
  std::vector<std::string> repeated_notes;  ///< "solve k: <status>" where it differs
};

std::string sem_text(const SemSummary& summary);
nlohmann::json sem_json(const SemSummary& summary);

/// "symmetric", "nonsymmetric (asymmetry 1.2e-03)", ...
std::string symmetry_text(const MatrixProperties& properties);

std::string solve_text(const SolveSummary& summary);
nlohmann::json solve_json(const SolveSummary& summary);

std::string info_text(const std::string& file, const std::string& declared,
                      const MatrixProperties& properties, const FormatAdvice& format);
nlohmann::json info_json(const std::string& file, const std::string& declared,
                         const MatrixProperties& properties, const FormatAdvice& format);
/// The advice as `kryflow solve` arguments: "--preset P [-p key=value ...] [--pin-unknown I]";
/// "" when no preset applies.
std::string advice_arguments(const MatrixProperties& properties);
/// "23325 of 23325 rows sum to zero (...): A 1 = 0, so A is singular ...".
std::string row_sums_text(const MatrixProperties& properties);
/// "CSR", "SELL-32-1" or "BSR-4": the advised format with its parameters.
std::string format_label(const FormatAdvice& format);

/// The `\r`-updated progress line on stderr (iteration, relative residual, convergence rate),
/// drawn at most 10 times a second; does nothing when disabled (stderr not a terminal).
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  ~ProgressLine() { finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool enabled() const noexcept { return enabled_; }
  /// The solver's monitor: iteration k, ||r_k|| and ||b||.
  void update(int iteration, double residual_norm, double rhs_norm);
  /// Erases the line (once).
  void finish();

 private:
  bool enabled_;
  bool drawn_ = false;
  double initial_residual_ = 0.0;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace kryflow::cli
