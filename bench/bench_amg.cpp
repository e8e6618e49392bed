// PCG with algebraic multigrid on 3D Poisson problems: the setup per phase, the value-only
// re-setup, the solve, the hierarchy's memory, and the finest Galerkin product against
// cuSPARSE's SpGEMM (on cuda).
//
// Problems: the 7-point (p7) and 27-point (p27) stencils of include/kryflow/linalg/generators.hpp
// on n^3 grids. Right-hand side b = 1 (every frequency, unlike b = A 1), x_0 = 0, PCG to the
// relative residual 1e-8, the preconditioner of the pcg_amg preset (configs/pcg_amg.json), or
// of the preset --preset names (pcg_sa: smoothed aggregation), with the overrides given. Times are
// wall-clock seconds, the backend synchronized before a clock is read:
//   setup      AmgPreconditioner::setup, the median of --repeats setups (phases from the last
//              one's HierarchyReport; the first, which grows the memory pool, beside it), after
//              one warm-up setup of a small problem (CUDA context and module loading)
//   resetup    update_values after A's values are scaled by 2 (same pattern), the median of
//              --repeats
//   solve      the PCG solve after setup (iterations, status, true residual): the median of
//              --repeats solves with the configured graph mode (automatic: cycles recorded
//              once and replayed) and, as "no graph", with every kernel launched
//   galerkin   the finest level's R (A P): kryflow's two products (the galerkin_product phase
//              of a two-level setup, and of its value-only re-setup: A P's columns and values
//              in one pass, then R (A P)'s values) and, on cuda, two cusparseSpGEMM products
//              (bench/cusparse_spgemm.cu); the median of --repeats runs each
// A problem that fails (an error in setup, e.g. NotSupported or OutOfMemory) is reported with
// its message and the others still run.
// --precisions float64,float32 runs every problem once per hierarchy_precision (how P, R and
// the coarse matrices store their values; one row each, the field hierarchy_precision in the
// JSON; without it, the preset's and the overrides' choice) and, after the rows of a problem
// with both, a line and a JSON entry ("precision_comparisons") of float32 against float64:
// setup, solve, iterations and bytes per fine row side by side.
// --matrix NAME=PATH[@K] (repeatable; replaces the model problems): a Matrix Market file, unknown
// K (1-based) pinned to 0 when given (pin_unknown, for a singular pure-Neumann pressure matrix),
// b = A x* with kryflow solve's fixed-seed random x*, up to 30,000 iterations; beside the AMG
// row, the --baseline preset (pcg_jacobi) on the same A and b: after a warm-up, the medians of
// --repeats preconditioner setups and solves ("first": the first run on this matrix, after the
// process's warm-up on a small model problem; kryflow solve measures one cold run).
//
//   kryflow_bench_amg [--backend cuda|cpu|reference] [--preset pcg_amg|pcg_sa]
//                     [--problems p7:100,p7:200,p7:300,p27:200] [--matrix NAME=PATH[@K]]
//                     [--baseline pcg_jacobi]
//                     [--smoother S] [--coarsening C] [--interpolation direct|extended_i|seed]
//                     [-p key=value ...] [--repeats 3] [--precisions float64[,float32]]
//                     [--no-galerkin] [--profile-setup] [--profile-resetup] [--profile-solve]
//                     [--json out.json]
// --profile-setup / --profile-resetup / --profile-solve bracket each timed setup / re-setup /
// solve (the configured graph mode's, not the launched ones) with the CUDA
// profiler's capture range (bench::profiler_capture), for Nsight Compute run with
// --profile-from-start off. The JSON gives the host waits (Backend::host_waits) of the last
// setup and re-setup beside their phases.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/timing.hpp"
#include "kryflow/amg/amg.hpp"
#include "kryflow/config/registry.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/preconditioners/jacobi.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#ifdef KRYFLOW_WITH_CUDA
#include "bench/cusparse_spgemm.hpp"
#endif

