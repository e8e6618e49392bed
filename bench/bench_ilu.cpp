// Level-scheduled ILUT solves against cuSPARSE's cusparseSpSV on the same factors, and the
// multicolor ILU(0) and DILU solves, on the real nonsymmetric and block corpus.
//
// For each matrix (as a point CSR matrix): ILUT(p = 0: A's row counts, tau = 1e-4) is factored
// on the host by IlutPreconditioner::setup (timed with its upload and level ordering); one
// application z = U^-1 L^-1 r is timed as kryflow enqueues it (one launch per level of L and of
// U plus a gather: time_per_call, and replayed from a CUDA graph as the Krylov solvers run it)
// and as cusparseSpSV runs it (two solves after cusparseSpSV_analysis, whose time is reported
// apart), with the largest relative difference of the two results; then the same factors with
// kryflow's synchronization-free solves (IlutParameters solve = sync_free: one launch per
// factor), queued and replayed, and their difference from cuSPARSE's result. Bytes that must move
// per application: 12 per stored entry of L and U (value + column), both row pointer arrays, the
// inverse diagonal, and 6 vector passes (r, y written, y gathered, z, and the maps) of n doubles
// or indices; "of copy" divides that by the time and the measured copy bandwidth. The block
// matrices (2dcyl1, ex19) also run MulticolorIluPreconditioner (ilu0 and dilu, BSR-4) for the
// time of one application beside the level-scheduled one.
//
//   kryflow_bench_ilu [--backend cuda] [--data-dir DIR] [--json out.json]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/cusparse_spsv.hpp"
#include "bench/timing.hpp"
#include "kernels/blas/blas.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/bsr_matrix.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/vector.hpp"
#include "kryflow/preconditioners/incomplete_lu.hpp"
#include "kryflow/preconditioners/threshold_ilu.hpp"

#ifndef KRYFLOW_BENCH_DATA_DIR
#define KRYFLOW_BENCH_DATA_DIR "../shared/data"
#endif

namespace {

using namespace kryflow;

struct Case {
  const char* file;
  int block_size;  // > 1: also the multicolor block ILU(0) and DILU
};

const Case kCases[] = {
    {"matrices/fvens/2dcyl1/2dcyl1.mtx.gz", 4},
    {"matrices/petsc_ex19/ex19_cavity_33.mtx.gz", 4},
    {"matrices/petsc_ex19/ex19_cavity_129.mtx.gz", 4},
    {"matrices/petsc_ex19/ex19_cavity_257.mtx.gz", 4},
    {"matrices/suitesparse/airfoil_2d/airfoil_2d.mtx.gz", 1},
    {"matrices/openfoam/pressure_23325/openfoam_p_23325.mtx.gz", 1},
    {"matrices/suitesparse/ex10hs/ex10hs.mtx.gz", 1},
};

}  // namespace

