// `kryflow sem`: a spectral-element Poisson solve with a manufactured solution on a generated box
// or a Nek5000 mesh, and the speed of the matrix-free operator.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "kryflow/config/registry.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/core/timing.hpp"
#include "kryflow/linalg/vector.hpp"
#include "kryflow/multigrid/multigrid.hpp"
#include "kryflow/preconditioners/jacobi.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"
#include "kryflow/sem/hex_mesh.hpp"
#include "kryflow/sem/p_multigrid.hpp"
#include "kryflow/sem/poisson_operator.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "report.hpp"

namespace kryflow::cli {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string number_text(double value) {
  std::ostringstream s;
  s << value;
  return s.str();
}

/// The mesh the options ask for, with `summary`'s mesh fields filled in.
sem::HexMesh build_mesh(const SemOptions& options, SemSummary& summary) {
  if (options.mesh.empty() == options.box.empty()) {
    throw InvalidInput("kryflow sem needs exactly one of --mesh FILE.re2[.gz] and --box NX,NY,NZ");
  }
  if (options.kershaw && !(*options.kershaw > 0.0 && *options.kershaw <= 1.0)) {
    throw InvalidInput("--kershaw " + number_text(*options.kershaw) + " is outside (0, 1]");
  }
  std::vector<std::string> applied;
  sem::HexMesh mesh;
  if (!options.box.empty()) {
    const std::vector<int>& counts = options.box;
    if (counts.size() != 3 || counts[0] < 1 || counts[1] < 1 || counts[2] < 1) {
      throw InvalidInput("--box: expected three positive element counts NX,NY,NZ");
    }
    sem::BoxOptions box;
    if (options.deform) {
      if (!(std::fabs(*options.deform) <= 0.1)) {
        throw InvalidInput("--deform " + number_text(*options.deform) + " is outside [-0.1, 0.1]");
      }
      box.smooth_deformation = *options.deform;
    }
    if (options.kershaw) box.kershaw_epsilon = *options.kershaw;
    mesh = sem::box_mesh(counts[0], counts[1], counts[2], box);
    summary.mesh_source = "box " + std::to_string(counts[0]) + "x" + std::to_string(counts[1]) +
                          "x" + std::to_string(counts[2]) + " on the unit cube";
    if (options.kershaw) {
      applied.push_back("Kershaw map, eps = " + number_text(*options.kershaw));
    }
    if (options.deform && *options.deform != 0.0) {
      applied.push_back("smooth interior deformation, a = " + number_text(*options.deform));
    }
  } else {
    if (options.deform) {
      throw InvalidInput("--deform applies to --box only (the smooth deformation of box_mesh)");
    }
    mesh = sem::read_re2(options.mesh);
    summary.mesh_source = options.mesh;
    summary.mesh_version = mesh.format_version;
    if (options.kershaw) {
      sem::apply_kershaw(mesh, *options.kershaw);
      applied.push_back("Kershaw map, eps = " + number_text(*options.kershaw) +
                        ", on the bounding box scaled to the unit cube");
    }
  }
  summary.deformation.clear();
  for (const std::string& a : applied) {
    summary.deformation += (summary.deformation.empty() ? "" : "; ") + a;
  }
  if (summary.deformation.empty()) summary.deformation = "none";
  summary.elements = mesh.num_elements;
  summary.curved_side_records = mesh.curved_side_records;
  summary.lower = {INFINITY, INFINITY, INFINITY};
  summary.upper = {-INFINITY, -INFINITY, -INFINITY};
  for (std::size_t i = 0; i < mesh.vertices.size(); ++i) {
    summary.lower[i % 3] = std::min(summary.lower[i % 3], mesh.vertices[i]);
    summary.upper[i % 3] = std::max(summary.upper[i % 3], mesh.vertices[i]);
  }
  return mesh;
}

}  // namespace

