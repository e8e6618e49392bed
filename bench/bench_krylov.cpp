// Krylov iterations against the bandwidth floor (3D Poisson) and against the launch floor (small
// corpus systems): PCG-Jacobi and pipelined CG, BiCGStab-Jacobi, with recorded (CUDA graph) and
// launched iterations, and the host's waits for the device per iteration.
//
// Floors on 3D Poisson (n rows, nnz stored entries): the matrix moves 12 bytes per entry + 4 per
// row pointer; vector sweeps are 8 bytes per row:
//   pcg ideal     10 sweeps: x, r, p read and written, q written and read, D^-1 read, p gathered
//                 (a lower bound no two-reduction CG reaches: the direction needs beta, i.e. the
//                 global r·z, before the product that gathers p);
//   pcg fused     12 sweeps, kryflow's PCG on CSR matrices of few row blocks: the product gathers
//   d, r and p and forms
//                 D^-1 r + beta p on the fly (q written), the update stores p = D^-1 r + beta p
//                 and reads q d x r, writes p x r (deferring x += alpha p into the next product
//                 would save one more sweep: 11);
//   pcg unfused   13 sweeps, kryflow's PCG on larger CSR and other formats: product with p·q (p
//   gathered, q
//                 written), update (reads p q d x r, writes x r), direction (reads d r p, writes
//                 p);
//   pipecg        22 sweeps: product n = A m (m gathered, n written), one update (reads n m w u r
//                 x z q s p d, writes z q s p x r u w m).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/blas/blas.hpp"
#include "kernels/krylov/cg/cg.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/linalg/sell_matrix.hpp"
#include "kryflow/preconditioners/jacobi.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "timing.hpp"

#ifndef KRYFLOW_BENCH_DATA_DIR
#define KRYFLOW_BENCH_DATA_DIR "../shared/data"
#endif

