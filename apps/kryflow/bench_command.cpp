// `kryflow bench spmv`: every storage format of kryflow on the same matrices, against the copy
// bandwidth and cuSPARSE, in one run.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/core/timing.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/bsr_matrix.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/format_advisor.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/linalg/sell_matrix.hpp"
#include "kryflow/linalg/vector.hpp"
#include "kryflow/solver.hpp"
#include "report.hpp"

#ifdef KRYFLOW_WITH_CUDA
#include "bench/cusparse_bsr.hpp"
#include "bench/cusparse_spmv.hpp"
#endif

namespace kryflow::cli {

CooMatrix generate_problem(const std::string& spec, std::string& name) {
  const std::size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  if (colon == std::string::npos || colon + 1 == spec.size()) {
    throw InvalidInput("--gen '" + spec + "': expected PROBLEM:N, e.g. poisson3d:200");
  }
  int n = 0;
  try {
    std::size_t used = 0;
    n = std::stoi(spec.substr(colon + 1), &used);
    if (used != spec.size() - colon - 1) throw std::invalid_argument("trailing characters");
  } catch (const std::exception&) {
    throw InvalidInput("--gen '" + spec + "': N must be an integer");
  }
  name = kind + "_" + std::to_string(n);
  if (kind == "poisson2d") return poisson2d(n);
  if (kind == "poisson3d") return poisson3d(n);
  if (kind == "poisson3d27") return poisson3d27(n);
  throw InvalidInput("--gen '" + spec + "': unknown problem (valid: poisson2d, poisson3d, " +
                     "poisson3d27)");
}
namespace {

/// Largest ||y - y_ref||_2 / ||y_ref||_2 accepted: every format sums a row like the reference
/// does (docs/decisions/002), so only CSR-stream's chunked long rows and cuSPARSE differ.
constexpr double kAgreementTolerance = 1e-12;
/// The SELL-C-sigma configurations measured: half-warp and warp slices, unsorted and sorted in
/// windows of 256 rows (the advisor's candidates are among them).
constexpr int kSellSliceHeights[] = {16, 32};
constexpr index_t kSellSigmas[] = {1, 256};

/// A matrix to measure: a file or a generated problem.
struct Problem {
  std::string name;
  CooMatrix coo;
};

Problem load_problem(const std::string& spec, bool generated) {
  if (!generated) {
    std::string name = std::filesystem::path(spec).filename().string();
    for (const char* suffix : {".gz", ".mtx"}) {
      if (name.size() > std::string(suffix).size() && name.ends_with(suffix)) {
        name.resize(name.size() - std::string(suffix).size());
      }
    }
    return {name, io::read_matrix_market(spec)};
  }
  std::string name;
  CooMatrix coo = generate_problem(spec, name);
  return {name, std::move(coo)};
}

/// One measured product.
struct Record {
  std::string matrix;
  long long rows = 0;
  long long nnz = 0;
  std::string format;         // csr, sell, bsr, cusparse_csr, cusparse_bsr
  std::string label;          // CSR, SELL-32-1, BSR-4 (coefficient), cuSPARSE CSR, ...
  std::string precision;      // float64 or float32 (stored values)
  double useful_bytes = 0.0;  // bytes the format must move, padding and fill not counted
  double moved_bytes = 0.0;   // bytes it reads and writes, padding included
  double seconds = 0.0;
  double graph_seconds = 0.0;  // replayed from a CUDA graph (0: not measured)
  double relative_difference = 0.0;
  bool cache_resident = false;
  bool advised = false;
  bool mismatch = false;
  std::string note;
};

/// A kryflow format (or a peer) ready to run: enqueue y = A x, and the figures of its record.
struct Candidate {
  std::string format;
  std::string label;
  Precision precision = Precision::float64;
  double useful_bytes = 0.0;
  double moved_bytes = 0.0;
  bool advised = false;
  std::function<void()> apply;  // y = A x into `output`
  const Vector* output = nullptr;
  const std::vector<double>* expected = nullptr;  // the reference y for its values
};

struct Context {
  const Backend& backend;
  std::size_t cache = 0;
  std::vector<Record> records;
};

void measure(Context& context, const Problem& problem, const Candidate& c, long long rows,
             long long nnz) {
  Record r;
  r.matrix = problem.name;
  r.rows = rows;
  r.nnz = nnz;
  r.format = c.format;
  r.label = c.label;
  r.precision = std::string(to_string(c.precision));
  r.useful_bytes = c.useful_bytes;
  r.moved_bytes = c.moved_bytes;
  r.advised = c.advised;
  r.cache_resident = context.cache > 0 && c.moved_bytes <= static_cast<double>(context.cache);
  r.seconds = time_per_call(context.backend, c.apply);
  if (context.backend.is_device()) {
    try {
      r.graph_seconds = time_per_call_in_graph(context.backend, c.apply);
    } catch (const Error& e) {
      r.note = std::string("no graph timing: ") + e.what();
    }
  }
  c.apply();
  {
    Vector difference = Vector::from_host(context.backend, *c.expected);
    const double scale = norm2(difference);
    axpby(1.0, *c.output, -1.0, difference);
    const double norm = norm2(difference);
    r.relative_difference = scale > 0.0 ? norm / scale : norm;
  }
  if (!(r.relative_difference < kAgreementTolerance)) {
    r.note = "MISMATCH with the reference";
    r.mismatch = true;
  }
  context.records.push_back(r);
}

/// All formats and peers on one matrix.
void run_problem(Context& context, const Problem& problem, const BenchOptions& options) {
  const Backend& backend = context.backend;
  const CsrMatrix host = CsrMatrix::from_coo(Backend::reference(), problem.coo);
  const FormatAdvice advice = advise_format(host, options.block_size);
  // BSR runs with the detected or given block size when the pattern tiles strictly.
  const int block_size = advice.detected_block_size;
  if (options.block_size > 1 && block_size != options.block_size) {
    std::printf("# %s: no BSR-%d: %s\n", problem.name.c_str(), options.block_size,
                advice.reason.c_str());
  }
  const long long rows = host.num_rows();
  const long long nnz = host.nnz();
  std::printf("# %s: %lld x %d, %lld nonzeros; advisor: %s (%s)\n", problem.name.c_str(), rows,
              host.num_cols(), nnz, format_label(advice).c_str(), advice.reason.c_str());
  std::fflush(stdout);

  std::mt19937_64 rng(20240601);
  std::uniform_real_distribution<double> value(0.1, 1.0);
  std::vector<double> x_host(static_cast<std::size_t>(host.num_cols()));
  for (double& v : x_host) v = value(rng);
  const Vector x = Vector::from_host(backend, x_host);
  Vector y = Vector::constant(backend, static_cast<std::size_t>(rows), 0.0);
  const Vector x_reference = Vector::from_host(Backend::reference(), x_host);

  // Reference products for double values and for values rounded to float.
  std::vector<double> expected64;
  {
    Vector y_reference =
        Vector::constant(Backend::reference(), static_cast<std::size_t>(rows), 0.0);
    host.apply(x_reference, y_reference);
    expected64 = y_reference.to_host();
  }
  const auto wanted = [&](const std::string& name) {
    return std::find(options.formats.begin(), options.formats.end(), name) != options.formats.end();
  };
  const std::vector<std::string>& precisions = options.precisions;

  for (const std::string& precision_name : precisions) {
    const Precision precision = precision_from_string(precision_name);
    const std::vector<double>* expected = &expected64;
    std::vector<double> expected32;
    if (precision == Precision::float32) {
      const CsrMatrix rounded = host.with_precision(Precision::float32);
      Vector y_reference =
          Vector::constant(Backend::reference(), static_cast<std::size_t>(rows), 0.0);
      rounded.apply(x_reference, y_reference);
      expected32 = y_reference.to_host();
      expected = &expected32;
    }
    if (wanted("csr")) {
      const CsrMatrix A = host.with_precision(precision).copy_to(backend);
      Candidate c{"csr",
                  "CSR",
                  precision,
                  A.spmv_bytes(),
                  A.spmv_bytes(),
                  advice.format == "csr",
                  [&] { A.apply(x, y); },
                  &y,
                  expected};
      measure(context, problem, c, rows, nnz);
    }
    if (wanted("sell")) {
      const CsrMatrix csr = host.copy_to(backend);
      for (const int C : kSellSliceHeights) {
        for (const index_t sigma : kSellSigmas) {
          const SellMatrix A = SellMatrix::from_csr(csr, C, sigma, precision);
          const bool advised =
              advice.format == "sell" && advice.slice_height == C && advice.sigma == sigma;
          Candidate c{"sell",
                      "SELL-" + std::to_string(C) + "-" + std::to_string(sigma),
                      precision,
                      A.spmv_bytes(),
                      A.spmv_moved_bytes(),
                      advised,
                      [&] { A.apply(x, y); },
                      &y,
                      expected};
          measure(context, problem, c, rows, nnz);
        }
      }
    }
    if (wanted("bsr") && block_size > 1) {
      const CsrMatrix csr = host.copy_to(backend);
      BsrMatrix A = BsrMatrix::from_csr(csr, block_size, precision);
      const std::string label = "BSR-" + std::to_string(block_size);
      for (const BsrKernel kernel : {BsrKernel::block_row, BsrKernel::coefficient}) {
        if (!backend.is_device() && kernel == BsrKernel::coefficient) continue;  // one host kernel
        A.set_kernel(kernel);
        const std::string name = !backend.is_device()             ? ""
                                 : kernel == BsrKernel::block_row ? " block_row"
                                                                  : " coefficient";
        Candidate c{"bsr",
                    label + name,
                    precision,
                    A.spmv_bytes(),
                    A.spmv_bytes(),
                    advice.format == "bsr",
                    [&] { A.apply(x, y); },
                    &y,
                    expected};
        measure(context, problem, c, rows, nnz);
      }
    }
  }

#ifdef KRYFLOW_WITH_CUDA
  if (backend.is_device() && wanted("cusparse")) {
    const CsrMatrix A = host.copy_to(backend);
    bench::CusparseSpmv cusparse(A, x.span().data(), y.span().data());
    Candidate c{"cusparse_csr", "cuSPARSE CSR", Precision::float64,        A.spmv_bytes(),
                A.spmv_bytes(), false,          [&] { cusparse.apply(); }, &y,
                &expected64};
    measure(context, problem, c, rows, nnz);
  }
  if (backend.is_device() && wanted("cusparse") && block_size > 1) {
    const BsrMatrix A = BsrMatrix::from_csr(host.copy_to(backend), block_size);
    bench::CusparseBsrmv cusparse(A, x.span().data(), y.span().data());
    Candidate c{"cusparse_bsr",
                "cuSPARSE BSR-" + std::to_string(block_size),
                Precision::float64,
                A.spmv_bytes(),
                A.spmv_bytes(),
                false,
                [&] { cusparse.apply(); },
                &y,
                &expected64};
    measure(context, problem, c, rows, nnz);
  }
#endif
}

/// The current UTC time as 2026-01-31T12:00:00Z.
std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return date;
}

void write_json(const std::string& path, const Backend& backend, double bandwidth,
                std::size_t cache, const std::vector<Record>& records) {
  const char* commit = std::getenv("KRYFLOW_COMMIT");
  nlohmann::json out;
  out["benchmark"] = "spmv_formats";
  out["device"] = backend.device_name();
  out["backend"] = backend.name();
  out["commit"] = commit != nullptr ? commit : "unknown";
  out["date"] = utc_now();
  out["copy_bandwidth_bytes_per_s"] = bandwidth;
  out["cache_bytes"] = cache;
  out["records"] = nlohmann::json::array();
  for (const Record& r : records) {
    nlohmann::json j;
    j["matrix"] = r.matrix;
    j["rows"] = r.rows;
    j["nnz"] = r.nnz;
    j["format"] = r.format;
    j["label"] = r.label;
    j["precision"] = r.precision;
    j["useful_bytes"] = r.useful_bytes;
    j["moved_bytes"] = r.moved_bytes;
    j["seconds"] = r.seconds;
    if (r.graph_seconds > 0.0) j["graph_seconds"] = r.graph_seconds;
    j["bytes_per_s"] = r.useful_bytes / r.seconds;
    j["fraction_of_copy_bandwidth"] = r.useful_bytes / r.seconds / bandwidth;
    j["cache_resident"] = r.cache_resident;
    j["advised"] = r.advised;
    j["relative_difference"] = r.relative_difference;
    // Speedup over cuSPARSE's CSR product of the same matrix, when it was measured.
    for (const Record& peer : records) {
      if (peer.matrix == r.matrix && peer.format == "cusparse_csr") {
        j["speedup_over_cusparse_csr"] = peer.seconds / r.seconds;
        if (peer.graph_seconds > 0.0 && r.graph_seconds > 0.0) {
          j["speedup_over_cusparse_csr_graph"] = peer.graph_seconds / r.graph_seconds;
        }
      }
    }
    out["records"].push_back(j);
  }
  std::ofstream file(path);
  file << out.dump(2) << "\n";
  if (!file) throw InvalidInput("cannot write '" + path + "'");
}

}  // namespace

