// Algebraic multigrid as a preconditioner: classical (Ruge-Stüben type) and aggregation
// (unsmoothed and smoothed).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/multigrid/multigrid.hpp"

namespace kryflow {

/// What an AMG setup built and how long it took (AmgPreconditioner::hierarchy_report).
struct HierarchyReport {
  struct Level {
    index_t rows = 0;
    std::int64_t nonzeros = 0;
  };
  struct Phase {
    std::string name;  ///< strength, splitting (aggregation with aggregation coarsening),
                       ///< interpolation, galerkin_product, rounding (float32
                       ///< hierarchy_precision), partitions (the levels' SpMV row-block
                       ///< partitions, built together), smoothers, coarse_solver
    double seconds = 0.0;
    /// Times the host waited for the device in the phase (Backend::host_waits; 0 on the host
    /// backends): what bounds the setup of small matrices on a GPU.
    std::uint64_t host_waits = 0;
  };
  std::vector<Level> levels;  ///< finest first; the last is the coarsest (solved directly)
  /// sum of nonzeros over all levels / nonzeros of the finest (Stüben 2001, sec. 8).
  double operator_complexity = 0.0;
  /// sum of rows over all levels / rows of the finest.
  double grid_complexity = 0.0;
  std::vector<Phase> phases;
  /// Bytes the hierarchy holds on the backend, counted from its arrays: P, R and R's source
  /// map, the splitting and coarse points, A P's pattern, the passes, the rows grouped by pass
  /// and W's pattern of aggressive levels, the coarse matrices A_1 .. A_L (the A
  /// of setup is the caller's and not counted), the smoothers' and the cycle's vectors and the
  /// coarse solver's dense inverse (n_L^2 doubles when it is DenseDirectSolver). Each stored
  /// value of P, R and A_1 .. A_L counts value_bytes(hierarchy_precision): 8 or 4 bytes.
  std::int64_t memory_bytes = 0;
  /// memory_bytes / rows of the finest level.
  double bytes_per_fine_row = 0.0;
  std::string smoother;
  std::string coarse_solver;
  /// How the values of P, R and A_1 .. A_L are stored (AmgPreconditioner::Parameters::
  /// hierarchy_precision). A_0 (the caller's), every vector, the smoothers' diagonals, the
  /// coarse solver's inverse and all arithmetic are double either way.
  Precision hierarchy_precision = Precision::float64;
  /// A table, one line per level, then the complexities, the memory, the precision of the
  /// hierarchy's values, the smoother, the coarse solver and the setup phases.
  std::string to_text() const;
};

/// Classical algebraic multigrid (Stüben, "A review of algebraic multigrid", J. Comput. Appl.
/// Math. 128, 2001; Trottenberg, Oosterlee, Schüller, "Multigrid", 2001, appendix A; the
/// Parallel Toolbox AMG of Liebmann 2016). Setup per level, every step a kernel with a
/// reference oracle (kernels/amg, kernels/sparse_setup):
///  1. strength of connection S (classical with strength_threshold theta, sign-aware, or the
///     Parallel Toolbox's |a_ij| > eps |a_ii|; max_row_sum);
///  2. C/F splitting: the Parallel Toolbox's greedy coarsening, PMIS or HMIS (De Sterck,
///     Yang, Heys, "Reducing complexity in parallel algebraic multigrid preconditioners", SIAM
///     J. Matrix Anal. Appl. 27, 2006) with weights from random_seed; HMIS runs the Ruge-Stueben
///     first pass on domains of kernels::amg::kHmisDomainRows consecutive rows (the paper's
///     processor subdomains) and PMIS from its coarse points;
///  3. prolongation P = [I; P_FC] by the Parallel Toolbox's 1/n_i weights, Stüben's direct
///     interpolation or the distance-two extended+i interpolation (De Sterck, Falgout,
///     Nolting, Yang, "Distance-two interpolation for parallel algebraic multigrid", Numer.
///     Linear Algebra Appl. 15, 2008; the formula at kernels::amg::InterpolationKind), truncated
///     (max_elements_per_row, truncation_factor);
///  4. restriction R = P^T (formed explicitly) and the Galerkin product A_c = R (A P) by two
///     sparse products (symbolic, then numeric phase).
/// Aggressive coarsening (aggressive_levels, Stüben 2001, sec. 7.1.2, as hypre BoomerAMG's
/// agg_num_levels with agg_interp_type 4): on the first aggressive_levels levels the splitting
/// of step 2 gives C1, then the same splitting of the distance-two strength S2 among C1 (j
/// strongly connected to i when a path of at most two strong connections leads from i to j)
/// keeps C2 within C1; P is multi-pass interpolation (Stüben 2001, sec. 7.2.3): the fine rows
/// get passes (1: a strong dependency on C2; p: one on a row of pass p - 1), W holds for each
/// fine row of pass p the direct interpolation weights (or the seed's 1/n) over its strong
/// dependencies of pass p - 1 and 1 on the diagonal of the coarse rows, X_1 is the direct (or
/// seed) interpolation from C2, and P = W^(m-1) X_1 for m passes (m - 1 sparse products).
/// Rows no pass reaches (no strong path to C2) have an empty row of P. extended_i and
/// truncation do not apply on these levels.
/// Aggregation AMG replaces steps 2 and 3 (coarsening = aggregation; Vaněk, Mandel, Brezina,
/// "Algebraic multigrid by smoothed aggregation for second and fourth order elliptic
/// problems", Computing 56, 1996; aggregates as in Bell, Dalton, Olson, SIAM J. Sci. Comput.
/// 34, 2012, sec. 4): aggregates around the points of a distance-two maximal independent set
/// of the graph S + S^T (random weights from random_seed; deterministic), the tentative
/// prolongation T with one 1 per row in its aggregate's column (the constant near-null
/// space), and P = T (interpolation = tentative, unsmoothed aggregation) or the smoothed
/// prolongation P = (I - omega D^-1 A) T with omega = prolongation_smoothing_factor / rho,
/// rho Gershgorin's bound max_i sum_j |a_ij| / |a_ii| of the spectral radius of D^-1 A
/// (interpolation = smoothed, smoothed aggregation; A itself, without filtering weak
/// connections). The symmetric strength measure |a_ij| >= theta sqrt(|a_ii a_jj|) is the
/// usual one for it. Near-null spaces other than the constant are not supported yet.
/// Coarsening stops at coarse_size rows, at max_levels levels, or when a level does not shrink
/// (fewer than 10% fewer rows); the coarsest level is solved by DenseDirectSolver or by the
/// coarse solver given to the constructor. The cycle is Multigrid's.
///
/// Mixed precision: with hierarchy_precision float32 the values of P, R and A_1 .. A_L are
/// stored in float (CsrMatrix's float32 storage: 8 instead of 12 bytes per stored entry) while
/// vectors, the Krylov method and every product's arithmetic stay double. Setup and
/// update_values compute every level in double (interpolation weights, R, A P and R (A P) from
/// the double values of the level above), then round each matrix to nearest float on the
/// backend (kernels::blas::round_to_float): the float hierarchy is the double one rounded, and
/// the double values of a level live only until the next level is built. A_0 is used as given.
///
/// Preconditions: A a square float64 CsrMatrix with a nonzero diagonal; symmetric positive
/// definite for use in PCG (then the V-cycle with symmetric smoothing is SPD). A is not copied:
/// it must outlive the preconditioner's use. Setup runs where A lives: every step is a kernel of
/// A's backend (reference, cpu or cuda; docs/decisions/006), the host reads only the sizes of
/// new arrays, whether a splitting round left rows undecided, the scalars of the estimates
/// (Chebyshev's lambda_max, smoothed aggregation's Gershgorin bound) and the coarse solver's
/// status. The greedy coarsening and the Gauss-Seidel
/// smoother (the defaults: the Parallel Toolbox's method) are sequential by definition: on
/// cuda the greedy coarsening runs as one device thread (correct, slow: about a second per
/// million rows) and Gauss-Seidel has no kernel; on a GPU use PMIS with chebyshev, l1_jacobi,
/// jacobi (the pcg_amg preset) or hybrid_gauss_seidel (Gauss-Seidel inside blocks of rows,
/// Jacobi across them, with the l1 diagonal). A cycle runs entirely on the backend:
/// the coarsest level is solved by DenseDirectSolver's explicit inverse, one dense
/// matrix-vector product, with no host synchronization.
///
/// Memory: before anything is allocated, setup estimates the hierarchy's bytes from A
/// (estimate_memory_bytes) and throws OutOfMemory when the estimate exceeds
/// memory_limit_bytes, or, when that is 0, the backend's available memory
/// (Backend::available_memory). A failed setup or update_values (OutOfMemory from an
/// allocation, or any other error) leaves the preconditioner empty, as before its first
/// setup: apply throws InvalidInput until setup succeeds; a coarse solver given to the
/// constructor is kept. The bytes the hierarchy holds are in hierarchy_report().
/// update_values(A) keeps the strength, splitting and every pattern and recomputes the values
/// of P, R, A_c, the smoothers and the coarse solver (extended_i and mm_extended_i keep each
/// level's strength pattern S for it, mm_extended_i also the row pointers of its factors L and
/// B, all counted in memory_bytes; in double, then rounded as setup does when
/// hierarchy_precision is float32: the same values as a fresh setup on the same pattern).
class AmgPreconditioner final : public Multigrid {
 public:
  /// classical and seed: see kernels::amg::StrengthMeasure; symmetric: |a_ij| >= theta
  /// sqrt(|a_ii a_jj|) (smoothed aggregation's).
  enum class Strength { classical, seed, symmetric };
  /// greedy, pmis and hmis: C/F splittings; aggregation: aggregates of a distance-two maximal
  /// independent set (needs interpolation tentative or smoothed).
  enum class Coarsening { greedy, pmis, hmis, aggregation };
  /// seed: 1/n_i over the coarse points of S_i; direct: Stüben's direct interpolation from
  /// them; extended_i: extended+i, from them and the coarse points of S_k for the fine k in S_i
  /// (P has more entries per row than direct, the coarse operators more nonzeros);
  /// mm_extended_i: matrix-product extended+i (Li, Sjögreen, Yang 2021; the formula at
  /// kernels::amg::InterpolationKind::mm_extended_i): the same points, each fine neighbour's
  /// distribution over its own strong coarse points, so that P is one sparse product (a setup
  /// close to direct's on a GPU); truncation rescales its kept weights to the row sum. With
  /// aggregation coarsening: tentative (P = T, unsmoothed aggregation) or smoothed (P =
  /// (I - omega D^-1 A) T, smoothed aggregation).
  enum class Interpolation { seed, direct, extended_i, mm_extended_i, tentative, smoothed };
  /// gauss_seidel, hybrid_gauss_seidel and multicolor_gauss_seidel: forward before and
  /// backward after the coarse correction (HybridGaussSeidelSmoother with hybrid_block_rows and
  /// the l1 diagonal; MulticolorGaussSeidelSmoother, Jones-Plassmann-Luby colors of each level).
  enum class SmootherKind {
    jacobi,
    l1_jacobi,
    chebyshev,
    gauss_seidel,
    hybrid_gauss_seidel,
    multicolor_gauss_seidel
  };
  struct Parameters {
    Strength strength = Strength::classical;
    double strength_threshold = 0.25;  ///< theta (classical) or eps (seed), >= 0
    double max_row_sum = 1.0;          ///< (0, 1]; 1 disables the test
    Coarsening coarsening = Coarsening::greedy;
    std::uint64_t random_seed = 1;  ///< PMIS weights
    /// >= 0: aggressive coarsening on the first aggressive_levels levels (greedy, pmis or hmis
    /// coarsening only): the splitting again on the coarse points with the distance-two
    /// strength, and multi-pass interpolation (see the class comment).
    int aggressive_levels = 0;
    Interpolation interpolation = Interpolation::direct;
    /// Smoothed aggregation's omega = prolongation_smoothing_factor / rho(D^-1 A), in (0, 2).
    double prolongation_smoothing_factor = 4.0 / 3.0;
    int max_elements_per_row = 0;    ///< >= 0, 0: no limit (classical interpolation only)
    double truncation_factor = 0.0;  ///< [0, 1)
    SmootherKind smoother = SmootherKind::gauss_seidel;
    double jacobi_omega = 2.0 / 3.0;  ///< damping of the jacobi smoother, (0, 2)
    int chebyshev_degree = 2;         ///< >= 1
    /// > 1: the chebyshev smoother damps [lambda_max / chebyshev_alpha, 1.1 lambda_max] of
    /// D^-1 A (ChebyshevSmoother::Parameters::alpha).
    double chebyshev_alpha = 30.0;
    /// >= 1: CG-Lanczos steps of the chebyshev smoother's estimate of lambda_max(D^-1 A) on
    /// each level, at setup and re-setup (ChebyshevSmoother::Parameters::eigen_iterations).
    int chebyshev_eigen_iterations = 10;
    int hybrid_block_rows = 32;   ///< rows per block of hybrid_gauss_seidel, >= 1
    int max_levels = 25;          ///< >= 1 (1: the coarse solver alone)
    int coarse_size = 200;        ///< stop coarsening at this many rows or fewer, >= 1
    Multigrid::Parameters cycle;  ///< cycle shape and sweeps
    /// Setup throws OutOfMemory when estimate_memory_bytes(A) exceeds this; 0: the backend's
    /// available memory at setup (Backend::available_memory).
    std::size_t memory_limit_bytes = 0;
    /// How P, R and A_1 .. A_L store their values: float64, or float32 (rounded to nearest
    /// after each level is computed in double; products and vectors stay double). Every
    /// smoother and the dense coarse solver accept float32 level matrices.
    Precision hierarchy_precision = Precision::float64;
  };
  /// The estimate setup compares with the memory limit, for a fine matrix of `rows` rows and
  /// `nonzeros` entries: 64 bytes per row (the splitting, coarse points, the smoothers' and the
  /// cycle's vectors over all levels) plus 8 times the fine matrix's entries at 12 bytes each
  /// (4-byte column, 8-byte value): the coarse matrices (operator complexity up to 3, so up to
  /// 2 nnz), P, R and A P over all levels (up to 4 nnz) and the strength pattern with its
  /// transpose while a level is built (up to 2 nnz). The pcg_amg preset's hierarchy holds
  /// about 18% of it on 7-point 3D Poisson (131 of 733 bytes per row at 200^3, float32
  /// values, one aggressive level) and less on 27-point
  /// (HierarchyReport::memory_bytes): a conservative estimate, not a sharp bound. It assumes
  /// float64 values whatever hierarchy_precision says (setup computes each level in double).
  /// Untruncated extended_i interpolation can exceed it (7-point 3D Poisson 64^3, PMIS: 768
  /// bytes per row against 727 estimated, operator complexity 4.3); with
  /// max_elements_per_row = 4, 474.
  static std::size_t estimate_memory_bytes(index_t rows, std::int64_t nonzeros);
  /// Throws ConfigError naming the parameter that is out of range, or `interpolation` when it
  /// does not fit the coarsening (tentative and smoothed need aggregation, which needs them).
  explicit AmgPreconditioner(Parameters parameters);
  AmgPreconditioner() : AmgPreconditioner(Parameters{}) {}
  /// As AmgPreconditioner(parameters), with `coarse_solver` (set up by setup) solving the
  /// coarsest level instead of the dense factorization.
  AmgPreconditioner(Parameters parameters, std::unique_ptr<Preconditioner> coarse_solver);
  ~AmgPreconditioner() override;

