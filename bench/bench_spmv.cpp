// CSR SpMV throughput (y = A x) on 3D Poisson and the real corpus against the copy bandwidth and,
// on the cuda backend, against cusparseSpMV on the same matrix in the same run.
//
// Bytes per product: per stored entry 4 of column index plus 8 of value (float64) or 4
// (float32), 4 per row pointer, x read once and y written once (8 per column and 8 per row):
// CsrMatrix::spmv_bytes(). GB/s is that
// over the median time per product. Matrices whose bytes fit in the cache (L2 on the GPU, L3 on
// the host) are marked: repeated products then measure the cache, not the memory.
//
// The tile column is the row-block size of the CSR-stream kernels (kernels/spmv/spmv.hpp);
// --tiles measures several on every matrix (one line each; "auto" is the matrix's default).
// --precision measures the values stored in double, in float, or both (one line each; vectors
// and arithmetic are double either way). The comparison is always a double CSR matrix: for a
// float32 line, cuSPARSE (or the reference) runs on the float-rounded values stored in double,
// so the results agree to rounding while cuSPARSE moves 8-byte values.
//
//   kryflow_bench_spmv [--backend cuda|cpu] [--data-dir DIR] [--sizes 100,200]
//                      [--tiles auto,1024,2048,4096] [--precision float64,float32]
//                      [--json out.json]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/timing.hpp"
#include "kernels/blas/blas.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/linalg/vector.hpp"

#ifdef KRYFLOW_WITH_CUDA
#include "bench/cusparse_spmv.hpp"
#endif

#ifndef KRYFLOW_BENCH_DATA_DIR
#define KRYFLOW_BENCH_DATA_DIR "../shared/data"
#endif

namespace {

using namespace kryflow;

/// Agreement required between kryflow's y and the comparison's y: max |a - b| / max |b|.
constexpr double kAgreementTolerance = 1e-12;

struct Options {
  std::string backend = "cuda";
  std::filesystem::path data_dir;
  std::vector<int> sizes = {100, 200};
  std::vector<int> tiles = {0};  // 0: the matrix's default tile
  std::vector<Precision> precisions = {Precision::float64, Precision::float32};
  std::string json_path;
};

struct Record {
  std::string name;
  long long rows = 0;
  long long nnz = 0;
  int tile = 0;
  Precision precision = Precision::float64;
  double bytes = 0.0;
  bool cache_resident = false;
  double seconds = 0.0;
  double comparison_seconds = 0.0;  // cuSPARSE; 0 when not measured
  double comparison_bytes = 0.0;    // spmv_bytes() of the double CSR cuSPARSE runs on
  double max_relative_difference = 0.0;
  std::string compared_with;
};

/// One record per tile (0: the default tile) with values stored in `precision`; cuSPARSE is
/// timed once, on the double CSR of the same (for float32: float-rounded) values, and shared by
/// the records.
std::vector<Record> run(const Backend& backend, const std::string& name, const CooMatrix& coo,
                        std::size_t cache, const std::vector<int>& tiles, Precision precision) {
  CsrMatrix A = CsrMatrix::from_coo(backend, coo, precision);
  const CsrMatrix A_double = A.with_precision(Precision::float64);
  const int default_tile = A.spmv_tile();
  std::mt19937_64 rng(20240601);
  std::uniform_real_distribution<double> value(0.1, 1.0);
  std::vector<double> x_host(static_cast<std::size_t>(A.num_cols()));
  for (double& v : x_host) v = value(rng);
  const Vector x = Vector::from_host(backend, x_host);
  Vector y = Vector::constant(backend, static_cast<std::size_t>(A.num_rows()), 0.0);

  // The comparison: cuSPARSE on the device, the reference oracle on the host.
  std::vector<double> y_comparison;
  double comparison_seconds = 0.0;
  std::string compared_with = "reference";
#ifdef KRYFLOW_WITH_CUDA
  if (backend.is_device()) {
    Vector y_cusparse = Vector::constant(backend, static_cast<std::size_t>(A.num_rows()), 0.0);
    bench::CusparseSpmv cusparse(A_double, x.span().data(), y_cusparse.span().data());
    comparison_seconds = bench::time_per_call(backend, [&] { cusparse.apply(); });
    cusparse.apply();
    y_comparison = y_cusparse.to_host();
    compared_with = "cusparse";
  }
#endif
  if (y_comparison.empty()) {
    const CsrMatrix A_ref = A_double.copy_to(Backend::reference());
    const Vector x_ref = x.copy_to(Backend::reference());
    Vector y_ref =
        Vector::constant(Backend::reference(), static_cast<std::size_t>(A.num_rows()), 0.0);
    A_ref.apply(x_ref, y_ref);
    y_comparison = y_ref.to_host();
  }

  std::vector<Record> records;
  for (int tile : tiles) {
    A.set_spmv_tile(tile == 0 ? default_tile : tile);
    Record r;
    r.name = name;
    r.rows = A.num_rows();
    r.nnz = A.nnz();
    r.tile = A.spmv_tile();
    r.precision = precision;
    r.bytes = A.spmv_bytes();
    r.cache_resident = cache > 0 && r.bytes <= static_cast<double>(cache);
    r.seconds = bench::time_per_call(backend, [&] { A.apply(x, y); });
    A.apply(x, y);
    r.comparison_seconds = comparison_seconds;
    r.comparison_bytes = A_double.spmv_bytes();
    r.max_relative_difference = bench::max_relative_difference(y.to_host(), y_comparison);
    r.compared_with = compared_with;
    records.push_back(r);
  }
  return records;
}

/// A comma-separated list of precisions (float64, float32).
std::vector<Precision> parse_precisions(const std::string& list) {
  std::vector<Precision> precisions;
  for (std::size_t pos = 0; pos < list.size();) {
    const std::size_t comma = list.find(',', pos);
    const std::string item = list.substr(pos, comma - pos);
    if (!item.empty()) precisions.push_back(precision_from_string(item));
    pos = comma == std::string::npos ? list.size() : comma + 1;
  }
  return precisions;
}

/// A comma-separated list of integers; "auto" reads as 0.
std::vector<int> parse_sizes(const std::string& list) {
  std::vector<int> sizes;
  for (std::size_t pos = 0; pos < list.size();) {
    const std::size_t comma = list.find(',', pos);
    const std::string item = list.substr(pos, comma - pos);
    if (item == "auto") {
      sizes.push_back(0);
    } else if (!item.empty()) {
      sizes.push_back(std::stoi(item));
    }
    pos = comma == std::string::npos ? list.size() : comma + 1;
  }
  return sizes;
}

void usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [--backend cuda|cpu] [--data-dir DIR] [--sizes 100,200] "
               "[--tiles auto,1024,2048,4096] [--precision float64,float32] [--json out.json]\n",
               program);
}

