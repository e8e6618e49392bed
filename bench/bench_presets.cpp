// Presets (with overrides) on one matrix in one process: setup and solve timed separately and
// together, the first (cold: module loading, first cuSOLVER or cuSPARSE calls) apart from the
// median of the warm repeats, as a solver inside a time-stepping code sees them.
//
// Each repeat builds a fresh Solver from the configuration, sets it up on the stored matrix and
// solves from x = 0; the true residual ||b - A x|| / ||b|| is recomputed here from the host copy
// of A (not the solver's). b is the file's (--rhs) or b = 1.
//
//   kryflow_bench_presets --matrix FILE [--rhs FILE] [--format csr|bsr|sell|auto]
//       [--block-size B] [--backend cuda] [--repeats 5] [--json out.json]
//       --run LABEL=PRESET[,key=value...] [--run ...]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/timing.hpp"
#include "kryflow/config/registry.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/solver.hpp"

namespace {

using namespace kryflow;

struct Run {
  std::string label;
  std::string preset;
  std::vector<std::string> overrides;
};

Run parse_run(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos) throw ConfigError("--run", "expected LABEL=PRESET[,key=value]");
  Run run;
  run.label = text.substr(0, equals);
  std::vector<std::string> parts = bench::split_list(text.substr(equals + 1));
  if (parts.empty()) throw ConfigError("--run", "no preset in '" + text + "'");
  run.preset = parts.front();
  run.overrides.assign(parts.begin() + 1, parts.end());
  return run;
}

[[noreturn]] void usage() {
  std::fprintf(
      stderr,
      "usage: kryflow_bench_presets --matrix FILE [--rhs FILE] [--format csr|bsr|sell|auto] "
      "[--block-size B] [--backend cuda] [--repeats 5] [--json out.json] --run "
      "LABEL=PRESET[,key=value...] ...\n");
  std::exit(2);
}

/// ||b - A x|| / ||b|| from host copies (CSR).
double true_relative_residual(const CooMatrix& A, const std::vector<double>& x,
                              const std::vector<double>& b) {
  std::vector<double> r(b);
  for (std::size_t k = 0; k < A.num_entries(); ++k)
    r[A.row_idx[k]] -= A.values[k] * x[A.col_idx[k]];
  double rr = 0.0, bb = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    rr += r[i] * r[i];
    bb += b[i] * b[i];
  }
  return bb > 0 ? std::sqrt(rr / bb) : std::sqrt(rr);
}

}  // namespace

int main(int argc, char** argv) {
  std::string matrix_path, rhs_path, backend_name = "cuda", json_path;
  StorageOptions storage;
  int repeats = 5;
  std::vector<Run> runs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) usage();
    const std::string value = argv[++i];
    if (arg == "--matrix") {
      matrix_path = value;
    } else if (arg == "--rhs") {
      rhs_path = value;
    } else if (arg == "--format") {
      storage.format = value;
    } else if (arg == "--block-size") {
      storage.block_size = std::stoi(value);
    } else if (arg == "--backend") {
      backend_name = value;
    } else if (arg == "--repeats") {
      repeats = std::max(1, std::stoi(value));
    } else if (arg == "--json") {
      json_path = value;
    } else if (arg == "--run") {
      runs.push_back(parse_run(value));
    } else {
      usage();
    }
  }
  if (matrix_path.empty() || runs.empty()) usage();
  try {
    const Backend backend = backend_by_name(backend_name);
    const CooMatrix coo = io::read_matrix_market(matrix_path);
    const auto n = static_cast<std::size_t>(coo.num_rows);
    const std::vector<double> b_host =
        rhs_path.empty() ? std::vector<double>(n, 1.0) : io::read_vector(rhs_path);
    if (b_host.size() != n) throw DimensionMismatch("--rhs: its length differs from the rows");
    StoredMatrix A = store_matrix(CsrMatrix::from_coo(backend, coo), backend, storage, matrix_path);
    const Vector b = Vector::from_host(backend, b_host);
    std::printf("%s: %zu rows, %s, %s\n", matrix_path.c_str(), n, A.format().c_str(),
                backend.device_name().c_str());
    std::printf(
        "| run | preset, overrides | iterations | status | true residual | cold setup s | cold "
        "solve s | setup s | solve s | setup + solve s "
        "|\n|---|---|---|---|---|---|---|---|---|---|\n");
    nlohmann::json out;
    out["benchmark"] = "presets";
    out["matrix"] = matrix_path;
    out["rhs"] = rhs_path.empty() ? "ones" : rhs_path;
    out["format"] = A.format();
    out["device"] = backend.device_name();
    out["date"] = bench::utc_now();
    out["repeats"] = repeats;
    out["records"] = nlohmann::json::array();
    for (const Run& run : runs) {
      std::vector<double> setups, solves, totals;
      double cold_setup = 0.0, cold_solve = 0.0, residual = 0.0;
      SolveReport last;
      for (int r = 0; r <= repeats; ++r) {
        Solver solver(config::resolve_configuration(run.preset, run.overrides));
        solver.setup(A.op());
        Vector x = Vector::constant(backend, n, 0.0);
        last = solver.solve(b, x);
        if (r == 0) {
          cold_setup = last.setup_seconds;
          cold_solve = last.solve_seconds;
          residual = true_relative_residual(coo, x.to_host(), b_host);
          continue;
        }
        setups.push_back(last.setup_seconds);
        solves.push_back(last.solve_seconds);
        totals.push_back(last.setup_seconds + last.solve_seconds);
      }
      std::string description = run.preset;
      for (const std::string& o : run.overrides) description += ", " + o;
      const double setup = median(setups), solve = median(solves), total = median(totals);
      std::printf("| %s | %s | %d | %s | %.2e | %.4f | %.4f | %.4f | %.4f | %.4f |\n",
                  run.label.c_str(), description.c_str(), last.iterations, to_string(last.status),
                  residual, cold_setup, cold_solve, setup, solve, total);
      std::fflush(stdout);
      out["records"].push_back({{"label", run.label},
                                {"preset", run.preset},
                                {"overrides", run.overrides},
                                {"iterations", last.iterations},
                                {"status", to_string(last.status)},
                                {"true_relative_residual", residual},
                                {"cold_setup_seconds", cold_setup},
                                {"cold_solve_seconds", cold_solve},
                                {"setup_seconds", setup},
                                {"solve_seconds", solve},
                                {"setup_plus_solve_seconds", total},
                                {"setup_samples", setups},
                                {"solve_samples", solves}});
    }
    if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kryflow_bench_presets: %s\n", e.what());
    return 1;
  }
  return 0;
}