namespace {

using namespace kryflow;
using Clock = std::chrono::steady_clock;

using bench::median;
using bench::seconds_since;

struct Problem {
  std::string stencil;  // p7, p27, or mtx (a Matrix Market file)
  int n = 0;
  std::string label;  // mtx: the name in the table
  std::string path;   // mtx: the file
  index_t pin = 0;    // mtx: 1-based unknown fixed to 0 (pin_unknown), 0 when none
  bool from_file() const { return stencil == "mtx"; }
  std::string name() const {
    return from_file() ? label : stencil + "(" + std::to_string(n) + "^3)";
  }
  CooMatrix matrix() const {
    if (from_file()) {
      CooMatrix coo = io::read_matrix_market(path);
      if (pin > 0) pin_unknown(coo, nullptr, pin - 1);
      return coo;
    }
    return stencil == "p27" ? poisson3d27(n) : poisson3d(n);
  }
};

std::vector<Problem> parse_problems(const std::string& text) {
  std::vector<Problem> problems;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const std::size_t colon = item.find(':');
    if (colon == std::string::npos) throw InvalidInput("--problems: expected p7:N or p27:N");
    Problem p{item.substr(0, colon), std::stoi(item.substr(colon + 1))};
    if (p.stencil != "p7" && p.stencil != "p27") {
      throw InvalidInput("--problems: unknown stencil '" + p.stencil + "' (p7 or p27)");
    }
    problems.push_back(p);
  }
  return problems;
}

/// --matrix NAME=PATH[@K]: a Matrix Market file, unknown K (1-based) pinned when given.
Problem parse_matrix(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw InvalidInput("--matrix: expected NAME=PATH[@K]");
  Problem p;
  p.stencil = "mtx";
  p.label = text.substr(0, eq);
  p.path = text.substr(eq + 1);
  if (const std::size_t at = p.path.rfind('@'); at != std::string::npos) {
    p.pin = static_cast<index_t>(std::stol(p.path.substr(at + 1)));
    p.path.resize(at);
  }
  return p;
}

struct Options {
  std::string backend = "cuda";
  std::string preset = "pcg_amg";
  std::vector<Problem> problems = parse_problems("p7:100,p7:200,p7:300,p27:200");
  std::vector<std::string> overrides;
  int repeats = 3;
  std::vector<std::string> precisions;  // empty: the configuration's hierarchy_precision
  bool galerkin = true;
  bool profile_resetup = false;
  bool profile_setup = false;
  bool profile_solve = false;
  std::string json_file;
  std::string baseline = "pcg_jacobi";  // compared with on matrix files
};

/// The finest Galerkin product: kryflow's (a two-level setup with a Jacobi coarse solver, its
/// galerkin_product phase) and cuSPARSE's on the same R, A, P.
nlohmann::json galerkin_comparison(const CsrMatrix& A, AmgPreconditioner::Parameters parameters,
                                   int repeats) {
  parameters.max_levels = 2;
  parameters.hierarchy_precision = Precision::float64;  // cuSPARSE multiplies the double P and R
  std::vector<double> ours, ours_resetup, theirs;
  nlohmann::json out;
  for (int k = 0; k < repeats; ++k) {
    AmgPreconditioner two_level(parameters, std::make_unique<JacobiPreconditioner>());
    two_level.setup(A);
    for (const HierarchyReport::Phase& phase : two_level.hierarchy_report().phases) {
      if (phase.name == "galerkin_product") ours.push_back(phase.seconds);
    }
    two_level.update_values(A);
    for (const HierarchyReport::Phase& phase : two_level.hierarchy_report().phases) {
      if (phase.name == "galerkin_product") ours_resetup.push_back(phase.seconds);
    }
    if (two_level.num_levels() == 0) return out;
    out["coarse_rows"] = two_level.level_matrix(1).num_rows();
    out["coarse_nonzeros"] = two_level.level_matrix(1).nnz();
#ifdef KRYFLOW_WITH_CUDA
    if (A.backend().is_device()) {
      const bench::GalerkinTiming t =
          bench::cusparse_galerkin_product(two_level.restriction(0), A, two_level.prolongation(0));
      theirs.push_back(t.seconds);
      out["cusparse_coarse_nonzeros"] = t.coarse_nnz;
    }
#endif
  }
  out["kryflow_seconds"] = median(ours);
  out["kryflow_resetup_seconds"] = median(ours_resetup);
  if (!theirs.empty()) out["cusparse_seconds"] = median(theirs);
  return out;
}

