// PCG-AINV and PCG-FSAI against PCG-Jacobi (kryflow_bench_ainv): the setup (AINV's host
// factorization, FSAI's on the backend), the apply of the factors in float32 and float64, and
// the solves, on generated 3D Poisson (b = 1) and Matrix
// Market files (b = A x*, x* random).
//
//   kryflow_bench_ainv [--backend cuda|cpu] [--problems p7:200] [--matrix NAME=PATH[@K]]
//                      [-p key=value (the pcg_ainv preset's preconditioner)]
//                      [--fsai key=value (the pcg_fsai preset's)] [--methods ainv,fsai]
//                      [--bicgstab (the bicgstab_* presets, for nonsymmetric matrices)]
//                      [--repeats 5]
//                      [--json out.json]
//
// Per problem and factor precision: setup (factorization on the host and the upload), the
// apply of M (two sparse products; bench::time_per_call) and its bytes per second against the bytes
// the factors and vectors must move, iterations and solve time of pcg_ainv; then pcg_jacobi's.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/timing.hpp"
#include "kryflow/config/registry.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/preconditioners/approximate_inverse.hpp"
#include "kryflow/preconditioners/fsai.hpp"
#include "kryflow/solvers/krylov_solver.hpp"

namespace {

using namespace kryflow;
using Clock = std::chrono::steady_clock;

using bench::median;
using bench::seconds_since;

struct Problem {
  std::string name;
  CooMatrix coo;
  bool ones = false;  // b = 1 (generated), else b = A x*
};

nlohmann::json solve(const std::string& preset, const std::vector<std::string>& overrides,
                     const CsrMatrix& A, const Vector& b, int repeats) {
  nlohmann::json config = config::load_preset(preset);
  config["solver"]["max_iterations"] = 100000;
  config["solver"]["stagnation_window"] = 10000;
  for (const std::string& o : overrides) config::apply_override(config, o);
  config::SolverSetup setup = config::build_solver(config);
  nlohmann::json out{{"preset", preset}, {"config", config}};
  std::vector<double> setups, solves;
  SolveReport report;
  Vector x(A.backend(), b.size());
  for (int k = 0; k < repeats; ++k) {
    fill(x, 0.0);
    auto start = Clock::now();
    setup.preconditioner->setup(A);
    setups.push_back(seconds_since(A.backend(), start));
    start = Clock::now();
    report = setup.solver->solve(A, *setup.preconditioner, b, x);
    solves.push_back(seconds_since(A.backend(), start));
  }
  out["setup_seconds"] = median(setups);
  out["solve_seconds"] = median(solves);
  out["setup_plus_solve_seconds"] = median(setups) + median(solves);
  out["iterations"] = report.iterations;
  out["status"] = to_string(report.status);
  out["true_relative_residual"] = report.true_relative_residual();
  out["summary"] = setup.preconditioner->summary();
  const auto measure_apply = [&](const auto& m) {
    // The apply alone: two sparse products per call, timed in batches on the queue.
    const Vector r = Vector::constant(A.backend(), b.size(), 1.0);
    Vector z(A.backend(), b.size());
    const double apply = bench::time_per_call(A.backend(), [&] { m.apply(r, z); });
    const double value_bytes = m.lower().precision() == Precision::float32 ? 4.0 : 8.0;
    const double entries = static_cast<double>(m.lower().nnz() + m.upper().nnz());
    // Entries (column + value), both row pointer arrays, r read, the work vector written and
    // read, z written.
    const double bytes =
        entries * (4.0 + value_bytes) + 2.0 * 4.0 * (b.size() + 1) + 4.0 * 8.0 * b.size();
    out["apply_seconds"] = apply;
    out["apply_bytes"] = bytes;
    out["apply_gb_per_s"] = bytes / apply * 1e-9;
    out["memory_bytes_per_row"] = static_cast<double>(m.memory_bytes()) / b.size();
  };
  if (const auto* ainv = dynamic_cast<const AinvPreconditioner*>(setup.preconditioner.get())) {
    measure_apply(*ainv);
    out["factor_seconds"] = ainv->factor_seconds();
  } else if (const auto* fsai =
                 dynamic_cast<const FsaiPreconditioner*>(setup.preconditioner.get())) {
    measure_apply(*fsai);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string backend_name = "cuda";
    std::vector<std::string> problems_text, matrices, overrides, fsai_overrides;
    std::string json_file;
    bool with_ainv = true, with_fsai = true;
    std::string krylov = "pcg";  // the presets: pcg_* or (--bicgstab) bicgstab_*
    int repeats = 3;
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw InvalidInput(arg + ": missing value");
        return argv[++i];
      };
      if (arg == "--backend") {
        backend_name = next();
      } else if (arg == "--problems") {
        problems_text.push_back(next());
      } else if (arg == "--matrix") {
        matrices.push_back(next());
      } else if (arg == "-p") {
        overrides.push_back(next());
      } else if (arg == "--bicgstab") {
        krylov = "bicgstab";
      } else if (arg == "--methods") {
        const std::string methods = next();
        with_ainv = methods.find("ainv") != std::string::npos;
        with_fsai = methods.find("fsai") != std::string::npos;
      } else if (arg == "--fsai") {
        fsai_overrides.push_back(next());
      } else if (arg == "--repeats") {
        repeats = std::max(1, std::stoi(next()));
      } else if (arg == "--json") {
        json_file = next();
      } else {
        throw InvalidInput("kryflow_bench_ainv: unknown argument '" + arg + "'");
      }
    }
    const Backend backend = Backend::create(parse_backend_kind(backend_name));
    std::vector<Problem> problems;
    for (const std::string& text : problems_text) {
      for (const std::string& item : bench::split_list(text)) {
        const std::size_t colon = item.find(':');
        if (colon == std::string::npos || item.substr(0, colon) != "p7") {
          throw InvalidInput("--problems: expected p7:N");
        }
        const int n = std::stoi(item.substr(colon + 1));
        problems.push_back({"p7(" + std::to_string(n) + "^3)", poisson3d(n), true});
      }
    }
    for (const std::string& text : matrices) {
      const std::size_t eq = text.find('=');
      if (eq == std::string::npos) throw InvalidInput("--matrix: expected NAME=PATH[@K]");
      std::string path = text.substr(eq + 1);
      index_t pin = 0;
      if (const std::size_t at = path.rfind('@'); at != std::string::npos) {
        pin = static_cast<index_t>(std::stol(path.substr(at + 1)));
        path = path.substr(0, at);
      }
      CooMatrix coo = io::read_matrix_market(path);
      if (pin > 0) pin_unknown(coo, nullptr, pin - 1);
      problems.push_back({text.substr(0, eq), std::move(coo), false});
    }
    nlohmann::json results = nlohmann::json::array();
    std::printf(
        "backend %s; %s with AINV (%s_ainv) and FSAI (%s_fsai) against Jacobi, relative "
        "tolerance 1e-8\n",
        backend.name().c_str(), krylov == "pcg" ? "PCG" : "BiCGStab", krylov.c_str(),
        krylov.c_str());
    std::printf("%-18s %8s %9s %8s %8s %8s %8s %9s %9s %7s %6s\n", "problem", "factors", "rows",
                "B/row", "setup s", "apply us", "GB/s", "solve s", "total s", "its", "status");
    for (const Problem& problem : problems) {
      const CsrMatrix A = CsrMatrix::from_coo(backend, problem.coo);
      Vector b = Vector::constant(backend, static_cast<std::size_t>(A.num_rows()), 1.0);
      if (!problem.ones) A.apply(Vector::from_host(backend, random_solution(b.size())), b);
      nlohmann::json row{{"problem", problem.name}, {"rows", A.num_rows()}, {"nonzeros", A.nnz()}};
      // AINV (the pcg_ainv preset with -p overrides), then FSAI (pcg_fsai with --fsai ones).
      for (const std::string preset : {krylov + "_ainv", krylov + "_fsai"}) {
        const bool fsai = preset == krylov + "_fsai";
        if (!(fsai ? with_fsai : with_ainv)) continue;
        for (const char* precision : {"float32", "float64"}) {
          std::vector<std::string> o = fsai ? fsai_overrides : overrides;
          o.push_back(std::string("solver.preconditioner.factor_precision=") + precision);
          const nlohmann::json r = solve(preset, o, A, b, repeats);
          const std::string key = fsai ? std::string("fsai_") + precision : precision;
          const std::string label = fsai ? std::string("fsai ") + (precision + 5) : key;
          row[key] = r;
          std::printf("%-18s %8s %9d %8.0f %8.4f %8.1f %8.0f %9.4f %9.4f %7d %6s\n",
                      problem.name.c_str(), label.c_str(), A.num_rows(),
                      r["memory_bytes_per_row"].get<double>(), r["setup_seconds"].get<double>(),
                      r["apply_seconds"].get<double>() * 1e6, r["apply_gb_per_s"].get<double>(),
                      r["solve_seconds"].get<double>(), r["setup_plus_solve_seconds"].get<double>(),
                      r["iterations"].get<int>(), r["status"].get<std::string>().c_str());
        }
      }
      const nlohmann::json j = solve(krylov + "_jacobi", {}, A, b, repeats);
      row["jacobi"] = j;
      const auto speedup = [&](const char* f32, const char* f64) {
        return row.contains(f32) ? row[f64]["apply_seconds"].get<double>() /
                                       row[f32]["apply_seconds"].get<double>()
                                 : 0.0;
      };
      row["float32_apply_speedup"] = speedup("float32", "float64");
      row["fsai_float32_apply_speedup"] = speedup("fsai_float32", "fsai_float64");
      std::printf(
          "%-18s %8s %9d %8s %8.4f %8s %8s %9.4f %9.4f %7d %6s  (float32 apply %.2fx "
          "faster than float64; fsai %.2fx)\n",
          problem.name.c_str(), "jacobi", A.num_rows(), "-", j["setup_seconds"].get<double>(), "-",
          "-", j["solve_seconds"].get<double>(), j["setup_plus_solve_seconds"].get<double>(),
          j["iterations"].get<int>(), j["status"].get<std::string>().c_str(),
          row["float32_apply_speedup"].get<double>(),
          row["fsai_float32_apply_speedup"].get<double>());
      results.push_back(row);
    }
    if (!json_file.empty()) {
      std::ofstream(json_file)
          << nlohmann::json{{"backend", backend.name()}, {"results", results}}.dump(2) << "\n";
    }
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "kryflow_bench_ainv: %s\n", e.what());
    return 1;
  }
}
