// A sequence of systems with one pattern and drifting values (kryflow_bench_sequence): the same
// drifting_diffusion sequence solved with a preconditioner rebuilt on every system, never
// rebuilt, rebuilt every K systems synchronously, and rebuilt every K systems on a host thread
// while the device solves; total time, the time the device waited for the host, and the
// timeline of the solves and the host rebuilds.
//
//   kryflow_bench_sequence [--backend cuda|cpu] [--n 64] [--steps 50] [--speed 0.02]
//                          [--contrast 3] [--preset pcg_ainv] [--every 10]
//                          [-p key=value (the preset)] [--json out.json]
//
// The matrices and right-hand sides are generated on the host before the runs; each run updates
// one CsrMatrix's values in place (CsrMatrix::update_values, not timed) and times what the
// sequence costs: the preconditioner work on the main thread (the device waits during it) and
// the solves. b is the generator's source term (not A x*), x_0 the previous solution.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kryflow/config/registry.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/solvers/sequence.hpp"

namespace {

using namespace kryflow;

struct Options {
  std::string backend = "cuda";
  int n = 64;
  int steps = 50;
  double speed = 0.02;
  double contrast = 3.0;
  std::string preset = "pcg_ainv";
  int every = 10;
  std::vector<std::string> overrides;
  std::string json;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw InvalidInput(a + " needs a value");
      return argv[++i];
    };
    if (a == "--backend") {
      o.backend = next();
    } else if (a == "--n") {
      o.n = std::stoi(next());
    } else if (a == "--steps") {
      o.steps = std::stoi(next());
    } else if (a == "--speed") {
      o.speed = std::stod(next());
    } else if (a == "--contrast") {
      o.contrast = std::stod(next());
    } else if (a == "--preset") {
      o.preset = next();
    } else if (a == "--every") {
      o.every = std::stoi(next());
    } else if (a == "-p") {
      o.overrides.push_back(next());
    } else if (a == "--json") {
      o.json = next();
    } else {
      throw InvalidInput("unknown option " + a);
    }
  }
  return o;
}

struct Mode {
  std::string name;
  ReusePolicy policy;
};