void write_json(const std::string& path, const Backend& backend, const Options& options,
                double bandwidth, std::size_t cache, const std::vector<Record>& records) {
  const char* commit = std::getenv("KRYFLOW_COMMIT");
  nlohmann::json out;
  out["benchmark"] = "csr_spmv";
  out["device"] = backend.device_name();
  out["backend"] = options.backend;
  out["commit"] = commit != nullptr ? commit : "unknown";
  out["date"] = bench::utc_now();
  out["copy_bandwidth_bytes_per_s"] = bandwidth;
  out["cache_bytes"] = cache;
  out["bytes_model"] =
      "(4 + 8) B/nnz (float64) or (4 + 4) B/nnz (float32) + 4 B/(rows+1) + 8 B/col (x) + "
      "8 B/row (y)";
  out["comparison_values"] =
      "float64: cuSPARSE (or the reference) on the double CSR; for float32 records, of the "
      "float-rounded values";
  out["records"] = nlohmann::json::array();
  for (const Record& r : records) {
    nlohmann::json j;
    j["matrix"] = r.name;
    j["rows"] = r.rows;
    j["nnz"] = r.nnz;
    j["tile"] = r.tile;
    j["precision"] = std::string(to_string(r.precision));
    j["bytes"] = r.bytes;
    j["cache_resident"] = r.cache_resident;
    j["kryflow_seconds"] = r.seconds;
    j["kryflow_bytes_per_s"] = r.bytes / r.seconds;
    j["fraction_of_copy_bandwidth"] = r.bytes / r.seconds / bandwidth;
    if (r.comparison_seconds > 0.0) {
      j["cusparse_seconds"] = r.comparison_seconds;
      j["cusparse_bytes"] = r.comparison_bytes;
      j["cusparse_bytes_per_s"] = r.comparison_bytes / r.comparison_seconds;
      j["speedup_over_cusparse"] = r.comparison_seconds / r.seconds;
    }
    j["compared_with"] = r.compared_with;
    j["max_relative_difference"] = r.max_relative_difference;
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
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--backend" && has_value) {
      options.backend = argv[++i];
    } else if (arg == "--data-dir" && has_value) {
      options.data_dir = argv[++i];
    } else if (arg == "--sizes" && has_value) {
      options.sizes = parse_sizes(argv[++i]);
    } else if (arg == "--tiles" && has_value) {
      options.tiles = parse_sizes(argv[++i]);
    } else if (arg == "--precision" && has_value) {
      options.precisions = parse_precisions(argv[++i]);
    } else if (arg == "--json" && has_value) {
      options.json_path = argv[++i];
    } else {
      usage(argv[0]);
      return 1;
    }
  }
  try {
    const Backend backend = Backend::create(parse_backend_kind(options.backend));
    const double bandwidth = kernels::blas::copy_bandwidth(backend, std::size_t{1} << 30);
    const std::size_t cache = bench::cache_bytes(backend);
    std::printf("CSR SpMV, %s, copy bandwidth %.1f GB/s (read + write), cache %.1f MB\n",
                backend.name().c_str(), bandwidth / 1e9, static_cast<double>(cache) / 1e6);
    std::printf(
        "values: kryflow's stored values; cuSPARSE always runs on double values (for float32 "
        "lines, the float-rounded values), so its GB/s counts 8-byte values\n");
    std::printf(
        "| matrix | rows | nnz | tile | values | kryflow GB/s | of copy | cuSPARSE GB/s | speedup "
        "| max rel diff | note |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");

    std::vector<Record> records;
    bool all_agree = true;
    auto report = [&](const Record& r) {
      const double gbps = r.bytes / r.seconds / 1e9;
      char comparison[64] = "-";
      char speedup[32] = "-";
      if (r.comparison_seconds > 0.0) {
        std::snprintf(comparison, sizeof comparison, "%.1f",
                      r.comparison_bytes / r.comparison_seconds / 1e9);
        std::snprintf(speedup, sizeof speedup, "%.2f", r.comparison_seconds / r.seconds);
      }
      const bool agree = r.max_relative_difference < kAgreementTolerance;
      all_agree = all_agree && agree;
      std::string note = r.cache_resident ? "fits in cache: measures cache" : "";
      if (!agree)
        note += (note.empty() ? "" : "; ") + std::string("MISMATCH vs ") + r.compared_with;
      std::printf("| %s | %lld | %lld | %d | %s | %.1f | %.2f | %s | %s | %.1e | %s |\n",
                  r.name.c_str(), r.rows, r.nnz, r.tile,
                  std::string(to_string(r.precision)).c_str(), gbps,
                  r.bytes / r.seconds / bandwidth, comparison, speedup, r.max_relative_difference,
                  note.c_str());
      std::fflush(stdout);
      records.push_back(r);
    };

    for (int n : options.sizes) {
      const CooMatrix coo = poisson3d(n);
      for (Precision precision : options.precisions) {
        for (const Record& r :
             run(backend, "poisson3d_" + std::to_string(n), coo, cache, options.tiles, precision)) {
          report(r);
        }
      }
    }
    for (const std::string& relative : bench::kSpmvCorpus) {
      const std::filesystem::path file = options.data_dir / relative;
      const std::string name = std::filesystem::path(relative).stem().stem().string();
      if (!std::filesystem::exists(file)) {
        std::printf("| %s | - | - | - | - | - | - | - | - | - | skipped: %s not found |\n",
                    name.c_str(), file.string().c_str());
        continue;
      }
      const CooMatrix coo = io::read_matrix_market(file);
      for (Precision precision : options.precisions) {
        for (const Record& r : run(backend, name, coo, cache, options.tiles, precision)) {
          report(r);
        }
      }
    }
    std::printf("max rel diff: max|y - y_%s| / max|y_%s|, required < %.0e: %s\n",
                records.empty() ? "ref" : records.front().compared_with.c_str(),
                records.empty() ? "ref" : records.front().compared_with.c_str(),
                kAgreementTolerance, all_agree ? "all agree" : "MISMATCH");
    if (!options.json_path.empty()) {
      write_json(options.json_path, backend, options, bandwidth, cache, records);
    }
    return all_agree ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kryflow_bench_spmv: error: %s\n", e.what());
    return 1;
  }
}
