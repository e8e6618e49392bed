// Throughput of the matrix-free SEM Poisson operator y = A x against its bandwidth roofline, for
// every cuda element kernel and assembly, on a deformed box that fills the device and on the
// CEED Kershaw mesh (20^3 elements on [0, 6]^3, eps = 0.3, as nekRS's kershaw case).
//
// Roofline: SemPoissonOperator::apply_bytes() = the bytes one application must move at least
// (6 metric terms of 8 bytes and a 4-byte global index per local point; x read and y written
// once per global point) over the copy bandwidth measured in the same run (bytes read plus
// written). GDoF/s counts global points (DoFs) per second. The sorted assembly also stores and
// re-reads the y_L of shared points; the atomic one zeroes y first: neither is in the count.
// --arithmetic float64,float32 measures the float element arithmetic too (SemPoissonOptions::
// arithmetic; its kernels: layered, vertex and shared, staged and pipelined running as layered),
// with the same bytes (vectors and metric terms stay double).
//
//   kryflow_bench_sem [--backend cuda|cpu] [--orders 3,4,...,11] [--points 32000000]
//                     [--deform 0.05] [--kershaw-orders 3,...,11] [--arithmetic float64]
//                     [--json out.json]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/timing.hpp"
#include "kernels/blas/blas.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/core/precision.hpp"
#include "kryflow/linalg/vector.hpp"
#include "kryflow/sem/hex_mesh.hpp"
#include "kryflow/sem/poisson_operator.hpp"

