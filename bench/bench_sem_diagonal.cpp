// Throughput of the local diagonal of the SEM Poisson operator (kernels/sem/diagonal.hpp) per
// kernel variant (Wahlgren, "A GPU-accelerated Jacobi preconditioner for high-order fluid
// simulations", KTH 2022, sec. 3.1: natural, shared, extended, wide), against the copy bandwidth.
//
// Bytes per point: 56 = the 6 metric terms G11 .. G33 read (48) and the diagonal written (8);
// the derivative matrix (N^2 doubles) is not counted, it stays in cache. GB/s = 56 E N^3 over the
// median time per call; "of copy" divides by the measured copy bandwidth (read + write). Each
// result is compared bit for bit: at up to 4096 elements against the reference backend, above
// against the cpu backend (on a cpu run, against the reference). G holds random positive values
// (fixed seed), D the GLL derivative matrix.
//
//   kryflow_bench_sem_diagonal [--backend cuda|cpu] [--orders 7,8,9,10,11]
//                              [--elements 4096,fill] [--json out.json]
// "fill" is the element count giving about 3.2e7 points (E = round(3.2e7 / N^3)) per order.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/timing.hpp"
#include "kernels/blas/blas.hpp"
#include "kernels/sem/diagonal.hpp"
#include "kryflow/core/array.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/sem/gll.hpp"

namespace {

using namespace kryflow;
using kernels::sem::DiagonalVariant;

constexpr double kBytesPerPoint = 56.0;
constexpr double kFillPoints = 3.2e7;
constexpr std::int64_t kReferenceElements = 4096;  // at most this many: reference comparison
constexpr std::uint64_t kSeed = 20240601;
constexpr auto& kVariants = kernels::sem::kDiagonalVariants;

struct Options {
#ifdef KRYFLOW_WITH_CUDA
  std::string backend = "cuda";
#else
  std::string backend = "cpu";
#endif
  std::vector<int> orders = {7, 8, 9, 10, 11};
  std::vector<std::int64_t> elements = {4096, 0};  // 0: fill
  std::string json_path;
};

struct Record {
  int order = 0;
  std::int64_t elements = 0;
  std::string variant;
  bool supported = true;
  double seconds = 0.0;
  std::string compared_with;
  bool matches = false;
};

std::int64_t points_per_element(int n) {
  return static_cast<std::int64_t>(n) * n * n;
}

std::int64_t element_count(std::int64_t requested, int n) {
  if (requested > 0) return requested;
  const double e = kFillPoints / static_cast<double>(points_per_element(n));
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(e + 0.5));
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<std::uint64_t>(a[i]) != std::bit_cast<std::uint64_t>(b[i])) return false;
  }
  return true;
}

/// The diagonal on `backend` (variant extended) from host data: the comparison.
std::vector<double> diagonal_on(const Backend& backend, std::int64_t num_elements, int n,
                                const std::vector<double>& D, const double* g_host) {
  const std::size_t size = static_cast<std::size_t>(num_elements * points_per_element(n));
  const Array<double> D_b = Array<double>::from_host(backend, D);
  const Array<double> g_b = Array<double>::from_host(backend, Span<const double>(g_host, 6 * size));
  kernels::sem::PoissonView a;
  a.num_elements = num_elements;
  a.n = n;
  a.derivative = D_b.data();
  a.g = g_b.data();
  Array<double> d(backend, size);
  kernels::sem::poisson_local_diagonal(backend, a, DiagonalVariant::extended, d.span());
  return d.to_host();
}

std::vector<std::int64_t> parse_elements(const std::string& list) {
  std::vector<std::int64_t> values;
  for (const std::string& item : bench::split_list(list)) {
    if (item == "fill") {
      values.push_back(0);
      continue;
    }
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || v <= 0) {
      throw InvalidInput("--elements: '" + item + "' is not a positive integer or 'fill'");
    }
    values.push_back(v);
  }
  return values;
}

void usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [--backend cuda|cpu] [--orders 7,8,9,10,11] [--elements 4096,fill] "
               "[--json out.json]\n",
               program);
}