  /// Builds the hierarchy. Throws NotSupported when A is not a float64 CsrMatrix, or when a
  /// step has no kernel on A's backend (Gauss-Seidel on cuda);
  /// DimensionMismatch when A is not square; OutOfMemory when the estimate exceeds the limit
  /// or an allocation fails; InvalidInput naming the first (1-based) row of a level whose
  /// diagonal is zero or missing, and what the smoothers and the coarse solver throw (a
  /// singular coarse matrix, a Chebyshev estimate that is not positive); with float32
  /// hierarchy_precision, InvalidInput naming the row and column of a coarse value that
  /// overflows float. On an error the preconditioner is left empty (see above).
  void setup(const LinearOperator& A) override;
  /// Value-only re-setup for an A with the pattern of the last setup. Throws InvalidInput
  /// when setup was not called or A's size or number of entries differs.
  void update_values(const LinearOperator& A) override;
  std::string name() const override { return "amg"; }
  const HierarchyReport& hierarchy_report() const noexcept { return report_; }
  /// The parameters given to the constructor.
  const Parameters& amg_parameters() const noexcept { return parameters_; }
  std::string summary() const override { return report_.to_text(); }
  /// The prolongation and restriction of level l (< num_levels()), for tests and tools; their
  /// precision() is hierarchy_precision.
  const CsrMatrix& prolongation(std::size_t l) const;
  const CsrMatrix& restriction(std::size_t l) const;
  /// The operator of level l (<= num_levels(); 0 is the A of setup, float64; the others are
  /// stored in hierarchy_precision).
  const CsrMatrix& level_matrix(std::size_t l) const;
  /// The C/F splitting of level l (< num_levels()), 1 coarse, 0 fine, copied to the host; with
  /// aggregation coarsening the aggregate of each row.
  std::vector<index_t> splitting(std::size_t l) const;