namespace {

using namespace kryflow;
using namespace kryflow::sem;

struct Options {
  std::string backend = "cuda";
  std::vector<int> orders = {3, 4, 5, 6, 7, 8, 9, 10, 11};
  double points = 3.2e7;  // local points of the box per order
  double deform = 0.05;
  std::vector<int> kershaw_orders = {3, 4, 5, 6, 7, 8, 9, 10, 11};
  std::vector<Precision> arithmetics = {Precision::float64};
  std::string json_path;
};

struct Record {
  std::string mesh;
  int order = 0;
  long long elements = 0;
  long long dofs = 0;
  long long local_points = 0;
  std::string element_kernel;
  std::string assembly;
  std::string arithmetic;
  double seconds = 0.0;
  double bytes = 0.0;
  double difference = 0.0;  // max relative difference to the first variant
};

void measure(const Backend& backend, const std::string& name, const HexMesh& mesh, int order,
             const std::vector<Precision>& arithmetics, double bandwidth,
             std::vector<Record>& records) {
  const SemPoissonOperator built(backend, mesh, order);
  const auto n = static_cast<std::size_t>(built.num_rows());
  std::vector<double> xh(n);
  for (std::size_t g = 0; g < n; ++g) xh[g] = std::sin(0.37 * static_cast<double>(g)) + 1.5;
  const Vector x = Vector::from_host(backend, xh);
  Vector y(backend, n);
  std::vector<double> first;
  std::vector<SemElementKernel> kernels = {SemElementKernel::layered};
  if (backend.is_device()) kernels.push_back(SemElementKernel::staged);
  if (backend.is_device()) kernels.push_back(SemElementKernel::pipelined);
  if (backend.is_device()) kernels.push_back(SemElementKernel::vertex);
  if (backend.is_device() && order <= 9) kernels.push_back(SemElementKernel::vertex_lines);
  if (backend.is_device() && order <= 9) kernels.push_back(SemElementKernel::shared);
  std::vector<SemAssembly> assemblies = {SemAssembly::sorted};
  if (backend.is_device()) assemblies.push_back(SemAssembly::atomic);
  for (Precision arithmetic : arithmetics) {
    const std::unique_ptr<SemPoissonOperator> copy = built.with_arithmetic(arithmetic);
    SemPoissonOperator& A = *copy;
    for (SemElementKernel kernel : kernels) {
      // In float staged and pipelined run as layered.
      if (arithmetic == Precision::float32 &&
          (kernel == SemElementKernel::staged || kernel == SemElementKernel::pipelined)) {
        continue;
      }
      for (SemAssembly assembly : assemblies) {
        A.select_kernels(kernel, assembly);
        Record r;
        r.mesh = name;
        r.order = order;
        r.elements = mesh.num_elements;
        r.dofs = A.num_rows();
        r.local_points = static_cast<long long>(A.numbering().local_to_global.size());
        r.element_kernel = to_string(kernel);
        r.assembly = to_string(assembly);
        r.arithmetic = std::string(to_string(arithmetic));
        r.bytes = A.apply_bytes();
        r.seconds = bench::time_per_call(backend, [&] { A.apply(x, y); });
        A.apply(x, y);
        const std::vector<double> result = y.to_host();
        if (first.empty()) first = result;
        r.difference = bench::max_relative_difference(result, first);
        records.push_back(r);
        std::printf("| %s | %d | %lld | %lld | %s | %s | %s | %.1f | %.2f | %.0f | %.2f | %.1e |\n",
                    r.mesh.c_str(), r.order, r.elements, r.dofs, r.element_kernel.c_str(),
                    r.assembly.c_str(), r.arithmetic.c_str(), r.seconds * 1e6,
                    r.dofs / r.seconds / 1e9, r.bytes / r.seconds / 1e9,
                    r.bytes / r.seconds / bandwidth, r.difference);
        std::fflush(stdout);
      }
    }
  }
}

void usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [--backend cuda|cpu] [--orders 3,...,11] [--points N] [--deform A] "
               "[--kershaw-orders 7] [--arithmetic float64,float32] [--json out.json]\n",
               program);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const bool has_value = i + 1 < argc;
      if (arg == "--backend" && has_value) {
        options.backend = argv[++i];
      } else if (arg == "--orders" && has_value) {
        options.orders = bench::parse_ints(argv[++i]);
      } else if (arg == "--points" && has_value) {
        options.points = std::stod(argv[++i]);
      } else if (arg == "--deform" && has_value) {
        options.deform = std::stod(argv[++i]);
      } else if (arg == "--kershaw-orders" && has_value) {
        options.kershaw_orders = bench::parse_ints(argv[++i]);
      } else if (arg == "--arithmetic" && has_value) {
        options.arithmetics.clear();
        std::string list = argv[++i];
        for (std::size_t start = 0; start <= list.size();) {
          const std::size_t comma = std::min(list.find(',', start), list.size());
          options.arithmetics.push_back(precision_from_string(list.substr(start, comma - start)));
          start = comma + 1;
        }
      } else if (arg == "--json" && has_value) {
        options.json_path = argv[++i];
      } else {
        usage(argv[0]);
        return 1;
      }
    }
    const Backend backend = Backend::create(parse_backend_kind(options.backend));
    const double bandwidth = kernels::blas::copy_bandwidth(backend, std::size_t{1} << 30);
    std::printf("SEM Poisson operator, %s, copy bandwidth %.1f GB/s (read + write)\n",
                backend.name().c_str(), bandwidth / 1e9);
    std::printf(
        "| mesh | p | elements | DoFs | element kernel | assembly | arithmetic | us | GDoF/s | "
        "GB/s | of roofline | diff |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    std::vector<Record> records;
    for (int p : options.orders) {
      const double n3 = std::pow(p + 1, 3);
      const int n = std::max(2, static_cast<int>(std::lround(std::cbrt(options.points / n3))));
      BoxOptions box;
      box.smooth_deformation = options.deform;
      const HexMesh mesh = box_mesh(n, n, n, box);
      measure(backend, "box " + std::to_string(n) + "^3", mesh, p, options.arithmetics, bandwidth,
              records);
    }
    for (int p : options.kershaw_orders) {
      BoxOptions box;
      box.upper = {6.0, 6.0, 6.0};
      box.kershaw_epsilon = 0.3;
      measure(backend, "kershaw 20^3", box_mesh(20, 20, 20, box), p, options.arithmetics, bandwidth,
              records);
    }
    // Best variant per mesh and order.
    std::printf("\nbest per mesh and order (fraction of the roofline):\n");
    for (std::size_t i = 0; i < records.size();) {
      std::size_t j = i;
      std::size_t best = i;
      while (j < records.size() && records[j].mesh == records[i].mesh &&
             records[j].order == records[i].order) {
        if (records[j].seconds < records[best].seconds) best = j;
        ++j;
      }
      const Record& r = records[best];
      std::printf("best %s p=%d: %s/%s/%s %.2f GDoF/s, %.2f of roofline\n", r.mesh.c_str(), r.order,
                  r.element_kernel.c_str(), r.assembly.c_str(), r.arithmetic.c_str(),
                  r.dofs / r.seconds / 1e9, r.bytes / r.seconds / bandwidth);
      i = j;
    }
    if (!options.json_path.empty()) {
      nlohmann::json out;
      out["benchmark"] = "sem_poisson_operator";
      out["backend"] = backend.name();
      out["device"] = backend.device_name();
      out["date"] = bench::utc_now();
      out["copy_bandwidth_bytes_per_s"] = bandwidth;
      out["records"] = nlohmann::json::array();
      for (const Record& r : records) {
        out["records"].push_back({{"mesh", r.mesh},
                                  {"order", r.order},
                                  {"elements", r.elements},
                                  {"dofs", r.dofs},
                                  {"local_points", r.local_points},
                                  {"element_kernel", r.element_kernel},
                                  {"assembly", r.assembly},
                                  {"arithmetic", r.arithmetic},
                                  {"seconds", r.seconds},
                                  {"bytes", r.bytes},
                                  {"gdof_per_s", r.dofs / r.seconds / 1e9},
                                  {"fraction_of_roofline", r.bytes / r.seconds / bandwidth},
                                  {"max_relative_difference", r.difference}});
      }
      std::ofstream(options.json_path) << out.dump(2) << "\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kryflow_bench_sem: error: %s\n", e.what());
    return 1;
  }
}
