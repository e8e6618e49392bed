// BSR SpMV throughput (y = A x) per block size, value precision and cuda kernel, against the copy
// bandwidth and, on the cuda backend, against cusparseDbsrmv on the same BSR matrix and
// cusparseSpMV on the source CSR matrix in the same run.
//
// Bytes per product (BsrMatrix::spmv_bytes): B^2 values per block (8 or 4 bytes each, fill-in
// zeros included), 4 per block column index, 4 per block row pointer, x read once and y written
// once. GB/s is that over the median time per product; "of copy" divides by the measured copy
// bandwidth (read + write). Speedups are time ratios (cuSPARSE time / kryflow time).
// Matrices: 3D Poisson block versions (kronecker_block, random dense diagonally dominant
// blocks) for each --sizes n and --block-sizes B, then the corpus matrices with B = 4 (or the
// --files list with --file-block-size, 0 = detect). A corpus pattern that does not tile
// strictly is converted with fill-in and its fill ratio printed.
//
//   kryflow_bench_bsr [--backend cuda|cpu] [--data-dir DIR] [--sizes 64] [--block-sizes 4,5]
//                     [--files a.mtx,b.mtx.gz] [--file-block-size 4] [--json out.json]
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
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/bsr_matrix.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/linalg/vector.hpp"

#ifdef KRYFLOW_WITH_CUDA
#include "bench/cusparse_bsr.hpp"
#include "bench/cusparse_spmv.hpp"
#endif

#ifndef KRYFLOW_BENCH_DATA_DIR
#define KRYFLOW_BENCH_DATA_DIR "../shared/data"
#endif

