// Multicolor block symmetric Gauss-Seidel throughput per block size, value precision and cuda
// kernel, against the copy bandwidth and the same matrix's SpMV in the same run.
//
// The unit is one application as a preconditioner: MulticolorGaussSeidel::relax from x = 0, one
// symmetric sweep (forward over the colors, then backward), b read through the color order and
// x written back in A's order inside the sweep kernels. With the saved half products a symmetric
// sweep reads every off-diagonal block once (L forward, U backward) and must move at least: the
// off-diagonal blocks' values (B^2 per block, 8 or 4 bytes) and block column indices (4 bytes),
// both parts' block row pointers, the inverse diagonal blocks twice (B^2 doubles per block row;
// the last color once), and per block row and half sweep B doubles of b, of x read, of x
// written and of the saved products, the caller's x once, 4 bytes of the order per half sweep.
// GB/s is that over the median time per application (time_per_call: launches queued as in a
// solver; "graph": replayed from a CUDA graph, as the Krylov solvers run it); "of copy" divides
// by the measured copy bandwidth (read + write). "apply/SpMV": time of the application over the
// time of one product with the same matrix.
// Matrices: block 3D Poisson (kronecker_block, random dense diagonally dominant blocks, 7
// blocks per block row) sized so the values take about --target-mb MiB (beyond the H200's
// 60 MB L2 by default), for each --block-sizes B; then ex19_cavity_257 and 2dcyl1 as BSR-4.
// The three cuda kernels run on every matrix with each coloring of --colorings (default both:
// Jones-Plassmann-Luby and the greedy coloring in row order, which needs two colors on the
// bipartite grids), and their results after one application are compared with the first
// kernel's of the same coloring. "setup ms" is the preconditioner's setup (coloring, reordered
// copy, inverse diagonal blocks) with the first kernel.
//
//   kryflow_bench_relaxation [--backend cuda|cpu] [--data-dir DIR] [--block-sizes 1,2,...,8]
//                            [--target-mb 256] [--colorings jones_plassmann_luby,greedy]
//                            [--json out.json]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/timing.hpp"
#include "kernels/blas/blas.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/bsr_matrix.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/linalg/vector.hpp"
#include "kryflow/preconditioners/multicolor_gauss_seidel.hpp"

#ifndef KRYFLOW_BENCH_DATA_DIR
#define KRYFLOW_BENCH_DATA_DIR "../shared/data"
#endif

