// The one registry mapping configuration type names to components: each solver and
// preconditioner type with its parameter declarations and its factory; configuration files,
// presets and overrides.
#include "kryflow/config/registry.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>

#ifdef __linux__
#include <dlfcn.h>
#endif

#include "kryflow/amg/amg.hpp"
#include "kryflow/config/parameters.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/multigrid/dense_solver.hpp"
#include "kryflow/preconditioners/approximate_inverse.hpp"
#include "kryflow/preconditioners/block_jacobi.hpp"
#include "kryflow/preconditioners/fsai.hpp"
#include "kryflow/preconditioners/incomplete_lu.hpp"
#include "kryflow/preconditioners/jacobi.hpp"
#include "kryflow/preconditioners/multicolor_gauss_seidel.hpp"
#include "kryflow/preconditioners/threshold_ilu.hpp"
#include "kryflow/sem/p_multigrid.hpp"
#include "kryflow/solvers/richardson.hpp"

namespace kryflow::config {
namespace {

const ComponentFamily& solver_family();
const ComponentFamily& preconditioner_family();
template <class Entry>
const Entry& find_entry(const std::vector<Entry>& entries, const std::string& type);

// ---------------------------------------------------------------------------------------------
// Parameters of each component type. Defaults are the member initialisers of StopCriteria and
// JacobiPreconditioner::Parameters, so the library and the configuration cannot disagree.

/// The stopping criteria every Krylov solver shares (see StopCriteria).
void declare_stop_criteria(ParameterVisitor& v, StopCriteria& c) {
  v.integer("max_iterations", c.max_iterations, Range::at_least(0),
            "iteration limit; reaching it ends the solve with status `max_iterations`");
  v.real("relative_tolerance", c.relative_tolerance, Range::at_least(0),
         "converged when ||r_k||_2 <= max(relative_tolerance * ||b||_2, absolute_tolerance)");
  v.real("absolute_tolerance", c.absolute_tolerance, Range::at_least(0),
         "absolute bound on ||r_k||_2 (see relative_tolerance); 0 disables it");
  v.real("divergence_factor", c.divergence_factor, Range::greater_than(1),
         "diverged when ||r_k||_2 > divergence_factor * ||r_0||_2");
  v.integer("stagnation_window", c.stagnation_window, Range::at_least(0),
            "stagnated when the residual has not fallen below (1 - stagnation_factor) times its "
            "last low for this many iterations; 0 disables the test");
  v.real("stagnation_factor", c.stagnation_factor, Range::closed_open(0, 1),
         "relative decrease that counts as progress in the stagnation test; 0 disables the test");
}

/// How the iterations run (see IterationOptions). The graph mode is declared as a string and
/// parsed when the solver is built.
void declare_iteration_options(ParameterVisitor& v, IterationOptions& o, std::string& graphs) {
  v.integer("check_every", o.check_every, Range::at_least(1),
            "the host reads the residual norm every check_every iterations (the only wait for "
            "the device inside the iteration); the report still names the iteration that "
            "converged");
  v.choice("cuda_graphs", graphs, {"automatic", "always", "never"},
           "record a window of iterations once as a CUDA graph and replay it: `always`, or "
           "`never` (launch every kernel); `automatic` replays when the preconditioner is a "
           "multigrid cycle (many small kernels) or when check_every > 1 and the matrix is "
           "small enough for its product to be bound by latency, and otherwise launches every "
           "kernel, measured as fast or faster since the kernels are dependent launches; "
           "operators that do not support recording are always called anew");
}

/// pcg and bicgstab: stopping criteria and a preconditioner.
struct KrylovParameters : ComponentParameters {
  StopCriteria criteria;
  IterationOptions options;
  std::string graphs = to_string(GraphMode::automatic);
  /// options with the parsed graph mode.
  IterationOptions iteration_options() const {
    IterationOptions o = options;
    o.graphs = parse_graph_mode(graphs);
    return o;
  }
  ComponentSlot preconditioner{preconditioner_family()};
  void declare(ParameterVisitor& v) override {
    declare_stop_criteria(v, criteria);
    declare_iteration_options(v, options, graphs);
    declare_preconditioner(v);
  }

