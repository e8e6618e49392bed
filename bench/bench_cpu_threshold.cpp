// The work below which a cpu kernel should run serially (kernels/backend/parallel.hpp).
//
// For sizes n = 2^10 .. 2^22 it times, per call, the two shapes of cpu kernel: a streaming vector
// update (y = a x + b y, 2 elements read and 1 written per entry: the cheapest work per element
// of any kernel, so the highest break-even) and a CSR product of the 5-point Laplacian (work:
// stored entries). Each runs serially on the calling thread, and in an OpenMP region of 1 and of
// T threads with the dynamic chunks of the kernels; an empty region of T threads gives the fork
// and join alone. The break-even is where T threads first beat the serial loop; run it with and
// without another process keeping a core busy (scripts/cpu_backend_check.sh does the latter for
// the solver). Medians of 9 batches of at least 20 ms.
//
//   kryflow_bench_cpu_threshold [T]   (default: omp_get_max_threads())
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "kernels/backend/parallel.hpp"

#ifdef KRYFLOW_WITH_OPENMP
#include <omp.h>
#endif

namespace {

using kryflow::kernels::parallel::chunk_for;

double seconds_per_call(const std::function<void()>& call) {
  using clock = std::chrono::steady_clock;
  call();
  std::int64_t calls = 1;
  for (;;) {  // calls per batch: at least 20 ms
    const auto start = clock::now();
    for (std::int64_t c = 0; c < calls; ++c) call();
    if (std::chrono::duration<double>(clock::now() - start).count() >= 0.02) break;
    calls *= 2;
  }
  std::vector<double> batches;
  for (int b = 0; b < 9; ++b) {
    const auto start = clock::now();
    for (std::int64_t c = 0; c < calls; ++c) call();
    batches.push_back(std::chrono::duration<double>(clock::now() - start).count() /
                      static_cast<double>(calls));
  }
  std::nth_element(batches.begin(), batches.begin() + 4, batches.end());
  return batches[4];
}

void axpby(int threads, bool region, std::int64_t n, const double* x, double* y) {
  if (!region) {
    for (std::int64_t i = 0; i < n; ++i) y[i] = 0.5 * x[i] + 0.25 * y[i];
    return;
  }
#pragma omp parallel for schedule(dynamic, chunk_for(n, threads)) num_threads(threads)
  for (std::int64_t i = 0; i < n; ++i) y[i] = 0.5 * x[i] + 0.25 * y[i];
}

struct Csr {
  std::vector<std::int32_t> row_ptr, col_idx;
  std::vector<double> values;
};

/// The 5-point Laplacian on an m x m grid.
Csr poisson2d(std::int32_t m) {
  Csr a;
  a.row_ptr.push_back(0);
  for (std::int32_t j = 0; j < m; ++j) {
    for (std::int32_t i = 0; i < m; ++i) {
      const std::int32_t row = j * m + i;
      auto add = [&](std::int32_t col, double v) {
        a.col_idx.push_back(col);
        a.values.push_back(v);
      };
      if (j > 0) add(row - m, -1.0);
      if (i > 0) add(row - 1, -1.0);
      add(row, 4.0);
      if (i + 1 < m) add(row + 1, -1.0);
      if (j + 1 < m) add(row + m, -1.0);
      a.row_ptr.push_back(static_cast<std::int32_t>(a.col_idx.size()));
    }
  }
  return a;
}

void spmv(int threads, bool region, const Csr& a, const double* x, double* y) {
  const std::int64_t rows = static_cast<std::int64_t>(a.row_ptr.size()) - 1;
  auto row = [&](std::int64_t i) {
    double sum = 0.0;
    for (std::int32_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      sum = sum + a.values[k] * x[a.col_idx[k]];
    y[i] = sum;
  };
  if (!region) {
    for (std::int64_t i = 0; i < rows; ++i) row(i);
    return;
  }
#pragma omp parallel for schedule(dynamic, chunk_for(rows, threads)) num_threads(threads)
  for (std::int64_t i = 0; i < rows; ++i) row(i);
}

}  // namespace

int main(int argc, char** argv) {
#ifdef KRYFLOW_WITH_OPENMP
  const int threads = argc > 1 ? std::atoi(argv[1]) : omp_get_max_threads();
  kryflow::kernels::parallel::wait_passively();  // as the kernels' regions do
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  std::printf(
      "# kryflow_bench_cpu_threshold: T = %d threads, OMP_WAIT_POLICY=%s, kmp_set_blocktime %s\n",
      threads, policy != nullptr ? policy : "unset",
      kmp_set_blocktime != nullptr ? "available (idle threads sleep)" : "not in this runtime");
  const double empty = seconds_per_call([&] {
#pragma omp parallel num_threads(threads)
    {
      volatile int sink = 0;
      (void)sink;
    }
  });
  std::printf("# empty region of %d threads (fork + join): %.2f us\n", threads, empty * 1e6);
  std::printf(
      "| kernel | elements | serial us | region(1) us | region(T) us | serial / region(T) |\n"
      "|---|---|---|---|---|---|\n");
  for (std::int64_t n = 1 << 10; n <= (1 << 22); n *= 2) {
    std::vector<double> x(static_cast<std::size_t>(n), 1.0), y(static_cast<std::size_t>(n), 0.0);
    const double serial = seconds_per_call([&] { axpby(1, false, n, x.data(), y.data()); });
    const double one = seconds_per_call([&] { axpby(1, true, n, x.data(), y.data()); });
    const double many = seconds_per_call([&] { axpby(threads, true, n, x.data(), y.data()); });
    std::printf("| axpby | %lld | %.2f | %.2f | %.2f | %.2f |\n", static_cast<long long>(n),
                serial * 1e6, one * 1e6, many * 1e6, serial / many);
  }
  for (std::int32_t m = 16; m <= 1024; m *= 2) {
    const Csr a = poisson2d(m);
    const std::size_t rows = a.row_ptr.size() - 1;
    std::vector<double> x(rows, 1.0), y(rows, 0.0);
    const double serial = seconds_per_call([&] { spmv(1, false, a, x.data(), y.data()); });
    const double one = seconds_per_call([&] { spmv(1, true, a, x.data(), y.data()); });
    const double many = seconds_per_call([&] { spmv(threads, true, a, x.data(), y.data()); });
    std::printf("| csr spmv | %zu | %.2f | %.2f | %.2f | %.2f |\n", a.values.size(), serial * 1e6,
                one * 1e6, many * 1e6, serial / many);
  }
  return 0;
#else
  (void)argc;
  (void)argv;
  std::printf("kryflow_bench_cpu_threshold: built without OpenMP\n");
  return 0;
#endif
}