/// Solver settings for a matrix file: tolerance 1e-8 and room for slow convergence.
void apply_solve_limits(nlohmann::json& config, bool from_file) {
  config["solver"]["relative_tolerance"] = 1e-8;
  if (from_file) {
    config::apply_override(config, "solver.max_iterations=30000");
    config::apply_override(config, "solver.stagnation_window=5000");
  }
}

/// The baseline preset (pcg_jacobi) on the same A and b: one warm-up, then the medians of
/// `repeats` preconditioner setups and solves.
nlohmann::json baseline_solve(const std::string& preset, const CsrMatrix& A, const Vector& b,
                              int repeats) {
  nlohmann::json config = config::load_preset(preset);
  apply_solve_limits(config, true);
  config::SolverSetup setup = config::build_solver(config);
  Vector x(A.backend(), b.size());
  std::vector<double> setups, solves;
  SolveReport solved;
  nlohmann::json out{{"preset", preset}};
  for (int k = 0; k <= repeats; ++k) {
    fill(x, 0.0);
    auto start = Clock::now();
    setup.preconditioner->setup(A);
    const double setup_seconds = seconds_since(A.backend(), start);
    start = Clock::now();
    solved = setup.solver->solve(A, *setup.preconditioner, b, x);
    const double solve_seconds = seconds_since(A.backend(), start);
    if (k == 0) {
      out["first_setup_plus_solve_seconds"] = setup_seconds + solve_seconds;
      continue;
    }
    setups.push_back(setup_seconds);
    solves.push_back(solve_seconds);
  }
  out["setup_seconds"] = median(setups);
  out["solve_seconds"] = median(solves);
  out["setup_plus_solve_seconds"] = median(setups) + median(solves);
  out["iterations"] = solved.iterations;
  out["status"] = to_string(solved.status);
  out["true_relative_residual"] = solved.true_relative_residual();
  return out;
}

