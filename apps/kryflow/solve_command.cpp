// `kryflow solve`: load or generate a system, build the configured solver, solve, report.
#include <unistd.h>
#include <charconv>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "kryflow/config/registry.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/linalg/matrix_analysis.hpp"
#include "kryflow/solver.hpp"
#include "report.hpp"

namespace kryflow::cli {
namespace {

constexpr index_t kDefaultPoissonSize = 64;
constexpr int kBandwidthRepetitions = 20;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The configuration: a preset or a file; without either, the preset `advice` names (with its
/// overrides), or the defaults when there is no advice yet or it names none; then the user's
/// overrides in order.
nlohmann::json resolve_configuration(const SolveOptions& options,
                                     const MatrixProperties* advice = nullptr) {
  nlohmann::json config = nlohmann::json::object();
  if (!options.preset.empty()) {
    config = config::load_preset(options.preset);
  } else if (!options.config_file.empty()) {
    config = config::load_config_file(options.config_file);
  } else if (advice != nullptr && advice->suggested_solver != "none") {
    config = config::load_preset(advice->suggested_solver);
    for (const std::string& assignment : advice->suggested_overrides) {
      config::apply_override(config, assignment);
    }
  }
  for (const std::string& assignment : options.overrides)
    config::apply_override(config, assignment);
  return config;
}

/// How the solver was chosen, for the report.
std::string solver_choice_text(const SolveOptions& options, const MatrixProperties& advice) {
  const std::string advised = advice_arguments(advice);
  if (!options.preset.empty() || !options.config_file.empty()) {
    const std::string chosen =
        !options.preset.empty() ? "--preset " + options.preset : "-c " + options.config_file;
    return "chosen with " + chosen +
           (advised.empty() ? "" : " (kryflow info advises " + advised + " for this matrix)");
  }
  if (advised.empty()) return "the defaults: no preset applies (" + advice.suggestion_reason + ")";
  std::string text = "advised (no --preset or -c): " + advised + ": " + advice.suggestion_reason;
  if (advice.suggested_pin_unknown > 0) {
    text += "; --pin-unknown is not applied unasked (it changes the system): pass it yourself";
  }
  if (!options.overrides.empty()) text += "; the -p overrides apply on top";
  return text;
}

/// The 1-based size line of a Matrix Market file, or 0 when its header cannot be read again.
long long size_line_of(const std::string& file) {
  try {
    return io::read_matrix_market_header(file).size_line;
  } catch (const Error&) {
    return 0;
  }
}

/// A vector file of the matrix's size. Throws DimensionMismatch naming the file, its size line
/// and the rows of `matrix` it leaves without an entry (or the surplus) otherwise.
std::vector<double> read_sized_vector(const std::string& file, const char* what, index_t n,
                                      const std::string& matrix) {
  std::vector<double> v = io::read_vector(file);
  if (v.size() != static_cast<std::size_t>(n)) {
    const long long line = size_line_of(file);
    const std::string where = line > 0 ? file + ":" + std::to_string(line) : file;
    const std::string rows = v.size() < static_cast<std::size_t>(n)
                                 ? "rows " + std::to_string(v.size() + 1) + ".." +
                                       std::to_string(n) + " of " + matrix + " have no entry in it"
                                 : "entries " + std::to_string(n + 1) + ".." +
                                       std::to_string(v.size()) + " have no row in " + matrix;
    throw DimensionMismatch(where + ": " + what + " has " + std::to_string(v.size()) +
                            " entries but the matrix has " + std::to_string(n) + " rows (" + rows +
                            ")");
  }
  return v;
}

}  // namespace

Backend choose_backend(const std::string& name) {
  return backend_by_name(name);
}

void plot_residual_history(const SolveReport& report, const std::string& label,
                           const std::string& png) {
  const std::filesystem::path history = png + ".history.json";
  {
    std::ofstream out(history);
    out << nlohmann::json{{"residual_history", report.residual_history},
                          {"rhs_norm", report.rhs_norm},
                          {"label", label}}
               .dump()
        << "\n";
    if (!out) throw InvalidInput("--plot " + png + ": cannot write " + history.string());
  }
  // The file names go through the environment, not through the shell's parser.
  setenv("KRYFLOW_PLOT_HISTORY", history.c_str(), 1);
  setenv("KRYFLOW_PLOT_PNG", png.c_str(), 1);
  const int status =
      std::system("python3 -m kryflow.plot \"$KRYFLOW_PLOT_HISTORY\" \"$KRYFLOW_PLOT_PNG\"");
  std::error_code ignored;
  std::filesystem::remove(history, ignored);
  if (status != 0) {
    throw InvalidInput("--plot " + png +
                       ": python3 -m kryflow.plot failed (it needs python3 with the kryflow "
                       "package and matplotlib: pip install '.[plot]' in kryflow's source)");
  }
}

namespace {

/// The seed of `--rhs random-solution` (0x5eed) or `random-solution:SEED` (a decimal integer);
/// nullopt for any other --rhs. Throws InvalidInput for a malformed seed.
std::optional<std::uint64_t> random_solution_seed(const std::string& rhs) {
  const std::string prefix = "random-solution";
  if (rhs == prefix) return 0x5eed;
  if (!rhs.starts_with(prefix + ":")) return std::nullopt;
  const std::string digits = rhs.substr(prefix.size() + 1);
  std::uint64_t seed = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), seed);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
    throw InvalidInput("--rhs " + rhs +
                       ": the seed after 'random-solution:' must be a "
                       "non-negative decimal integer below 2^64");
  }
  return seed;
}

