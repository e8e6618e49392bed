// Matrix Market reader throughput: file bytes and entries per second on a random coordinate
// file of about --size-mb megabytes, plain and gzip, best of 3 reads (single thread).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kryflow/core/error.hpp"
#include "kryflow/io/matrix_market.hpp"

namespace {

namespace fs = std::filesystem;

/// A random square matrix whose Matrix Market text takes about `bytes` bytes: 10^6 rows (7-digit
/// indices) and values in [-1, -0.1] u [0.1, 1] written with 17 digits, about 34 bytes a line.
kryflow::CooMatrix random_matrix(double bytes, std::uint64_t seed) {
  constexpr kryflow::index_t kRows = 1000000;
  constexpr double kBytesPerEntry = 34.2;
  const auto entries = static_cast<std::size_t>(bytes / kBytesPerEntry);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<kryflow::index_t> index(0, kRows - 1);
  std::uniform_real_distribution<double> magnitude(0.1, 1.0);
  std::bernoulli_distribution negative(0.5);
  kryflow::CooMatrix A;
  A.num_rows = kRows;
  A.num_cols = kRows;
  A.reserve(entries);
  for (std::size_t k = 0; k < entries; ++k) {
    const double v = magnitude(rng);
    A.push_back(index(rng), index(rng), negative(rng) ? -v : v);
  }
  return A;
}

struct Record {
  std::string format;
  std::uintmax_t file_bytes = 0;
  std::uintmax_t text_bytes = 0;
  std::size_t entries = 0;
  double write_seconds = 0.0;
  double best_seconds = 0.0;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Record measure(const kryflow::CooMatrix& A, const fs::path& file, const std::string& format,
               std::uintmax_t text_bytes) {
  Record r;
  r.format = format;
  const auto start = std::chrono::steady_clock::now();
  kryflow::io::write_matrix_market(file, A);
  r.write_seconds = seconds_since(start);
  r.file_bytes = fs::file_size(file);
  r.text_bytes = text_bytes != 0 ? text_bytes : r.file_bytes;
  r.best_seconds = 1e300;
  for (int repeat = 0; repeat < 3; ++repeat) {
    const auto t0 = std::chrono::steady_clock::now();
    const kryflow::CooMatrix B = kryflow::io::read_matrix_market(file);
    r.best_seconds = std::min(r.best_seconds, seconds_since(t0));
    r.entries = B.num_entries();
    if (B.num_entries() != A.num_entries()) {
      throw kryflow::InvalidInput("read back " + std::to_string(B.num_entries()) +
                                  " entries instead of " + std::to_string(A.num_entries()));
    }
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  double size_mb = 50.0;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--size-mb" && i + 1 < argc) {
      size_mb = std::atof(argv[++i]);
    } else if (arg == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--size-mb 50] [--json out.json]\n", argv[0]);
      return 1;
    }
  }
  if (!(size_mb > 0.0)) {
    std::fprintf(stderr, "kryflow_bench_mm_reader: --size-mb must be positive\n");
    return 1;
  }
  const fs::path dir = fs::temp_directory_path() /
                       ("kryflow_bench_mm_reader_" + std::to_string(std::random_device{}()));
  int status = 0;
  try {
    fs::create_directories(dir);
    const kryflow::CooMatrix A = random_matrix(size_mb * 1e6, 20240607);
    std::vector<Record> records;
    records.push_back(measure(A, dir / "random.mtx", "plain", 0));
    records.push_back(measure(A, dir / "random.mtx.gz", "gzip", records[0].file_bytes));

    std::printf("Matrix Market reader, %zu entries, best of 3 reads, single thread\n",
                A.num_entries());
    std::printf("| format | file MB | text MB | read s | file MB/s | text MB/s | Mentries/s |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    for (const Record& r : records) {
      std::printf("| %s | %.1f | %.1f | %.3f | %.0f | %.0f | %.1f |\n", r.format.c_str(),
                  r.file_bytes / 1e6, r.text_bytes / 1e6, r.best_seconds,
                  r.file_bytes / 1e6 / r.best_seconds, r.text_bytes / 1e6 / r.best_seconds,
                  r.entries / 1e6 / r.best_seconds);
    }
    if (!json_path.empty()) {
      const std::time_t now = std::time(nullptr);
      char date[32];
      std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
      const char* commit = std::getenv("KRYFLOW_COMMIT");
      nlohmann::json out = {{"benchmark", "mm_reader"},
                            {"commit", commit != nullptr ? commit : "unknown"},
                            {"date", date},
                            {"threads", 1},
                            {"repeats", 3},
                            {"records", nlohmann::json::array()}};
      for (const Record& r : records) {
        out["records"].push_back({{"format", r.format},
                                  {"file_bytes", r.file_bytes},
                                  {"text_bytes", r.text_bytes},
                                  {"entries", r.entries},
                                  {"write_seconds", r.write_seconds},
                                  {"best_read_seconds", r.best_seconds},
                                  {"file_mb_per_s", r.file_bytes / 1e6 / r.best_seconds},
                                  {"text_mb_per_s", r.text_bytes / 1e6 / r.best_seconds},
                                  {"entries_per_s", r.entries / r.best_seconds}});
      }
      std::ofstream file(json_path);
      file << out.dump(2) << "\n";
      if (!file) throw kryflow::InvalidInput("cannot write '" + json_path + "'");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kryflow_bench_mm_reader: error: %s\n", e.what());
    status = 1;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return status;
}