 protected:
  void declare_preconditioner(ParameterVisitor& v) {
    v.component("preconditioner", preconditioner, "the preconditioner M, applied as z = M^-1 r");
  }
};

/// pipecg: as above plus the residual replacement interval.
struct PipelinedCgParameters final : KrylovParameters {
  int replacement_interval = 50;
  void declare(ParameterVisitor& v) override {
    declare_stop_criteria(v, criteria);
    declare_iteration_options(v, options, graphs);
    v.integer("replacement_interval", replacement_interval, Range::at_least(0),
              "recompute the residual and the auxiliary recurrences from x and p every this many "
              "iterations (0: never), bounding their drift");
    declare_preconditioner(v);
  }
};

/// gmres and fgmres: as above plus the restart length, the preconditioning side and the
/// orthogonalization.
struct GmresParameters final : KrylovParameters {
  int restart = 30;
  std::string side = Gmres::to_string(Gmres::Side::right);
  std::string orthogonalization = Gmres::to_string(Gmres::Orthogonalization::cgs2);
  void declare(ParameterVisitor& v) override {
    declare_stop_criteria(v, criteria);
    declare_iteration_options(v, options, graphs);
    v.integer("restart", restart, Range::at_least(1),
              "Krylov basis size m before a restart; memory grows as (m + 3) vectors "
              "(2m + 2 for fgmres; 2 more with a recorded multigrid cycle on the right)");
    v.choice("side", side, {"right", "left"},
             "where the preconditioner is applied, as PETSc's -ksp_pc_side: `right` solves "
             "A M^-1 u = b; `left` solves M^-1 A x = M^-1 b, minimizing the preconditioned "
             "residual. Both stop on ||b - A x||: on the left its estimate is the preconditioned "
             "residual times ||r|| / ||M^-1 r|| at the cycle's start, confirmed by the true "
             "residual at the end of the cycle (as SciPy, not PETSc). fgmres: right only");
    v.choice("orthogonalization", orthogonalization, {"cgs2", "mgs"},
             "`cgs2`: classical Gram-Schmidt with one reorthogonalization, the whole Hessenberg "
             "column from one fused multi-dot per pass; `mgs`: modified Gram-Schmidt, one "
             "dependent dot per basis vector");
    declare_preconditioner(v);
  }
  std::unique_ptr<KrylovSolver> build(bool flexible) const {
    auto solver = std::make_unique<Gmres>(criteria, restart, flexible, Gmres::parse_side(side),
                                          Gmres::parse_orthogonalization(orthogonalization));
    solver->set_options(iteration_options());
    return solver;
  }
};

struct JacobiParameters final : ComponentParameters {
  JacobiPreconditioner::Parameters values;
  void declare(ParameterVisitor& v) override {
    v.real("omega", values.omega, Range::greater_than(0), "damping factor: z = omega D^-1 r");
  }
};

struct BlockJacobiParameters final : ComponentParameters {
  BlockJacobiPreconditioner::Parameters values;
  std::string inverse_precision = std::string(to_string(Precision::float64));
  void declare(ParameterVisitor& v) override {
    v.real("omega", values.omega, Range::greater_than(0), "damping factor: z_I = omega D_I^-1 r_I");
    v.choice("inverse_precision", inverse_precision, {"float64", "float32"},
             "storage of the inverse diagonal blocks (products in double either way)");
  }
  BlockJacobiPreconditioner::Parameters build() const {
    BlockJacobiPreconditioner::Parameters p = values;
    p.inverse_precision = precision_from_string(inverse_precision);
    return p;
  }
};

/// multicolor_gauss_seidel: MulticolorGaussSeidel::Parameters, the enumerations as strings.
struct MulticolorGaussSeidelParameters final : ComponentParameters {
  MulticolorGaussSeidel::Parameters values;
  std::string coloring = to_string(ColoringAlgorithm::jones_plassmann_luby);
  std::string inverse_precision = std::string(to_string(Precision::float64));
  std::string kernel = to_string(SweepKernel::automatic);
  std::string direction = "symmetric";
  int seed = 1;
  void declare(ParameterVisitor& v) override {
    v.integer("sweeps", values.sweeps, Range::at_least(1),
              "sweeps per application (each forward then backward when symmetric)");
    v.real("omega", values.omega, {0.0, false, 2.0, false},
           "relaxation factor: x_I <- (1 - omega) x_I + omega D_I^-1 (b_I - sum_{J != I} A_IJ "
           "x_J)");
    v.choice("direction", direction, {"symmetric", "forward"},
             "`symmetric`: forward then backward over the colors (symmetric Gauss-Seidel); "
             "`forward`: forward only");
    v.choice("coloring", coloring, {"jones_plassmann_luby", "greedy", "natural"},
             "coloring of the block graph: `jones_plassmann_luby`, parallel on the matrix's "
             "backend (deterministic for the seed); `greedy`, NOISEtte's greedy coloring in "
             "row order (parallel rounds on cuda; two colors on 5- and 7-point grids); `natural`, "
             "every block row its own color: "
             "sequential "
             "block Gauss-Seidel in row order (one launch per block row on a device; for "
             "comparisons)");
    v.integer("seed", seed, Range::at_least(0), "seed of the Jones-Plassmann-Luby keys");
    v.choice("inverse_precision", inverse_precision, {"float64", "float32"},
             "storage of the inverse diagonal blocks (products in double either way)");
    v.choice("kernel", kernel, {"automatic", "coefficient", "warp", "block_row"},
             "cuda kernel of a sweep: `coefficient` (one thread per block coefficient, "
             "NOISEtte's), `warp` (one warp per block row), `block_row` (one thread per scalar "
             "row), `automatic` (the fastest measured one for the block size)");
  }
  MulticolorGaussSeidel::Parameters build() const {
    MulticolorGaussSeidel::Parameters p = values;
    p.coloring = parse_coloring_algorithm(coloring);
    p.inverse_precision = precision_from_string(inverse_precision);
    p.kernel = parse_sweep_kernel(kernel);
    p.seed = static_cast<std::uint64_t>(seed);
    p.symmetric = direction == "symmetric";
    return p;
  }
};

/// amg: AmgPreconditioner::Parameters, the enumerations declared as strings and parsed by
/// build().
struct AmgParameters final : ComponentParameters {
  AmgPreconditioner::Parameters values;
  std::string strength = "classical";
  std::string coarsening = "greedy";
  std::string interpolation = "direct";
  std::string smoother = "gauss_seidel";
  std::string cycle = to_string(CycleType::v);
  std::string hierarchy_precision = std::string(to_string(Precision::float64));
  int random_seed = 1;
  void declare(ParameterVisitor& v) override {
    v.choice("strength", strength, {"classical", "seed", "symmetric"},
             "strength of connection: `classical`, i depends strongly on j when -s a_ij >= "
             "strength_threshold max_k (-s a_ik), s the sign of a_ii (Stüben 2001, eq. (7.2)); "
             "`seed`, when |a_ij| > strength_threshold |a_ii| (Liebmann's Parallel Toolbox); "
             "`symmetric`, when |a_ij| >= strength_threshold sqrt(|a_ii a_jj|) (Vaněk, Mandel, "
             "Brezina 1996; for aggregation)");
    v.real("strength_threshold", values.strength_threshold, Range::at_least(0),
           "theta of the classical and symmetric measures or eps of the seed measure");
    v.real("max_row_sum", values.max_row_sum, {0.0, false, 1.0, true},
           "a row with |sum_j a_ij| > max_row_sum |a_ii| depends strongly on nothing; 1 "
           "disables the test");
    v.choice("coarsening", coarsening, {"greedy", "pmis", "hmis", "aggregation"},
             "C/F splitting: `greedy`, rows in order, an undecided row becomes coarse and its "
             "undecided strong dependencies fine (Parallel Toolbox); `pmis`, parallel modified "
             "independent set (De Sterck, Yang, Heys 2006); `hmis`, the Ruge-Stueben first pass "
             "on each domain of 256 consecutive rows (S restricted to it), then PMIS from its "
             "coarse points (De Sterck, Yang, Heys 2006); or `aggregation`: aggregates around "
             "a distance-two maximal independent set of the strength graph (Bell, Dalton, Olson "
             "2012), with interpolation `tentative` or `smoothed`");
    v.integer("aggressive_levels", values.aggressive_levels, Range::at_least(0),
              "aggressive coarsening on this many finest levels (`pmis`, `hmis` or `greedy`): the "
              "splitting is applied again to the coarse points with the distance-two strength "
              "(paths of at most two strong connections, Stüben 2001, sec. 7.1.2), and P is "
              "multi-pass interpolation (direct, or `seed`, weights pass by pass through the "
              "fine points already interpolated; `extended_i` and truncation do not apply on "
              "these levels); fewer coarse rows and levels for a few more iterations");
    v.integer("random_seed", random_seed, Range::at_least(0),
              "seed of the random part of the PMIS and aggregation weights (deterministic for a "
              "seed)");
    v.choice("interpolation", interpolation,
             {"direct", "seed", "extended_i", "mm_extended_i", "tentative", "smoothed"},
             "prolongation P = [I; P_FC]: `direct`, Stüben's direct interpolation from the "
             "strongly coupled coarse points; `seed`, weights 1/n_i over them (Parallel "
             "Toolbox); `extended_i`, distance-two extended+i interpolation from those and the "
             "strongly coupled coarse points of the strongly coupled fine points (De Sterck, "
             "Falgout, Nolting, Yang 2008; hypre's interp_type 6); `mm_extended_i`, the same "
             "points with each fine neighbour distributing over its own strong coarse points, "
             "built as one sparse product (Li, Sjögreen, Yang 2021; hypre's extended+i on GPUs); "
             "with `aggregation`: "
             "`tentative`, piecewise constant over the aggregates (unsmoothed aggregation), or "
             "`smoothed`, the tentative one smoothed by one damped Jacobi step (I - omega D^-1 "
             "A) T (smoothed aggregation, Vaněk, Mandel, Brezina 1996)");
    v.real("prolongation_smoothing_factor", values.prolongation_smoothing_factor,
           {0.0, false, 2.0, false},
           "`smoothed` interpolation: omega = prolongation_smoothing_factor / rho, rho "
           "Gershgorin's bound of the spectral radius of D^-1 A");
    v.integer("max_elements_per_row", values.max_elements_per_row, Range::at_least(0),
              "most interpolatory points per row of P (the largest weights); 0: no limit");
    v.real("truncation_factor", values.truncation_factor, Range::closed_open(0, 1),
           "drop interpolation weights below truncation_factor times the row's largest; the "
           "weights are recomputed over the kept points (`direct`: rescaled to the row sums, "
           "Stüben 2001, sec. 7.2.4; `extended_i`: the dropped couplings join the diagonal; "
           "`mm_extended_i`: the kept weights are scaled to the row sum of all)");
    v.choice("smoother", smoother,
             {"gauss_seidel", "jacobi", "l1_jacobi", "chebyshev", "hybrid_gauss_seidel",
              "multicolor_gauss_seidel"},
             "`gauss_seidel`: forward before and backward after the coarse correction "
             "(sequential, host backends); `jacobi`: damped by jacobi_omega; `l1_jacobi`: "
             "D = s_i sum_j |a_ij|, s_i the sign of a_ii; `chebyshev`: degree chebyshev_degree "
             "on D^-1 A (A definite, diagonal of its sign); `hybrid_gauss_seidel`: Gauss-Seidel "
             "inside blocks of hybrid_block_rows rows and Jacobi across them, diagonal a_ii + "
             "s_i sum of |a_ij| over the columns outside the row's block (l1 Gauss-Seidel, "
             "Baker, Falgout, Kolev, Yang 2011), forward before and backward after the coarse "
             "correction; `multicolor_gauss_seidel`: Gauss-Seidel in a Jones-Plassmann-Luby "
             "multicolor order of each level (MulticolorGaussSeidel), forward before and "
             "backward after; all but `gauss_seidel` run on every backend");
    v.real("jacobi_omega", values.jacobi_omega, {0.0, false, 2.0, false},
           "damping of the jacobi smoother");
    v.integer("chebyshev_degree", values.chebyshev_degree, Range::at_least(1),
              "degree of the chebyshev smoother (products with A per smoothing step)");
    v.real("chebyshev_alpha", values.chebyshev_alpha, Range::greater_than(1.0),
           "the chebyshev smoother damps the eigenvalues of D^-1 A in [lambda_max / "
           "chebyshev_alpha, 1.1 lambda_max], lambda_max estimated by CG-Lanczos (Adams, "
           "Brezina, Hu, Tuminaro 2003); with degree 1 it is Jacobi damped by "
           "2 / (1.1 lambda_max (1 + 1 / chebyshev_alpha))");
    v.integer("chebyshev_eigen_iterations", values.chebyshev_eigen_iterations, Range::at_least(1),
              "Jacobi-preconditioned CG steps (CG-Lanczos) of the chebyshev smoother's estimate "
              "of lambda_max(D^-1 A) on each level, at setup and at every re-setup; the "
              "largest Ritz value, times 1.1, bounds the damped range");
    v.integer("hybrid_block_rows", values.hybrid_block_rows, Range::at_least(1),
              "rows per block of the hybrid_gauss_seidel smoother (the blocks are swept in "
              "parallel; the same bits on every backend)");
    v.integer("pre_sweeps", values.cycle.pre_sweeps, Range::at_least(0),
              "smoothing steps before the coarse-grid correction");
    v.integer("post_sweeps", values.cycle.post_sweeps, Range::at_least(0),
              "smoothing steps after it");
    v.choice("cycle", cycle, {"v", "w", "f"}, "multigrid cycle shape");
    v.integer("max_levels", values.max_levels, Range::at_least(1),
              "most levels of the hierarchy, the coarsest included");
    v.integer("coarse_size", values.coarse_size, Range::at_least(1),
              "stop coarsening at this many rows or fewer; the coarsest level is solved by the "
              "`dense` direct solver (at most 8192 rows)");
    v.choice("hierarchy_precision", hierarchy_precision, {"float64", "float32"},
             "how the values of the hierarchy's matrices (P, R and the coarse matrices, not the "
             "A being solved) are stored: `float32` takes 4 instead of 8 bytes per value (8 "
             "instead of 12 per stored entry with its column index); every level is computed in "
             "double and "
             "rounded to float, and vectors and all arithmetic stay double");
  }
  AmgPreconditioner::Parameters build() const {
    AmgPreconditioner::Parameters p = values;
    using A = AmgPreconditioner;
    p.strength = strength == "seed"        ? A::Strength::seed
                 : strength == "symmetric" ? A::Strength::symmetric
                                           : A::Strength::classical;
    p.coarsening = coarsening == "pmis"          ? A::Coarsening::pmis
                   : coarsening == "hmis"        ? A::Coarsening::hmis
                   : coarsening == "aggregation" ? A::Coarsening::aggregation
                                                 : A::Coarsening::greedy;
    p.interpolation = interpolation == "seed"            ? A::Interpolation::seed
                      : interpolation == "extended_i"    ? A::Interpolation::extended_i
                      : interpolation == "mm_extended_i" ? A::Interpolation::mm_extended_i
                      : interpolation == "tentative"     ? A::Interpolation::tentative
                      : interpolation == "smoothed"      ? A::Interpolation::smoothed
                                                         : A::Interpolation::direct;
    p.smoother = smoother == "jacobi"                    ? A::SmootherKind::jacobi
                 : smoother == "l1_jacobi"               ? A::SmootherKind::l1_jacobi
                 : smoother == "chebyshev"               ? A::SmootherKind::chebyshev
                 : smoother == "hybrid_gauss_seidel"     ? A::SmootherKind::hybrid_gauss_seidel
                 : smoother == "multicolor_gauss_seidel" ? A::SmootherKind::multicolor_gauss_seidel
                                                         : A::SmootherKind::gauss_seidel;
    p.cycle.cycle = parse_cycle_type(cycle);
    p.random_seed = static_cast<std::uint64_t>(random_seed);
    p.hierarchy_precision = precision_from_string(hierarchy_precision);
    return p;
  }
};

struct NoParameters final : ComponentParameters {
  void declare(ParameterVisitor&) override {}
};

/// The top level: {"solver": {...}}.
struct RootParameters final : ComponentParameters {
  ComponentSlot solver{solver_family()};
  void declare(ParameterVisitor& v) override {
    v.component("solver", solver, "the Krylov solver, its stopping criteria and preconditioner");
  }
};

// ---------------------------------------------------------------------------------------------
// The registry: type name -> description, parameters and factory.

/// p_multigrid: sem::PMultigrid::Parameters, the schedule and the coarsest level's treatment as
/// strings, and the coarse solver as a nested preconditioner (by default the pcg_amg preset's
/// AMG).
struct PMultigridParameters final : ComponentParameters {
  sem::PMultigrid::Parameters values;
  std::string schedule = "halving";
  std::string smoother = "chebyshev_jacobi";
  std::string schwarz_precision = "float32";
  std::string cycle_precision = "float64";
  std::string vertex_patch_step = "separate";
  std::string chebyshev_kind = "first";
  std::string coarsest = "assembled";
  std::string cycle = to_string(CycleType::v);
  ComponentSlot coarse_solver{preconditioner_family()};
  PMultigridParameters() {
    coarse_solver.select("amg");
    auto& amg = static_cast<AmgParameters&>(*coarse_solver.parameters);
    // PMultigrid::default_amg's numbers; its choices as the registry's names.
    amg.values = sem::PMultigrid::default_amg();
    amg.coarsening = "pmis";
    amg.interpolation = "mm_extended_i";
    amg.smoother = "chebyshev";
    amg.hierarchy_precision = std::string(to_string(Precision::float32));
  }
  void declare(ParameterVisitor& v) override {
    v.choice("schedule", schedule, {"halving", "halving_then_unit", "minus_two", "two_level"},
             "the orders of the levels below the operator's order p: `halving`, the next order "
             "is 1 when p <= 3 and p / 2 otherwise (7, 3, 1; 9, 4, 2, 1); `halving_then_unit`, "
             "halving while above 3, then every order down to 1 (7, 3, 2, 1); `minus_two`, p - 2 "
             "each step, then 1 (7, 5, 3, 1); `two_level`, p then 1");
    v.choice(
        "smoother", smoother,
        {"chebyshev_jacobi", "chebyshev_asm", "chebyshev_ras", "vertex_patch"},
        "smoothing of the levels above the coarsest: Chebyshev acceleration of Jacobi, of "
        "additive Schwarz (`chebyshev_asm`, symmetric) or of restricted additive Schwarz "
        "(`chebyshev_ras`, nonsymmetric: use fcg or fgmres) on element patches extended by one "
        "layer of points, with fast-diagonalization local solves; or `vertex_patch`, "
        "multiplicative Schwarz on the 2 x 2 x 2 elements around each interior vertex, colored, "
        "with fast-diagonalization local solves (forward sweep before, backward after the "
        "correction; one operator application per color; unknowns inside no patch by "
        "damped Jacobi)");
    v.choice("schwarz_precision", schwarz_precision, {"float32", "float64"},
             "arithmetic and storage of the Schwarz smoothers' local solves (float32: half the "
             "memory, about twice the speed on a GPU)");
    v.real("vertex_patch_relaxation", values.vertex_patch.relaxation, Range::greater_than(0.0),
           "scaling of every correction of the `vertex_patch` smoother (1: the "
           "multiplicative method)");
    v.integer("vertex_patch_eigen_iterations", values.vertex_patch.eigen_iterations,
              Range::at_least(0),
              "power steps estimating each vertex patch's lambda_P = lambda_max(A~_P^-1 A_P), "
              "the overshoot of its separable local solve; 0: no per-patch damping");
    v.real("vertex_patch_damping_bound", values.vertex_patch.damping_bound,
           Range{0.0, false, 2.0, false},
           "patch P's correction is scaled by min(1, vertex_patch_damping_bound / lambda_P)");
    v.real("vertex_patch_uncovered_weight", values.vertex_patch.uncovered_weight,
           Range{0.0, true, 1.0, true},
           "damped-Jacobi weight of the unknowns inside no vertex patch (near irregular "
           "vertices, on Neumann boundaries), relaxed after the colors; 0: setup fails on them");
    v.choice("vertex_patch_step", vertex_patch_step, {"separate", "fused"},
             "the `vertex_patch` smoother's step per color: `separate` (one operator application "
             "for the residual, then the local solves) or `fused` (each patch computes its "
             "residual from its 8 elements' Laplacians; the same step to rounding; experimental)");
    v.choice("cycle_precision", cycle_precision, {"float64", "float32"},
             "element arithmetic of the matrix-free operators inside the cycle, the finest "
             "level's too (float32: the element Laplacians in float on double vectors, "
             "transfers and the assembled coarse matrix in double; the outer solver keeps the "
             "double operator; symmetric only to float rounding: use fcg or fgmres)");
    v.integer("chebyshev_degree", values.chebyshev_degree, Range::at_least(1),
              "degree of the Chebyshev smoother of each spectral-element level (operator "
              "applications per smoothing step)");
    v.integer("coarse_levels_chebyshev_degree", values.coarse_levels_chebyshev_degree,
              Range::at_least(0),
              "degree of the Chebyshev smoothers of the levels below the finest, the "
              "`chebyshev` coarsest level's included (0: chebyshev_degree; the vertex_patch "
              "smoother has none); their steps cost about (q / p)^3 of a finest step");
    v.real("chebyshev_alpha", values.chebyshev_alpha, Range::greater_than(1.0),
           "the smoother damps the eigenvalues of M^-1 A (M: Jacobi or Schwarz) in "
           "[lambda_max / chebyshev_alpha, 1.1 lambda_max]");
    v.choice("chebyshev_kind", chebyshev_kind, {"first", "fourth"},
             "the Schwarz smoothers' Chebyshev polynomial: `first` on [lambda_max / "
             "chebyshev_alpha, 1.1 lambda_max], or Lottes's `fourth` kind on [0, 1.1 "
             "lambda_max] (no lower bound; chebyshev_alpha unused); Chebyshev-Jacobi is of the "
             "first kind");
    v.integer("chebyshev_eigen_iterations", values.chebyshev_eigen_iterations, Range::at_least(1),
              "CG-Lanczos (Jacobi) or Arnoldi (Schwarz) steps of each level's lambda_max "
              "estimate");
    v.integer("pre_sweeps", values.cycle.pre_sweeps, Range::at_least(0),
              "smoothing steps before the coarse-grid correction");
    v.integer("post_sweeps", values.cycle.post_sweeps, Range::at_least(0),
              "smoothing steps after it");
    v.choice("cycle", cycle, {"v", "w", "f"}, "multigrid cycle shape");
    v.choice("coarsest", coarsest, {"assembled", "chebyshev"},
             "the order-1 level: `assembled`, its matrix (trilinear elements on the mesh "
             "vertices) formed and solved by coarse_solver; `chebyshev`, "
             "chebyshev_coarse_sweeps Chebyshev-Jacobi steps on the matrix-free operator");
    v.integer("chebyshev_coarse_sweeps", values.chebyshev_coarse_sweeps, Range::at_least(1),
              "smoothing steps of the `chebyshev` coarsest level");
    v.component("coarse_solver", coarse_solver,
                "the solver of the assembled order-1 level: any preconditioner of a CSR matrix "
                "(by default one cycle of `amg` with the pcg_amg preset's parameters, but "
                "coarse_size 2000)");
  }
};

struct SolverEntry {
  ComponentType type;
  std::function<std::unique_ptr<KrylovSolver>(const ComponentParameters&)> build;
};

struct PreconditionerEntry {
  ComponentType type;
  std::function<std::unique_ptr<Preconditioner>(const ComponentParameters&)> build;
};

/// An entry whose factory receives the parameters type P its own make_parameters created.
template <class Entry, class P, class Build>
Entry entry(const char* name, const char* description, Build build) {
  return {{name, description, [] { return std::make_unique<P>(); }},
          [build](const ComponentParameters& p) { return build(static_cast<const P&>(p)); }};
}

/// A solver of type S built from `args`, with the iteration options of `p`.
template <class S, class... Args>
std::unique_ptr<KrylovSolver> with_options(const KrylovParameters& p, Args&&... args) {
  auto solver = std::make_unique<S>(std::forward<Args>(args)...);
  solver->set_options(p.iteration_options());
  return solver;
}

const std::vector<SolverEntry>& solver_entries() {
  static const std::vector<SolverEntry> entries = {
      entry<SolverEntry, KrylovParameters>(
          "pcg",
          "Preconditioned conjugate gradients (Saad, Iterative Methods, 2nd ed., Algorithm 9.1) "
          "for symmetric A and M, both positive or both negative definite. With `jacobi` the "
          "preconditioner is fused into the vector updates.",
          [](const KrylovParameters& p) { return with_options<Cg>(p, p.criteria); }),
      entry<SolverEntry, KrylovParameters>(
          "fcg",
          "Flexible conjugate gradients (Notay 2000, FCG(1)): pcg with the Polak-Ribiere beta = "
          "-(z·Ap)/(p·Ap), for symmetric definite A with a preconditioner that is not "
          "symmetric or varies between iterations (a multigrid cycle with restricted additive "
          "Schwarz smoothing); one more inner product than pcg, in the same pass, no more "
          "memory.",
          [](const KrylovParameters& p) { return with_options<Cg>(p, p.criteria, true); }),
      entry<SolverEntry, PipelinedCgParameters>(
          "pipecg",
          "Pipelined preconditioned conjugate gradients (Ghysels and Vanroose 2014) for the same "
          "systems as pcg: one fused reduction of every inner product per iteration, which can "
          "overlap the preconditioner and the product; residual replacement bounds its drift.",
          [](const PipelinedCgParameters& p) {
            return with_options<PipelinedCg>(p, p.criteria, p.replacement_interval);
          }),
      entry<SolverEntry, KrylovParameters>(
          "bicgstab",
          "Right-preconditioned BiCGStab (van der Vorst 1992) for nonsymmetric A: two SpMVs and "
          "two preconditioner applications per iteration, short recurrences.",
          [](const KrylovParameters& p) { return with_options<Bicgstab>(p, p.criteria); }),
      entry<SolverEntry, GmresParameters>(
          "gmres",
          "Restarted GMRES(m) with Givens rotations for nonsymmetric A, preconditioned on the "
          "right (Saad, Algorithm 9.5) or on the left (Algorithm 9.4); the Hessenberg matrix "
          "stays on the device.",
          [](const GmresParameters& p) { return p.build(false); }),
      entry<SolverEntry, GmresParameters>(
          "fgmres",
          "Flexible GMRES(m) (Saad, Algorithm 9.6): also stores the preconditioned vectors, so "
          "the preconditioner may change from one iteration to the next. Right preconditioning "
          "only.",
          [](const GmresParameters& p) { return p.build(true); }),
      entry<SolverEntry, KrylovParameters>(
          "richardson",
          "Preconditioned Richardson iteration x <- x + M^-1 (b - A x) (Saad, sec. 4.1): with "
          "the `amg` preconditioner, one multigrid cycle per iteration (standalone multigrid).",
          [](const KrylovParameters& p) { return with_options<Richardson>(p, p.criteria); }),
  };
  return entries;
}

/// ilu0 and dilu: MulticolorIluPreconditioner::Parameters (the factorization from the type).
struct MulticolorIluParameters final : ComponentParameters {
  std::string coloring = to_string(ColoringAlgorithm::jones_plassmann_luby);
  std::string inverse_precision = std::string(to_string(Precision::float64));
  std::string kernel = to_string(SweepKernel::automatic);
  int seed = 1;
  void declare(ParameterVisitor& v) override {
    v.choice(
        "coloring", coloring, {"jones_plassmann_luby", "greedy", "natural"},
        "the multicolor order of the factorization: `jones_plassmann_luby`, parallel on "
        "the matrix's backend (deterministic for the seed); `greedy`, the greedy coloring "
        "in row order (parallel rounds on cuda); `natural`, every block row its own color: the "
        "factorization in the "
        "natural order (one launch per block row and solve on a device; for small "
        "systems and comparisons)");
    v.integer("seed", seed, Range::at_least(0), "seed of the Jones-Plassmann-Luby keys");
    v.choice("inverse_precision", inverse_precision, {"float64", "float32"},
             "storage of the inverse pivot blocks (products in double either way)");
    v.choice("kernel", kernel, {"automatic", "coefficient", "warp", "block_row"},
             "cuda kernel of the triangular solves (as multicolor_gauss_seidel's)");
  }
  MulticolorIluPreconditioner::Parameters build(IluFactorization factorization) const {
    MulticolorIluPreconditioner::Parameters p;
    p.factorization = factorization;
    p.coloring = parse_coloring_algorithm(coloring);
    p.inverse_precision = precision_from_string(inverse_precision);
    p.kernel = parse_sweep_kernel(kernel);
    p.seed = static_cast<std::uint64_t>(seed);
    return p;
  }
};

/// ilut: IlutPreconditioner::Parameters.
struct IlutComponentParameters final : ComponentParameters {
  IlutPreconditioner::Parameters values;
  std::string kernel = to_string(SweepKernel::automatic);
  std::string solve = to_string(TriangularSolve::level_scheduled);
  void declare(ParameterVisitor& v) override {
    v.real("drop_tolerance", values.ilut.drop_tolerance, Range::at_least(0),
           "tau: entries below tau ||a_i||_2 are dropped from row i (Saad, Algorithm 10.6)");
    v.integer("fill", values.ilut.fill, Range::at_least(-1),
              "p: entries kept in each of row i's L and U parts besides the diagonal; 0: as "
              "many as A's row has in that triangle (fill about 1.0 x nnz(A)); -1: all");
    v.choice("kernel", kernel, {"automatic", "coefficient", "warp", "block_row"},
             "cuda kernel of the level-scheduled triangular solves");
    v.choice("solve", solve, {"level_scheduled", "sync_free"},
             "triangular solves on a device: `level_scheduled`, one launch per level of L and "
             "of U; `sync_free`, one launch per factor, each row waiting on ready flags of the "
             "rows it needs (Liu et al., Euro-Par 2016)");
  }
  IlutPreconditioner::Parameters build() const {
    IlutPreconditioner::Parameters p = values;
    p.kernel = parse_sweep_kernel(kernel);
    p.solve = parse_triangular_solve(solve);
    return p;
  }
};

/// ainv: AinvPreconditioner::Parameters.
struct AinvComponentParameters final : ComponentParameters {
  AinvPreconditioner::Parameters values;
  std::string symmetry = to_string(AinvSymmetry::automatic);
  std::string factor_precision = "float32";
  void declare(ParameterVisitor& v) override {
    v.real("drop_tolerance", values.ainv.drop_tolerance, Range::at_least(0),
           "tau: after each update, entries of a column of Z or W below tau in magnitude are "
           "dropped (the factors of the matrix scaled to a unit diagonal; never the diagonal)");
    v.integer("fill", values.ainv.fill, Range::at_least(-1),
              "p: the largest entries kept in each column of Z and W besides the diagonal; -1: "
              "all (tau alone bounds the fill); 0: as many as A's column has above the "
              "diagonal");
    v.choice("symmetry", symmetry, {"automatic", "symmetric", "nonsymmetric"},
             "`symmetric`: Z = W, the stabilized SAINV of Benzi, Cullum, Tuma 2000 (A "
             "symmetric, for pcg); `nonsymmetric`: Z and W apart (Benzi, Tuma 1998); "
             "`automatic`: symmetric when A's pattern and values are");
    v.choice("factor_precision", factor_precision, {"float32", "float64"},
             "storage of the two factors on the backend (products summed in double)");
    v.integer("threads", values.ainv.threads, Range::at_least(0),
              "host threads of the factorization: 0 all OpenMP threads, 1 the sequential "
              "biconjugation, k > 1 k parts of a domain decomposition (separator last) factored "
              "in parallel, when n >= 20000; the result depends on k, not on the run");
  }
  AinvPreconditioner::Parameters build() const {
    AinvPreconditioner::Parameters p = values;
    p.ainv.symmetry = parse_ainv_symmetry(symmetry);
    p.factor_precision = precision_from_string(factor_precision);
    return p;
  }
};

/// fsai: FsaiPreconditioner::Parameters.
struct FsaiComponentParameters final : ComponentParameters {
  FsaiPreconditioner::Parameters values;
  std::string factor_precision = "float32";
  std::string symmetry = "symmetric";
  void declare(ParameterVisitor& v) override {
    v.integer("pattern_power", values.pattern_power, Range::closed_open(1, 4),
              "k: G's pattern is the lower triangle of A^k's (1: A's own; 2 and 3 reach two "
              "and three edges of A's graph, more work per row and fewer iterations)");
    v.integer("max_row_entries", values.max_row_entries,
              Range::closed_open(1, FsaiPreconditioner::kMaxRowEntries + 1),
              "the most columns kept in a row of G (the ones nearest the diagonal); each row "
              "costs a dense Cholesky factorization of that size");
    v.real("filter_tolerance", values.filter_tolerance, Range::at_least(0),
           "post-filtration: G's entries with |g_ij| sqrt|a_jj| < filter_tolerance |g_ii| "
           "sqrt|a_ii| are dropped and G is computed again on the rest (0: none)");
    v.choice("factor_precision", factor_precision, {"float32", "float64"},
             "storage of G and G^T on the backend (products summed in double)");
    v.choice("symmetry", symmetry, {"symmetric", "nonsymmetric"},
             "`symmetric`: M = G^T G from Cholesky factors of the rows' submatrices (A symmetric "
             "definite, for pcg); `nonsymmetric`: M = Z W' from their LU factors without "
             "pivoting (A with a nonzero diagonal whose submatrices factor without pivoting, for "
             "bicgstab and gmres)");
  }
  FsaiPreconditioner::Parameters build() const {
    FsaiPreconditioner::Parameters p = values;
    p.symmetry = parse_fsai_symmetry(symmetry);
    p.factor_precision = precision_from_string(factor_precision);
    return p;
  }
};

const std::vector<PreconditionerEntry>& preconditioner_entries() {
  static const std::vector<PreconditionerEntry> entries = {
      entry<PreconditionerEntry, JacobiParameters>(
          "jacobi",
          "Point Jacobi: z = omega D^-1 r with D = diag(A) (Saad, sec. 10.2). Setup fails on a "
          "zero, missing or non-finite diagonal entry.",
          [](const JacobiParameters& p) {
            return std::make_unique<JacobiPreconditioner>(p.values);
          }),
      entry<PreconditionerEntry, NoParameters>(
          "identity", "No preconditioning: z = r.",
          [](const NoParameters&) { return std::make_unique<IdentityPreconditioner>(); }),
      entry<PreconditionerEntry, BlockJacobiParameters>(
          "block_jacobi",
          "Block Jacobi: z_I = omega D_I^-1 r_I with D_I the B x B diagonal blocks of a BSR "
          "matrix (B <= 8; 1 x 1 for CSR), inverted once by LU with partial pivoting on A's "
          "backend. Setup fails naming the first singular, missing or non-finite diagonal "
          "block.",
          [](const BlockJacobiParameters& p) {
            return std::make_unique<BlockJacobiPreconditioner>(p.build());
          }),
      entry<PreconditionerEntry, MulticolorGaussSeidelParameters>(
          "multicolor_gauss_seidel",
          "Multicolor block Gauss-Seidel (NOISEtte's block SGS; Saad, sec. 12.4.1): the block "
          "graph colored on A's backend, the diagonal blocks inverted, then `sweeps` forward "
          "(and backward) sweeps from z = 0, color by color. For BiCGStab, GMRES and FGMRES "
          "(not CG: M need not be positive definite). BSR (B <= 8) or CSR.",
          [](const MulticolorGaussSeidelParameters& p) {
            return std::make_unique<MulticolorGaussSeidelPreconditioner>(p.build());
          }),
      entry<PreconditionerEntry, MulticolorIluParameters>(
          "ilu0",
          "Block ILU(0) in multicolor order (Saad, Algorithm 10.4 on B x B blocks): the block "
          "graph colored and A reordered by color on A's backend, factored one color at a "
          "time with zero fill, applied as a forward and a backward triangular solve color by "
          "color. The ordering changes M: `coloring: natural` is ILU(0) in the natural order. "
          "Setup fails naming the first singular pivot block. BSR (B <= 8) or CSR; for "
          "BiCGStab, GMRES and FGMRES.",
          [](const MulticolorIluParameters& p) {
            return std::make_unique<MulticolorIluPreconditioner>(p.build(IluFactorization::ilu0));
          }),
      entry<PreconditionerEntry, MulticolorIluParameters>(
          "dilu",
          "DILU in multicolor order (the diagonal ILU of OpenFOAM and AmgX): M = (D' + L) "
          "D'^-1 (D' + U) with L, U the strict block triangles of A and D' chosen so that "
          "diag(M) = diag(A); only the pivot blocks D' are computed (color by color) and "
          "inverted. Setup fails naming the first singular pivot block. BSR (B <= 8) or CSR; "
          "for BiCGStab, GMRES and FGMRES.",
          [](const MulticolorIluParameters& p) {
            return std::make_unique<MulticolorIluPreconditioner>(p.build(IluFactorization::dilu));
          }),
      entry<PreconditionerEntry, IlutComponentParameters>(
          "ilut",
          "ILUT(p, tau), Saad's dual-threshold incomplete LU (Algorithm 10.6) in the natural "
          "order, without pivoting: factored on the host (a BSR matrix entry by entry), its "
          "triangular solves on A's backend by level scheduling (one launch per level). For "
          "systems where zero fill is not enough. Setup fails naming the row of a zero pivot.",
          [](const IlutComponentParameters& p) {
            return std::make_unique<IlutPreconditioner>(p.build());
          }),
      entry<PreconditionerEntry, AinvComponentParameters>(
          "ainv",
          "AINV, the factored approximate inverse M = Z D^-1 W^T ~ A^-1 by right-looking "
          "biconjugation with dropping (Benzi, Meyer, Tuma 1996; stabilized, Benzi, Cullum, "
          "Tuma 2000), as OpenFOAM's GPU solver uses it: factored on the host (the matrix "
          "scaled to a unit diagonal), applied as two sparse products on A's backend with D "
          "folded in, factors in float32 in the reversed triangular layout, no triangular "
          "solve. A pivot that is zero, or of the wrong sign for a symmetric A, is replaced by "
          "the scaled diagonal and counted in the summary. CSR; symmetric for pcg.",
          [](const AinvComponentParameters& p) {
            return std::make_unique<AinvPreconditioner>(p.build());
          }),
      entry<PreconditionerEntry, FsaiComponentParameters>(
          "fsai",
          "FSAI, the factorized sparse approximate inverse M = G^T G ~ A^-1 (Kolotilina, "
          "Yeremin 1993) of an SPD matrix: G lower triangular on the pattern of the lower "
          "triangle of A^k (Chow 2001), each row from a dense Cholesky solve with A restricted "
          "to the row's pattern, independent of the other rows, so the whole setup runs on A's "
          "backend; applied as two sparse products (factors in float32), no triangular solve. "
          "Only A's lower triangle is read. Setup fails naming the first row whose submatrix "
          "is not positive definite. CSR; for pcg, or with `symmetry: nonsymmetric` (M = Z W' "
          "from LU factors) for bicgstab and gmres.",
          [](const FsaiComponentParameters& p) {
            return std::make_unique<FsaiPreconditioner>(p.build());
          }),
      entry<PreconditionerEntry, AmgParameters>(
          "amg",
          "Algebraic multigrid, classical (Stüben 2001; the Parallel Toolbox AMG of Liebmann "
          "2016) or by aggregation (unsmoothed or smoothed, Vaněk, Mandel, Brezina 1996): "
          "strength of connection, C/F splitting or aggregates, interpolation, Galerkin "
          "products R A P with R = P^T, one cycle per application. Symmetric with the default "
          "smoother, "
          "so pcg may use it; with `richardson` it is a standalone solver. A must be an "
          "assembled matrix (CSR) with a nonzero diagonal. The setup runs on A's backend; "
          "`greedy` coarsening and `gauss_seidel` are sequential and have no cuda kernel (the "
          "`*_amg` presets use `pmis` with `chebyshev` or `l1_jacobi`, which run on every "
          "backend, as does `hybrid_gauss_seidel`). The coarsest level is solved by the `dense` "
          "explicit inverse on the backend. `kryflow solve` prints the hierarchy and its "
          "memory.",
          [](const AmgParameters& p) { return std::make_unique<AmgPreconditioner>(p.build()); }),
      entry<PreconditionerEntry, PMultigridParameters>(
          "p_multigrid",
          "p-multigrid for the spectral-element Poisson operator (kryflow sem; Rønquist and "
          "Patera 1987, as nekRS's pMG): the operator at decreasing polynomial orders on the "
          "same mesh, matrix-free, with GLL interpolation between them (restriction its "
          "transpose) and Chebyshev-accelerated Jacobi or Schwarz smoothing; the order-1 level "
          "assembled into a CSR "
          "matrix and solved by coarse_solver (one AMG cycle by default). Symmetric, so pcg "
          "may use it, except with the chebyshev_ras smoother (fcg or fgmres). A must be a "
          "spectral-element operator.",
          [](const PMultigridParameters& p) {
            sem::PMultigrid::Parameters values = p.values;
            values.orders.clear();
            using Schedule = sem::PMultigrid::Schedule;
            values.schedule = p.schedule == "two_level"           ? Schedule::two_level
                              : p.schedule == "halving_then_unit" ? Schedule::halving_then_unit
                              : p.schedule == "minus_two"         ? Schedule::minus_two
                                                                  : Schedule::halving;
            using Kind = sem::PMultigrid::SmootherKind;
            values.smoother = p.smoother == "chebyshev_asm"   ? Kind::chebyshev_asm
                              : p.smoother == "chebyshev_ras" ? Kind::chebyshev_ras
                              : p.smoother == "vertex_patch"  ? Kind::vertex_patch
                                                              : Kind::chebyshev_jacobi;
            values.schwarz_precision = precision_from_string(p.schwarz_precision);
            values.chebyshev_kind = p.chebyshev_kind == "fourth" ? ChebyshevSmoother::Kind::fourth
                                                                 : ChebyshevSmoother::Kind::first;
            values.cycle_precision = precision_from_string(p.cycle_precision);
            values.vertex_patch.fused = p.vertex_patch_step == "fused";
            values.coarsest = p.coarsest == "chebyshev" ? sem::PMultigrid::Coarsest::chebyshev
                                                        : sem::PMultigrid::Coarsest::assembled;
            values.cycle.cycle = parse_cycle_type(p.cycle);
            auto coarse = find_entry(preconditioner_entries(), p.coarse_solver.type)
                              .build(*p.coarse_solver.parameters);
            return std::make_unique<sem::PMultigrid>(values, std::move(coarse));
          }),
      entry<PreconditionerEntry, NoParameters>(
          "dense",
          "Direct solve by the explicit inverse, formed on A's backend (LAPACK on the host, "
          "cuSOLVER on cuda), for systems of at most 8192 rows: Cholesky for symmetric "
          "positive definite A, an eigendecomposition for other symmetric A (the "
          "pseudo-inverse when singular), LU otherwise; each application is one dense "
          "matrix-vector product on the backend.",
          [](const NoParameters&) { return std::make_unique<DenseDirectSolver>(); }),
  };
  return entries;
}

template <class Entry>
ComponentFamily make_family(const char* name, const char* description, const char* default_type,
                            const std::vector<Entry>& entries) {
  ComponentFamily family{name, description, default_type, {}};
  for (const Entry& e : entries) family.types.push_back(e.type);
  return family;
}

const ComponentFamily& solver_family() {
  static const ComponentFamily family = make_family(
      "solver", "The Krylov method and its stopping criteria.", "pcg", solver_entries());
  return family;
}

const ComponentFamily& preconditioner_family() {
  static const ComponentFamily family =
      make_family("preconditioner", "The preconditioner M, applied as z = M^-1 r.", "jacobi",
                  preconditioner_entries());
  return family;
}

template <class Entry>
const Entry& find_entry(const std::vector<Entry>& entries, const std::string& type) {
  for (const Entry& e : entries) {
    if (e.type.name == type) return e;
  }
  throw ConfigError("type", "no factory for type '" + type + "'");
}

/// Runs a component constructor, prefixing the path of a ConfigError it throws with `prefix`
/// (constructors validate their own fields and name them without the JSON path).
template <class Build>
auto with_path(const std::string& prefix, Build build) {
  try {
    return build();
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    const std::string problem = message.substr(std::min(message.size(), e.path().size() + 2));
    throw ConfigError(prefix + "." + e.path(), problem);
  }
}

}  // namespace

SolverSetup build_solver(const nlohmann::json& config) {
  RootParameters root;
  read_json(config, root);
  const auto& solver_parameters = static_cast<const KrylovParameters&>(*root.solver.parameters);
  const ComponentSlot& preconditioner = solver_parameters.preconditioner;

  SolverSetup setup;
  setup.solver = with_path("solver", [&] {
    return find_entry(solver_entries(), root.solver.type).build(*root.solver.parameters);
  });
  setup.preconditioner = with_path("solver.preconditioner", [&] {
    return find_entry(preconditioner_entries(), preconditioner.type)
        .build(*preconditioner.parameters);
  });
  setup.resolved = write_json(root);
  return setup;
}

nlohmann::json default_config() {
  RootParameters root;
  return write_json(root);
}

namespace {

/// Parses JSON `text`; a syntax error is a ConfigError at `origin` naming the line and column.
nlohmann::json parse_json_text(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // Position of the offending character (e.byte is 1-based, or 0 when unknown).
    const std::size_t at = e.byte > 0 ? std::min<std::size_t>(e.byte - 1, text.size()) : 0;
    const std::size_t line =
        1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + at, '\n'));
    const std::size_t line_start = text.rfind('\n', at == 0 ? 0 : at - 1);
    const std::size_t column =
        line_start == std::string::npos || at == 0 ? at + 1 : at - line_start;
    std::string problem = e.what();
    if (const std::size_t colon = problem.find(": "); colon != std::string::npos) {
      problem = problem.substr(colon + 2);
    }
    throw ConfigError(origin, "line " + std::to_string(line) + ", column " +
                                  std::to_string(column) + ": invalid JSON: " + problem);
  }
}

}  // namespace