int run_sem(const SemOptions& options) {
  if (options.copy_bytes && *options.copy_bytes < 0) {
    throw InvalidInput("--copy-bytes " + std::to_string(*options.copy_bytes) + " is negative");
  }
  if (options.solver != "cg") {
    throw InvalidInput("--solver '" + options.solver + "': kryflow sem solves with cg only");
  }
  if (options.precond != "jacobi" && options.precond != "none") {
    throw InvalidInput("--precond '" + options.precond + "': expected jacobi or none");
  }
  if (options.order < 1 || options.order > 15) {
    throw InvalidInput("--order " + std::to_string(options.order) + " is outside 1..15");
  }
  // The solver: a configuration (--preset, -c, -p), or CG with --precond. Both are built and
  // validated before any work.
  const bool configured =
      !options.preset.empty() || !options.config_file.empty() || !options.overrides.empty();
  if (!options.preset.empty() && !options.config_file.empty()) {
    throw InvalidInput("kryflow sem takes --preset or -c, not both");
  }
  std::unique_ptr<KrylovSolver> solver;
  std::unique_ptr<Preconditioner> M;
  nlohmann::json resolved;
  if (configured) {
    nlohmann::json config = !options.preset.empty() ? config::load_preset(options.preset)
                            : !options.config_file.empty()
                                ? config::load_config_file(options.config_file)
                                : nlohmann::json::object();
    if (options.relative_tolerance) {
      config::apply_override(
          config, "solver.relative_tolerance=" + number_text(*options.relative_tolerance));
    }
    if (options.max_iterations) {
      config::apply_override(config,
                             "solver.max_iterations=" + std::to_string(*options.max_iterations));
    }
    for (const std::string& assignment : options.overrides) {
      config::apply_override(config, assignment);
    }
    config::SolverSetup setup = config::build_solver(config);
    solver = std::move(setup.solver);
    M = std::move(setup.preconditioner);
    resolved = setup.resolved;
  } else {
    StopCriteria criteria;
    criteria.relative_tolerance = options.relative_tolerance.value_or(1e-8);
    criteria.max_iterations = options.max_iterations.value_or(10000);
    solver = std::make_unique<Cg>(criteria);
    if (options.precond == "jacobi") {
      M = std::make_unique<JacobiPreconditioner>();
    } else {
      M = std::make_unique<IdentityPreconditioner>();
    }
  }
  sem::SemPoissonOptions operator_options;
  operator_options.dirichlet_types = options.dirichlet;
  operator_options.element_kernel = sem::parse_sem_element_kernel(options.element_kernel);
  operator_options.assembly = sem::parse_sem_assembly(options.assembly);
  operator_options.diagonal_kernel = sem::parse_sem_diagonal_kernel(options.diagonal_kernel);

  SemSummary summary;
  const sem::HexMesh mesh = build_mesh(options, summary);
  summary.order = options.order;
  if (options.dirichlet.empty()) {
    summary.dirichlet = "every boundary face";
  } else {
    std::string types;
    for (const std::string& type : options.dirichlet) types += (types.empty() ? "" : ",") + type;
    summary.dirichlet = "faces of type " + types + " (first boundary field)";
  }
  const Backend backend = choose_backend(options.backend);
  summary.backend = backend.name();
  summary.device = backend.device_name();
  summary.solver = solver->name();
  summary.relative_tolerance = solver->criteria().relative_tolerance;
  summary.max_iterations = solver->criteria().max_iterations;
  summary.configuration = resolved;

  // The operator.
  auto start = std::chrono::steady_clock::now();
  const sem::SemPoissonOperator A(backend, mesh, options.order, operator_options);
  backend.synchronize();
  summary.operator_setup_seconds = seconds_since(start);
  summary.kernels = A.kernel_description();
  const auto n = static_cast<std::size_t>(A.num_rows());
  summary.dofs = A.num_rows();
  const std::int64_t points_per_element =
      std::int64_t{options.order + 1} * (options.order + 1) * (options.order + 1);
  summary.local_points = mesh.num_elements * points_per_element;
  const std::vector<char>& dirichlet = A.dirichlet();
  summary.dirichlet_points =
      std::count_if(dirichlet.begin(), dirichlet.end(), [](char c) { return c != 0; });

  // The manufactured solution u = sin(k x + 0.3) sin(k y + 0.7) sin(k z + 1.1), k = pi / L, and
  // f = -Laplace(u) = 3 k^2 u. Inhomogeneous Dirichlet data by lifting: with u_D = u on the
  // Dirichlet points and 0 elsewhere, b = B f - A_N u_D on the free points and b = u on the
  // Dirichlet points, whose rows of A are identity rows.
  summary.extent = 0.0;
  for (int d = 0; d < 3; ++d) {
    summary.extent = std::max(summary.extent, summary.upper[d] - summary.lower[d]);
  }
  if (!(summary.extent > 0.0)) throw InvalidInput("the mesh's bounding box is a point");
  const double k = std::numbers::pi / summary.extent;
  summary.wavenumber = k;
  const std::vector<double>& X = A.coordinates();
  std::vector<double> u(n);
  std::vector<double> lifted(n, 0.0);
  for (std::size_t g = 0; g < n; ++g) {
    u[g] = std::sin(k * X[3 * g] + 0.3) * std::sin(k * X[3 * g + 1] + 0.7) *
           std::sin(k * X[3 * g + 2] + 1.1);
    if (dirichlet[g] != 0) lifted[g] = u[g];
  }
  std::vector<double> b_host(n);
  {
    const Vector lifted_vector = Vector::from_host(backend, lifted);
    Vector a_lifted(backend, n);
    A.apply_unmasked(lifted_vector, a_lifted);
    const std::vector<double> a_lifted_host = a_lifted.to_host();
    const std::vector<double>& mass = A.mass();
    for (std::size_t g = 0; g < n; ++g) {
      b_host[g] = dirichlet[g] != 0 ? u[g] : mass[g] * 3.0 * k * k * u[g] - a_lifted_host[g];
    }
  }
  // Faces of the other boundary-condition types are natural (Neumann) boundaries: their load
  // int (grad(u) . n) v dS by GLL face quadrature.
  sem::add_neumann_load(
      A, mesh, operator_options.dirichlet_types,
      [k](const std::array<double, 3>& p) {
        const double sx = std::sin(k * p[0] + 0.3);
        const double sy = std::sin(k * p[1] + 0.7);
        const double sz = std::sin(k * p[2] + 1.1);
        return std::array<double, 3>{k * std::cos(k * p[0] + 0.3) * sy * sz,
                                     k * sx * std::cos(k * p[1] + 0.7) * sz,
                                     k * sx * sy * std::cos(k * p[2] + 1.1)};
      },
      b_host);
  const Vector b = Vector::from_host(backend, b_host);
  Vector x = Vector::constant(backend, n, 0.0);

  // The preconditioner.
  summary.preconditioner = M->name();
  start = std::chrono::steady_clock::now();
  M->setup(A);
  backend.synchronize();
  summary.preconditioner_setup_seconds = seconds_since(start);
  summary.preconditioner_summary = M->summary();
  // The solver's setup (KrylovSolver::setup): its workspace, and one window on a scratch
  // system, so that the solve below pays no one-time cost (--cold-solve: it does).
  if (!options.cold_solve) {
    start = std::chrono::steady_clock::now();
    solver->setup(A, *M);
    backend.synchronize();
    summary.solver_setup_seconds = seconds_since(start);
  }

  // The solve.
  ProgressLine progress(isatty(2) == 1);
  if (progress.enabled()) {
    solver->set_monitor([&progress](int iteration, double residual_norm, double rhs_norm) {
      progress.update(iteration, residual_norm, rhs_norm);
    });
  }
  summary.report = solver->solve(A, *M, b, x);
  summary.report.setup_seconds = summary.operator_setup_seconds +
                                 summary.preconditioner_setup_seconds +
                                 summary.solver_setup_seconds;
  progress.finish();
  // --repeat: the same solve again from x0 = 0 (x then holds the last one's solution, which the
  // checks below test).
  solver->set_monitor({});
  for (int k = 1; k < options.repeat; ++k) {
    fill(x, 0.0);
    const SolveReport again = solver->solve(A, *M, b, x);
    // Atomic assembly sums in no fixed order, so a solve that ends near the tolerance may take
    // an iteration more or less: recorded and reported, not an error.
    summary.repeated_iterations.push_back(again.iterations);
    if (again.status != summary.report.status) {
      summary.repeated_notes.push_back("solve " + std::to_string(k + 1) + ": " +
                                       to_string(again.status));
    }
    summary.repeated_solve_seconds.push_back(again.solve_seconds);
  }

  // The true residual from a separate apply, and the error against u at every point.
  Vector y(backend, n);
  A.apply(x, y);
  const std::vector<double> ax = y.to_host();
  const std::vector<double> x_host = x.to_host();
  double residual = 0.0;
  double rhs = 0.0;
  double error = 0.0;
  for (std::size_t g = 0; g < n; ++g) {
    residual += (b_host[g] - ax[g]) * (b_host[g] - ax[g]);
    rhs += b_host[g] * b_host[g];
    const double e = std::fabs(x_host[g] - u[g]);
    error = std::isnan(e) ? std::numeric_limits<double>::infinity() : std::max(error, e);
  }
  summary.true_relative_residual = rhs > 0.0 ? std::sqrt(residual / rhs) : std::sqrt(residual);
  summary.max_error = error;

  // A multigrid preconditioner's time per level and component of its cycle: a few more cycles
  // on b, with marks around each component.
  if (const auto* multigrid = dynamic_cast<const Multigrid*>(M.get())) {
    constexpr int kProfiledCycles = 5;
    summary.cycle_components = multigrid->profile_cycle(b, kProfiledCycles);
    summary.profiled_cycles = kProfiledCycles;
    const auto* pmg = dynamic_cast<const sem::PMultigrid*>(multigrid);
    const std::size_t levels = multigrid->num_levels();
    for (std::size_t l = 0; l <= levels; ++l) {
      CycleLevel level;
      level.unknowns = l < levels   ? multigrid->level(l).level_operator().num_rows()
                       : levels > 0 ? multigrid->level(l - 1).coarse_rows()
                                    : multigrid->num_rows();
      if (pmg != nullptr && l < pmg->orders().size()) level.order = pmg->orders()[l];
      summary.cycle_levels.push_back(level);
    }
  }

  // The operator alone: median time per apply, against the backend's copy bandwidth.
  summary.apply_seconds = time_per_call(backend, [&] { A.apply(x, y); });
  summary.apply_bytes = A.apply_bytes();
  const long long copy_bytes =
      options.copy_bytes.value_or(backend.kind() == BackendKind::cuda ? 256LL << 20 : 64LL << 20);
  summary.copy = measure_copy_bandwidth(backend, static_cast<std::size_t>(copy_bytes));

  if (options.report == "json") {
    std::cout << sem_json(summary).dump() << "\n";
  } else {
    std::cout << sem_text(summary);
  }
  return summary.report.converged() ? 0 : 2;
}

}  // namespace kryflow::cli