int run_bench_spmv(const BenchOptions& options) {
  // --formats and --precisions were checked by the parser (main.cpp: CLI::IsMember).
  std::vector<std::pair<std::string, bool>> specs;
  for (const std::string& file : options.matrices) specs.emplace_back(file, false);
  for (const std::string& gen : options.generated) specs.emplace_back(gen, true);
  if (specs.empty()) specs.emplace_back("poisson3d:64", true);

  const Backend backend = choose_backend(options.backend);
  const CopyBandwidth copy =
      measure_copy_bandwidth(backend, static_cast<std::size_t>(options.copy_bytes));
  if (!copy.bytes_per_second) {
    throw InvalidInput("kryflow bench spmv needs the copy bandwidth: " + copy.note);
  }
  const double bandwidth = *copy.bytes_per_second;
  Context context{backend, backend.cache_bytes(), {}};
  // The launch floor: one call of a kernel that writes one number. Products of small matrices
  // cannot take less.
  Vector one(backend, 1);
  const double floor_seconds = time_per_call(backend, [&] { fill(one, 1.0); });
  std::printf(
      "kryflow bench spmv: %s, device %s; copy bandwidth %.1f GB/s (read + write), "
      "cache %.1f MB; launch floor %.2f us per call (a one-entry fill)\n",
      backend.name().c_str(), backend.device_name().c_str(), bandwidth / 1e9,
      static_cast<double>(context.cache) / 1e6, floor_seconds * 1e6);
  for (const auto& [spec, generated] : specs)
    run_problem(context, load_problem(spec, generated), options);

  std::printf(
      "| matrix | format | values | us | GB/s | of copy | x cuSPARSE CSR | graph us | graph x "
      "cuSPARSE CSR | rel diff (2-norm) | note |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  bool all_agree = true;
  for (const Record& r : context.records) {
    double peer = 0.0;
    double peer_graph = 0.0;
    for (const Record& p : context.records) {
      if (p.matrix == r.matrix && p.format == "cusparse_csr") {
        peer = p.seconds;
        peer_graph = p.graph_seconds;
      }
    }
    std::string note = r.note;
    if (r.cache_resident) note += std::string(note.empty() ? "" : "; ") + "fits in cache";
    if (r.advised) note += std::string(note.empty() ? "" : "; ") + "advised";
    if (r.moved_bytes > r.useful_bytes * 1.0005) {
      char padding[64];
      std::snprintf(padding, sizeof padding, "moves %.1f%% more (padding)",
                    100.0 * (r.moved_bytes / r.useful_bytes - 1.0));
      note += std::string(note.empty() ? "" : "; ") + padding;
    }
    char speedup[32] = "-";
    if (peer > 0.0) std::snprintf(speedup, sizeof speedup, "%.2f", peer / r.seconds);
    char graph[32] = "-";
    char graph_speedup[32] = "-";
    if (r.graph_seconds > 0.0) {
      std::snprintf(graph, sizeof graph, "%.2f", r.graph_seconds * 1e6);
      if (peer_graph > 0.0) {
        std::snprintf(graph_speedup, sizeof graph_speedup, "%.2f", peer_graph / r.graph_seconds);
      }
    }
    std::printf("| %s | %s | %s | %.2f | %.1f | %.2f | %s | %s | %s | %.1e | %s |\n",
                r.matrix.c_str(), r.label.c_str(), r.precision.c_str(), r.seconds * 1e6,
                r.useful_bytes / r.seconds / 1e9, r.useful_bytes / r.seconds / bandwidth, speedup,
                graph, graph_speedup, r.relative_difference, note.c_str());
    all_agree = all_agree && !r.mismatch;
  }
  // Per matrix: the fastest kryflow product over cuSPARSE's CSR product, among all stored
  // precisions and among double values only (cuSPARSE's CSR reads double values); medians.
  for (const bool double_only : {false, true}) {
    std::vector<double> best_speedups;
    for (const Record& peer : context.records) {
      if (peer.format != "cusparse_csr") continue;
      double best = 0.0;
      std::string best_label;
      for (const Record& r : context.records) {
        if (r.matrix != peer.matrix || r.format.starts_with("cusparse")) continue;
        if (double_only && r.precision != "float64") continue;
        if (peer.seconds / r.seconds > best) {
          best = peer.seconds / r.seconds;
          best_label = r.label + " " + r.precision;
        }
      }
      if (best > 0.0) {
        best_speedups.push_back(best);
        std::printf("best%s on %s: %s, %.2fx cuSPARSE CSR\n", double_only ? " (float64)" : "",
                    peer.matrix.c_str(), best_label.c_str(), best);
      }
    }
    if (!best_speedups.empty()) {
      std::sort(best_speedups.begin(), best_speedups.end());
      const std::size_t m = best_speedups.size();
      const double median = m % 2 == 1 ? best_speedups[m / 2]
                                       : 0.5 * (best_speedups[m / 2 - 1] + best_speedups[m / 2]);
      std::printf(
          "median over %zu matrices of the best kryflow format%s over cuSPARSE CSR: "
          "%.2fx\n",
          m, double_only ? " with float64 values" : "", median);
    }
  }
  // kryflow's BSR against cuSPARSE's on the same matrix (float64 values, the faster kernel).
  for (const Record& peer : context.records) {
    if (peer.format != "cusparse_bsr") continue;
    double best = 0.0;
    double best_graph = 0.0;
    for (const Record& r : context.records) {
      if (r.matrix != peer.matrix || r.format != "bsr" || r.precision != "float64") continue;
      best = std::max(best, peer.seconds / r.seconds);
      if (r.graph_seconds > 0.0 && peer.graph_seconds > 0.0) {
        best_graph = std::max(best_graph, peer.graph_seconds / r.graph_seconds);
      }
    }
    std::printf("BSR on %s: %.2fx %s (launched from the host), %.2fx in a CUDA graph\n",
                peer.matrix.c_str(), best, peer.label.c_str(), best_graph);
  }
  if (!options.json.empty())
    write_json(options.json, backend, bandwidth, context.cache, context.records);
  std::printf(
      "GB/s and 'of copy' count the bytes each format must move (padding not counted); "
      "%s\n",
      all_agree ? "every product agrees with the reference"
                : "SOME PRODUCTS DISAGREE WITH THE REFERENCE");
  return all_agree ? 0 : 2;
}

}  // namespace kryflow::cli