nlohmann::json load_config_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in || std::filesystem::is_directory(file)) {
    throw InvalidInput("cannot open configuration file '" + file.string() + "'");
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_json_text(buffer.str(), file.string());
}

nlohmann::json resolve_configuration(const std::string& source,
                                     const std::vector<std::string>& overrides) {
  nlohmann::json config = nlohmann::json::object();
  const std::size_t first = source.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    // empty: the defaults
  } else if (source[first] == '{') {
    config = parse_json_text(source, "configuration");
  } else if (source.ends_with(".json")) {
    config = load_config_file(source);
  } else {
    config = load_preset(source);
  }
  for (const std::string& assignment : overrides) apply_override(config, assignment);
  return config;
}

namespace {

/// The file holding this code: the shared library, or the executable it is linked into.
std::filesystem::path binary_holding_kryflow() {
  std::error_code error;
#ifdef __linux__
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&binary_holding_kryflow), &info) != 0 &&
      info.dli_fname != nullptr &&
      std::string_view(info.dli_fname).find('/') != std::string::npos) {
    const std::filesystem::path path = std::filesystem::weakly_canonical(info.dli_fname, error);
    if (!error) return path;
  }
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) return exe;
#endif
  return {};
}

}  // namespace

std::filesystem::path preset_directory() {
  const char* env = std::getenv("KRYFLOW_PRESET_DIR");
  if (env != nullptr && *env != '\0') return env;
  // share/kryflow/configs in the folder of the binary or up to three folders above it: the
  // installed tree (PREFIX/lib/libkryflow.so, PREFIX/bin/kryflow), the build tree (the build
  // copies the presets to BUILD/share/kryflow/configs) and the Python package.
  static const std::filesystem::path found = [] {
    const std::filesystem::path binary = binary_holding_kryflow();
    std::filesystem::path dir = binary.parent_path();
    for (int up = 0; up < 4 && !dir.empty(); ++up) {
      const std::filesystem::path candidate = dir / "share" / "kryflow" / "configs";
      std::error_code error;
      if (std::filesystem::is_directory(candidate, error)) return candidate;
      if (dir == dir.parent_path()) break;
      dir = dir.parent_path();
    }
    return std::filesystem::path();
  }();
  return found;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& item : std::filesystem::directory_iterator(preset_directory(), error)) {
    if (item.is_regular_file() && item.path().extension() == ".json") {
      names.push_back(item.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

nlohmann::json load_preset(const std::string& name) {
  const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  const std::filesystem::path file = preset_directory() / (name + ".json");
  if (!plain || !std::filesystem::is_regular_file(file)) {
    std::string available;
    for (const std::string& preset : preset_names()) {
      available += (available.empty() ? "" : ", ") + preset;
    }
    if (preset_directory().empty()) {
      throw ConfigError("preset", "unknown preset '" + name +
                                      "': no preset folder share/kryflow/configs beside " +
                                      binary_holding_kryflow().string() +
                                      " or above it; set KRYFLOW_PRESET_DIR to the presets");
    }
    throw ConfigError("preset", "unknown preset '" + name + "' (available in " +
                                    preset_directory().string() + ": " +
                                    (available.empty() ? "none" : available) + ")");
  }
  return load_config_file(file);
}

void apply_override(nlohmann::json& config, const std::string& assignment) {
  const std::string usage = "expected key=value, e.g. solver.relative_tolerance=1e-10";
  const std::size_t equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0) throw ConfigError(assignment, usage);
  const std::string key = assignment.substr(0, equals);
  const std::string text = assignment.substr(equals + 1);

  std::vector<std::string> segments;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    segments.push_back(key.substr(start, dot - start));
    if (segments.back().empty()) throw ConfigError(key, "empty key segment; " + usage);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }

  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) value = text;

  if (config.is_null()) config = nlohmann::json::object();
  nlohmann::json* node = &config;
  std::string path;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    if (!node->is_object()) {
      throw ConfigError(path.empty() ? "(top level)" : path,
                        "is " + std::string(node->type_name()) + ", not an object, so '" + key +
                            "' cannot be set");
    }
    path += (path.empty() ? "" : ".") + segments[i];
    node = &(*node)[segments[i]];
    if (i + 1 < segments.size() && node->is_null()) *node = nlohmann::json::object();
  }
  *node = std::move(value);
}