/// `precision` empty: the configuration's hierarchy_precision.
nlohmann::json bench_one(const Problem& problem, const Backend& backend, const Options& options,
                         const std::string& precision = "") {
  nlohmann::json out{{"problem", problem.name()},
                     {"right_hand_side", problem.from_file() ? "random-solution" : "ones"}};
  const CooMatrix coo = problem.matrix();
  CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  out["rows"] = A.num_rows();
  out["nonzeros"] = A.nnz();
  nlohmann::json config = config::load_preset(options.preset);
  for (const std::string& assignment : options.overrides) {
    config::apply_override(config, assignment);
  }
  if (!precision.empty()) config["solver"]["preconditioner"]["hierarchy_precision"] = precision;
  apply_solve_limits(config, problem.from_file());
  config::SolverSetup setup = config::build_solver(config);
  out["preconditioner"] = setup.resolved["solver"]["preconditioner"];
  out["hierarchy_precision"] = out["preconditioner"]["hierarchy_precision"];
  auto* amg = dynamic_cast<AmgPreconditioner*>(setup.preconditioner.get());
  if (amg == nullptr) throw InvalidInput("the configuration's preconditioner is not amg");
  try {
    // The first setup on this matrix pays the memory pool's growth; the median of `repeats`
    // setups is reported beside it (a CFD code sets up many times per run).
    std::vector<double> setups;
    std::uint64_t waits = 0;
    for (int k = 0; k < options.repeats; ++k) {
      const std::uint64_t waits_before = backend.host_waits();
      const auto start = Clock::now();
      if (options.profile_setup) bench::profiler_capture(true);
      amg->setup(A);
      setups.push_back(seconds_since(backend, start));
      if (options.profile_setup) bench::profiler_capture(false);
      waits = backend.host_waits() - waits_before;
    }
    out["setup_host_waits"] = waits;
    out["first_setup_seconds"] = setups.front();
    out["setup_seconds"] = median(setups);
    auto start = Clock::now();
    const HierarchyReport report = amg->hierarchy_report();
    nlohmann::json phases = nlohmann::json::object();
    nlohmann::json phase_waits = nlohmann::json::object();
    for (const HierarchyReport::Phase& phase : report.phases) {
      phases[phase.name] = phase.seconds;
      phase_waits[phase.name] = phase.host_waits;
    }
    out["setup_phases"] = phases;
    out["setup_phase_host_waits"] = phase_waits;
    out["levels"] = report.levels.size();
    out["operator_complexity"] = report.operator_complexity;
    out["grid_complexity"] = report.grid_complexity;
    out["memory_bytes"] = report.memory_bytes;
    out["bytes_per_fine_row"] = report.bytes_per_fine_row;
    out["smoother"] = report.smoother;
    out["coarse_solver"] = report.coarse_solver;

    // b = 1 on the model problems; b = A x* (x* random, kryflow solve's default) on files.
    Vector b = Vector::constant(backend, static_cast<std::size_t>(A.num_rows()), 1.0);
    if (problem.from_file()) {
      A.apply(Vector::from_host(backend, random_solution(b.size())), b);
    }
    Vector x(backend, b.size());
    // The first solve allocates the solver's workspace (and records the cycle when the graph
    // mode replays it); the median of `repeats` solves is reported beside it, with cycles
    // replayed (the automatic mode for AMG) and launched kernel by kernel.
    SolveReport solved;
    auto solve_times = [&](GraphMode mode, bool profile) {
      IterationOptions iteration = setup.solver->options();
      iteration.graphs = mode;
      setup.solver->set_options(iteration);
      std::vector<double> times;
      for (int k = 0; k < options.repeats; ++k) {
        fill(x, 0.0);
        start = Clock::now();
        if (profile) bench::profiler_capture(true);
        solved = setup.solver->solve(A, *amg, b, x);
        times.push_back(seconds_since(backend, start));
        if (profile) bench::profiler_capture(false);
      }
      return times;
    };
    const GraphMode configured = setup.solver->options().graphs;
    const std::vector<double> launched = solve_times(GraphMode::never, false);
    out["solve_seconds_launched"] = median(launched);
    const std::vector<double> solves = solve_times(configured, options.profile_solve);
    out["graphs"] = to_string(configured);
    out["graphs_used"] = setup.solver->use_graphs(A, *amg);
    out["first_solve_seconds"] = solves.front();
    out["solve_seconds"] = median(solves);
    out["iterations"] = solved.iterations;
    out["status"] = to_string(solved.status);
    out["true_relative_residual"] = solved.true_relative_residual();
    out["setup_plus_solve_seconds"] =
        out["setup_seconds"].get<double>() + out["solve_seconds"].get<double>();
    out["first_setup_plus_solve_seconds"] =
        out["first_setup_seconds"].get<double>() + out["first_solve_seconds"].get<double>();
    if (problem.from_file() && !options.baseline.empty()) {
      out["baseline"] = baseline_solve(options.baseline, A, b, options.repeats);
    }

    std::vector<double> doubled = A.values_to_host();
    std::vector<double> resetups;
    for (int k = 0; k < options.repeats; ++k) {
      for (double& v : doubled) v *= 2.0;  // new values each time, same pattern
      A.update_values(Array<double>::from_host(backend, doubled));
      const std::uint64_t waits_before = backend.host_waits();
      start = Clock::now();
      if (options.profile_resetup) bench::profiler_capture(true);
      amg->update_values(A);
      resetups.push_back(seconds_since(backend, start));
      if (options.profile_resetup) bench::profiler_capture(false);
      out["resetup_host_waits"] = backend.host_waits() - waits_before;
    }
    out["resetup_seconds"] = median(resetups);
    nlohmann::json rephases = nlohmann::json::object();
    for (const HierarchyReport::Phase& phase : amg->hierarchy_report().phases) {
      rephases[phase.name] = phase.seconds;
    }
    out["resetup_phases"] = rephases;
    if (options.galerkin) {
      AmgPreconditioner::Parameters parameters = amg->amg_parameters();
      out["galerkin_finest"] = galerkin_comparison(A, parameters, options.repeats);
    }
  } catch (const Error& e) {
    out["error"] = e.what();
  }
  return out;
}

std::string seconds_or_dash(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", j[key].get<double>());
  return text;
}

