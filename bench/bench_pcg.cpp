// PCG-Jacobi time per iteration on 3D Poisson against the bandwidth floor of one iteration.
//
// Floor: the bytes one PCG-Jacobi iteration must move at least, over the measured copy
// bandwidth. Matrix: 12 bytes per stored entry + 4 per row pointer. Vectors (n rows, 8 bytes
// each): x, r and p read and written once (6 sweeps), q written and read once (2), the inverse
// diagonal read once (1), p gathered once by the SpMV (1): 10 sweeps = 80 bytes per row.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "kernels/blas/blas.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/preconditioners/jacobi.hpp"
#include "kryflow/solvers/krylov_solver.hpp"

namespace {

struct Record {
  int n = 0;
  long long rows = 0;
  long long nnz = 0;
  double seconds_per_iteration = 0.0;
  double floor_seconds = 0.0;
  int iterations = 0;
};

Record run(const kryflow::Backend& backend, int n, double copy_bandwidth) {
  using namespace kryflow;
  const CsrMatrix A = CsrMatrix::from_coo(backend, poisson3d(n));
  JacobiPreconditioner M;
  M.setup(A);
  const auto rows = static_cast<std::size_t>(A.num_rows());
  const Vector b = Vector::constant(backend, rows, 1.0);
  StopCriteria criteria;
  criteria.relative_tolerance = 0.0;
  criteria.absolute_tolerance = 0.0;
  criteria.stagnation_window = 0;
  criteria.max_iterations = 20;
  {  // warm-up: kernels loaded, memory pool filled
    Vector x = Vector::constant(backend, rows, 0.0);
    Cg(criteria).solve(A, M, b, x);
  }
  criteria.max_iterations = 200;
  std::vector<double> samples;
  for (int repeat = 0; repeat < 3; ++repeat) {
    Vector x = Vector::constant(backend, rows, 0.0);
    backend.synchronize();
    const SolveReport report = Cg(criteria).solve(A, M, b, x);
    // solve_seconds includes the final true residual (one SpMV): subtract nothing, it is ~0.5%.
    samples.push_back(report.solve_seconds / report.iterations);
  }
  std::sort(samples.begin(), samples.end());
  Record r;
  r.n = n;
  r.rows = A.num_rows();
  r.nnz = A.nnz();
  r.iterations = 200;
  r.seconds_per_iteration = samples[samples.size() / 2];
  const double bytes = 12.0 * A.nnz() + 4.0 * (A.num_rows() + 1) + 80.0 * A.num_rows();
  r.floor_seconds = bytes / copy_bandwidth;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend_name = "cuda";
  std::string json_path;
  std::vector<int> sizes = {100, 200};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--backend" && i + 1 < argc)
      backend_name = argv[++i];
    else if (arg == "--json" && i + 1 < argc)
      json_path = argv[++i];
    else if (arg == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::string list = argv[++i];
      for (std::size_t pos = 0; pos < list.size();) {
        const std::size_t comma = list.find(',', pos);
        sizes.push_back(std::stoi(list.substr(pos, comma - pos)));
        pos = comma == std::string::npos ? list.size() : comma + 1;
      }
    } else {
      std::fprintf(stderr, "usage: %s [--backend cuda|cpu] [--sizes 100,200] [--json out.json]\n",
                   argv[0]);
      return 1;
    }
  }
  try {
    const kryflow::Backend backend =
        kryflow::Backend::create(kryflow::parse_backend_kind(backend_name));
    const double bandwidth = kryflow::kernels::blas::copy_bandwidth(backend, std::size_t{1} << 30);
    std::printf("PCG-Jacobi on 3D Poisson (7-point), %s, copy bandwidth %.1f GB/s\n",
                backend.name().c_str(), bandwidth / 1e9);
    std::printf("| n | rows | nnz | ms/iteration | floor ms | ratio to floor |\n");
    std::vector<Record> records;
    for (int n : sizes) {
      const Record r = run(backend, n, bandwidth);
      records.push_back(r);
      std::printf("| %d | %lld | %lld | %.4f | %.4f | %.3f |\n", r.n, r.rows, r.nnz,
                  1e3 * r.seconds_per_iteration, 1e3 * r.floor_seconds,
                  r.seconds_per_iteration / r.floor_seconds);
    }
    if (!json_path.empty()) {
      std::ofstream out(json_path);
      const std::time_t now = std::time(nullptr);
      char date[32];
      std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
      const char* commit = std::getenv("KRYFLOW_COMMIT");
      out << "{\"benchmark\": \"pcg_jacobi_poisson3d\", \"device\": \"" << backend.device_name()
          << "\", \"backend\": \"" << backend_name << "\", \"commit\": \""
          << (commit ? commit : "unknown") << "\", \"date\": \"" << date
          << "\", \"copy_bandwidth_bytes_per_s\": " << bandwidth << ", \"floor_model\": "
          << "\"12 B/nnz + 4 B/row (matrix) + 80 B/row (10 vector sweeps)\", \"records\": [";
      for (std::size_t i = 0; i < records.size(); ++i) {
        const Record& r = records[i];
        out << (i ? ", " : "") << "{\"n\": " << r.n << ", \"rows\": " << r.rows
            << ", \"nnz\": " << r.nnz << ", \"seconds_per_iteration\": " << r.seconds_per_iteration
            << ", \"floor_seconds\": " << r.floor_seconds
            << ", \"ratio_to_floor\": " << r.seconds_per_iteration / r.floor_seconds << "}";
      }
      out << "]}\n";
    }
  } catch (const kryflow::Error& e) {
    std::fprintf(stderr, "kryflow_bench_pcg: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
