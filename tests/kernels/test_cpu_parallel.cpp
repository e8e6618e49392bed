// The cpu backend's parallel regions (kernels/backend/parallel.hpp, docs/decisions/004): how many
// threads a region gets for its work, the cap by the cores, that the parallel path gives the
// serial path's bits, and, in a process of their own (ctest entry test_cpu_parallel_regions,
// OMP_NUM_THREADS=8 and no wait policy in the environment), that a small solve starts no OpenMP
// thread, that large work starts at most one per core, and that idle threads sleep. These tests
// check the mechanism (thread counts, CPU time of sleeping threads), never speed.
#include <gtest/gtest.h>

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <cstdlib>

#include "kernels/backend/parallel.hpp"
#include "kernels/blas/blas.hpp"
#include "kernels/krylov/cg/cg.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/bsr_matrix.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/linalg/scalars.hpp"
#include "kryflow/linalg/sell_matrix.hpp"
#include "kryflow/preconditioners/jacobi.hpp"
#include "kryflow/sem/poisson_operator.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "test_support.hpp"

#ifdef KRYFLOW_WITH_OPENMP
#include <omp.h>
#endif

namespace kryflow {
namespace {

namespace parallel = kernels::parallel;
namespace blas = kernels::blas;
using parallel::kSerialBelow;
using parallel::threads_for;

/// The cores this process may run on, computed here independently of Backend::cpu.
int cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

/// Threads of this process (the OpenMP runtime's workers included).
int process_threads() {
  int count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task"))
    ++count;
  return count;
}

/// Enough work for threads_for to give at least two threads (three thresholds, odd).
constexpr std::int64_t kParallelWork = 3 * kSerialBelow + 7;

TEST(ThreadsFor, IsOneBelowTheThreshold) {
  const Backend backend = Backend::cpu();
  for (std::int64_t work : {std::int64_t{0}, std::int64_t{1}, kSerialBelow / 2, kSerialBelow - 1})
    EXPECT_EQ(threads_for(backend, work), 1) << "work " << work;
  EXPECT_EQ(threads_for(Backend::cpu(1), std::int64_t{1} << 40), 1);
}

TEST(ThreadsFor, GivesEachThreadAtLeastTheThresholdAndNeverMoreThanTheBackend) {
  const Backend backend = Backend::cpu();
  for (std::int64_t k = 1; k <= 64; ++k) {
    for (std::int64_t work : {k * kSerialBelow, k * kSerialBelow + kSerialBelow - 1}) {
      const int t = threads_for(backend, work);
      EXPECT_GE(t, 1);
      EXPECT_LE(t, k) << "work " << work << ": fewer than kSerialBelow elements per thread";
      EXPECT_LE(t, backend.num_threads()) << "work " << work;
      EXPECT_EQ(t, std::min<std::int64_t>(k, backend.num_threads())) << "work " << work;
    }
  }
  EXPECT_EQ(threads_for(backend, std::int64_t{1} << 50), backend.num_threads());
}

TEST(BackendCpu, NeverUsesMoreThreadsThanTheCores) {
  EXPECT_EQ(Backend::cpu(1).num_threads(), 1);
  EXPECT_EQ(Backend::cpu(4096).num_threads(), cores());
  EXPECT_LE(Backend::cpu().num_threads(), cores());
#ifdef KRYFLOW_WITH_OPENMP
  // As OMP_NUM_THREADS=8 would: the OpenMP default is capped too.
  const int before = omp_get_max_threads();
  omp_set_num_threads(8 * cores());
  EXPECT_EQ(Backend::cpu().num_threads(), cores());
  omp_set_num_threads(before);
#endif
}

/// The cpu kernels on one thread and on every core give the same bits.
class ParallelPath : public ::testing::Test {
 protected:
  const Backend serial = Backend::cpu(1);
  const Backend threaded = Backend::cpu();
};

TEST_F(ParallelPath, VectorKernelsGiveTheSerialBits) {
  ASSERT_GE(threads_for(threaded, kParallelWork), std::min(2, cores()));
  const auto n = static_cast<std::size_t>(kParallelWork);
  const std::vector<double> x = test::random_vector(n, 1);
  const std::vector<double> y = test::random_vector(n, 2);
  const std::vector<double> d = test::random_vector(n, 3);
  auto run = [&](const Backend& backend) {
    Array<double> xa = Array<double>::from_host(backend, x);
    Array<double> ya = Array<double>::from_host(backend, y);
    Array<double> da = Array<double>::from_host(backend, d);
    Array<double> dinv(backend, n);
    std::vector<double> out;
    out.push_back(blas::dot(backend, xa.span(), ya.span()));
    out.push_back(blas::norm2(backend, xa.span()));
    EXPECT_EQ(blas::invert_diagonal(backend, da.span(), dinv.span()), -1);
    blas::axpbypcz(backend, 0.5, xa.span(), -0.25, da.span(), 2.0, ya.span());
    // PCG's fused update (two sums): rz, rz_previous, rz0, stop, beta, p·Ap, r·r, r·z.
    DeviceScalars scalars(backend, 8);
    const double start[8] = {1.0, 1.0, 1.0, 0.0, 0.5, 2.0, 0.0, 0.0};
    scalars.write(0, start);
    auto at = [&](std::size_t i) { return scalars.slot(i).address; };
    const kernels::krylov::cg::Scalars s{at(0), at(1), at(2), at(3), at(4)};
    kernels::krylov::cg::update(backend, xa.span(), da.span(), dinv.span(), {}, ya.span(),
                                xa.span(), s, DeviceSum{at(5), 0}, at(5), at(6), at(7), false);
    std::vector<double> sums(8);
    scalars.read(0, sums);
    out.insert(out.end(), sums.begin(), sums.end());
    for (const auto& v : {xa.to_host(), ya.to_host(), dinv.to_host()})
      out.insert(out.end(), v.begin(), v.end());
    return out;
  };
  EXPECT_EQ(run(threaded), run(serial));
}

/// A BSR-4 pattern: poisson3d(m) with each entry a dense 4 x 4 block of random values.
CooMatrix blocked_poisson(index_t m) {
  const CooMatrix scalar = poisson3d(m);
  const std::vector<double> values = test::random_vector(16 * scalar.num_entries(), 4);
  CooMatrix coo;
  coo.num_rows = 4 * scalar.num_rows;
  coo.num_cols = 4 * scalar.num_cols;
  for (std::size_t k = 0; k < scalar.num_entries(); ++k) {
    for (index_t i = 0; i < 4; ++i) {
      for (index_t j = 0; j < 4; ++j) {
        coo.push_back(4 * scalar.row_idx[k] + i, 4 * scalar.col_idx[k] + j,
                      values[16 * k + static_cast<std::size_t>(4 * i + j)]);
      }
    }
  }
  return coo;
}

/// apply, residual, apply_dot and diagonal of `A`, all outputs in one vector.
std::vector<double> products(const LinearOperator& A, const std::vector<double>& x_host) {
  const Backend& backend = A.backend();
  const Vector x = Vector::from_host(backend, x_host);
  const Vector b = Vector::from_host(backend, test::random_vector(x_host.size(), 5));
  Vector y(backend, x_host.size());
  Vector r(backend, x_host.size());
  Vector d(backend, x_host.size());
  std::vector<double> out;
  A.apply(x, y);
  for (double v : y.to_host()) out.push_back(v);
  A.residual(b, x, r);
  for (double v : r.to_host()) out.push_back(v);
  out.push_back(A.apply_dot(x, y));
  for (double v : y.to_host()) out.push_back(v);
  A.diagonal(d);
  for (double v : d.to_host()) out.push_back(v);
  return out;
}

TEST_F(ParallelPath, MatrixFormatsGiveTheSerialBits) {
  // poisson3d with about 3 thresholds of stored entries: CSR and SELL; the same with 8 rows of
  // every column (long rows: chunks of 4096 entries added by emulated blocks): CSR; 4 x 4 blocks
  // on the pattern of poisson3d: CSR, SELL and BSR-4.
  index_t m = 8;
  while (7 * static_cast<std::int64_t>(m) * m * m < kParallelWork) ++m;
  const CooMatrix plain = poisson3d(m);
  CooMatrix long_rows = plain;
  for (index_t row = 1; row <= 8; ++row) {
    for (index_t j = 0; j < long_rows.num_cols; ++j) long_rows.push_back(row, j, 1e-3 * row);
  }
  struct Case {
    const char* name;
    CooMatrix coo;
    bool sell;
    bool bsr;
  };
  const std::vector<Case> cases = {
      {"poisson3d", plain, true, false},
      {"poisson3d with 8 long rows", long_rows, false, false},
      {"4 x 4 blocks", blocked_poisson(std::max<index_t>(4, m / 2)), true, true}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_GE(threads_for(threaded, static_cast<std::int64_t>(c.coo.num_entries())),
              std::min(2, cores()));
    const std::vector<double> x = test::random_vector(static_cast<std::size_t>(c.coo.num_cols), 6);
    auto all_formats = [&](const Backend& backend) {
      const CsrMatrix csr = CsrMatrix::from_coo(backend, c.coo);
      std::vector<double> out = products(csr, x);
      if (c.sell) {
        for (auto [height, sigma] : {std::pair{32, index_t{1}}, std::pair{8, index_t{256}}}) {
          const std::vector<double> sell = products(SellMatrix::from_csr(csr, height, sigma), x);
          out.insert(out.end(), sell.begin(), sell.end());
        }
      }
      if (c.bsr) {
        const std::vector<double> bsr = products(BsrMatrix::from_csr(csr, 4), x);
        out.insert(out.end(), bsr.begin(), bsr.end());
      }
      return out;
    };
    EXPECT_EQ(all_formats(threaded), all_formats(serial));
  }
}

TEST_F(ParallelPath, SemOperatorGivesTheSerialBits) {
  // 6^3 elements of order 5: 46656 local points, 6 metric terms each.
  const std::vector<double> vertices = test::hex_box_vertices(6, 6, 6);
  auto run = [&](const Backend& backend) {
    const sem::SemPoissonOperator A(backend, 216, vertices, 5);
    EXPECT_GE(threads_for(threaded, 6 * 216 * 216), std::min(2, cores()));
    return products(A, test::random_vector(static_cast<std::size_t>(A.num_rows()), 7));
  };
  EXPECT_EQ(run(threaded), run(serial));
}

// In a process of their own, in this order (ctest entry test_cpu_parallel_regions).

TEST(Regions, SmallCorpusSolveStartsNoOpenMPThread) {
  // 2dcyl1: 1784 rows, 34656 stored entries, every region below the threshold. With
  // OMP_NUM_THREADS=8 the solves must run on the calling thread alone: no worker is ever started.
  ASSERT_EQ(process_threads(), 1) << "run this test first, in a process of its own";
  const auto path = test::data_file("matrices/fvens/2dcyl1/2dcyl1.mtx.gz");
  ASSERT_FALSE(path.empty());
  const CooMatrix coo = io::read_matrix_market(path);
  ASSERT_LT(static_cast<std::int64_t>(coo.num_entries()), kSerialBelow * 2);
  const Backend backend = Backend::cpu();
  const CsrMatrix A = CsrMatrix::from_coo(backend, coo);
  JacobiPreconditioner M;
  M.setup(A);
  const Vector b = Vector::constant(backend, static_cast<std::size_t>(A.num_rows()), 1.0);
  StopCriteria criteria;
  criteria.max_iterations = 2000;
  criteria.relative_tolerance = 1e-10;
  for (bool gmres : {false, true}) {
    Vector x = Vector::constant(backend, static_cast<std::size_t>(A.num_rows()), 0.0);
    const SolveReport report =
        gmres ? Gmres(criteria, 30, false).solve(A, M, b, x) : Bicgstab(criteria).solve(A, M, b, x);
    EXPECT_EQ(report.status, SolveStatus::converged) << report.reason;
  }
  EXPECT_EQ(process_threads(), 1) << "a region below the threshold started OpenMP threads";
}

TEST(Regions, LargeWorkStartsAtMostOneThreadPerCore) {
  const Backend backend = Backend::cpu();
  const int threads_before = process_threads();
  const auto n = static_cast<std::size_t>(std::int64_t{16} * kSerialBelow * cores());
  Array<double> x = Array<double>::from_host(backend, test::random_vector(n, 8));
  EXPECT_NE(blas::dot(backend, x.span(), x.span()), 0.0);
  // The OpenMP runtime may keep one helper thread besides its workers; never 8 workers.
  EXPECT_GE(process_threads(), std::min(2, cores()));
  EXPECT_LE(process_threads(), std::max(threads_before, cores() + 1));
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

TEST(Regions, IdleThreadsSleep) {
  // After a parallel region, the workers wait for the next one. Spinning, they burn CPU time
  // while the calling thread sleeps (libomp: 200 ms by default; libgomp: ~300000 spins, several
  // ms); sleeping, a few microseconds. The environment sets no wait policy.
#if defined(KRYFLOW_WITH_OPENMP) && defined(__GNUC__)
  if (kmp_set_blocktime == nullptr && std::getenv("OMP_WAIT_POLICY") == nullptr) {
    // GCC's libgomp, linked where LLVM's libomp is not installed: its wait policy is read from
    // OMP_WAIT_POLICY when it loads and cannot be changed at run time (decision 004), so
    // nothing in kryflow can make its idle threads sleep. The build links LLVM's libomp
    // wherever it is installed (CI installs it).
    GTEST_SKIP() << "OpenMP runtime without kmp_set_blocktime (libgomp) and no OMP_WAIT_POLICY";
  }
#endif
  const Backend backend = Backend::cpu();
  const auto n = static_cast<std::size_t>(kParallelWork);
  Array<double> x = Array<double>::from_host(backend, test::random_vector(n, 9));
  ASSERT_GE(threads_for(backend, kParallelWork), std::min(2, cores()));
  for (int repeat = 0; repeat < 3; ++repeat) {
    EXPECT_NE(blas::dot(backend, x.span(), x.span()), 0.0);
    const double start = process_cpu_seconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const double idle_cpu = process_cpu_seconds() - start;
    EXPECT_LT(idle_cpu, 2e-3) << "idle OpenMP threads used " << idle_cpu * 1e3
                              << " ms of CPU in 100 ms: they spin (libgomp cannot be told to "
                                 "sleep at run time: docs/decisions/004)";
  }
}

}  // namespace
}  // namespace kryflow