namespace {

using namespace kryflow;

/// Whether the comma-separated list names `part`.
bool has(const std::string& list, const char* part) {
  return ("," + list + ",").find("," + std::string(part) + ",") != std::string::npos;
}

std::unique_ptr<KrylovSolver> make(const std::string& method, StopCriteria criteria,
                                   GraphMode graphs, int check_every) {
  std::unique_ptr<KrylovSolver> solver;
  if (method == "pcg") solver = std::make_unique<Cg>(criteria);
  if (method == "pipecg") solver = std::make_unique<PipelinedCg>(criteria);
  if (method == "bicgstab") solver = std::make_unique<Bicgstab>(criteria);
  IterationOptions options;
  options.graphs = graphs;
  options.check_every = check_every;
  solver->set_options(options);
  return solver;
}

struct Timing {
  double seconds_per_iteration = 0.0;
  double waits_per_iteration = 0.0;
  int iterations = 0;
  std::string status;
  double true_relative_residual = 0.0;
};

/// Median time per iteration over `repeats` solves from x0 = 0 with one solver object (its
/// workspace reused, as in a time-stepping code), after one warm-up solve.
Timing time_solves(const Backend& backend, const LinearOperator& A, const Preconditioner& M,
                   const Vector& b, KrylovSolver& solver, int repeats) {
  Vector x = Vector::constant(backend, b.size(), 0.0);
  solver.solve(A, M, b, x);  // warm-up: kernels loaded, workspace allocated
  std::vector<double> samples;
  Timing t;
  for (int r = 0; r < repeats; ++r) {
    fill(x, 0.0);
    backend.synchronize();
    const std::uint64_t waits = backend.host_waits();
    const SolveReport report = solver.solve(A, M, b, x);
    t.waits_per_iteration =
        static_cast<double>(backend.host_waits() - waits) / std::max(1, report.iterations);
    samples.push_back(report.solve_seconds / std::max(1, report.iterations));
    t.iterations = report.iterations;
    t.status = to_string(report.status);
    t.true_relative_residual = report.true_relative_residual();
  }
  std::sort(samples.begin(), samples.end());
  t.seconds_per_iteration = samples[samples.size() / 2];
  return t;
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", v);
  return buffer;
}

const char* graph_name(GraphMode g) {
  return g == GraphMode::always ? "graph" : "launch";
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend_name = "cuda";
  std::string json_path;
  std::vector<int> sizes = {100, 200, 300};
  int poisson_iterations = 200;
  int repeats = 5;
  std::string parts = "poisson,kernels,small";
  const char* env_data = std::getenv("KRYFLOW_DATA_DIR");
  std::string data_dir = env_data != nullptr ? env_data : KRYFLOW_BENCH_DATA_DIR;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (arg == "--backend") {
      backend_name = next();
    } else if (arg == "--json") {
      json_path = next();
    } else if (arg == "--sizes") {
      sizes = bench::parse_ints(next());
    } else if (arg == "--iterations") {
      poisson_iterations = std::stoi(next());
    } else if (arg == "--repeats") {
      repeats = std::stoi(next());
    } else if (arg == "--parts") {
      parts = next();
    } else if (arg == "--data") {
      data_dir = next();
    } else {
      std::fprintf(stderr,
                   "usage: %s [--backend cuda|cpu] [--sizes 100,200,300] [--iterations 200] "
                   "[--repeats 5] [--parts poisson,kernels,small] [--data DIR] [--json out.json]\n",
                   argv[0]);
      return 1;
    }
  }
  try {
    const Backend backend = Backend::create(parse_backend_kind(backend_name));
    const double bandwidth = kernels::blas::copy_bandwidth(backend, std::size_t{1} << 30);
    std::string json = "{\"benchmark\": \"krylov\", \"device\": \"" + backend.device_name() +
                       "\", \"backend\": \"" + backend_name + "\", \"commit\": \"" +
                       (std::getenv("KRYFLOW_COMMIT") ? std::getenv("KRYFLOW_COMMIT") : "unknown") +
                       "\", \"date\": \"" + bench::utc_now() +
                       "\", \"copy_bandwidth_bytes_per_s\": " + json_number(bandwidth) +
                       ", \"poisson\": [";
    std::printf("Krylov iterations, %s, copy bandwidth %.1f GB/s\n", backend.name().c_str(),
                bandwidth / 1e9);
    std::printf("\n3D Poisson (7-point), b = 1, %d iterations, median of %d solves\n",
                poisson_iterations, repeats);
    std::printf(
        "| n | method and format | launches | check_every | ms/iteration | floor ms (this method) "
        "| ratio | ratio to pcg ideal floor | waits/iteration | AmgX PCG ms/it (200^3) "
        "|\n|---|---|---|---|---|---|---|---|---|---|\n");
    bool first_record = true;
    for (int n : has(parts, "poisson") ? sizes : std::vector<int>{}) {
      const CsrMatrix csr = CsrMatrix::from_coo(backend, poisson3d(n));
      const SellMatrix sell = SellMatrix::from_csr(csr, 32, 1, Precision::float64);
      for (const std::string format : {"csr", "sell-32-1"}) {
        const LinearOperator& A = format == "csr" ? static_cast<const LinearOperator&>(csr) : sell;
        JacobiPreconditioner M;
        M.setup(A);
        const auto rows = static_cast<std::size_t>(A.num_rows());
        const Vector b = Vector::constant(backend, rows, 1.0);
        const double matrix_bytes = 12.0 * csr.nnz() + 4.0 * (csr.num_rows() + 1);
        auto floor_seconds = [&](double sweeps) {
          return (matrix_bytes + 8.0 * sweeps * A.num_rows()) / bandwidth;
        };
        StopCriteria criteria;
        criteria.relative_tolerance = 0.0;
        criteria.stagnation_window = 0;
        criteria.max_iterations = poisson_iterations;
        for (const std::string method : {"pcg", "pipecg"}) {
          for (const auto& [graphs, check_every] :
               {std::pair{GraphMode::never, 1}, std::pair{GraphMode::always, 1},
                std::pair{GraphMode::never, 10}, std::pair{GraphMode::always, 10}}) {
            auto solver = make(method, criteria, graphs, check_every);
            const Timing t = time_solves(backend, A, M, b, *solver, repeats);
            const double own_sweeps =
                method == "pcg" ? (A.fuses_combination() ? 12.0 : 13.0) : 22.0;
            const double own_floor = floor_seconds(own_sweeps);
            const double ideal = floor_seconds(10.0);
            std::printf("| %d | %s %s | %s | %d | %.4f | %.4f | %.3f | %.3f | %.2f | %s |\n", n,
                        method.c_str(), format.c_str(), graph_name(graphs), check_every,
                        1e3 * t.seconds_per_iteration, 1e3 * own_floor,
                        t.seconds_per_iteration / own_floor, t.seconds_per_iteration / ideal,
                        t.waits_per_iteration, n == 200 ? "0.655" : "");
            json += std::string(first_record ? "" : ", ") + "{\"n\": " + std::to_string(n) +
                    ", \"rows\": " + std::to_string(A.num_rows()) +
                    ", \"nnz\": " + std::to_string(csr.nnz()) + ", \"format\": \"" + format +
                    "\", \"method\": \"" + method + "\", \"launches\": \"" + graph_name(graphs) +
                    "\", \"check_every\": " + std::to_string(check_every) +
                    ", \"seconds_per_iteration\": " + json_number(t.seconds_per_iteration) +
                    ", \"floor_seconds\": " + json_number(own_floor) +
                    ", \"floor_sweeps\": " + json_number(own_sweeps) +
                    ", \"pcg_two_pass_floor_seconds\": " + json_number(floor_seconds(12.0)) +
                    ", \"pcg_ideal_floor_seconds\": " + json_number(ideal) +
                    ", \"waits_per_iteration\": " + json_number(t.waits_per_iteration) + "}";
            first_record = false;
          }
        }
      }
    }
    json += "], \"pcg_kernels\": [";
    std::printf(
        "\nPCG-Jacobi kernels alone on 3D Poisson (back to back, median): fraction of the copy "
        "bandwidth\n| n | kernel | us | bytes (MB) | GB/s | of copy "
        "|\n|---|---|---|---|---|---|\n");
    first_record = true;
    for (int n : has(parts, "kernels") ? sizes : std::vector<int>{}) {
      const CsrMatrix A = CsrMatrix::from_coo(backend, poisson3d(n));
      const SellMatrix sell = SellMatrix::from_csr(A, 32, 1, Precision::float64);
      JacobiPreconditioner M;
      M.setup(A);
      const auto rows = static_cast<std::size_t>(A.num_rows());
      Vector p = Vector::constant(backend, rows, 1.0);
      Vector q(backend, rows);
      Vector x = Vector::constant(backend, rows, 0.0);
      Vector r = Vector::constant(backend, rows, 1.0);
      DeviceScalars scalars(backend, 9);
      // rz, rz_previous, rz0, stop, beta (0: p keeps its value), p·Ap (huge: alpha ~ 0), ...
      const double values[9] = {1.0, 1.0, 1.0, 0.0, 0.0, 1e30, 1.0, 1.0, 1.0};
      scalars.write(0, values);
      const kernels::krylov::cg::Scalars s{scalars.slot(0).address, scalars.slot(1).address,
                                           scalars.slot(2).address, scalars.slot(3).address,
                                           scalars.slot(4).address};
      double* pq_slot = scalars.slot(5).address;
      const DeviceSum pq{pq_slot, 0};
      const double vector = 8.0 * static_cast<double>(rows);
      const double matrix = 12.0 * A.nnz() + 4.0 * (A.num_rows() + 1);
      struct Kernel {
        const char* name;
        double bytes;
        std::function<void()> run;
      };
      const Vector& d = *M.inverse_diagonal();
      const Kernel kernels_list[] = {
          {"apply_dot (q = A p, p·q)", matrix + 2 * vector,
           [&] { A.apply_dot(p, q, scalars.slot(6)); }},
          {"apply_combination_dot (q = A (D^-1 r + beta p), ·q)", matrix + 4 * vector,
           [&] { A.apply_combination_dot(&d, r, scalars.slot(4), p, q, scalars.slot(6), true); }},
          {"apply_dot SELL-32-1", matrix + 2 * vector,
           [&] { sell.apply_dot(p, q, scalars.slot(6)); }},
          {"apply (q = A p)", matrix + 2 * vector, [&] { A.apply(p, q); }},
          {"update (x, r, r·z, r·r)", 7 * vector,
           [&] {
             kernels::krylov::cg::update(backend, p.span(), q.span(), d.span(), {}, x.span(),
                                         r.span(), s, pq, pq_slot, scalars.slot(7).address,
                                         scalars.slot(8).address, false);
           }},
          {"update with direction (p, x, r, r·z, r·r)", 8 * vector,
           [&] {
             kernels::krylov::cg::update(backend, p.span(), q.span(), d.span(), {}, x.span(),
                                         r.span(), s, pq, pq_slot, scalars.slot(7).address,
                                         scalars.slot(8).address, true);
           }},
          {"direction (p)", 4 * vector,
           [&] {
             kernels::krylov::cg::direction(backend, M.inverse_diagonal()->span(), r.span(),
                                            Span<const double>(), p.span(), s);
           }},
      };
      for (const Kernel& k : kernels_list) {
        const double seconds = bench::time_per_call(backend, k.run);
        std::printf("| %d | %s | %.1f | %.1f | %.1f | %.3f |\n", n, k.name, 1e6 * seconds,
                    k.bytes / 1e6, k.bytes / seconds / 1e9, k.bytes / seconds / bandwidth);
        json += std::string(first_record ? "" : ", ") + "{\"n\": " + std::to_string(n) +
                ", \"kernel\": \"" + k.name + "\", \"seconds\": " + json_number(seconds) +
                ", \"bytes\": " + json_number(k.bytes) + "}";
        first_record = false;
      }
    }
    json += "], \"small\": [";
    struct Small {
      const char* name;
      const char* file;
      const char* rhs;  // empty: b = A * 1
      const char* method;
      bool pin;
      double relative_tolerance;
    };
    const Small smalls[] = {
        {"openfoam_p_23325", "matrices/openfoam/pressure_23325/openfoam_p_23325.mtx.gz", "", "pcg",
         true, 1e-9},
        {"ex19_cavity_33", "matrices/petsc_ex19/ex19_cavity_33.mtx.gz", "", "bicgstab", false,
         1e-10},
        {"2dcyl1", "matrices/fvens/2dcyl1/2dcyl1.mtx.gz", "matrices/fvens/2dcyl1/2dcyl1_b.mtx.gz",
         "bicgstab", false, 1e-10},
    };
    std::printf("\nSmall systems (CSR, Jacobi), median of %d solves\n", repeats);
    std::printf(
        "| matrix | rows | method | launches | check_every | us/iteration | iterations | status "
        "| true residual | waits/iteration |\n|---|---|---|---|---|---|---|---|---|---|\n");
    first_record = true;
    for (const Small& s : smalls) {
      if (!has(parts, "small")) break;
      CooMatrix coo = io::read_matrix_market(data_dir + "/" + s.file);
      std::vector<double> b_host;
      if (*s.rhs != '\0') b_host = io::read_vector(data_dir + "/" + s.rhs);
      if (s.pin) pin_unknown(coo, b_host.empty() ? nullptr : &b_host, 0);
      const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
      JacobiPreconditioner M;
      M.setup(A);
      Vector b(backend, static_cast<std::size_t>(A.num_rows()));
      if (b_host.empty()) {
        A.apply(Vector::constant(backend, b.size(), 1.0), b);
      } else {
        b = Vector::from_host(backend, b_host);
      }
      StopCriteria criteria;
      criteria.relative_tolerance = s.relative_tolerance;
      criteria.max_iterations = 20000;
      for (GraphMode graphs : {GraphMode::never, GraphMode::always}) {
        for (int check_every : {1, 10}) {
          auto solver = make(s.method, criteria, graphs, check_every);
          const Timing t = time_solves(backend, A, M, b, *solver, repeats);
          std::printf("| %s | %d | %s-jacobi | %s | %d | %.2f | %d | %s | %.2e | %.2f |\n", s.name,
                      A.num_rows(), s.method, graph_name(graphs), check_every,
                      1e6 * t.seconds_per_iteration, t.iterations, t.status.c_str(),
                      t.true_relative_residual, t.waits_per_iteration);
          json += std::string(first_record ? "" : ", ") + "{\"matrix\": \"" + s.name +
                  "\", \"rows\": " + std::to_string(A.num_rows()) + ", \"method\": \"" + s.method +
                  "\", \"launches\": \"" + graph_name(graphs) +
                  "\", \"check_every\": " + std::to_string(check_every) +
                  ", \"seconds_per_iteration\": " + json_number(t.seconds_per_iteration) +
                  ", \"iterations\": " + std::to_string(t.iterations) + ", \"status\": \"" +
                  t.status +
                  "\", \"true_relative_residual\": " + json_number(t.true_relative_residual) +
                  ", \"waits_per_iteration\": " + json_number(t.waits_per_iteration) + "}";
          first_record = false;
        }
      }
    }
    json += "]}\n";
    if (!json_path.empty()) std::ofstream(json_path) << json;
  } catch (const Error& e) {
    std::fprintf(stderr, "kryflow_bench_krylov: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