std::string config_reference_markdown() {
  RootParameters root;
  std::string text =
      "# kryflow configuration reference\n"
      "\n"
      "Generated from the parameter declarations in `src/config/registry.cpp` by `kryflow "
      "config-doc`; do not edit by hand.\n"
      "\n"
      "A configuration is a JSON object whose nesting follows the composition: the solver, then "
      "its preconditioner. Each component is an object whose `type` key selects the "
      "implementation; the other keys are that type's parameters. Every key is optional and "
      "takes the default listed below, so `{}` means `pcg` with `jacobi`. An unknown key or "
      "type, a value of the wrong type or outside its valid range is an error that names the "
      "JSON path (e.g. `solver.preconditioner.omega`) and lists the valid keys or choices. "
      "Integer parameters accept any JSON number with an integral value (`1e4`).\n"
      "\n"
      "The CLI reads a file (`-c config.json`) or a shipped preset from `configs/` "
      "(`--preset pcg_jacobi`), then applies overrides in order "
      "(`-p solver.relative_tolerance=1e-10 -p solver.preconditioner.type=identity`; the value "
      "is parsed as JSON when it parses, otherwise taken as a string). Every report echoes the "
      "fully resolved configuration.\n"
      "\n";
  text += write_markdown(root, 2);
  text +=
      "\n"
      "## Defaults\n"
      "\n"
      "The fully resolved configuration of `{}`:\n"
      "\n"
      "```json\n" +
      write_json(root).dump(2) +
      "\n"
      "```\n";
  return text;
}

}  // namespace kryflow::config