int main(int argc, char** argv) {
  std::string backend_name = "cuda";
  std::string data_dir = std::getenv("KRYFLOW_DATA_DIR") != nullptr
                             ? std::getenv("KRYFLOW_DATA_DIR")
                             : KRYFLOW_BENCH_DATA_DIR;
  std::string json_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    if (arg == "--backend") {
      backend_name = argv[i + 1];
    } else if (arg == "--data-dir") {
      data_dir = argv[i + 1];
    } else if (arg == "--json") {
      json_path = argv[i + 1];
    } else {
      std::fprintf(stderr,
                   "usage: kryflow_bench_ilu [--backend cuda] [--data-dir DIR] [--json F]\n");
      return 2;
    }
  }
  try {
    const Backend backend = Backend::create(parse_backend_kind(backend_name));
    const bool cuda = backend.kind() == BackendKind::cuda;
    const double bandwidth = kernels::blas::copy_bandwidth(backend, std::size_t{1} << 30);
    nlohmann::json out;
    out["benchmark"] = "ilu_triangular_solves";
    out["device"] = backend.device_name();
    out["copy_bandwidth_bytes_per_s"] = bandwidth;
    out["date"] = bench::utc_now();
    out["records"] = nlohmann::json::array();
    std::printf("copy bandwidth %.1f GB/s, %s\n", bandwidth / 1e9, backend.device_name().c_str());
    std::printf(
        "| matrix | rows | nnz(L+U)/nnz(A) | levels L + U | setup s | kryflow us | graph us | of "
        "copy | cuSPARSE us | cuSPARSE analysis s | kryflow / cuSPARSE | differ | sync-free us | "
        "sync-free graph us | sync-free / cuSPARSE | sync-free differ | block ILU(0) us | block "
        "DILU us |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const Case& c : kCases) {
      const std::filesystem::path path = std::filesystem::path(data_dir) / c.file;
      if (!std::filesystem::exists(path)) {
        std::printf("(%s missing: skipped)\n", path.c_str());
        continue;
      }
      const std::string name = path.stem().stem().string();
      const CsrMatrix A = CsrMatrix::from_coo(backend, io::read_matrix_market(path));
      const auto n = static_cast<std::size_t>(A.num_rows());
      Vector r(backend, n), z(backend, n), zc(backend, n);
      fill_pseudo_random(r, 3);
      IlutPreconditioner ilut;
      backend.synchronize();
      const auto start = std::chrono::steady_clock::now();
      ilut.setup(A);
      backend.synchronize();
      const double setup =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const IlutFactors& f = ilut.factors();
      const double bytes = 12.0 * static_cast<double>(f.lower_col.size() + f.upper_col.size()) +
                           8.0 * (n + 1) + 8.0 * n + 6.0 * 8.0 * n;
      const double ours = bench::time_per_call(backend, [&] { ilut.apply(r, z); });
      const double graph =
          cuda ? bench::time_per_call_in_graph(backend, [&] { ilut.apply(r, z); }) : 0.0;
      double peer = 0.0, analysis = 0.0, differ = 0.0;
      if (cuda) {
        bench::CusparseIluSolve spsv(backend, f, r.span().data(), zc.span().data());
        analysis = spsv.analysis_seconds();
        peer = bench::time_per_call(backend, [&] { spsv.solve(); });
        ilut.apply(r, z);
        spsv.solve();
        differ = bench::max_relative_difference(z.to_host(), zc.to_host());
      }
      // The same factors (the factorization is deterministic) with sync-free solves.
      IlutPreconditioner::Parameters free_parameters;
      free_parameters.solve = TriangularSolve::sync_free;
      IlutPreconditioner free_ilut(free_parameters);
      free_ilut.setup(A);
      const double free_seconds = bench::time_per_call(backend, [&] { free_ilut.apply(r, z); });
      const double free_graph =
          cuda ? bench::time_per_call_in_graph(backend, [&] { free_ilut.apply(r, z); }) : 0.0;
      double free_differ = 0.0;
      if (cuda) {
        free_ilut.apply(r, z);
        free_differ = bench::max_relative_difference(z.to_host(), zc.to_host());
      }
      double block_ilu0 = 0.0, block_dilu = 0.0;
      if (c.block_size > 1) {
        const BsrMatrix B = BsrMatrix::from_csr(A, c.block_size, Precision::float64);
        for (const IluFactorization kind : {IluFactorization::ilu0, IluFactorization::dilu}) {
          MulticolorIluPreconditioner::Parameters p;
          p.factorization = kind;
          MulticolorIluPreconditioner M(p);
          M.setup(B);
          (kind == IluFactorization::ilu0 ? block_ilu0 : block_dilu) =
              bench::time_per_call(backend, [&] { M.apply(r, z); });
        }
      }
      const double ratio = static_cast<double>(f.stored()) / static_cast<double>(A.nnz());
      std::printf(
          "| %s | %zu | %.2f | %d + %d | %.3f | %.1f | %.1f | %.2f | %.1f | %.4f | %.2f | %.1e | "
          "%.1f | %.1f | %.2f | %.1e | %.1f | %.1f |\n",
          name.c_str(), n, ratio, static_cast<int>(ilut.lower_levels()),
          static_cast<int>(ilut.upper_levels()), setup, ours * 1e6, graph * 1e6,
          bytes / (graph > 0 ? graph : ours) / bandwidth, peer * 1e6, analysis,
          peer > 0 ? ours / peer : 0.0, differ, free_seconds * 1e6, free_graph * 1e6,
          peer > 0 ? free_seconds / peer : 0.0, free_differ, block_ilu0 * 1e6, block_dilu * 1e6);
      std::fflush(stdout);
      out["records"].push_back({{"matrix", name},
                                {"rows", n},
                                {"nnz", A.nnz()},
                                {"stored_factor_entries", f.stored()},
                                {"lower_levels", ilut.lower_levels()},
                                {"upper_levels", ilut.upper_levels()},
                                {"setup_seconds", setup},
                                {"bytes_per_application", bytes},
                                {"kryflow_seconds", ours},
                                {"kryflow_graph_seconds", graph},
                                {"cusparse_spsv_seconds", peer},
                                {"cusparse_analysis_seconds", analysis},
                                {"max_relative_difference", differ},
                                {"sync_free_seconds", free_seconds},
                                {"sync_free_graph_seconds", free_graph},
                                {"sync_free_max_relative_difference", free_differ},
                                {"block_ilu0_seconds", block_ilu0},
                                {"block_dilu_seconds", block_dilu}});
    }
    if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kryflow_bench_ilu: %s\n", e.what());
    return 1;
  }
  return 0;
}