/// The system as read (or generated), checked and pinned, on the host. For random-solution and
/// ones-solution, b = A x* is made on the backend from the pinned A and x*.
struct HostSystem {
  CooMatrix coo;
  std::optional<std::vector<double>> b;
  std::optional<std::vector<double>> x0;
  std::optional<std::vector<double>> solution;  ///< x*, when b = A x*
};

HostSystem load_system(const SolveOptions& options, SolveSummary& summary) {
  HostSystem system;
  CooMatrix& coo = system.coo;
  io::MatrixMarketHeader header;
  if (!options.generate.empty()) {
    if (!options.matrix.empty()) throw InvalidInput("--gen and -A: give one matrix");
    std::string name;
    coo = generate_problem(options.generate, name);
    summary.matrix = name + ", generated (--gen " + options.generate + ")";
  } else if (options.matrix.empty()) {
    coo = poisson3d(kDefaultPoissonSize);
    summary.matrix = "poisson3d(" + std::to_string(kDefaultPoissonSize) + "), built in";
  } else {
    coo = io::read_matrix_market(options.matrix, &header);
    summary.matrix = options.matrix;
  }
  if (coo.num_rows != coo.num_cols) {
    throw DimensionMismatch(summary.matrix + ":" + std::to_string(header.size_line) +
                            ": the matrix is " + std::to_string(coo.num_rows) + " x " +
                            std::to_string(coo.num_cols) +
                            " (rows x columns on the size line); kryflow solve needs a square "
                            "matrix");
  }
  const index_t n = coo.num_rows;
  const std::optional<std::uint64_t> random_seed = random_solution_seed(options.rhs);
  const bool generated = random_seed || options.rhs == "ones-solution" || options.rhs == "ones";
  if (!generated) system.b = read_sized_vector(options.rhs, "b", n, summary.matrix);
  if (options.rhs == "ones") system.b = std::vector<double>(static_cast<std::size_t>(n), 1.0);
  if (random_seed) system.solution = random_solution(static_cast<std::size_t>(n), *random_seed);
  if (options.rhs == "ones-solution")
    system.solution = std::vector<double>(static_cast<std::size_t>(n), 1.0);
  if (!options.initial_guess.empty()) {
    system.x0 = read_sized_vector(options.initial_guess, "x0", n, summary.matrix);
  }
  if (options.pin_unknown) {
    if (*options.pin_unknown < 1 || *options.pin_unknown > n) {
      throw InvalidInput("--pin-unknown " + std::to_string(*options.pin_unknown) +
                         " is outside 1.." + std::to_string(n) + ", the rows of " + summary.matrix);
    }
    const auto row = static_cast<index_t>(*options.pin_unknown - 1);
    pin_unknown(coo, system.b ? &*system.b : nullptr, row);
    if (system.x0) (*system.x0)[static_cast<std::size_t>(row)] = 0.0;
    if (system.solution) (*system.solution)[static_cast<std::size_t>(row)] = 0.0;  // x_row = 0
  }
  if (options.rhs == "random-solution") {
    summary.rhs = "b = A x* (x* random in [-1, 1), fixed seed; --rhs ones-solution for b = A * 1)";
  } else if (random_seed) {
    summary.rhs = "b = A x* (x* random in [-1, 1), seed " + std::to_string(*random_seed) + ")";
  } else if (options.rhs == "ones-solution") {
    summary.rhs = "b = A * 1 (exact solution x* = 1)";
  } else if (options.rhs == "ones") {
    summary.rhs = "b = 1";
  } else {
    summary.rhs = options.rhs;
  }
  return system;
}

}  // namespace

