// `kryflow solve --sequence DIR`: a sequence of systems with one pattern, solved in name order
// under a reuse policy (kryflow::SequenceSolver), with a per-system report.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "kryflow/config/registry.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/solvers/sequence.hpp"

namespace kryflow::cli {
namespace {

namespace fs = std::filesystem;

/// The systems of `directory`: A_<suffix>.mtx[.gz] in name order, each with b_<suffix> when it
/// exists. Throws InvalidInput naming the directory when it holds none.
std::vector<std::pair<fs::path, fs::path>> sequence_files(const std::string& directory) {
  if (!fs::is_directory(directory)) {
    throw InvalidInput("--sequence " + directory + ": not a directory");
  }
  std::map<std::string, std::pair<fs::path, fs::path>> systems;
  std::map<std::string, fs::path> rhs;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 2 && (name.ends_with(".mtx") || name.ends_with(".mtx.gz"))) {
      if (name.starts_with("A_")) systems[name.substr(2)].first = entry.path();
      if (name.starts_with("b_")) rhs[name.substr(2)] = entry.path();
    }
  }
  if (systems.empty()) {
    throw InvalidInput("--sequence " + directory +
                       ": no A_*.mtx files (kryflow gen sequence writes such a directory)");
  }
  std::vector<std::pair<fs::path, fs::path>> files;
  for (auto& [suffix, pair] : systems) {
    const auto b = rhs.find(suffix);
    files.push_back({pair.first, b != rhs.end() ? b->second : fs::path()});
  }
  return files;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", seconds);
  return text;
}

}  // namespace