nlohmann::json run(const Options& o, const Mode& mode, const Backend& backend,
                   const std::vector<CooMatrix>& matrices,
                   const std::vector<std::vector<double>>& rhs) {
  nlohmann::json config = config::load_preset(o.preset);
  // A stale preconditioner makes CG plateau for long stretches: no stagnation stop before the
  // iteration limit, so that every mode solves every system.
  config["solver"]["max_iterations"] = 20000;
  config["solver"]["stagnation_window"] = 20000;
  for (const std::string& assignment : o.overrides) config::apply_override(config, assignment);
  config::SolverSetup setup = config::build_solver(config);
  CsrMatrix A = CsrMatrix::from_coo(backend, matrices[0]);
  Vector x = Vector::constant(backend, rhs[0].size(), 0.0);
  SequenceSolver sequence(*setup.solver, *setup.preconditioner, mode.policy);
  nlohmann::json systems = nlohmann::json::array();
  double solve = 0.0, preconditioner = 0.0, first_end = 0.0, last_end = 0.0;
  long long iterations = 0;
  int converged = 0;
  for (std::size_t k = 0; k < matrices.size(); ++k) {
    if (k > 0) A.update_values(Array<double>::from_host(backend, matrices[k].values));
    const Vector b = Vector::from_host(backend, rhs[k]);
    const SequenceStep step = sequence.solve(A, b, x);
    solve += step.report.solve_seconds;
    preconditioner += step.preconditioner_seconds;
    iterations += step.report.iterations;
    converged += step.report.converged() ? 1 : 0;
    if (k == 0) first_end = step.solve_end;
    last_end = step.solve_end;
    systems.push_back({{"iterations", step.report.iterations},
                       {"solve_seconds", step.report.solve_seconds},
                       {"preconditioner_seconds", step.preconditioner_seconds},
                       {"action", to_string(step.action)},
                       {"rebuild_started", step.rebuild_started},
                       {"solve_begin", step.solve_begin},
                       {"solve_end", step.solve_end}});
  }
  sequence.finish();
  nlohmann::json builder = nlohmann::json::array();
  double builder_seconds = 0.0;
  int installed = 0;
  for (const BuilderRun& r : sequence.builder_runs()) {
    builder.push_back(
        {{"system", r.system}, {"begin", r.begin}, {"end", r.end}, {"installed", r.installed}});
    builder_seconds += r.end - r.begin;
    installed += r.installed ? 1 : 0;
  }
  std::printf("%-22s %8lld %9.3f %9.3f %9.3f %6d %6zu/%d %9.3f  %d/%zu\n", mode.name.c_str(),
              iterations, solve, preconditioner, solve + preconditioner,
              static_cast<int>(sequence.builder_runs().size()), static_cast<std::size_t>(installed),
              static_cast<int>(sequence.builder_runs().size()), builder_seconds, converged,
              matrices.size());
  return {{"mode", mode.name},
          {"policy", mode.policy.to_string()},
          {"asynchronous", mode.policy.asynchronous},
          {"iterations", iterations},
          {"solve_seconds", solve},
          {"preconditioner_seconds", preconditioner},
          {"total_seconds", solve + preconditioner},
          // The device waits for the host only on the main thread's preconditioner work; the
          // builder thread is never waited for (solve() only checks whether it finished).
          {"device_waited_for_builder_seconds", 0.0},
          {"wall_seconds_after_first_solve", last_end - first_end},
          {"builder_seconds", builder_seconds},
          {"converged", converged},
          {"summary", setup.preconditioner->summary()},
          {"systems", systems},
          {"builder_runs", builder}};
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    const Backend backend = Backend::create(parse_backend_kind(o.backend));
    std::vector<CooMatrix> matrices;
    std::vector<std::vector<double>> rhs;
    for (int k = 0; k < o.steps; ++k) {
      std::vector<double> b;
      matrices.push_back(drifting_diffusion(o.n, k, o.speed, o.contrast, &b));
      rhs.push_back(std::move(b));
    }
    std::printf(
        "backend %s; %d systems of drifting_diffusion(%d^3 = %d rows, speed %g, contrast 10^%g), "
        "preset %s\n",
        backend.name().c_str(), o.steps, o.n, matrices[0].num_rows, o.speed, o.contrast,
        o.preset.c_str());
    std::printf("%-22s %8s %9s %9s %9s %6s %8s %9s  %s\n", "mode", "its", "solve s", "precond s",
                "total s", "builds", "swapped", "builder s", "converged");
    const std::string every = "every:" + std::to_string(o.every);
    ReusePolicy asynchronous = ReusePolicy::parse(every);
    asynchronous.asynchronous = true;
    // Asynchronous "always": the builder starts again from the latest values as soon as its
    // result is swapped in, so the preconditioner is as fresh as the host can make it.
    ReusePolicy continuous = ReusePolicy::parse("always");
    continuous.asynchronous = true;
    const std::vector<Mode> modes = {{"rebuild every system", ReusePolicy::parse("always")},
                                     {"never rebuild", ReusePolicy::parse("never")},
                                     {"synchronous " + every, ReusePolicy::parse(every)},
                                     {"asynchronous " + every, asynchronous},
                                     {"asynchronous always", continuous}};
    nlohmann::json results = nlohmann::json::array();
    for (const Mode& mode : modes) results.push_back(run(o, mode, backend, matrices, rhs));
    if (!o.json.empty()) {
      std::ofstream(o.json) << nlohmann::json{{"benchmark", "kryflow_bench_sequence"},
                                              {"backend", backend.name()},
                                              {"n", o.n},
                                              {"rows", matrices[0].num_rows},
                                              {"steps", o.steps},
                                              {"speed", o.speed},
                                              {"log10_contrast", o.contrast},
                                              {"preset", o.preset},
                                              {"overrides", o.overrides},
                                              {"results", results}}
                                   .dump(1)
                            << "\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kryflow_bench_sequence: %s\n", e.what());
    return 1;
  }
}
