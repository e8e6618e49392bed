// The kryflow command-line tool: parses the command line and runs one subcommand. Exit status:
// 0 success (solve, sem: converged), 2 solve or sem not converged, 1 any error.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <new>
#include <string>

#include "commands.hpp"
#include "kryflow/config/registry.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/solvers/sequence.hpp"
#include "kryflow/version.hpp"

namespace {

int print_error(const std::string& message) {
  std::fprintf(stderr, "kryflow: error: %s\n", message.c_str());
  return 1;
}

int run_config_doc(const std::string& output) {
  const std::string markdown = kryflow::config::config_reference_markdown();
  if (output.empty()) {
    std::cout << markdown;
    return 0;
  }
  std::ofstream out(output, std::ios::binary);
  out << markdown;
  out.close();
  if (!out) throw kryflow::InvalidInput("cannot write '" + output + "'");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kryflow::cli;
  CLI::App app{"kryflow: sparse linear solvers for CFD (GPU first; cpu and reference backends)",
               "kryflow"};
  app.set_version_flag("--version", std::string("kryflow ") + kryflow::version());
  app.require_subcommand(1);

  SolveOptions solve;
  CLI::App* solve_command = app.add_subcommand(
      "solve", "Solve A x = b. Exit status 0 when converged, 2 when not converged, 1 on errors.");
  solve_command->add_option("-A,--matrix", solve.matrix,
                            "Matrix Market file (.mtx or .mtx.gz); default: 3D Poisson, n = 64");
  solve_command->add_option("--gen", solve.generate,
                            "a generated matrix instead of -A: PROBLEM:N, e.g. poisson3d:200 "
                            "(poisson2d, poisson3d, poisson3d27)");
  solve_command->add_option(
      "-b,--rhs", solve.rhs,
      "right-hand side: a vector file, or random-solution (the default: b = A x* for a "
      "fixed-seed random x* in [-1, 1); random-solution:SEED for another seed), ones-solution "
      "(b = A * 1) or ones (b = 1); the error "
      "against x* is reported where it is known");
  solve_command->add_option("-x,--initial-guess", solve.initial_guess,
                            "initial guess vector file; default 0");
  auto* config_option =
      solve_command->add_option("-c,--config", solve.config_file, "JSON configuration file");
  std::string presets;
  for (const std::string& name : kryflow::config::preset_names()) {
    presets += (presets.empty() ? "" : ", ") + name;
  }
  solve_command
      ->add_option(
          "--preset", solve.preset,
          "shipped preset (" + presets + ") from " + kryflow::config::preset_directory().string())
      ->excludes(config_option);
  solve_command->add_option("-p,--parameter", solve.overrides,
                            "override, applied in order: solver.relative_tolerance=1e-10");
  solve_command
      ->add_option("--backend", solve.backend,
                   "cuda, cpu or reference; default cuda when compiled and a device is present, "
                   "else cpu")
      ->check(CLI::IsMember({"cuda", "cpu", "reference"}));
  solve_command->add_option("--pin-unknown", solve.pin_unknown,
                            "fix unknown I (1-based) to 0, for singular pure-Neumann pressure "
                            "systems");
  solve_command
      ->add_option("--format", solve.format,
                   "storage of A for the products: csr (default, or what the advice needs when "
                   "it chooses the solver: auto for block presets), sell (SELL-C-sigma), bsr, or "
                   "auto (chosen from the pattern; the report says why)")
      ->check(CLI::IsMember({"csr", "sell", "bsr", "auto"}));
  solve_command
      ->add_option("--block-size", solve.block_size,
                   "BSR block size for --format bsr or auto (default 0: detected from the "
                   "pattern)")
      ->check(CLI::Range(0, 32));
  solve_command
      ->add_option("--precision", solve.precision,
                   "stored matrix values: float64 (default) or float32 (vectors and arithmetic "
                   "stay double)")
      ->check(CLI::IsMember({"float64", "float32"}));
  solve_command->add_option("-o,--output", solve.output,
                            "write the solution vector (Matrix Market array; gzip if .gz)");
  solve_command->add_option("--plot", solve.plot,
                            "write a PNG of the residual history here (python3 -m kryflow.plot: "
                            "the Python package with matplotlib)");
  solve_command->add_option("--report", solve.report, "text (default) or json (one object)")
      ->check(CLI::IsMember({"text", "json"}));
  solve_command->add_option(
      "--copy-bytes", solve.copy_bytes,
      "bytes of each of the two buffers of the copy-bandwidth measurement the SpMV "
      "bandwidth is compared with (default 256 MiB on cuda, 64 MiB on cpu; raise it above a "
      "large CPU cache; 0 skips it)");
  solve_command->add_option(
      "--sequence", solve.sequence,
      "solve the systems A_*.mtx of this directory in name order (one pattern, changing values; "
      "b_*.mtx of the same suffix, else b = 1), each from the previous solution, and report "
      "per system iterations, solve time and what the preconditioner did (kryflow gen sequence "
      "writes such a directory)");
  solve_command
      ->add_option("--reuse", solve.reuse,
                   "with --sequence: when to rebuild the preconditioner: never (default), "
                   "always, every:K, growth:G (the iterations grew by the factor G) or "
                   "every:K,growth:G")
      ->check([](const std::string& text) {
        try {
          kryflow::ReusePolicy::parse(text);
          return std::string();
        } catch (const kryflow::Error& e) {
          return std::string(e.what());
        }
      });
  solve_command->add_flag("--async", solve.asynchronous,
                          "with --sequence: rebuild a host-built preconditioner (AINV) on a host "
                          "thread while the GPU solves, swapped in between solves (default: "
                          "synchronous rebuilds, reproducible bit for bit)");

  SemOptions sem;
  CLI::App* sem_command = app.add_subcommand(
      "sem",
      "Solve -Laplace(u) = f with the matrix-free spectral-element operator on a box or a Nek5000 "
      "mesh, for the smooth manufactured solution u = sin(k x + 0.3) sin(k y + 0.7) sin(k z + "
      "1.1), k = pi / L (L: the largest bounding-box extent), with inhomogeneous Dirichlet data; "
      "report the error, the iterations and the operator's speed. Exit status 0 when converged, "
      "2 when not converged, 1 on errors.");
  sem_command->add_option("--mesh", sem.mesh, "Nek5000 mesh (.re2 or .re2.gz)");
  sem_command
      ->add_option("--box", sem.box, "NX,NY,NZ: a generated box of hexahedra on the unit cube")
      ->delimiter(',')
      ->expected(3);
  sem_command->add_option("--order", sem.order, "polynomial order p, 1..15 (default 7)")
      ->check(CLI::Range(1, 15));
  sem_command->add_option("--solver", sem.solver, "cg (default, the only one)")
      ->check(CLI::IsMember({"cg"}));
  sem_command->add_option("--precond", sem.precond, "jacobi (default) or none")
      ->check(CLI::IsMember({"jacobi", "none"}));
  sem_command->add_option("--preset", sem.preset,
                          "shipped preset instead of --solver and --precond: sem_jacobi (PCG "
                          "with Jacobi), sem_pmg_cheby_jacobi (PCG with p-multigrid), "
                          "sem_pmg_schwarz (flexible CG with Schwarz-smoothed p-multigrid), "
                          "sem_pmg_vertex_patch (flexible CG with p-multigrid smoothed by "
                          "multiplicative vertex-patch Schwarz; structured meshes)");
  sem_command->add_option("-c,--config", sem.config_file,
                          "JSON configuration file instead of --solver and --precond");
  sem_command->add_option("-p,--parameter", sem.overrides,
                          "override KEY=VALUE of the configuration (repeatable), as for solve");
  sem_command
      ->add_option("--backend", sem.backend,
                   "cuda, cpu or reference; default cuda when compiled and a device is present, "
                   "else cpu")
      ->check(CLI::IsMember({"cuda", "cpu", "reference"}));
  sem_command->add_option("--kershaw", sem.kershaw,
                          "EPS in (0, 1]: the Kershaw map of the CEED benchmarks (of the box; of "
                          "a --mesh on its bounding box)");
  sem_command->add_option("--deform", sem.deform,
                          "A in [-0.1, 0.1]: smooth interior deformation of --box, "
                          "a sin(pi x) sin(pi y) sin(pi z) (1, 1, 1)");
  sem_command
      ->add_option("--dirichlet", sem.dirichlet,
                   "W,v,...: boundary-condition types of the mesh's first field whose "
                   "faces are Dirichlet (default: every boundary face)")
      ->delimiter(',');
  sem_command->add_option("--relative-tolerance", sem.relative_tolerance,
                          "stop when ||r|| <= tol ||b|| (default 1e-8, or the configuration's)");
  sem_command->add_option("--max-iterations", sem.max_iterations,
                          "iteration limit (default 10000, or the configuration's)");
  sem_command
      ->add_option(
          "--element-kernel", sem.element_kernel,
          "cuda element kernel: automatic (default: shared for p <= 3, vertex_lines for "
          "p = 4..9, vertex from p = 10 on, the fastest on an H200 at p = 3, 5, 7, 9 and 11), "
          "shared, layered, staged, pipelined, vertex (the metric terms computed from the "
          "elements' corners instead of read) or vertex_lines (vertex register-tiled by lines, "
          "order <= 9)")
      ->check(CLI::IsMember(
          {"automatic", "shared", "layered", "staged", "pipelined", "vertex", "vertex_lines"}));
  sem_command
      ->add_option("--assembly", sem.assembly,
                   "cuda assembly: automatic (default: atomic), sorted (deterministic; the "
                   "reference's bits with an element kernel that reads the stored metric "
                   "terms: shared, layered, staged or pipelined) or atomic")
      ->check(CLI::IsMember({"automatic", "sorted", "atomic"}));
  sem_command
      ->add_option("--diagonal-kernel", sem.diagonal_kernel,
                   "cuda diagonal kernel: automatic (default), natural, shared, extended or wide")
      ->check(CLI::IsMember({"automatic", "natural", "shared", "extended", "wide"}));
  sem_command->add_option("--report", sem.report, "text (default) or json (one object)")
      ->check(CLI::IsMember({"text", "json"}));
  sem_command->add_option(
      "--copy-bytes", sem.copy_bytes,
      "bytes of each of the two buffers of the copy-bandwidth measurement the operator's "
      "bandwidth is compared with (default 256 MiB on cuda, 64 MiB on cpu; 0 skips it)");
  sem_command
      ->add_option("--repeat", sem.repeat,
                   "N: solve the same system N times from x0 = 0 (default 1); the first solve is "
                   "the report's, the others' median and fastest times are reported beside it")
      ->check(CLI::Range(1, 1000));
  sem_command->add_flag("--cold-solve", sem.cold_solve,
                        "skip the solver's setup (its workspace, one window of iterations on a "
                        "scratch system): the first solve then pays those one-time costs");

  GenOptions gen;
  CLI::App* gen_command = app.add_subcommand(
      "gen",
      "Write a finite-difference Poisson matrix, or a sequence of diffusion systems whose "
      "coefficient drifts (Matrix Market).");
  gen_command
      ->add_option("problem", gen.problem,
                   "poisson2d, poisson3d, poisson3d27, or sequence (A_0000.mtx, b_0000.mtx, ... "
                   "in the directory -o: a moving high-contrast inclusion, one pattern)")
      ->required()
      ->check(CLI::IsMember({"poisson2d", "poisson3d", "poisson3d27", "sequence"}));
  gen_command->add_option("--n", gen.n, "grid points per direction")
      ->required()
      ->check(CLI::PositiveNumber);
  gen_command
      ->add_option("-o,--output", gen.output,
                   "output file (.mtx or .mtx.gz); for sequence a directory (created)")
      ->required();
  gen_command->add_option("--steps", gen.steps, "sequence: number of systems (default 10)")
      ->check(CLI::PositiveNumber);
  gen_command->add_option("--speed", gen.speed,
                          "sequence: the inclusion's motion per step, in domain lengths "
                          "(default 0.02)");
  gen_command
      ->add_option("--contrast", gen.contrast,
                   "sequence: log10 of the coefficient contrast (default 3: 1 to 1000)")
      ->check(CLI::NonNegativeNumber);

  InfoOptions info;
  CLI::App* info_command = app.add_subcommand(
      "info",
      "Print a matrix's structure, symmetry, diagonal, the suggested preset and SpMV format.");
  info_command->add_option("matrix", info.matrix, "Matrix Market file (.mtx or .mtx.gz)")
      ->required();
  info_command
      ->add_option("--block-size", info.block_size,
                   "BSR block size to consider (default 0: detected from the pattern)")
      ->check(CLI::Range(0, 32));
  info_command->add_option("--report", info.report, "text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));

  BenchOptions bench;
  CLI::App* bench_command =
      app.add_subcommand("bench", "Measure kernels against the copy bandwidth and cuSPARSE.");
  bench_command->require_subcommand(1);
  CLI::App* bench_spmv_command = bench_command->add_subcommand(
      "spmv",
      "y = A x in every storage format (CSR, SELL-C-sigma, BSR; double and float values) and "
      "cuSPARSE's CSR and BSR products on the same matrices: GB/s and fraction of the measured "
      "copy bandwidth. Exit 2 when a product disagrees with the reference.");
  bench_spmv_command->add_option("-A,--matrix", bench.matrices, "Matrix Market file (repeatable)");
  bench_spmv_command->add_option(
      "--gen", bench.generated,
      "generated problem PROBLEM:N, e.g. poisson3d:200 or poisson3d27:200 (repeatable); with "
      "neither -A nor --gen: poisson3d:64");
  bench_spmv_command->add_option("--backend", bench.backend, "cuda or cpu; default as for solve")
      ->check(CLI::IsMember({"cuda", "cpu", "reference"}));
  bench_spmv_command
      ->add_option("--block-size", bench.block_size,
                   "BSR block size (default 0: detected from each matrix's pattern)")
      ->check(CLI::Range(0, 32));
  bench_spmv_command
      ->add_option("--formats", bench.formats, "comma-separated subset of csr,sell,bsr,cusparse")
      ->delimiter(',')
      ->check(CLI::IsMember({"csr", "sell", "bsr", "cusparse"}));
  bench_spmv_command
      ->add_option("--precisions", bench.precisions,
                   "stored values: comma-separated subset of float64,float32")
      ->delimiter(',')
      ->check(CLI::IsMember({"float64", "float32"}));
  bench_spmv_command->add_option("--json", bench.json, "write the records as JSON here");
  bench_spmv_command
      ->add_option("--copy-bytes", bench.copy_bytes,
                   "bytes of each buffer of the copy-bandwidth measurement (default 256 MiB)")
      ->check(CLI::PositiveNumber);

  std::string config_doc_output;
  CLI::App* config_doc_command = app.add_subcommand(
      "config-doc", "Print the configuration reference (Markdown; docs/config.md).");
  config_doc_command->add_option("-o,--output", config_doc_output,
                                 "write to this file instead of stdout");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    print_error(e.what());
    std::fprintf(stderr, "run 'kryflow --help' or 'kryflow <command> --help' for usage\n");
    return 1;
  }

  try {
    if (solve_command->parsed()) {
      return solve.sequence.empty() ? run_solve(solve) : run_solve_sequence(solve);
    }
    if (sem_command->parsed()) return run_sem(sem);
    if (gen_command->parsed()) return run_gen(gen);
    if (info_command->parsed()) return run_info(info);
    if (config_doc_command->parsed()) return run_config_doc(config_doc_output);
    if (bench_spmv_command->parsed()) return run_bench_spmv(bench);
    return print_error("no command given");
  } catch (const kryflow::Error& e) {
    return print_error(e.what());
  } catch (const std::bad_alloc&) {
    return print_error(
        "out of host memory (std::bad_alloc): the problem does not fit in this "
        "machine's memory");
  } catch (const std::exception& e) {
    return print_error(e.what());
  } catch (...) {
    return print_error("unexpected error of unknown type");
  }
}