namespace {

using namespace kryflow;

/// Agreement required between kryflow's y and the comparison's: max |a - b| / max |b|; float32
/// storage rounds the values, so its y is compared against double-valued products loosely.
constexpr double kAgreementFloat64 = 1e-12;
constexpr double kAgreementFloat32 = 1e-5;

const std::vector<std::string> kCorpus = {
    "matrices/fvens/2dcyl1/2dcyl1.mtx.gz",
    "matrices/petsc_ex19/ex19_cavity_33.mtx.gz",
    "matrices/petsc_ex19/ex19_cavity_129.mtx.gz",
    "matrices/petsc_ex19/ex19_cavity_257.mtx.gz",
};
constexpr int kCorpusBlockSize = 4;

struct Options {
  std::string backend = "cuda";
  std::filesystem::path data_dir;
  std::vector<int> sizes = {64};
  std::vector<int> block_sizes = {4, 5};
  std::vector<std::string> files;
  int file_block_size = kCorpusBlockSize;
  std::string json_path;
};

struct Record {
  std::string name;
  int block_size = 0;
  std::string precision;
  std::string kernel;
  bool strict = true;
  double fill_ratio = 1.0;
  long long rows = 0;
  long long blocks = 0;
  double bytes = 0.0;
  double seconds = 0.0;
  double cusparse_bsr_seconds = 0.0;  // 0 when not measured
  double cusparse_bsr_bytes = 0.0;    // the float64 BSR matrix's spmv_bytes
  double cusparse_csr_seconds = 0.0;
  double max_relative_difference = 0.0;
  std::string compared_with;
  bool agree = true;
};

const char* kernel_name(BsrKernel kernel) {
  return kernel == BsrKernel::coefficient ? "coefficient" : "block_row";
}

/// All records of one matrix and block size: both precisions, both kernels (the cpu backend
/// has one kernel: one record per precision).
std::vector<Record> run(const Backend& backend, const std::string& name, const CsrMatrix& csr,
                        int B) {
  const BlockTiling tiling = check_block_tiling(
      csr.num_rows(), csr.num_cols(), csr.row_ptr().to_host(), csr.col_idx().to_host(), B);
  if (!tiling.divisible) {
    std::printf("| %s | %d | - | - | skipped: %d rows are not a multiple of B |\n", name.c_str(), B,
                csr.num_rows());
    return {};
  }
  std::mt19937_64 rng(20240601);
  std::uniform_real_distribution<double> value(0.1, 1.0);
  std::vector<double> x_host(static_cast<std::size_t>(csr.num_cols()));
  for (double& v : x_host) v = value(rng);
  const Vector x = Vector::from_host(backend, x_host);
  Vector y = Vector::constant(backend, static_cast<std::size_t>(csr.num_rows()), 0.0);

  // The comparisons: cuSPARSE CSR on the source matrix and BSR on the float64 BSR matrix on the
  // device; the reference CSR kernels on the host.
  BsrMatrix A64 = BsrMatrix::from_csr_filled(csr, B, Precision::float64);
  std::vector<double> y_comparison;
  std::string compared_with = "reference csr";
  double csr_seconds = 0.0;
  double bsr_seconds = 0.0;
#ifdef KRYFLOW_WITH_CUDA
  if (backend.is_device()) {
    Vector y_cusparse = Vector::constant(backend, static_cast<std::size_t>(csr.num_rows()), 0.0);
    bench::CusparseSpmv cusparse_csr(csr, x.span().data(), y_cusparse.span().data());
    csr_seconds = bench::time_per_call(backend, [&] { cusparse_csr.apply(); });
    if (B > 1) {
      bench::CusparseBsrmv cusparse_bsr(A64, x.span().data(), y_cusparse.span().data());
      bsr_seconds = bench::time_per_call(backend, [&] { cusparse_bsr.apply(); });
      cusparse_bsr.apply();
      compared_with = "cusparse bsr";
    } else {
      cusparse_csr.apply();
      compared_with = "cusparse csr";
    }
    y_comparison = y_cusparse.to_host();
  }
#endif
  if (y_comparison.empty()) {
    const CsrMatrix reference = csr.copy_to(Backend::reference());
    Vector y_ref =
        Vector::constant(Backend::reference(), static_cast<std::size_t>(csr.num_rows()), 0.0);
    reference.apply(x.copy_to(Backend::reference()), y_ref);
    y_comparison = y_ref.to_host();
  }

  std::vector<BsrKernel> kernels = {BsrKernel::block_row};
  if (backend.is_device()) kernels.push_back(BsrKernel::coefficient);
  std::vector<Record> records;
  for (Precision precision : {Precision::float64, Precision::float32}) {
    BsrMatrix A32;
    if (precision == Precision::float32) {
      A32 = BsrMatrix::from_csr_filled(csr, B, Precision::float32);
    }
    BsrMatrix& A = precision == Precision::float32 ? A32 : A64;
    for (BsrKernel kernel : kernels) {
      A.set_kernel(kernel);
      Record r;
      r.name = name;
      r.block_size = B;
      r.precision = std::string(to_string(precision));
      r.kernel = backend.is_device() ? kernel_name(kernel) : "cpu";
      r.strict = tiling.strict;
      r.fill_ratio = A.fill_ratio();
      r.rows = A.num_rows();
      r.blocks = A.num_blocks();
      r.bytes = A.spmv_bytes();
      r.seconds = bench::time_per_call(backend, [&] { A.apply(x, y); });
      A.apply(x, y);
      r.cusparse_bsr_seconds = bsr_seconds;
      r.cusparse_bsr_bytes = A64.spmv_bytes();
      r.cusparse_csr_seconds = csr_seconds;
      r.max_relative_difference = bench::max_relative_difference(y.to_host(), y_comparison);
      r.compared_with = compared_with;
      r.agree = r.max_relative_difference <
                (precision == Precision::float32 ? kAgreementFloat32 : kAgreementFloat64);
      records.push_back(r);
    }
  }
  return records;
}

void usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [--backend cuda|cpu] [--data-dir DIR] [--sizes 64] [--block-sizes 4,5] "
               "[--files a.mtx,b.mtx.gz] [--file-block-size 4 (0: detect)] [--json out.json]\n",
               program);
}