void print_row(const nlohmann::json& r) {
  if (r.contains("error")) {
    std::printf("%-14s %10d  error: %s\n", r["problem"].get<std::string>().c_str(),
                r["rows"].get<int>(), r["error"].get<std::string>().c_str());
    return;
  }
  const nlohmann::json g = r.value("galerkin_finest", nlohmann::json::object());
  std::printf(
      "%-14s %7s %10d %4d %6.2f %7.0f %8s %8s %8s %8s %5d %9s %9s %9s %9s\n",
      r["problem"].get<std::string>().c_str(), r["hierarchy_precision"].get<std::string>().c_str(),
      r["rows"].get<int>(), r["levels"].get<int>(), r["operator_complexity"].get<double>(),
      r["bytes_per_fine_row"].get<double>(), seconds_or_dash(r, "setup_seconds").c_str(),
      seconds_or_dash(r, "resetup_seconds").c_str(), seconds_or_dash(r, "solve_seconds").c_str(),
      seconds_or_dash(r, "solve_seconds_launched").c_str(), r["iterations"].get<int>(),
      seconds_or_dash(r, "setup_plus_solve_seconds").c_str(),
      seconds_or_dash(g, "kryflow_seconds").c_str(), seconds_or_dash(g, "cusparse_seconds").c_str(),
      seconds_or_dash(g, "kryflow_resetup_seconds").c_str());
  if (r.contains("baseline")) {
    const nlohmann::json& j = r["baseline"];
    std::printf(
        "  %s: %s %d iterations (%s), setup + solve %.4f s (first %.4f s); amg %.4f s "
        "(first %.4f s)\n",
        r["problem"].get<std::string>().c_str(), j["preset"].get<std::string>().c_str(),
        j["iterations"].get<int>(), j["status"].get<std::string>().c_str(),
        j["setup_plus_solve_seconds"].get<double>(),
        j["first_setup_plus_solve_seconds"].get<double>(),
        r["setup_plus_solve_seconds"].get<double>(),
        r["first_setup_plus_solve_seconds"].get<double>());
  }
  if (r.contains("setup_phases") && r.contains("setup_phase_host_waits")) {
    std::printf("  %s setup phases (ms, host waits):", r["problem"].get<std::string>().c_str());
    for (const auto& [name, seconds] : r["setup_phases"].items()) {
      std::printf(" %s %.2f (%llu)", name.c_str(), 1e3 * seconds.get<double>(),
                  static_cast<unsigned long long>(
                      r["setup_phase_host_waits"].value(name, std::uint64_t{0})));
    }
    std::printf("; %llu waits in all\n",
                static_cast<unsigned long long>(r.value("setup_host_waits", std::uint64_t{0})));
  }
}

