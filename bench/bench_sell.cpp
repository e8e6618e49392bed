// SELL-C-sigma SpMV throughput (y = A x) on 3D Poisson (7 and 27 points) and real matrices,
// against the copy bandwidth and, on the cuda backend, against cusparseSpMV (CSR) in the same run.
//
// GB/s is SellMatrix::spmv_bytes() (useful bytes: value and column index of every nonzero,
// x read once, y written once; padding and slice metadata excluded) over the median time per
// product; "moved GB/s" uses spmv_moved_bytes() (padding, slice_ptr, slice_width and the
// permutation included). cuSPARSE GB/s uses CsrMatrix::spmv_bytes() as bench_spmv does; the
// speedup is cuSPARSE time over SELL time. Matrices whose bytes fit in the cache are marked.
// Float32 SELL is checked against the float64 comparison within kFloat32Tolerance (its values
// are rounded), float64 within kAgreementTolerance.
//
//   kryflow_bench_sell [--backend cuda|cpu] [--data-dir DIR] [--sizes 100,200]
//                      [--sizes27 64,128] [--slice-heights 8,16,32] [--sigmas 1,256]
//                      [--precisions float64,float32] [--json out.json] [matrix.mtx ...]
// Matrix files given on the command line replace the corpus list.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/timing.hpp"
#include "kernels/blas/blas.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/core/precision.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/linalg/sell_matrix.hpp"
#include "kryflow/linalg/vector.hpp"

#ifdef KRYFLOW_WITH_CUDA
#include "bench/cusparse_spmv.hpp"
#endif

#ifndef KRYFLOW_BENCH_DATA_DIR
#define KRYFLOW_BENCH_DATA_DIR "../shared/data"
#endif

namespace {

using namespace kryflow;

constexpr double kAgreementTolerance = 1e-12;
constexpr double kFloat32Tolerance = 1e-5;

struct Options {
  std::string backend = "cuda";
  std::filesystem::path data_dir;
  std::vector<int> sizes = {100, 200};
  std::vector<int> sizes27 = {64, 128};
  std::vector<int> slice_heights = {8, 16, 32};
  std::vector<index_t> sigmas = {1, 256};
  std::vector<Precision> precisions = {Precision::float64, Precision::float32};
  std::vector<std::filesystem::path> files;
  std::string json_path;
};

struct Record {
  std::string name;
  long long rows = 0;
  long long nnz = 0;
  std::string precision;
  int slice_height = 0;
  long long sigma = 0;
  double padding_ratio = 0.0;
  double bytes = 0.0;        // useful
  double moved_bytes = 0.0;  // incl. padding and metadata
  double csr_bytes = 0.0;
  bool cache_resident = false;
  double seconds = 0.0;
  double conversion_seconds = 0.0;
  double comparison_seconds = 0.0;  // cuSPARSE; 0 when not measured
  double max_relative_difference = 0.0;
  double tolerance = 0.0;
  std::string compared_with;
};

std::vector<Record> run(const Backend& backend, const std::string& name, const CooMatrix& coo,
                        std::size_t cache, const Options& options) {
  const CsrMatrix csr = CsrMatrix::from_coo(backend, coo);
  std::mt19937_64 rng(20240601);
  std::uniform_real_distribution<double> value(0.1, 1.0);
  std::vector<double> x_host(static_cast<std::size_t>(csr.num_cols()));
  for (double& v : x_host) v = value(rng);
  const Vector x = Vector::from_host(backend, x_host);
  Vector y = Vector::constant(backend, static_cast<std::size_t>(csr.num_rows()), 0.0);

  // The comparison: cuSPARSE on the device, the CSR reference on the host.
  std::vector<double> y_comparison;
  double comparison_seconds = 0.0;
  std::string compared_with = "reference";
#ifdef KRYFLOW_WITH_CUDA
  if (backend.is_device()) {
    Vector y_cusparse = Vector::constant(backend, static_cast<std::size_t>(csr.num_rows()), 0.0);
    bench::CusparseSpmv cusparse(csr, x.span().data(), y_cusparse.span().data());
    comparison_seconds = bench::time_per_call(backend, [&] { cusparse.apply(); });
    cusparse.apply();
    y_comparison = y_cusparse.to_host();
    compared_with = "cusparse";
  }
#endif
  if (y_comparison.empty()) {
    const CsrMatrix reference = csr.copy_to(Backend::reference());
    Vector y_ref = Vector::constant(Backend::reference(), y.size(), 0.0);
    reference.apply(x.copy_to(Backend::reference()), y_ref);
    y_comparison = y_ref.to_host();
  }

  std::vector<Record> records;
  for (Precision precision : options.precisions) {
    for (int c : options.slice_heights) {
      for (index_t sigma : options.sigmas) {
        backend.synchronize();
        const auto start = std::chrono::steady_clock::now();
        const SellMatrix A = SellMatrix::from_csr(csr, c, sigma, precision);
        backend.synchronize();
        const auto stop = std::chrono::steady_clock::now();
        Record r;
        r.name = name;
        r.rows = A.num_rows();
        r.nnz = A.nnz();
        r.precision = std::string(to_string(precision));
        r.slice_height = c;
        r.sigma = sigma;
        r.padding_ratio = A.padding_ratio();
        r.bytes = A.spmv_bytes();
        r.moved_bytes = A.spmv_moved_bytes();
        r.csr_bytes = csr.spmv_bytes();
        r.cache_resident = cache > 0 && r.moved_bytes <= static_cast<double>(cache);
        r.conversion_seconds = std::chrono::duration<double>(stop - start).count();
        r.seconds = bench::time_per_call(backend, [&] { A.apply(x, y); });
        A.apply(x, y);
        r.comparison_seconds = comparison_seconds;
        r.max_relative_difference = bench::max_relative_difference(y.to_host(), y_comparison);
        r.tolerance = precision == Precision::float32 ? kFloat32Tolerance : kAgreementTolerance;
        r.compared_with = compared_with;
        records.push_back(r);
      }
    }
  }
  return records;
}

void usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [--backend cuda|cpu] [--data-dir DIR] [--sizes 100,200] "
               "[--sizes27 64,128] [--slice-heights 8,16,32] [--sigmas 1,256] "
               "[--precisions float64,float32] [--json out.json] [matrix.mtx ...]\n",
               program);
}