namespace {

using namespace kryflow;

struct Options {
  std::string backend = "cuda";
  std::string data_dir;
  std::vector<int> block_sizes = {1, 2, 3, 4, 5, 6, 7, 8};
  double target_mb = 256.0;
  std::vector<std::string> colorings = {"jones_plassmann_luby", "greedy"};
  std::string json_path;
};

struct Record {
  std::string matrix;
  int block_size = 0;
  std::string precision;
  std::string kernel;
  std::string coloring;
  double setup_seconds = 0.0;  // the first kernel's setup (the coloring's cost)
  index_t num_block_rows = 0;
  std::int64_t num_blocks = 0;
  index_t colors = 0;
  double bytes = 0.0;
  double seconds = 0.0;        // one symmetric sweep from 0 (relax)
  double graph_seconds = 0.0;  // the same replayed from a graph
  double spmv_seconds = 0.0;
  double agreement = 0.0;  // max relative difference to the first kernel after one application
};

/// The bytes one symmetric sweep from 0 must move (file comment); last_color: its block rows.
double apply_bytes(const BsrMatrix& A, index_t last_color) {
  const double B = A.block_size();
  const double value = A.precision() == Precision::float32 ? 4.0 : 8.0;
  const double rows = A.num_block_rows();
  const double off_diagonal = static_cast<double>(A.num_blocks()) - rows;
  return off_diagonal * (B * B * value + 4.0) + 2.0 * (rows + 1.0) * 4.0 +
         (2.0 * rows - last_color) * B * B * 8.0 + rows * B * 8.0 * 9.0 + 2.0 * rows * 4.0;
}

std::vector<Record> measure(const std::string& name, const BsrMatrix& A, bool graphs,
                            ColoringAlgorithm coloring) {
  const Backend& backend = A.backend();
  const std::size_t n = static_cast<std::size_t>(A.num_rows());
  Vector b(backend, n), x(backend, n), y(backend, n);
  fill_pseudo_random(b, 11);
  std::vector<Record> out;
  std::vector<double> first;
  for (const SweepKernel kernel :
       {SweepKernel::coefficient, SweepKernel::warp, SweepKernel::block_row}) {
    MulticolorGaussSeidel::Parameters p;
    p.kernel = kernel;
    p.coloring = coloring;
    MulticolorGaussSeidel sgs(p);
    backend.synchronize();
    const auto setup_start = std::chrono::steady_clock::now();
    sgs.setup(A);
    const double setup_seconds = seconds_since(backend, setup_start);
    sgs.relax(b, x, true);
    const std::vector<double> after = x.to_host();
    Record r;
    r.matrix = name;
    r.block_size = A.block_size();
    r.precision = std::string(to_string(A.precision()));
    r.kernel = to_string(kernel);
    r.coloring = to_string(coloring);
    r.setup_seconds = setup_seconds;
    r.num_block_rows = A.num_block_rows();
    r.num_blocks = A.num_blocks();
    r.colors = sgs.ordering().num_colors;
    r.bytes = apply_bytes(A, sgs.ordering().color_size(r.colors - 1));
    if (first.empty()) {
      first = after;
    } else {
      r.agreement = bench::max_relative_difference(after, first);
    }
    r.seconds = bench::time_per_call(backend, [&] { sgs.relax(b, x, true); });
    if (graphs) {
      r.graph_seconds = bench::time_per_call_in_graph(backend, [&] { sgs.relax(b, x, true); });
    }
    r.spmv_seconds = bench::time_per_call(backend, [&] { A.apply(x, y); });
    out.push_back(r);
    std::printf(
        "%s B=%d %s %s %s: %d colors (setup %.2f ms), %.1f us per symmetric sweep, %.1f "
        "GB/s\n",
        name.c_str(), r.block_size, r.precision.c_str(), r.kernel.c_str(), r.coloring.c_str(),
        static_cast<int>(r.colors), r.setup_seconds * 1e3, r.seconds * 1e6,
        r.bytes / r.seconds / 1e9);
    std::fflush(stdout);
  }
  return out;
}

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: kryflow_bench_relaxation [--backend cuda|cpu] [--data-dir DIR] "
               "[--block-sizes 1,2,3,4,5,6,7,8] [--target-mb 256] "
               "[--colorings jones_plassmann_luby,greedy] [--json out.json]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  options.data_dir = std::getenv("KRYFLOW_DATA_DIR") != nullptr ? std::getenv("KRYFLOW_DATA_DIR")
                                                                : KRYFLOW_BENCH_DATA_DIR;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) usage();
    const std::string value = argv[++i];
    if (arg == "--backend") {
      options.backend = value;
    } else if (arg == "--data-dir") {
      options.data_dir = value;
    } else if (arg == "--block-sizes") {
      options.block_sizes = bench::parse_ints(value);
    } else if (arg == "--target-mb") {
      options.target_mb = std::stod(value);
    } else if (arg == "--colorings") {
      options.colorings = bench::split_list(value);
    } else if (arg == "--json") {
      options.json_path = value;
    } else {
      usage();
    }
  }
  try {
    const Backend backend = Backend::create(parse_backend_kind(options.backend));
    const bool graphs = backend.kind() == BackendKind::cuda;
    const double bandwidth = kernels::blas::copy_bandwidth(backend, std::size_t{1} << 30);
    std::printf("copy bandwidth %.1f GB/s (1 GiB buffers), %s\n", bandwidth / 1e9,
                backend.device_name().c_str());
    std::vector<Record> records;
    for (const int B : options.block_sizes) {
      for (const Precision precision : {Precision::float64, Precision::float32}) {
        if (precision == Precision::float32 && B != 4 && B != 5) continue;
        const double value = precision == Precision::float32 ? 4.0 : 8.0;
        const double block_rows = options.target_mb * 1048576.0 / (7.0 * B * B * value);
        const auto n = static_cast<index_t>(std::lround(std::cbrt(block_rows)));
        const CsrMatrix csr =
            CsrMatrix::from_coo(backend, kronecker_block(poisson3d(n), B, 7, false));
        const BsrMatrix A = BsrMatrix::from_csr(csr, B, precision);
        const std::string name = "block_poisson3d_" + std::to_string(n);
        for (const std::string& coloring : options.colorings) {
          for (const Record& r : measure(name, A, graphs, parse_coloring_algorithm(coloring))) {
            records.push_back(r);
          }
        }
      }
    }
    for (const char* file :
         {"matrices/petsc_ex19/ex19_cavity_257.mtx.gz", "matrices/fvens/2dcyl1/2dcyl1.mtx.gz"}) {
      const std::filesystem::path path = std::filesystem::path(options.data_dir) / file;
      if (!std::filesystem::exists(path)) {
        std::printf("(%s missing: skipped)\n", path.c_str());
        continue;
      }
      const CsrMatrix csr = CsrMatrix::from_coo(backend, io::read_matrix_market(path));
      const BsrMatrix A = BsrMatrix::from_csr(csr, 4, Precision::float64);
      const std::string name = path.stem().stem().string();
      for (const std::string& coloring : options.colorings) {
        for (const Record& r : measure(name, A, graphs, parse_coloring_algorithm(coloring))) {
          records.push_back(r);
        }
      }
    }
    // The table again with the fractions filled in.
    std::printf("\nmulticolor SGS, one symmetric sweep from 0, copy bandwidth %.1f GB/s\n",
                bandwidth / 1e9);
    std::printf(
        "| matrix | B | values | kernel | coloring | block rows | colors | setup ms | us/apply | "
        "GB/s | of copy | graph us | graph of copy | apply/SpMV | kernels differ |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    nlohmann::json out;
    out["benchmark"] = "multicolor_gauss_seidel_symmetric_sweep";
    out["device"] = backend.device_name();
    out["backend"] = backend.name();
    out["copy_bandwidth_bytes_per_s"] = bandwidth;
    out["date"] = bench::utc_now();
    out["records"] = nlohmann::json::array();
    for (const Record& r : records) {
      const double gbs = r.bytes / r.seconds / 1e9;
      const double graph_fraction = r.graph_seconds > 0 ? r.bytes / r.graph_seconds / bandwidth : 0;
      std::printf(
          "| %-22s | %d | %-7s | %-11s | %s | %8d | %3d | %7.2f | %9.1f | %7.1f | %5.2f | %7.1f | "
          "%5.2f | %5.2f | %.1e |\n",
          r.matrix.c_str(), r.block_size, r.precision.c_str(), r.kernel.c_str(), r.coloring.c_str(),
          static_cast<int>(r.num_block_rows), static_cast<int>(r.colors), r.setup_seconds * 1e3,
          r.seconds * 1e6, gbs, r.bytes / r.seconds / bandwidth, r.graph_seconds * 1e6,
          graph_fraction, r.seconds / r.spmv_seconds, r.agreement);
      out["records"].push_back({{"matrix", r.matrix},
                                {"block_size", r.block_size},
                                {"precision", r.precision},
                                {"kernel", r.kernel},
                                {"coloring", r.coloring},
                                {"setup_seconds", r.setup_seconds},
                                {"num_block_rows", r.num_block_rows},
                                {"num_blocks", r.num_blocks},
                                {"colors", r.colors},
                                {"bytes", r.bytes},
                                {"seconds_per_symmetric_sweep", r.seconds},
                                {"graph_seconds_per_symmetric_sweep", r.graph_seconds},
                                {"fraction_of_copy_bandwidth", r.bytes / r.seconds / bandwidth},
                                {"graph_fraction_of_copy_bandwidth", graph_fraction},
                                {"spmv_seconds", r.spmv_seconds},
                                {"kernels_max_relative_difference", r.agreement}});
    }
    if (!options.json_path.empty()) std::ofstream(options.json_path) << out.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kryflow_bench_relaxation: %s\n", e.what());
    return 1;
  }
  return 0;
}
