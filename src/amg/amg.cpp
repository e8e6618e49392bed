// The classical AMG preconditioner: hierarchy construction, value-only re-setup and its report.
#include "kryflow/amg/amg.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "kernels/backend/queue_clock.hpp"
#include "kernels/blas/blas.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/multigrid/dense_solver.hpp"
#include "kryflow/multigrid/smoothers.hpp"
#include "kryflow/preconditioners/multicolor_gauss_seidel.hpp"
#include "src/amg/amg_hierarchy.hpp"
#include "src/multigrid/csr_access.hpp"
#include "src/multigrid/lanczos_batch.hpp"

namespace kryflow {
namespace {

namespace ka = kernels::amg;

}  // namespace

/// The phases of one setup or re-setup as marks on the backend's queue (kernels::QueueClock):
/// no wait between phases; resolve() waits once for the last mark and sums each phase's
/// intervals into the report, in the order the phases first ran. `checks` holds the checks
/// whose results the levels leave on the backend (diagonals, float32 overflow), read once all
/// levels and smoothers are queued (install).
struct AmgPreconditioner::PhaseLog {
  explicit PhaseLog(const Backend& b) : backend(b), clock(b), checks(b) {}
  void resolve(HierarchyReport& report) {
    report.phases.clear();
    for (const Interval& interval : intervals) {
      const double seconds = clock.seconds(interval.begin, interval.end);
      auto phase =
          std::find_if(report.phases.begin(), report.phases.end(),
                       [&](const HierarchyReport::Phase& p) { return p.name == interval.name; });
      if (phase == report.phases.end()) {
        report.phases.push_back({interval.name, seconds, interval.host_waits});
      } else {
        phase->seconds += seconds;
        phase->host_waits += interval.host_waits;
      }
    }
  }
  struct Interval {
    std::string name;
    std::size_t begin, end;
    std::uint64_t host_waits;
  };
  Backend backend;
  kernels::QueueClock clock;
  std::vector<Interval> intervals;
  amg_setup::DeferredChecks checks;
};

namespace {

/// Marks the start of a phase at construction and its end when it goes out of scope
/// (AmgPreconditioner::PhaseLog); a null log times nothing.
class PhaseTimer {
 public:
  PhaseTimer(AmgPreconditioner::PhaseLog* log, const char* name) : log_(log), name_(name) {
    if (log_ == nullptr) return;
    waits_ = log_->backend.host_waits();
    begin_ = log_->clock.mark();
  }
  ~PhaseTimer() {
    if (log_ == nullptr) return;
    try {
      log_->intervals.push_back(
          {name_, begin_, log_->clock.mark(), log_->backend.host_waits() - waits_});
    } catch (const Error&) {
      // The failed work's error surfaces again at the next call on the backend.
    }
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  AmgPreconditioner::PhaseLog* log_;
  const char* name_;
  std::uint64_t waits_ = 0;
  std::size_t begin_ = 0;
};

ka::StrengthParameters strength_parameters(const AmgPreconditioner::Parameters& p) {
  ka::StrengthMeasure measure = ka::StrengthMeasure::classical;
  if (p.strength == AmgPreconditioner::Strength::seed) measure = ka::StrengthMeasure::seed;
  if (p.strength == AmgPreconditioner::Strength::symmetric) {
    measure = ka::StrengthMeasure::symmetric;
  }
  return {measure, p.strength_threshold, p.max_row_sum};
}

bool aggregation(const AmgPreconditioner::Parameters& p) {
  return p.coarsening == AmgPreconditioner::Coarsening::aggregation;
}

ka::InterpolationKind interpolation_kind(const AmgPreconditioner::Parameters& p) {
  switch (p.interpolation) {
    case AmgPreconditioner::Interpolation::seed:
      return ka::InterpolationKind::seed;
    case AmgPreconditioner::Interpolation::extended_i:
      return ka::InterpolationKind::extended_i;
    case AmgPreconditioner::Interpolation::mm_extended_i:
      return ka::InterpolationKind::mm_extended_i;
    case AmgPreconditioner::Interpolation::direct:
    case AmgPreconditioner::Interpolation::tentative:
    case AmgPreconditioner::Interpolation::smoothed:
      break;
  }
  return ka::InterpolationKind::direct;
}

[[noreturn]] void throw_bad_diagonal(index_t row, std::size_t level) {
  throw InvalidInput("AMG: the diagonal entry of row " + std::to_string(row + 1) + " of level " +
                     std::to_string(level) + " is zero, missing or not finite");
}

/// Row pointers, column indices and values in the matrix's stored precision.
std::int64_t csr_bytes(const CsrMatrix& m) {
  return static_cast<std::int64_t>(sizeof(index_t)) * (m.num_rows() + 1 + m.nnz()) +
         static_cast<std::int64_t>(value_bytes(m.precision())) * m.nnz();
}

template <class T>
std::int64_t array_bytes(const Array<T>& a) {
  return static_cast<std::int64_t>(a.size() * sizeof(T));
}

/// n-vectors a smoother of `kind` keeps (smoothers.hpp), both smoothers of a level together.
int smoother_vectors(AmgPreconditioner::SmootherKind kind) {
  switch (kind) {
    case AmgPreconditioner::SmootherKind::jacobi:
    case AmgPreconditioner::SmootherKind::l1_jacobi:
      return 2;
    case AmgPreconditioner::SmootherKind::chebyshev:
      return 3;  // the inverse diagonal, r and d
    case AmgPreconditioner::SmootherKind::gauss_seidel:
      return 2;  // one inverse diagonal each for the forward and the backward smoother
    case AmgPreconditioner::SmootherKind::hybrid_gauss_seidel:
      return 4;  // an inverse diagonal and a copy of x each for the forward and the backward one
    case AmgPreconditioner::SmootherKind::multicolor_gauss_seidel:
      return 6;  // inverse diagonal, x and saved products each; their matrix copies apart
  }
  return 4;
}

}  // namespace

std::size_t AmgPreconditioner::estimate_memory_bytes(index_t rows, std::int64_t nonzeros) {
  const auto entry = static_cast<std::size_t>(sizeof(index_t) + sizeof(double));
  return 64 * static_cast<std::size_t>(rows) + 8 * entry * static_cast<std::size_t>(nonzeros);
}

AmgPreconditioner::AmgPreconditioner(Parameters parameters)
    : AmgPreconditioner(parameters, nullptr) {}

AmgPreconditioner::AmgPreconditioner(Parameters parameters,
                                     std::unique_ptr<Preconditioner> coarse_solver)
    : Multigrid(parameters.cycle),
      parameters_(parameters),
      user_coarse_solver_(std::move(coarse_solver)),
      user_coarse_(user_coarse_solver_ != nullptr) {
  const Parameters& p = parameters_;
  if (!(p.strength_threshold >= 0.0)) throw ConfigError("strength_threshold", "must be >= 0");
  if (!(p.max_row_sum > 0.0 && p.max_row_sum <= 1.0)) {
    throw ConfigError("max_row_sum", "must be in (0, 1]");
  }
  const bool aggregates =
      p.interpolation == Interpolation::tentative || p.interpolation == Interpolation::smoothed;
  if (aggregates != aggregation(p)) {
    throw ConfigError("interpolation",
                      aggregation(p) ? "coarsening `aggregation` needs interpolation `tentative` "
                                       "or `smoothed`"
                                     : "`tentative` and `smoothed` need coarsening `aggregation`");
  }
  if (!(p.prolongation_smoothing_factor > 0.0 && p.prolongation_smoothing_factor < 2.0)) {
    throw ConfigError("prolongation_smoothing_factor", "must be in (0, 2)");
  }
  if (p.max_elements_per_row < 0) throw ConfigError("max_elements_per_row", "must be >= 0");
  if (!(p.truncation_factor >= 0.0 && p.truncation_factor < 1.0)) {
    throw ConfigError("truncation_factor", "must be in [0, 1)");
  }
  if (!(p.jacobi_omega > 0.0 && p.jacobi_omega < 2.0)) {
    throw ConfigError("jacobi_omega", "must be in (0, 2)");
  }
  if (p.chebyshev_degree < 1) throw ConfigError("chebyshev_degree", "must be >= 1");
  if (!(p.chebyshev_alpha > 1.0)) throw ConfigError("chebyshev_alpha", "must be > 1");
  if (p.chebyshev_eigen_iterations < 1) {
    throw ConfigError("chebyshev_eigen_iterations", "must be >= 1");
  }
  if (p.hybrid_block_rows < 1) throw ConfigError("hybrid_block_rows", "must be >= 1");
  if (p.max_levels < 1) throw ConfigError("max_levels", "must be >= 1");
  if (p.coarse_size < 1) throw ConfigError("coarse_size", "must be >= 1");
  if (p.aggressive_levels < 0) throw ConfigError("aggressive_levels", "must be >= 0");
  if (p.aggressive_levels > 0 && aggregation(p)) {
    throw ConfigError("aggressive_levels",
                      "needs classical coarsening (`pmis`, `hmis` or `greedy`), not `aggregation`");
  }
}

AmgPreconditioner::~AmgPreconditioner() = default;

std::unique_ptr<Smoother> AmgPreconditioner::make_smoother(bool post) const {
  switch (parameters_.smoother) {
    case SmootherKind::jacobi:
      return std::make_unique<JacobiSmoother>(parameters_.jacobi_omega);
    case SmootherKind::l1_jacobi:
      return std::make_unique<L1JacobiSmoother>();
    case SmootherKind::chebyshev: {
      ChebyshevSmoother::Parameters chebyshev;
      chebyshev.degree = parameters_.chebyshev_degree;
      chebyshev.alpha = parameters_.chebyshev_alpha;
      chebyshev.eigen_iterations = parameters_.chebyshev_eigen_iterations;
      return std::make_unique<ChebyshevSmoother>(chebyshev);
    }
    case SmootherKind::gauss_seidel:
      return std::make_unique<GaussSeidelSmoother>(post ? GaussSeidelSmoother::Direction::backward
                                                        : GaussSeidelSmoother::Direction::forward);
    case SmootherKind::hybrid_gauss_seidel: {
      HybridGaussSeidelSmoother::Parameters hybrid;
      hybrid.direction = post ? HybridGaussSeidelSmoother::Direction::backward
                              : HybridGaussSeidelSmoother::Direction::forward;
      hybrid.block_rows = parameters_.hybrid_block_rows;
      return std::make_unique<HybridGaussSeidelSmoother>(hybrid);
    }
    case SmootherKind::multicolor_gauss_seidel: {
      MulticolorGaussSeidel::Parameters multicolor;
      multicolor.symmetric = false;
      multicolor.reverse = post;
      return std::make_unique<MulticolorGaussSeidelSmoother>(multicolor);
    }
  }
  throw ConfigError("smoother", "unknown smoother");
}

void AmgPreconditioner::setup(const LinearOperator& A) {
  const CsrMatrix& A0 = detail::require_csr(A, "AMG");
  // The estimate first, before anything is allocated or dropped; the hierarchy a new setup
  // replaces is freed first, so its bytes count as available.
  const std::size_t estimate = estimate_memory_bytes(A0.num_rows(), A0.nnz());
  std::size_t limit = parameters_.memory_limit_bytes;
  if (limit == 0) {
    const std::size_t available = A0.backend().available_memory();
    const auto held = static_cast<std::size_t>(report_.memory_bytes);
    limit = available > SIZE_MAX - held ? SIZE_MAX : available + held;
  }
  if (estimate > limit) {
    throw OutOfMemory(estimate, limit,
                      A0.backend().name() + " (the AMG setup's estimate of its hierarchy for " +
                          std::to_string(A0.num_rows()) + " rows and " + std::to_string(A0.nnz()) +
                          " entries; memory_limit_bytes)");
  }
  std::unique_ptr<Preconditioner> coarse = clear_hierarchy();
  if (!coarse) coarse = std::move(user_coarse_solver_);
  hierarchy_.reset();
  level0_ = nullptr;
  report_ = HierarchyReport{};
  if (!coarse) coarse = std::make_unique<DenseDirectSolver>();
  try {
    phase_log_ = std::make_unique<PhaseLog>(A0.backend());
    build(A0, coarse);
    phase_log_->resolve(report_);
    phase_log_.reset();
  } catch (const std::bad_alloc&) {
    clear(std::move(coarse));
    throw OutOfMemory(0, 0, "host (AMG setup)");
  } catch (...) {
    // A failed deferred check (a bad diagonal, read with the others at the end of the setup)
    // is the cause of whatever failed after it: it is reported instead.
    std::exception_ptr failure = std::current_exception();
    try {
      if (phase_log_) phase_log_->checks.resolve();
    } catch (const InvalidInput&) {
      failure = std::current_exception();
    } catch (...) {
    }
    clear(std::move(coarse));
    std::rethrow_exception(failure);
  }
}

void AmgPreconditioner::build(const CsrMatrix& A0, std::unique_ptr<Preconditioner>& coarse) {
  const Precision precision = parameters_.hierarchy_precision;
  auto hierarchy = std::make_unique<Hierarchy>();
  const CsrMatrix* current = &A0;
  for (std::size_t level = 0; level + 1 < std::size_t(parameters_.max_levels) &&
                              current->num_rows() > parameters_.coarse_size;
       ++level) {
    // Level 0's D^-1 goes to its smoother (install): the matrix it smooths has these values.
    // Read with the other deferred checks (no wait here): a bad diagonal makes the level's
    // values NaN or infinite, never its indices, and is reported before anything uses them.
    // The coarser levels' diagonals are checked once their partitions exist (below).
    if (level == 0) {
      level_inverse_diagonals_.clear();
      level_inverse_diagonals_.resize(1);
      amg_setup::first_bad_diagonal(
          *current, phase_log_->checks.add([](index_t row) { throw_bad_diagonal(row, 0); }),
          &level_inverse_diagonals_[0]);
    }
    const Backend& backend = current->backend();
    const bool aggressive = level < static_cast<std::size_t>(parameters_.aggressive_levels);
    auto arrays = std::make_unique<AmgLevelArrays>();
    CsrArrays S;
    {
      PhaseTimer timer(phase_log_.get(), "strength");
      S = amg_setup::strength(*current, strength_parameters(parameters_));
    }
    std::int64_t num_coarse = 0;
    Array<index_t> coarse_index;
    if (aggregation(parameters_)) {
      PhaseTimer timer(phase_log_.get(), "aggregation");
      arrays->splitting = amg_setup::aggregation(backend, S, parameters_.random_seed, num_coarse);
    } else {
      PhaseTimer timer(phase_log_.get(), "splitting");
      arrays->splitting =
          aggressive
              ? amg_setup::aggressive_splitting(backend, S, parameters_.coarsening,
                                                parameters_.random_seed)
              : amg_setup::splitting(backend, S, parameters_.coarsening, parameters_.random_seed);
      coarse_index = amg_setup::coarse_index(backend, arrays->splitting, num_coarse);
    }
    // Stop when coarsening stalls: no coarse point, or fewer than 10% fewer rows.
    if (num_coarse == 0 || double(num_coarse) > 0.9 * current->num_rows()) break;
    if (aggregation(parameters_)) {
      PhaseTimer timer(phase_log_.get(), "interpolation");
      const auto aggregates = static_cast<index_t>(num_coarse);
      arrays->prolongation = amg_setup::to_matrix(
          parameters_.interpolation == Interpolation::smoothed
              ? amg_setup::smoothed_prolongation(*current, arrays->splitting, aggregates,
                                                 parameters_.prolongation_smoothing_factor)
              : amg_setup::tentative_prolongation(backend, arrays->splitting, aggregates));
    } else {
      PhaseTimer timer(phase_log_.get(), "interpolation");
      arrays->coarse_points = Array<index_t>(backend, static_cast<std::size_t>(num_coarse));
      kernels::amg::coarse_points(backend, arrays->splitting.span(), coarse_index.span(),
                                  arrays->coarse_points.span());
      if (aggressive) {
        // Multi-pass interpolation: direct weights (seed's with interpolation `seed`).
        arrays->interpolation = interpolation_kind(parameters_) == ka::InterpolationKind::seed
                                    ? ka::InterpolationKind::seed
                                    : ka::InterpolationKind::direct;
        arrays->prolongation = amg_setup::to_matrix(amg_setup::multipass_prolongation(
            *current, S, arrays->splitting, coarse_index, static_cast<index_t>(num_coarse),
            arrays->interpolation, arrays->multipass));
      } else if (interpolation_kind(parameters_) == ka::InterpolationKind::mm_extended_i) {
        const ka::InterpolationParameters ip{ka::InterpolationKind::mm_extended_i,
                                             parameters_.max_elements_per_row,
                                             parameters_.truncation_factor};
        arrays->interpolation = ip.kind;
        arrays->prolongation = amg_setup::to_matrix(amg_setup::mm_extended_prolongation(
            *current, S, arrays->splitting, std::move(coarse_index),
            static_cast<index_t>(num_coarse), ip, arrays->matrix_product));
        arrays->strength = std::move(S);  // its re-setup reads S_i and S_k again
      } else {
        const ka::InterpolationParameters ip{interpolation_kind(parameters_),
                                             parameters_.max_elements_per_row,
                                             parameters_.truncation_factor};
        arrays->interpolation = ip.kind;
        arrays->prolongation = amg_setup::to_matrix(amg_setup::interpolation(
            *current, S, arrays->splitting, coarse_index, static_cast<index_t>(num_coarse), ip));
        // Extended+i re-setup reads the strong fine neighbours of each row: S stays.
        if (ip.kind == ka::InterpolationKind::extended_i) arrays->strength = std::move(S);
      }
    }
    {
      PhaseTimer timer(phase_log_.get(), "galerkin_product");
      hierarchy->matrices.push_back(
          std::make_unique<CsrMatrix>(amg_setup::galerkin_product(*current, *arrays)));
    }
    if (precision != Precision::float64) {
      // Level `level` is complete: its P, R and (below the caller's A_0) its matrix are needed
      // in double no more.
      PhaseTimer timer(phase_log_.get(), "rounding");
      amg_setup::DeferredChecks& checks = phase_log_->checks;
      amg_setup::set_precision_checked(arrays->prolongation, precision, checks, level,
                                       "prolongation");
      amg_setup::set_precision_checked(arrays->restriction, precision, checks, level,
                                       "restriction");
      if (level > 0) {
        amg_setup::set_precision_checked(*hierarchy->matrices[level - 1], precision, checks, level,
                                         "matrix");
      }
    }
    hierarchy->levels.push_back(std::move(arrays));
    current = hierarchy->matrices.back().get();
  }
  if (precision != Precision::float64 && !hierarchy->matrices.empty()) {
    PhaseTimer timer(phase_log_.get(), "rounding");
    amg_setup::set_precision_checked(*hierarchy->matrices.back(), precision, phase_log_->checks,
                                     hierarchy->matrices.size(), "matrix");  // the coarsest
  }
  if (current->num_rows() > DenseDirectSolver::kMaxRows &&
      dynamic_cast<const DenseDirectSolver*>(coarse.get()) != nullptr) {
    throw InvalidInput("AMG: coarsening stopped at level " +
                       std::to_string(hierarchy->levels.size()) + " with " +
                       std::to_string(current->num_rows()) +
                       " rows (max_levels reached, or the splitting kept more than 90% of the "
                       "rows: lower strength_threshold), more than the dense coarse solver's "
                       "limit of " +
                       std::to_string(DenseDirectSolver::kMaxRows));
  }
  {
    // The levels' P, R and A_c were formed without their SpMV row-block partitions: built here
    // together, one wait instead of one per matrix.
    PhaseTimer timer(phase_log_.get(), "partitions");
    std::vector<CsrMatrix*> matrices;
    for (const auto& level : hierarchy->levels) {
      matrices.push_back(&level->prolongation);
      matrices.push_back(&level->restriction);
    }
    for (const auto& matrix : hierarchy->matrices) matrices.push_back(matrix.get());
    CsrMatrix::build_partitions(matrices);
  }
  level_inverse_diagonals_.resize(hierarchy->levels.size());
  for (std::size_t level = 1; level < hierarchy->levels.size(); ++level) {
    amg_setup::first_bad_diagonal(
        *hierarchy->matrices[level - 1],
        phase_log_->checks.add([level](index_t row) { throw_bad_diagonal(row, level); }),
        &level_inverse_diagonals_[level]);
  }
  hierarchy_ = std::move(hierarchy);
  install(A0, coarse, false);
}

void AmgPreconditioner::install(const CsrMatrix& A, std::unique_ptr<Preconditioner>& coarse,
                                bool update) {
  level0_ = &A;
  std::vector<std::unique_ptr<MultigridLevel>> levels;
  std::vector<Smoother*> smoothers;
  report_.levels.clear();
  {
    PhaseTimer timer(phase_log_.get(), "smoothers");
    // Every smoother's work is queued before the first result is read (Smoother::begin_setup);
    // then the levels' deferred checks and the smoothers' results are read, one wait in all.
    // The Chebyshev smoothers' Lanczos steps of all levels run in one launch (LanczosBatch).
    detail::LanczosBatch lanczos_batch;
    for (std::size_t l = 0; l < hierarchy_->levels.size(); ++l) {
      const CsrMatrix& Al = level_matrix(l);  // its diagonal checked by build / update_levels
      std::unique_ptr<Smoother> pre = make_smoother(false);
      if (auto* chebyshev = dynamic_cast<ChebyshevSmoother*>(pre.get())) {
        chebyshev->set_lanczos_batch(&lanczos_batch);
      }
      if (l < level_inverse_diagonals_.size() &&
          level_inverse_diagonals_[l].size() == static_cast<std::size_t>(Al.num_rows())) {
        // D^-1 of the diagonal check, whose failure the deferred checks report first.
        pre->begin_setup_with_diagonal(Al, std::move(level_inverse_diagonals_[l]));
      } else {
        pre->begin_setup(Al);
      }
      smoothers.push_back(pre.get());
      std::unique_ptr<Smoother> post;
      if (parameters_.smoother == SmootherKind::gauss_seidel ||
          parameters_.smoother == SmootherKind::hybrid_gauss_seidel ||
          parameters_.smoother == SmootherKind::multicolor_gauss_seidel) {
        post = make_smoother(true);
        post->begin_setup(Al);
        smoothers.push_back(post.get());
      }
      const AmgLevelArrays& arrays = *hierarchy_->levels[l];
      levels.push_back(std::make_unique<OperatorLevel>(Al, arrays.restriction, arrays.prolongation,
                                                       std::move(pre), std::move(post)));
      report_.levels.push_back({Al.num_rows(), Al.nnz()});
    }
    level_inverse_diagonals_.clear();
    lanczos_batch.launch();
    if (phase_log_) phase_log_->checks.resolve();
    for (Smoother* smoother : smoothers) smoother->finish_setup();
  }
  const CsrMatrix& coarsest = level_matrix(hierarchy_->levels.size());
  report_.levels.push_back({coarsest.num_rows(), coarsest.nnz()});
  {
    PhaseTimer timer(phase_log_.get(), "coarse_solver");
    if (update) {
      coarse->update_values(coarsest);
    } else {
      coarse->setup(coarsest);
    }
  }
  double rows = 0.0, nonzeros = 0.0;
  for (const HierarchyReport::Level& level : report_.levels) {
    rows += level.rows;
    nonzeros += static_cast<double>(level.nonzeros);
  }
  report_.grid_complexity = A.num_rows() > 0 ? rows / A.num_rows() : 1.0;
  report_.operator_complexity = A.nnz() > 0 ? nonzeros / static_cast<double>(A.nnz()) : 1.0;
  report_.smoother = make_smoother(false)->name();
  if (parameters_.smoother == SmootherKind::gauss_seidel) {
    report_.smoother = "gauss_seidel (forward before, backward after the coarse correction)";
  }
  if (parameters_.smoother == SmootherKind::hybrid_gauss_seidel) {
    report_.smoother = "hybrid_gauss_seidel (blocks of " +
                       std::to_string(parameters_.hybrid_block_rows) +
                       " rows, l1; forward before, backward after the coarse correction)";
  }
  if (parameters_.smoother == SmootherKind::multicolor_gauss_seidel) {
    report_.smoother =
        "multicolor_gauss_seidel (Jones-Plassmann-Luby colors per level; forward before, "
        "backward after the coarse correction)";
  }
  report_.hierarchy_precision = parameters_.hierarchy_precision;
  report_.coarse_solver = coarse->name();
  if (const auto* dense = dynamic_cast<const DenseDirectSolver*>(coarse.get())) {
    report_.coarse_solver += " (" + dense->factorization() + ")";
  }
  set_hierarchy(std::move(levels), coarsest, std::move(coarse));
  report_.memory_bytes = memory_bytes();
  report_.bytes_per_fine_row =
      A.num_rows() > 0 ? static_cast<double>(report_.memory_bytes) / A.num_rows() : 0.0;
}

void AmgPreconditioner::clear(std::unique_ptr<Preconditioner> coarse) {
  std::unique_ptr<Preconditioner> installed = clear_hierarchy();
  if (!coarse) coarse = std::move(installed);
  hierarchy_.reset();
  level0_ = nullptr;
  report_ = HierarchyReport{};
  level_inverse_diagonals_.clear();
  phase_log_.reset();
  if (user_coarse_) user_coarse_solver_ = std::move(coarse);
}

std::int64_t AmgPreconditioner::memory_bytes() const {
  if (!hierarchy_) return 0;
  const auto doubles = [](index_t n) { return static_cast<std::int64_t>(sizeof(double)) * n; };
  std::int64_t bytes = 0;
  const int smoothers = smoother_vectors(parameters_.smoother);
  for (std::size_t l = 0; l < hierarchy_->levels.size(); ++l) {
    const AmgLevelArrays& a = *hierarchy_->levels[l];
    bytes += csr_bytes(a.prolongation) + csr_bytes(a.restriction) + array_bytes(a.splitting) +
             array_bytes(a.coarse_points) + array_bytes(a.product.row_ptr) +
             array_bytes(a.product.col_idx) + array_bytes(a.product.values) +
             array_bytes(a.strength.row_ptr) + array_bytes(a.strength.col_idx);
    if (a.multipass) {
      const MultipassArrays& m = *a.multipass;
      bytes += array_bytes(m.pass) + array_bytes(m.order) + array_bytes(m.offsets) +
               array_bytes(m.weights.row_ptr) + array_bytes(m.weights.col_idx);
    }
    if (a.matrix_product) {
      const MatrixProductArrays& m = *a.matrix_product;
      bytes += array_bytes(m.coarse_index) + array_bytes(m.left.row_ptr) +
               array_bytes(m.right.row_ptr) + array_bytes(m.product.row_ptr);
    }
    // The smoothers' vectors, and the cycle's (r on the finest; b, x, r below it).
    bytes += doubles(level_matrix(l).num_rows()) * (smoothers + (l == 0 ? 1 : 3));
    if (parameters_.smoother == SmootherKind::multicolor_gauss_seidel) {
      bytes += 2 * csr_bytes(level_matrix(l));  // each smoother's color-ordered copy
    }
  }
  for (const auto& matrix : hierarchy_->matrices) bytes += csr_bytes(*matrix);
  const index_t coarsest = level_matrix(hierarchy_->levels.size()).num_rows();
  bytes += doubles(coarsest) * 4;  // b, x, r, z of the coarsest level
  if (dynamic_cast<const DenseDirectSolver*>(coarse_solver()) != nullptr) {
    bytes += doubles(coarsest) * coarsest;
  }
  return bytes;
}

void AmgPreconditioner::update_values(const LinearOperator& A) {
  const CsrMatrix& A0 = detail::require_csr(A, "AMG update_values");
  if (!hierarchy_ || coarse_solver() == nullptr) {
    throw InvalidInput("AMG update_values: setup(A) was not called");
  }
  if (A0.num_rows() != level0_->num_rows() || A0.nnz() != level0_->nnz()) {
    throw InvalidInput("AMG update_values: A has " + std::to_string(A0.num_rows()) + " rows and " +
                       std::to_string(A0.nnz()) + " entries, the hierarchy was built for " +
                       std::to_string(level0_->num_rows()) + " and " +
                       std::to_string(level0_->nnz()) + ": call setup");
  }
  std::unique_ptr<Preconditioner> coarse;
  try {
    level0_ = &A0;
    phase_log_ = std::make_unique<PhaseLog>(A0.backend());
    update_levels();
    coarse = release_coarse_solver();
    install(A0, coarse, true);
    phase_log_->resolve(report_);
    phase_log_.reset();
  } catch (const std::bad_alloc&) {
    clear(std::move(coarse));
    throw OutOfMemory(0, 0, "host (AMG update_values)");
  } catch (...) {
    clear(std::move(coarse));
    throw;
  }
}

void AmgPreconditioner::update_levels() {
  // The double values of level l's matrix when it stores float32: computed by level l - 1's
  // Galerkin product, kept until level l is rebuilt (as in setup).
  Array<double> level_values;
  level_inverse_diagonals_.clear();
  level_inverse_diagonals_.resize(hierarchy_->levels.size());
  for (std::size_t l = 0; l < hierarchy_->levels.size(); ++l) {
    AmgLevelArrays& arrays = *hierarchy_->levels[l];
    const CsrMatrix& Al = level_matrix(l);
    const Backend& backend = Al.backend();
    amg_setup::first_bad_diagonal(
        Al, phase_log_->checks.add([l](index_t row) { throw_bad_diagonal(row, l); }),
        &level_inverse_diagonals_[l]);
    const kernels::sparse_setup::MatrixView a =
        Al.precision() == Precision::float64
            ? detail::matrix_view(Al)
            : kernels::sparse_setup::MatrixView{detail::pattern_view(Al),
                                                level_values.span().data()};
    Array<double> prolongation_values(backend, static_cast<std::size_t>(arrays.prolongation.nnz()));
    if (parameters_.interpolation == Interpolation::tentative) {
      kernels::blas::fill(backend, prolongation_values.span(), 1.0);  // P = T: values fixed
    } else if (parameters_.interpolation == Interpolation::smoothed) {
      PhaseTimer timer(phase_log_.get(), "interpolation");
      prolongation_values =
          amg_setup::smoothed_prolongation_values(backend, a, arrays.splitting, arrays.prolongation,
                                                  parameters_.prolongation_smoothing_factor);
      amg_setup::update_values_checked(arrays.prolongation, prolongation_values, phase_log_->checks,
                                       l, "prolongation");
    } else if (arrays.multipass) {
      PhaseTimer timer(phase_log_.get(), "interpolation");
      prolongation_values = amg_setup::multipass_prolongation_values(backend, a, arrays);
      amg_setup::update_values_checked(arrays.prolongation, prolongation_values, phase_log_->checks,
                                       l, "prolongation");
    } else if (arrays.matrix_product) {
      PhaseTimer timer(phase_log_.get(), "interpolation");
      prolongation_values = amg_setup::mm_extended_prolongation_values(backend, a, arrays);
      amg_setup::update_values_checked(arrays.prolongation, prolongation_values, phase_log_->checks,
                                       l, "prolongation");
    } else {
      PhaseTimer timer(phase_log_.get(), "interpolation");
      kernels::amg::interpolation_values(
          backend, a, arrays.strength.pattern(), arrays.splitting.span(),
          arrays.coarse_points.span(), arrays.interpolation,
          detail::pattern_view(arrays.prolongation), prolongation_values.span().data());
      amg_setup::update_values_checked(arrays.prolongation, prolongation_values, phase_log_->checks,
                                       l, "prolongation");
    }
    PhaseTimer timer(phase_log_.get(), "galerkin_product");
    level_values = amg_setup::galerkin_product_values(
        backend, a, prolongation_values, arrays, *hierarchy_->matrices[l], phase_log_->checks, l);
  }
}

const CsrMatrix& AmgPreconditioner::prolongation(std::size_t l) const {
  return hierarchy_->levels.at(l)->prolongation;
}

const CsrMatrix& AmgPreconditioner::restriction(std::size_t l) const {
  return hierarchy_->levels.at(l)->restriction;
}

const CsrMatrix& AmgPreconditioner::level_matrix(std::size_t l) const {
  if (!hierarchy_ || level0_ == nullptr) throw InvalidInput("AMG: setup(A) was not called");
  return l == 0 ? *level0_ : *hierarchy_->matrices.at(l - 1);
}

std::vector<index_t> AmgPreconditioner::splitting(std::size_t l) const {
  return hierarchy_->levels.at(l)->splitting.to_host();
}

std::string HierarchyReport::to_text() const {
  std::string text = "algebraic multigrid hierarchy\n  level        rows      nonzeros  per row\n";
  char line[160];
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const double per_row = levels[l].rows > 0 ? double(levels[l].nonzeros) / levels[l].rows : 0.0;
    std::snprintf(line, sizeof line, "  %5zu %11d %13lld %8.1f\n", l, levels[l].rows,
                  static_cast<long long>(levels[l].nonzeros), per_row);
    text += line;
  }
  std::snprintf(line, sizeof line, "  operator complexity %.3f, grid complexity %.3f\n",
                operator_complexity, grid_complexity);
  text += line;
  std::snprintf(line, sizeof line, "  memory %.1f MiB, %.0f bytes per fine row\n",
                static_cast<double>(memory_bytes) / (1024.0 * 1024.0), bytes_per_fine_row);
  text += line;
  if (hierarchy_precision == Precision::float64) {
    text += "  values of P, R and A_1.. float64\n";
  } else {
    text += "  values of P, R and A_1.. " + std::string(to_string(hierarchy_precision)) +
            " (A_0, vectors and arithmetic float64)\n";
  }
  text += "  smoother " + smoother + "; coarse solver " + coarse_solver + "\n  setup:";
  for (const Phase& phase : phases) {
    std::snprintf(line, sizeof line, " %s %.3f s,", phase.name.c_str(), phase.seconds);
    text += line;
  }
  if (!phases.empty()) text.pop_back();
  return text + "\n";
}

}  // namespace kryflow