void write_json(const std::string& path, const Backend& backend, const Options& options,
                double bandwidth, const std::vector<Record>& records) {
  const char* commit = std::getenv("KRYFLOW_COMMIT");
  nlohmann::json out;
  out["benchmark"] = "sem_local_diagonal";
  out["device"] = backend.device_name();
  out["backend"] = options.backend;
  out["commit"] = commit != nullptr ? commit : "unknown";
  out["date"] = bench::utc_now();
  out["copy_bandwidth_bytes_per_s"] = bandwidth;
  out["bytes_model"] = "56 B/point: 6 metric terms read (48), the diagonal written (8)";
  out["records"] = nlohmann::json::array();
  for (const Record& r : records) {
    const int n = r.order + 1;
    const double points = static_cast<double>(r.elements * points_per_element(n));
    nlohmann::json j;
    j["order"] = r.order;
    j["n"] = n;
    j["elements"] = r.elements;
    j["points"] = points;
    j["variant"] = r.variant;
    j["supported"] = r.supported;
    if (r.supported) {
      j["seconds"] = r.seconds;
      j["points_per_s"] = points / r.seconds;
      j["bytes_per_s"] = kBytesPerPoint * points / r.seconds;
      j["fraction_of_copy_bandwidth"] = kBytesPerPoint * points / r.seconds / bandwidth;
      j["compared_with"] = r.compared_with;
      j["matches"] = r.matches;
    }
    out["records"].push_back(j);
  }
  std::ofstream file(path);
  if (!file) throw InvalidInput("cannot write '" + path + "'");
  file << out.dump(2) << "\n";
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
      } else if (arg == "--elements" && has_value) {
        options.elements = parse_elements(argv[++i]);
      } else if (arg == "--json" && has_value) {
        options.json_path = argv[++i];
      } else {
        usage(argv[0]);
        return 1;
      }
    }
    const Backend backend = Backend::create(parse_backend_kind(options.backend));
    const Backend host = backend.is_device() ? Backend::cpu() : Backend::reference();
    const std::size_t copy_bytes =
        backend.is_device() ? std::size_t{1} << 30 : std::size_t{1} << 28;
    const double bandwidth = kernels::blas::copy_bandwidth(backend, copy_bytes);
    std::printf("SEM local diagonal, %s, copy bandwidth %.1f GB/s (read + write), 56 B/point\n",
                backend.device_name().c_str(), bandwidth / 1e9);

    // One random G for the largest case; each case uses its prefix.
    std::size_t max_g = 0;
    for (int p : options.orders) {
      for (std::int64_t requested : options.elements) {
        const std::int64_t e = element_count(requested, p + 1);
        max_g = std::max(max_g, static_cast<std::size_t>(6 * e * points_per_element(p + 1)));
      }
    }
    std::vector<double> g_host(max_g);
    std::mt19937_64 rng(kSeed);
    std::uniform_real_distribution<double> value(0.1, 1.0);
    for (double& v : g_host) v = value(rng);

    std::printf("| p | N | elements | variant | us | GPoints/s | GB/s | of copy | matches |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    std::vector<Record> records;
    std::vector<std::string> summaries;
    bool all_match = true;
    for (int p : options.orders) {
      const int n = p + 1;
      const std::vector<double> D = sem::derivative_matrix(sem::gll_rule(p));
      const Array<double> D_b = Array<double>::from_host(backend, D);
      std::string summary = "p = " + std::to_string(p) + " (N = " + std::to_string(n) + "):";
      for (std::int64_t requested : options.elements) {
        const std::int64_t num_elements = element_count(requested, n);
        const std::size_t size = static_cast<std::size_t>(num_elements * points_per_element(n));
        const Backend& comparison_backend =
            num_elements <= kReferenceElements ? Backend::reference() : host;
        const std::string compared_with =
            num_elements <= kReferenceElements ? "reference" : to_string(host.kind());
        const std::vector<double> expected =
            diagonal_on(comparison_backend, num_elements, n, D, g_host.data());
        const Array<double> g_b =
            Array<double>::from_host(backend, Span<const double>(g_host.data(), 6 * size));
        kernels::sem::PoissonView a;
        a.num_elements = num_elements;
        a.n = n;
        a.derivative = D_b.data();
        a.g = g_b.data();
        Array<double> d(backend, size);
        double best = std::numeric_limits<double>::infinity();
        std::string best_variant = "-";
        for (DiagonalVariant variant : kVariants) {
          Record r;
          r.order = p;
          r.elements = num_elements;
          r.variant = to_string(variant);
          r.compared_with = compared_with;
          try {
            r.seconds = bench::time_per_call(backend, [&] {
              kernels::sem::poisson_local_diagonal(backend, a, variant, d.span());
            });
          } catch (const NotSupported&) {
            r.supported = false;
            std::printf("| %d | %d | %lld | %s | n/a | n/a | n/a | n/a | n/a |\n", p, n,
                        static_cast<long long>(num_elements), r.variant.c_str());
            records.push_back(r);
            continue;
          }
          // The timed calls wrote d; check them, then clear d for the next variant.
          r.matches = same_bits(d.to_host(), expected);
          all_match = all_match && r.matches;
          d.assign_from_host(std::vector<double>(size, 0.0));
          const double points = static_cast<double>(size);
          std::printf("| %d | %d | %lld | %s | %.1f | %.2f | %.1f | %.2f | %s |\n", p, n,
                      static_cast<long long>(num_elements), r.variant.c_str(), r.seconds * 1e6,
                      points / r.seconds / 1e9, kBytesPerPoint * points / r.seconds / 1e9,
                      kBytesPerPoint * points / r.seconds / bandwidth,
                      r.matches ? "yes" : ("NO (vs " + compared_with + ")").c_str());
          std::fflush(stdout);
          if (r.seconds < best) {
            best = r.seconds;
            best_variant = r.variant;
          }
          records.push_back(r);
        }
        char part[160];
        std::snprintf(part, sizeof part, " %lld elements: %s (%.1f us, %.1f GB/s);",
                      static_cast<long long>(num_elements), best_variant.c_str(), best * 1e6,
                      kBytesPerPoint * static_cast<double>(size) / best / 1e9);
        summary += part;
      }
      summary.pop_back();
      summaries.push_back(summary);
    }
    std::printf("\nFastest variant per order and element count:\n");
    for (const std::string& s : summaries) std::printf("%s\n", s.c_str());
    std::printf("matches: every result bit for bit equal to its comparison: %s\n",
                all_match ? "yes" : "NO");
    if (!options.json_path.empty())
      write_json(options.json_path, backend, options, bandwidth, records);
    return all_match ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kryflow_bench_sem_diagonal: error: %s\n", e.what());
    return 1;
  }
}
