// The kryflow subcommands: their options (filled in by main.cpp's command-line parser) and runners.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kryflow/core/backend.hpp"
#include "kryflow/linalg/coo_matrix.hpp"
#include "kryflow/solvers/stop_criteria.hpp"

namespace kryflow::cli {

/// `kryflow solve`: see main.cpp for the option help texts.
struct SolveOptions {
  std::string matrix;                   ///< -A; empty: the built-in poisson3d(64)
  std::string generate;                 ///< --gen PROBLEM:N instead of -A
  std::string rhs = "random-solution";  ///< -b: a file, random-solution, ones-solution, ones
  std::string initial_guess;            ///< -x; empty: x0 = 0
  std::string config_file;              ///< -c
  std::string preset;                   ///< --preset
  std::vector<std::string> overrides;   ///< -p key=value, applied in order
  std::string backend;  ///< empty: cuda when compiled and a device is present, else cpu
  std::optional<long long> pin_unknown;  ///< 1-based row fixed to 0
  std::string format;  ///< --format: csr, sell, bsr or auto (the advisor); "" not given: csr, or
                       ///< the advice's format when the advice chooses the solver
  int block_size = 0;  ///< --block-size for bsr/auto; 0: detected
  std::string precision = "float64";  ///< --precision of the stored matrix values
  std::string output;                 ///< -o: the solution vector
  std::string plot;             ///< --plot: a PNG of the residual history (plot_residual_history)
  std::string report = "text";  ///< "text" or "json"
  /// --copy-bytes: each of the two buffers of the copy-bandwidth measurement; 0 skips it;
  /// unset: 256 MiB on cuda (well above an H100's 50 MB L2), 64 MiB on the host backends.
  std::optional<long long> copy_bytes;
  /// --sequence DIR: solve the systems A_*.mtx (with b_*.mtx) of DIR in name order, one
  /// pattern, the previous solution as the initial guess (run_solve_sequence).
  std::string sequence;
  std::string reuse = "never";  ///< --reuse: ReusePolicy::parse's text
  bool asynchronous = false;    ///< --async: rebuild on a host thread
};

/// `kryflow sem`: the spectral-element Poisson solve; see main.cpp for the option help texts.
struct SemOptions {
  std::string mesh;      ///< --mesh: a Nek5000 .re2 file (plain or gzip)
  std::vector<int> box;  ///< --box NX,NY,NZ: box_mesh on the unit cube
  int order = 7;         ///< --order p
  std::string solver = "cg";
  std::string precond = "jacobi";  ///< jacobi or none
  /// --preset, -c and -p as for solve: a configuration (solver and preconditioner, e.g.
  /// sem_pmg_cheby_jacobi) instead of --solver and --precond.
  std::string preset;
  std::string config_file;
  std::vector<std::string> overrides;
  std::string backend;                 ///< empty: as solve
  std::optional<double> kershaw;       ///< --kershaw eps in (0, 1]
  std::optional<double> deform;        ///< --deform a: BoxOptions::smooth_deformation (--box only)
  std::vector<std::string> dirichlet;  ///< --dirichlet W,v,...; empty: every boundary face
  std::optional<double> relative_tolerance;  ///< default 1e-8, or the configuration's
  std::optional<int> max_iterations;         ///< default 10000, or the configuration's
  std::string element_kernel = "automatic";
  std::string assembly = "automatic";
  std::string diagonal_kernel = "automatic";
  std::string report = "text";  ///< "text" or "json"
  /// --copy-bytes as for solve; unset: 256 MiB on cuda, 64 MiB on the host backends.
  std::optional<long long> copy_bytes;
  /// --repeat N: N solves of the same system from x0 = 0 (the first one is the report's; the
  /// others give the repeated-solve times, as in a time-stepping code).
  int repeat = 1;
  /// --cold-solve: no KrylovSolver::setup before the solve, which then pays the one-time costs.
  bool cold_solve = false;
};

/// `kryflow gen`.
struct GenOptions {
  std::string problem;  ///< poisson2d, poisson3d, poisson3d27 or sequence
  int n = 0;
  std::string output;     ///< a file; for sequence a directory
  int steps = 10;         ///< sequence: systems
  double speed = 0.02;    ///< sequence: the inclusion's motion per step
  double contrast = 3.0;  ///< sequence: log10 of the coefficient contrast
};

/// `kryflow info`.
struct InfoOptions {
  std::string matrix;
  int block_size = 0;  ///< --block-size; 0: detected
  std::string report = "text";
};

/// `kryflow bench spmv`.
struct BenchOptions {
  std::vector<std::string> matrices;   ///< -A, repeatable
  std::vector<std::string> generated;  ///< --gen PROBLEM:N, repeatable
  std::string backend;                 ///< empty: as solve
  int block_size = 0;                  ///< --block-size; 0: detected
  std::vector<std::string> formats = {"csr", "sell", "bsr", "cusparse"};
  std::vector<std::string> precisions = {"float64", "float32"};
  std::string json;                    ///< --json: write the records here
  long long copy_bytes = 256LL << 20;  ///< each buffer of the copy-bandwidth measurement
};

/// Each runner returns the process exit status (0 success; solve, sem: 2 when not converged) and
/// throws kryflow::Error or std::exception on errors (main prints them and exits with 1).
int run_solve(const SolveOptions& options);
int run_solve_sequence(const SolveOptions& options);
int run_sem(const SemOptions& options);
int run_gen(const GenOptions& options);
int run_info(const InfoOptions& options);
int run_bench_spmv(const BenchOptions& options);

/// The generated problem `spec` names, PROBLEM:N with PROBLEM poisson2d, poisson3d or
/// poisson3d27 (kryflow/linalg/generators.hpp); `name` receives "poisson3d_200". Throws
/// InvalidInput for a malformed spec or an unknown problem.
CooMatrix generate_problem(const std::string& spec, std::string& name);

/// Writes a PNG of `report`'s residual history (relative to ||b||) to `png` through the Python
/// package's plot module (python3 -m kryflow.plot, matplotlib). Throws InvalidInput when that
/// fails, with what to install.
void plot_residual_history(const SolveReport& report, const std::string& label,
                           const std::string& png);

/// The requested backend ("cuda", "cpu" or "reference"); empty: cuda when compiled and a
/// device opens, else cpu.
Backend choose_backend(const std::string& name);

}  // namespace kryflow::cli