  /// Internal: the arrays of the hierarchy (src/amg/amg_hierarchy.hpp).
  struct Hierarchy;
  /// Internal: the phases of a setup or re-setup timed on the backend's queue, and the checks
  /// it reads at its end (src/amg/amg.cpp).
  struct PhaseLog;

 private:
  std::unique_ptr<Smoother> make_smoother(bool post) const;
  /// Builds the smoothers and levels over the hierarchy's arrays for A (level 0) and hands them
  /// to Multigrid with `coarse`, set up for the coarsest matrix (update_values when `update`);
  /// `coarse` stays with the caller when this throws.
  void install(const CsrMatrix& A, std::unique_ptr<Preconditioner>& coarse, bool update);
  /// The levels and the coarse solver of setup (the hierarchy's arrays are built here).
  void build(const CsrMatrix& A0, std::unique_ptr<Preconditioner>& coarse);
  /// The numeric phases of update_values over every level (P's values, R, A P, A_c).
  void update_levels();
  /// Drops the hierarchy after a failed setup or update_values; keeps `coarse` (the coarse
  /// solver taken out for the setup) when it came from the constructor.
  void clear(std::unique_ptr<Preconditioner> coarse);
  /// HierarchyReport::memory_bytes of the installed hierarchy.
  std::int64_t memory_bytes() const;

  Parameters parameters_;
  std::unique_ptr<Preconditioner> user_coarse_solver_;
  bool user_coarse_ = false;  // the coarse solver came from the constructor
  std::unique_ptr<Hierarchy> hierarchy_;
  const CsrMatrix* level0_ = nullptr;  // the A of the last setup or update_values
  HierarchyReport report_;
  std::unique_ptr<PhaseLog> phase_log_;          // while setup or update_values runs
  std::vector<Vector> level_inverse_diagonals_;  // from each level's diagonal check to its smoother
};

}  // namespace kryflow
