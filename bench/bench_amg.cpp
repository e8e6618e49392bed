// Algebraic multigrid against point Jacobi as PCG preconditioners: setup time per phase,
// hierarchy size, iterations and solve time, on 3D Poisson and on Matrix Market files.
//
// Right-hand side b = A x* for x* uniform in [-1, 1] from a fixed seed, x_0 = 0, relative tolerance
// 1e-8; times are wall-clock seconds of one setup and one solve (no repeats: the setup is the
// object of the comparison, and PCG-AMG's few iterations leave nothing to average).
//
//   kryflow_bench_amg [--backend cpu|reference] [--sizes 32,64,100] [--json out.json]
//                     [matrix.mtx ...]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kryflow/amg/amg.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/preconditioners/jacobi.hpp"
#include "kryflow/solvers/krylov_solver.hpp"

namespace {

using namespace kryflow;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Run {
  double setup_seconds = 0.0;
  double solve_seconds = 0.0;
  int iterations = 0;
  std::string status;
  double true_residual = 0.0;
};

/// Sets M up for A and solves A x = b with PCG from x = 0.
Run run_pcg(const CsrMatrix& A, Preconditioner& M, const Vector& b) {
  Run run;
  auto start = std::chrono::steady_clock::now();
  M.setup(A);
  A.backend().synchronize();
  run.setup_seconds = seconds_since(start);
  StopCriteria criteria;
  criteria.max_iterations = 20000;
  criteria.relative_tolerance = 1e-8;
  criteria.stagnation_window = 0;
  Vector x = Vector::constant(A.backend(), b.size(), 0.0);
  start = std::chrono::steady_clock::now();
  const SolveReport report = Cg(criteria).solve(A, M, b, x);
  run.solve_seconds = seconds_since(start);
  run.iterations = report.iterations;
  run.status = to_string(report.status);
  run.true_residual = report.true_relative_residual();
  return run;
}

nlohmann::json bench_one(const std::string& name, const CooMatrix& coo, const Backend& backend) {
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  std::vector<double> x_star(static_cast<std::size_t>(A.num_cols()));
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (double& v : x_star) v = uniform(rng);
  const Vector xs = Vector::from_host(backend, x_star);
  Vector b(backend, static_cast<std::size_t>(A.num_rows()));
  A.apply(xs, b);

  AmgPreconditioner amg;
  const Run with_amg = run_pcg(A, amg, b);
  JacobiPreconditioner jacobi;
  const Run with_jacobi = run_pcg(A, jacobi, b);

  const HierarchyReport& h = amg.hierarchy_report();
  std::printf("%-22s %9d %5zu %6.2f %8.3f %5d %8.3f %-10s %6d %8.3f %-10s\n", name.c_str(),
              A.num_rows(), h.levels.size(), h.operator_complexity, with_amg.setup_seconds,
              with_amg.iterations, with_amg.solve_seconds, with_amg.status.c_str(),
              with_jacobi.iterations, with_jacobi.solve_seconds, with_jacobi.status.c_str());
  nlohmann::json phases = nlohmann::json::object();
  for (const HierarchyReport::Phase& phase : h.phases) phases[phase.name] = phase.seconds;
  const auto as_json = [](const Run& r) {
    return nlohmann::json{{"setup_seconds", r.setup_seconds},
                          {"solve_seconds", r.solve_seconds},
                          {"iterations", r.iterations},
                          {"status", r.status},
                          {"true_relative_residual", r.true_residual}};
  };
  return {{"matrix", name},
          {"rows", A.num_rows()},
          {"nonzeros", A.nnz()},
          {"levels", h.levels.size()},
          {"operator_complexity", h.operator_complexity},
          {"grid_complexity", h.grid_complexity},
          {"amg_setup_phases", phases},
          {"pcg_amg", as_json(with_amg)},
          {"pcg_jacobi", as_json(with_jacobi)}};
}

std::vector<int> parse_sizes(const std::string& text) {
  std::vector<int> sizes;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) sizes.push_back(std::stoi(item));
  return sizes;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string backend_name = "cpu", json_file;
    std::vector<int> sizes = {32, 64, 100};
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--backend" && i + 1 < argc) {
        backend_name = argv[++i];
      } else if (arg == "--sizes" && i + 1 < argc) {
        sizes = parse_sizes(argv[++i]);
      } else if (arg == "--json" && i + 1 < argc) {
        json_file = argv[++i];
      } else {
        files.push_back(arg);
      }
    }
    const Backend backend = Backend::create(parse_backend_kind(backend_name));
    std::printf("backend %s\n%-22s %9s %5s %6s %8s %5s %8s %-10s %6s %8s %-10s\n",
                backend.name().c_str(), "matrix", "rows", "lvls", "op.cx", "setup s", "its",
                "solve s", "status", "jac it", "solve s", "status");
    nlohmann::json results = nlohmann::json::array();
    for (const int n : sizes) {
      results.push_back(bench_one("poisson3d(" + std::to_string(n) + ")", poisson3d(n), backend));
    }
    for (const std::string& file : files) {
      results.push_back(bench_one(file, io::read_matrix_market(file), backend));
    }
    if (!json_file.empty()) std::ofstream(json_file) << results.dump(2) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kryflow_bench_amg: %s\n", e.what());
    return 1;
  }
}