void write_json(const std::string& path, const Backend& backend, const Options& options,
                double bandwidth, const std::vector<Record>& records) {
  const char* commit = std::getenv("KRYFLOW_COMMIT");
  nlohmann::json out;
  out["benchmark"] = "bsr_spmv";
  out["device"] = backend.device_name();
  out["backend"] = options.backend;
  out["commit"] = commit != nullptr ? commit : "unknown";
  out["date"] = bench::utc_now();
  out["copy_bandwidth_bytes_per_s"] = bandwidth;
  out["bytes_model"] =
      "B^2 values (8 or 4 B, fill-in included) + 4 B per block + 4 B/(block rows+1) + 8 B/col (x) "
      "+ 8 B/row (y)";
  out["records"] = nlohmann::json::array();
  for (const Record& r : records) {
    nlohmann::json j;
    j["matrix"] = r.name;
    j["block_size"] = r.block_size;
    j["precision"] = r.precision;
    j["kernel"] = r.kernel;
    j["strict_tiling"] = r.strict;
    j["fill_ratio"] = r.fill_ratio;
    j["rows"] = r.rows;
    j["blocks"] = r.blocks;
    j["bytes"] = r.bytes;
    j["kryflow_seconds"] = r.seconds;
    j["kryflow_bytes_per_s"] = r.bytes / r.seconds;
    j["fraction_of_copy_bandwidth"] = r.bytes / r.seconds / bandwidth;
    if (r.cusparse_bsr_seconds > 0.0) {
      j["cusparse_bsr_seconds"] = r.cusparse_bsr_seconds;
      j["cusparse_bsr_bytes_per_s"] = r.cusparse_bsr_bytes / r.cusparse_bsr_seconds;
      j["speedup_over_cusparse_bsr"] = r.cusparse_bsr_seconds / r.seconds;
    }
    if (r.cusparse_csr_seconds > 0.0) {
      j["cusparse_csr_seconds"] = r.cusparse_csr_seconds;
      j["speedup_over_cusparse_csr"] = r.cusparse_csr_seconds / r.seconds;
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
      options.sizes = bench::parse_ints(argv[++i]);
    } else if (arg == "--block-sizes" && has_value) {
      options.block_sizes = bench::parse_ints(argv[++i]);
    } else if (arg == "--files" && has_value) {
      options.files = bench::split_list(argv[++i]);
    } else if (arg == "--file-block-size" && has_value) {
      options.file_block_size = std::stoi(argv[++i]);
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
    std::printf("BSR SpMV, %s, copy bandwidth %.1f GB/s (read + write)\n", backend.name().c_str(),
                bandwidth / 1e9);
    std::printf(
        "| matrix | B | values | tiling (fill) | rows | blocks | kernel | kryflow GB/s | of copy "
        "| cuSPARSE BSR GB/s | speedup vs BSR | speedup vs CSR | max rel diff | note |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");

    std::vector<Record> records;
    bool all_agree = true;
    auto report = [&](const Record& r) {
      char cusparse_bsr[32] = "-";
      char speedup_bsr[32] = "-";
      char speedup_csr[32] = "-";
      if (r.cusparse_bsr_seconds > 0.0) {
        std::snprintf(cusparse_bsr, sizeof cusparse_bsr, "%.1f",
                      r.cusparse_bsr_bytes / r.cusparse_bsr_seconds / 1e9);
        std::snprintf(speedup_bsr, sizeof speedup_bsr, "%.2f", r.cusparse_bsr_seconds / r.seconds);
      }
      if (r.cusparse_csr_seconds > 0.0) {
        std::snprintf(speedup_csr, sizeof speedup_csr, "%.2f", r.cusparse_csr_seconds / r.seconds);
      }
      all_agree = all_agree && r.agree;
      const std::string note = r.agree ? "" : "MISMATCH vs " + r.compared_with;
      std::printf(
          "| %s | %d | %s | %s (%.3f) | %lld | %lld | %s | %.1f | %.2f | %s | %s | %s "
          "| %.1e | %s |\n",
          r.name.c_str(), r.block_size, r.precision.c_str(), r.strict ? "strict" : "filled",
          r.fill_ratio, r.rows, r.blocks, r.kernel.c_str(), r.bytes / r.seconds / 1e9,
          r.bytes / r.seconds / bandwidth, cusparse_bsr, speedup_bsr, speedup_csr,
          r.max_relative_difference, note.c_str());
      std::fflush(stdout);
      records.push_back(r);
    };

    for (int n : options.sizes) {
      for (int B : options.block_sizes) {
        const CsrMatrix csr = CsrMatrix::from_coo(backend, kronecker_block(poisson3d(n), B, 7));
        for (const Record& r :
             run(backend, "poisson3d_" + std::to_string(n) + "_b" + std::to_string(B), csr, B)) {
          report(r);
        }
      }
    }
    std::vector<std::filesystem::path> files;
    for (const std::string& f : options.files) files.emplace_back(f);
    if (options.files.empty()) {
      for (const std::string& relative : kCorpus) files.push_back(options.data_dir / relative);
    }
    for (const std::filesystem::path& file : files) {
      const std::string name = file.filename().stem().stem().string();
      if (!std::filesystem::exists(file)) {
        std::printf(
            "| %s | - | - | - | - | - | - | - | - | - | - | - | - | skipped: %s not found |\n",
            name.c_str(), file.string().c_str());
        continue;
      }
      const CsrMatrix csr = CsrMatrix::from_coo(backend, io::read_matrix_market(file));
      const int B =
          options.file_block_size > 0 ? options.file_block_size : BsrMatrix::detect_block_size(csr);
      for (const Record& r : run(backend, name, csr, B)) report(r);
    }
    std::printf("max rel diff: against %s, required < %.0e (float64), %.0e (float32): %s\n",
                records.empty() ? "-" : records.front().compared_with.c_str(), kAgreementFloat64,
                kAgreementFloat32, all_agree ? "all agree" : "MISMATCH");
    if (!options.json_path.empty())
      write_json(options.json_path, backend, options, bandwidth, records);
    return all_agree ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kryflow_bench_bsr: error: %s\n", e.what());
    return 1;
  }
}