int run_solve(const SolveOptions& options) {
  if (options.copy_bytes && *options.copy_bytes < 0) {
    throw InvalidInput("--copy-bytes " + std::to_string(*options.copy_bytes) + " is negative");
  }
  // Configuration first, so a typo fails before a large matrix is read (without --preset or -c
  // the overrides are checked against the defaults here, and again on the advised preset).
  SolveSummary summary;
  Solver solver(resolve_configuration(options));
  const Backend backend = choose_backend(options.backend);
  summary.backend = backend.name();
  summary.device = backend.device_name();

  HostSystem system = load_system(options, summary);
  const index_t n = system.coo.num_rows;

  // Compress on the reference backend, analyse there, then copy explicitly to the chosen one.
  CsrMatrix host = CsrMatrix::from_coo(Backend::reference(), system.coo);
  system.coo = CooMatrix();
  summary.properties = analyse(host);
  if (options.preset.empty() && options.config_file.empty()) {
    solver = Solver(resolve_configuration(options, &summary.properties));
  }
  summary.config = solver.configuration();
  summary.solver_choice = options.preset.empty() && options.config_file.empty() ? "advice"
                          : options.preset.empty()                              ? "config file"
                                                                                : "preset";
  summary.solver_choice_reason = solver_choice_text(options, summary.properties);
  StorageOptions storage;
  // Without --format: CSR, or the storage the advice needs when it chose the solver.
  const bool advised = options.preset.empty() && options.config_file.empty();
  storage.format = !options.format.empty() ? options.format
                   : advised && !summary.properties.suggested_format.empty()
                       ? summary.properties.suggested_format
                       : "csr";
  storage.block_size = options.block_size;
  storage.precision = precision_from_string(options.precision);
  const StoredMatrix stored = store_matrix(std::move(host), backend, storage, summary.matrix);
  summary.format = stored.format();
  summary.format_reason = stored.format_reason();
  summary.spmv_bytes = stored.spmv_bytes();
  const LinearOperator& A = stored.op();

  Vector b;
  if (system.b) {
    b = Vector::from_host(backend, *system.b);
  } else if (system.solution) {
    b = Vector(backend, static_cast<std::size_t>(n));
    A.apply(Vector::from_host(backend, *system.solution), b);
  } else {
    b = Vector::constant(backend, static_cast<std::size_t>(n), 1.0);
  }
  Vector x = system.x0 ? Vector::from_host(backend, *system.x0)
                       : Vector::constant(backend, static_cast<std::size_t>(n), 0.0);

  // Setup and solve.
  naming_input(
      summary.matrix, [&] { solver.setup(A); }, "try --preset gmres (no preconditioner)");
  summary.preconditioner_summary = solver.preconditioner_summary();

  ProgressLine progress(isatty(2) == 1);
  if (progress.enabled()) {
    solver.krylov().set_monitor([&progress](int iteration, double residual_norm, double rhs_norm) {
      progress.update(iteration, residual_norm, rhs_norm);
    });
  }
  summary.report = solver.solve(b, x);
  progress.finish();
  if (!summary.report.converged() && summary.properties.constant_null_space) {
    summary.report.reason +=
        "; every row of A sums to zero (A 1 = 0: singular, constant null space): try "
        "--pin-unknown 1";
  }

  const std::vector<double> x_host = x.to_host();
  if (system.solution) {
    double error = 0.0;
    for (std::size_t i = 0; i < x_host.size(); ++i) {
      const double xi = x_host[i];
      error = std::max(error, std::isnan(xi) ? INFINITY : std::abs(xi - (*system.solution)[i]));
    }
    summary.max_error = error;
  }
  if (!options.output.empty()) io::write_vector(options.output, Span<const double>(x_host));

  // Achieved SpMV bandwidth, against the backend's measured copy bandwidth.
  Vector y(backend, static_cast<std::size_t>(n));
  A.apply(x, y);
  backend.synchronize();
  const auto spmv_start = std::chrono::steady_clock::now();
  for (int k = 0; k < kBandwidthRepetitions; ++k) A.apply(x, y);
  backend.synchronize();
  summary.spmv_seconds = seconds_since(spmv_start) / kBandwidthRepetitions;
  // The roofline: a device-to-device (or host) copy between two buffers of options.copy_bytes,
  // by default 256 MiB on cuda (a 64 MiB copy on an H100, just above its 50 MB L2, measures
  // 12% less than a large one) and 64 MiB on the host, where a copy is slower (a CPU with a
  // larger L3 needs a larger --copy-bytes to measure memory rather than cache). A matrix that
  // fits in cache may exceed it; the report says so.
  const long long copy_bytes =
      options.copy_bytes.value_or(backend.kind() == BackendKind::cuda ? 256LL << 20 : 64LL << 20);
  summary.copy = measure_copy_bandwidth(backend, static_cast<std::size_t>(copy_bytes));

  if (options.report == "json") {
    std::cout << solve_json(summary).dump() << "\n";
  } else {
    std::cout << solve_text(summary);
  }
  std::cout.flush();
  if (!options.plot.empty()) {
    const std::string method = summary.config["solver"]["type"].get<std::string>();
    plot_residual_history(summary.report, summary.matrix + " (" + method + ")", options.plot);
  }
  return summary.report.converged() ? 0 : 2;
}

}  // namespace kryflow::cli