/// float32 against float64 on one problem: both rows' setup, solve, iterations and bytes per
/// fine row, and the ratios float32 / float64; null when either row failed.
nlohmann::json compare_precisions(const nlohmann::json& f64, const nlohmann::json& f32) {
  if (f64.contains("error") || f32.contains("error")) return nullptr;
  nlohmann::json out{{"problem", f64["problem"]}};
  for (const char* key : {"setup_seconds", "resetup_seconds", "solve_seconds", "iterations",
                          "bytes_per_fine_row", "memory_bytes", "true_relative_residual"}) {
    out[key] = {{"float64", f64[key]}, {"float32", f32[key]}};
  }
  for (const char* key : {"setup_seconds", "solve_seconds", "bytes_per_fine_row"}) {
    const double base = f64[key].get<double>();
    out[std::string(key) + "_ratio"] = base > 0.0 ? f32[key].get<double>() / base : 0.0;
  }
  std::printf(
      "  %s float32/float64: setup %.2fx, solve %.2fx, iterations %d/%d, bytes per row "
      "%.0f/%.0f\n",
      f64["problem"].get<std::string>().c_str(), out["setup_seconds_ratio"].get<double>(),
      out["solve_seconds_ratio"].get<double>(), f32["iterations"].get<int>(),
      f64["iterations"].get<int>(), f32["bytes_per_fine_row"].get<double>(),
      f64["bytes_per_fine_row"].get<double>());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options options;
    bool matrices_given = false;  // --matrix replaces the default problems
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw InvalidInput(arg + " needs a value");
        return argv[++i];
      };
      if (arg == "--backend") {
        options.backend = next();
      } else if (arg == "--preset") {
        options.preset = next();
      } else if (arg == "--problems") {
        options.problems = parse_problems(next());
      } else if (arg == "--matrix") {
        if (!matrices_given) options.problems.clear();
        matrices_given = true;
        options.problems.push_back(parse_matrix(next()));
      } else if (arg == "--baseline") {
        options.baseline = next();
      } else if (arg == "--smoother") {
        options.overrides.push_back("solver.preconditioner.smoother=" + next());
      } else if (arg == "--coarsening") {
        options.overrides.push_back("solver.preconditioner.coarsening=" + next());
      } else if (arg == "--interpolation") {
        options.overrides.push_back("solver.preconditioner.interpolation=" + next());
      } else if (arg == "-p") {
        options.overrides.push_back(next());
      } else if (arg == "--repeats") {
        options.repeats = std::max(1, std::stoi(next()));
      } else if (arg == "--precisions") {
        options.precisions.clear();
        std::stringstream in(next());
        for (std::string item; std::getline(in, item, ',');) {
          options.precisions.emplace_back(to_string(precision_from_string(item)));
        }
        if (options.precisions.empty()) throw InvalidInput("--precisions: empty list");
      } else if (arg == "--profile-resetup") {
        options.profile_resetup = true;
      } else if (arg == "--profile-setup") {
        options.profile_setup = true;
      } else if (arg == "--profile-solve") {
        options.profile_solve = true;
      } else if (arg == "--no-galerkin") {
        options.galerkin = false;
      } else if (arg == "--json") {
        options.json_file = next();
      } else {
        throw InvalidInput("unknown argument '" + arg + "'");
      }
    }
    const Backend backend = Backend::create(parse_backend_kind(options.backend));
    std::printf("backend %s; PCG-AMG (%s preset", backend.name().c_str(), options.preset.c_str());
    for (const std::string& o : options.overrides) std::printf(", %s", o.c_str());
    std::printf("), b = 1 (model problems) or A x* (matrix files), relative tolerance 1e-8\n");
    std::printf("%-14s %7s %10s %4s %6s %7s %8s %8s %8s %8s %5s %9s %9s %9s %9s\n", "problem",
                "values", "rows", "lvls", "op.cx", "B/row", "setup s", "resetup", "solve s",
                "no graph", "its", "setup+sol", "RAP kryf", "RAP cusp", "RAP re");
    {  // warm-up: CUDA context, module loading, cuSOLVER and cuSPARSE handles
      Options quiet = options;
      quiet.repeats = 1;
      quiet.galerkin = false;
      quiet.profile_resetup = false;
      quiet.profile_setup = false;
      quiet.profile_solve = false;
      bench_one(Problem{"p7", 16}, backend, quiet);
    }
    nlohmann::json results = nlohmann::json::array();
    nlohmann::json comparisons = nlohmann::json::array();
    for (const Problem& problem : options.problems) {
      nlohmann::json by_precision = nlohmann::json::object();
      const std::vector<std::string> precisions =
          options.precisions.empty() ? std::vector<std::string>{""} : options.precisions;
      for (const std::string& precision : precisions) {
        results.push_back(bench_one(problem, backend, options, precision));
        print_row(results.back());
        by_precision[results.back()["hierarchy_precision"].get<std::string>()] = results.back();
        std::fflush(stdout);
      }
      if (by_precision.contains("float64") && by_precision.contains("float32")) {
        comparisons.push_back(compare_precisions(by_precision["float64"], by_precision["float32"]));
        std::fflush(stdout);
      }
    }
    if (!options.json_file.empty()) {
      nlohmann::json document{{"benchmark", "amg"},
                              {"backend", backend.name()},
                              {"preset", options.preset},
                              {"overrides", options.overrides},
                              {"hierarchy_precisions", options.precisions},
                              {"results", results}};
      if (!comparisons.empty()) document["precision_comparisons"] = comparisons;
      std::ofstream(options.json_file) << document.dump(2) << "\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kryflow_bench_amg: %s\n", e.what());
    return 1;
  }
}