int run_solve_sequence(const SolveOptions& options) {
  if (!options.matrix.empty() || options.rhs != "random-solution" ||
      (!options.format.empty() && options.format != "csr")) {
    throw InvalidInput(
        "--sequence reads A and b from its directory and stores A as CSR: drop -A, "
        "-b and --format");
  }
  ReusePolicy policy = ReusePolicy::parse(options.reuse);
  policy.asynchronous = options.asynchronous;
  nlohmann::json config =
      !options.config_file.empty()
          ? config::load_config_file(options.config_file)
          : config::load_preset(options.preset.empty() ? "pcg_ainv" : options.preset);
  for (const std::string& assignment : options.overrides) {
    config::apply_override(config, assignment);
  }
  config::SolverSetup setup = config::build_solver(config);
  const Backend backend = choose_backend(options.backend);
  const Precision precision = precision_from_string(options.precision);
  const auto files = sequence_files(options.sequence);

  // The first system fixes the pattern; later ones update the values in place.
  CsrMatrix A;
  std::vector<index_t> row_ptr, col_idx;  // the first system's pattern, kept on the host
  Vector x;
  SequenceSolver sequence(*setup.solver, *setup.preconditioner, policy);
  nlohmann::json systems = nlohmann::json::array();
  const bool text = options.report != "json";
  bool all_converged = true;
  double solve_total = 0.0, preconditioner_total = 0.0;
  long long iterations_total = 0;
  for (std::size_t k = 0; k < files.size(); ++k) {
    const std::string matrix_file = files[k].first.string();
    CooMatrix coo = io::read_matrix_market(matrix_file);
    if (coo.num_rows != coo.num_cols) {
      throw DimensionMismatch(matrix_file + ": the matrix is " + std::to_string(coo.num_rows) +
                              " x " + std::to_string(coo.num_cols) + ", not square");
    }
    const auto n = static_cast<std::size_t>(coo.num_rows);
    std::vector<double> b(n, 1.0);
    if (!files[k].second.empty()) {
      b = io::read_vector(files[k].second);
      if (b.size() != n) {
        throw DimensionMismatch(files[k].second.string() + ": " + std::to_string(b.size()) +
                                " entries, the matrix " + matrix_file + " has " +
                                std::to_string(n) + " rows");
      }
    }
    CsrMatrix next = CsrMatrix::from_coo(Backend::reference(), coo);
    if (k == 0) {
      row_ptr = next.row_ptr().to_host();
      col_idx = next.col_idx().to_host();
      A = next.with_precision(precision);
      if (backend.kind() != BackendKind::reference) A = A.copy_to(backend);
      x = Vector::constant(backend, n, 0.0);
      if (text) {
        std::cout << "sequence        " << options.sequence << ": " << files.size()
                  << " systems of " << n << " rows, " << A.nnz() << " nonzeros (one pattern)\n"
                  << "backend         " << backend.name() << "\n"
                  << "reuse           " << policy.to_string()
                  << (policy.asynchronous ? ", asynchronous host rebuilds"
                                          : ", synchronous rebuilds (deterministic)")
                  << "\n"
                  << "precision       matrix values " << to_string(precision)
                  << ", vectors and arithmetic float64\n"
                  << "system   its  solve s  precond s  preconditioner  true residual\n";
      }
    } else {
      // Compared on the host, where both patterns are (no copy back from the device).
      if (next.row_ptr().to_host() != row_ptr || next.col_idx().to_host() != col_idx) {
        throw InvalidInput(matrix_file + ": its pattern differs from the first system's (a " +
                           "sequence keeps one pattern)");
      }
      A.update_values(next.values());
    }
    const Vector bv = Vector::from_host(backend, b);
    SequenceStep step;
    try {
      step = sequence.solve(A, bv, x);
    } catch (const DimensionMismatch& e) {
      throw DimensionMismatch(matrix_file + ": " + e.what());
    } catch (const InvalidInput& e) {  // a zero diagonal, a failed factorization
      throw InvalidInput(matrix_file + ": " + e.what());
    }
    all_converged = all_converged && step.report.converged();
    solve_total += step.report.solve_seconds;
    preconditioner_total += step.preconditioner_seconds;
    iterations_total += step.report.iterations;
    std::string action = to_string(step.action);
    if (step.rebuild_started) action += " (rebuild started)";
    if (text) {
      char line[160];
      std::snprintf(line, sizeof line, "%-6zu %5d  %7s  %9s  %-14s  %.3e\n", k,
                    step.report.iterations, seconds_text(step.report.solve_seconds).c_str(),
                    seconds_text(step.preconditioner_seconds).c_str(), action.c_str(),
                    step.report.true_relative_residual());
      std::cout << line;
      if (!step.report.converged()) std::cout << "       " << step.report.reason << "\n";
    }
    systems.push_back({{"system", k},
                       {"matrix", matrix_file},
                       {"iterations", step.report.iterations},
                       {"status", to_string(step.report.status)},
                       {"solve_seconds", step.report.solve_seconds},
                       {"preconditioner_seconds", step.preconditioner_seconds},
                       {"preconditioner", to_string(step.action)},
                       {"rebuild_started", step.rebuild_started},
                       {"solve_begin", step.solve_begin},
                       {"solve_end", step.solve_end},
                       {"true_relative_residual", step.report.true_relative_residual()}});
  }
  sequence.finish();
  nlohmann::json builder = nlohmann::json::array();
  double builder_seconds = 0.0;
  for (const BuilderRun& run : sequence.builder_runs()) {
    builder.push_back({{"system", run.system},
                       {"begin", run.begin},
                       {"end", run.end},
                       {"installed", run.installed}});
    builder_seconds += run.end - run.begin;
  }
  const std::string summary = setup.preconditioner->summary();
  if (text) {
    std::cout << "totals          " << iterations_total << " iterations, solve "
              << seconds_text(solve_total) << " s, preconditioner on the main thread "
              << seconds_text(preconditioner_total) << " s (the device waits during it)\n";
    if (policy.asynchronous) {
      std::cout << "host rebuilds   " << sequence.builder_runs().size() << " on the builder "
                << "thread, " << seconds_text(builder_seconds)
                << " s in all, overlapped with the solves (never waited for)\n";
    }
    if (!summary.empty()) std::cout << "preconditioner  " << summary << "\n";
    if (!all_converged) std::cout << "status          not every system converged\n";
  } else {
    std::cout << nlohmann::json{{"sequence", options.sequence},
                                {"backend", backend.name()},
                                {"reuse", policy.to_string()},
                                {"asynchronous", policy.asynchronous},
                                {"matrix_precision", to_string(precision)},
                                {"preconditioner_summary", summary},
                                {"systems", systems},
                                {"builder_runs", builder},
                                {"iterations", iterations_total},
                                {"solve_seconds", solve_total},
                                {"preconditioner_seconds", preconditioner_total}}
                     .dump()
              << "\n";
  }
  return all_converged ? 0 : 2;
}

}  // namespace kryflow::cli