std::vector<int> parse_ints(const std::string& list) {
  std::vector<int> values;
  for (const std::string& item : bench::split_list(list)) values.push_back(std::stoi(item));
  return values;
}

void write_json(const std::string& path, const Backend& backend, const Options& options,
                double bandwidth, std::size_t cache, const std::vector<Record>& records) {
  const char* commit = std::getenv("KRYFLOW_COMMIT");
  nlohmann::json out;
  out["benchmark"] = "sell_spmv";
  out["device"] = backend.device_name();
  out["backend"] = options.backend;
  out["commit"] = commit != nullptr ? commit : "unknown";
  out["date"] = bench::utc_now();
  out["copy_bandwidth_bytes_per_s"] = bandwidth;
  out["cache_bytes"] = cache;
  out["bytes_model"] =
      "useful: (value bytes + 4) B/nnz + 8 B/col (x) + 8 B/row (y); moved adds padding, "
      "slice_ptr, slice_width and the permutation; cusparse: CsrMatrix::spmv_bytes";
  out["records"] = nlohmann::json::array();
  for (const Record& r : records) {
    nlohmann::json j;
    j["matrix"] = r.name;
    j["rows"] = r.rows;
    j["nnz"] = r.nnz;
    j["precision"] = r.precision;
    j["slice_height"] = r.slice_height;
    j["sigma"] = r.sigma;
    j["padding_ratio"] = r.padding_ratio;
    j["bytes"] = r.bytes;
    j["moved_bytes"] = r.moved_bytes;
    j["cache_resident"] = r.cache_resident;
    j["conversion_seconds"] = r.conversion_seconds;
    j["kryflow_seconds"] = r.seconds;
    j["kryflow_bytes_per_s"] = r.bytes / r.seconds;
    j["kryflow_moved_bytes_per_s"] = r.moved_bytes / r.seconds;
    j["fraction_of_copy_bandwidth"] = r.bytes / r.seconds / bandwidth;
    if (r.comparison_seconds > 0.0) {
      j["cusparse_seconds"] = r.comparison_seconds;
      j["cusparse_bytes_per_s"] = r.csr_bytes / r.comparison_seconds;
      j["speedup_over_cusparse"] = r.comparison_seconds / r.seconds;
    }
    j["compared_with"] = r.compared_with;
    j["max_relative_difference"] = r.max_relative_difference;
    j["tolerance"] = r.tolerance;
    out["records"].push_back(j);
  }
  std::ofstream file(path);
  if (!file) throw InvalidInput("cannot write '" + path + "'");
  file << out.dump(2) << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  const char* env_data = std::getenv("KRYFLOW_DATA_DIR");
  options.data_dir = env_data != nullptr ? env_data : KRYFLOW_BENCH_DATA_DIR;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const bool has_value = i + 1 < argc;
      if (arg == "--backend" && has_value) {
        options.backend = argv[++i];
      } else if (arg == "--data-dir" && has_value) {
        options.data_dir = argv[++i];
      } else if (arg == "--sizes" && has_value) {
        options.sizes = parse_ints(argv[++i]);
      } else if (arg == "--sizes27" && has_value) {
        options.sizes27 = parse_ints(argv[++i]);
      } else if (arg == "--slice-heights" && has_value) {
        options.slice_heights = parse_ints(argv[++i]);
      } else if (arg == "--sigmas" && has_value) {
        options.sigmas.clear();
        for (int s : parse_ints(argv[++i])) options.sigmas.push_back(s);
      } else if (arg == "--precisions" && has_value) {
        options.precisions.clear();
        for (const std::string& p : bench::split_list(argv[++i])) {
          options.precisions.push_back(precision_from_string(p));
        }
      } else if (arg == "--json" && has_value) {
        options.json_path = argv[++i];
      } else if (!arg.empty() && arg[0] != '-') {
        options.files.emplace_back(arg);
      } else {
        usage(argv[0]);
        return 1;
      }
    }
    const Backend backend = Backend::create(parse_backend_kind(options.backend));
    const double bandwidth = kernels::blas::copy_bandwidth(backend, std::size_t{1} << 30);
    const std::size_t cache = bench::cache_bytes(backend);
    std::printf("SELL-C-sigma SpMV, %s, copy bandwidth %.1f GB/s (read + write), cache %.1f MB\n",
                backend.name().c_str(), bandwidth / 1e9, static_cast<double>(cache) / 1e6);
    std::printf(
        "| matrix | rows | nnz | precision | C | sigma | padding | GB/s | of copy | moved GB/s "
        "| cuSPARSE GB/s | speedup | convert ms | max rel diff | note |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");

    std::vector<Record> records;
    bool all_agree = true;
    auto report = [&](const Record& r) {
      char comparison[64] = "-";
      char speedup[32] = "-";
      if (r.comparison_seconds > 0.0) {
        std::snprintf(comparison, sizeof comparison, "%.1f",
                      r.csr_bytes / r.comparison_seconds / 1e9);
        std::snprintf(speedup, sizeof speedup, "%.2f", r.comparison_seconds / r.seconds);
      }
      const bool agree = r.max_relative_difference < r.tolerance;
      all_agree = all_agree && agree;
      std::string note = r.cache_resident ? "fits in cache: measures cache" : "";
      if (!agree) {
        note += (note.empty() ? "" : "; ") + std::string("MISMATCH vs ") + r.compared_with;
      }
      std::printf(
          "| %s | %lld | %lld | %s | %d | %lld | %.3f | %.1f | %.2f | %.1f | %s | %s | %.1f | "
          "%.1e | %s |\n",
          r.name.c_str(), r.rows, r.nnz, r.precision.c_str(), r.slice_height, r.sigma,
          r.padding_ratio, r.bytes / r.seconds / 1e9, r.bytes / r.seconds / bandwidth,
          r.moved_bytes / r.seconds / 1e9, comparison, speedup, r.conversion_seconds * 1e3,
          r.max_relative_difference, note.c_str());
      std::fflush(stdout);
      records.push_back(r);
    };

    for (int n : options.sizes) {
      for (const Record& r :
           run(backend, "poisson3d_" + std::to_string(n), poisson3d(n), cache, options)) {
        report(r);
      }
    }
    for (int n : options.sizes27) {
      for (const Record& r :
           run(backend, "poisson3d27_" + std::to_string(n), poisson3d27(n), cache, options)) {
        report(r);
      }
    }
    std::vector<std::filesystem::path> files = options.files;
    if (files.empty()) {
      for (const std::string& relative : bench::kSpmvCorpus) {
        files.push_back(options.data_dir / relative);
      }
    }
    for (const std::filesystem::path& file : files) {
      const std::string name = file.stem().stem().string();
      if (!std::filesystem::exists(file)) {
        std::printf(
            "| %s | - | - | - | - | - | - | - | - | - | - | - | - | - | skipped: %s not "
            "found |\n",
            name.c_str(), file.string().c_str());
        continue;
      }
      for (const Record& r : run(backend, name, io::read_matrix_market(file), cache, options)) {
        report(r);
      }
    }
    std::printf(
        "max rel diff: max|y - y_%s| / max|y_%s|, required < %.0e (float64), < %.0e "
        "(float32 values): %s\n",
        records.empty() ? "ref" : records.front().compared_with.c_str(),
        records.empty() ? "ref" : records.front().compared_with.c_str(), kAgreementTolerance,
        kFloat32Tolerance, all_agree ? "all agree" : "MISMATCH");
    if (!options.json_path.empty()) {
      write_json(options.json_path, backend, options, bandwidth, cache, records);
    }
    return all_agree ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kryflow_bench_sell: error: %s\n", e.what());
    return 1;
  }
}
