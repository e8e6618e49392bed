// The multigrid cycle (V, W, F) as a preconditioner, over any hierarchy of MultigridLevels.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kryflow/multigrid/multigrid_level.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"

namespace kryflow {

/// The cycle shape (Trottenberg, Oosterlee, Schüller, "Multigrid", 2001, sec. 2.4): V visits
/// each coarser level once, W twice (once on the level above the coarsest, which is solved),
/// F a coarse F-cycle followed by a coarse V-cycle.
enum class CycleType { v, w, f };
/// "v", "w", "f"; throws ConfigError (path "cycle") otherwise.
CycleType parse_cycle_type(const std::string& name);
const char* to_string(CycleType cycle);

/// Where a cycle spends its time: one component on one level (Multigrid::profile_cycle).
struct CycleComponentTime {
  /// 0 the finest level ... num_levels() - 1 for the smoothed levels; num_levels() the
  /// coarsest, whose only component is coarse_solve.
  std::size_t level = 0;
  /// On a smoothed level, in cycle order: "pre_smoothing" (the pre_sweeps smoother
  /// applications), "residual" (r = b - A_l x, one apply of the level operator), "restriction",
  /// "prolongation" (with the addition to x), "post_smoothing"; on the coarsest,
  /// "coarse_solve" (the coarse solver's apply, with the residual and the update of x when the
  /// cycle visits the coarsest level from a nonzero guess).
  std::string component;
  /// Seconds per cycle, >= 0 and finite: the median over the profiled cycles of the time this
  /// component took in each (summed over its visits when a W- or F-cycle visits the level more
  /// than once).
  double seconds = 0.0;
};

/// Multigrid as a preconditioner: apply(r, z) runs one cycle for A z = r from z = 0, which is a
/// fixed linear operator (symmetric when the smoothers are adjoint and the restriction is the
/// prolongation's transpose, so PCG may use it). The cycle is the Parallel Toolbox's sequential
/// multigrid (Liebmann 2016) generalized to W and F: pre-smoothing, residual, restriction,
/// coarse correction, prolongation, post-smoothing; the coarsest level is solved by any
/// Preconditioner (a dense factorization, or a few sweeps of anything else).
///
/// Subclasses build the hierarchy in setup(A) (AmgPreconditioner) and hand it over with
/// set_hierarchy, which allocates every work vector: a cycle allocates nothing. One object runs
/// one cycle at a time. Standalone use: Richardson iteration with this preconditioner
/// (x <- x + M^-1 (b - A x), one cycle per iteration), or cycle(b, x, false).
class Multigrid : public Preconditioner {
 public:
  struct Parameters {
    CycleType cycle = CycleType::v;
    int pre_sweeps = 1;   ///< >= 0 smoother applications before the coarse correction
    int post_sweeps = 1;  ///< >= 0 after it
  };
  /// Throws ConfigError when a sweep count is negative.
  explicit Multigrid(Parameters parameters);
  ~Multigrid() override;

  index_t num_rows() const override;
  index_t num_cols() const override { return num_rows(); }
  const Backend& backend() const override;
  /// z = one cycle for A z = r from z = 0. r and z have n entries on backend(), distinct.
  /// Throws InvalidInput before setup, DimensionMismatch or InvalidInput for wrong vectors.
  void apply(const Vector& r, Vector& z) const override;
  using Preconditioner::apply;
  /// One cycle improving x for A x = b (x not read when x_is_zero). Errors as apply.
  void cycle(const Vector& b, Vector& x, bool x_is_zero) const;
  /// The time per component of apply's cycle: runs `cycles` cycles z = M^-1 b from z = 0 into
  /// a vector of its own (n entries, allocated here), with a mark on the backend's queue
  /// (kernels::QueueClock: the steady clock on the host backends, a timing event on cuda)
  /// before and after every component on every level, and waits for the backend once at the
  /// end. Returns 5 num_levels() + 1 entries, level by level from the finest, each level's
  /// components in cycle order (CycleComponentTime). The cycles are launched, not replayed from
  /// a recording, and the marks separate the components, so on a device they may take longer
  /// than a cycle inside a solve that records it. The cycles write only work vectors (the
  /// hierarchy's, the smoothers', the coarse solver's), which a cycle overwrites before it reads
  /// them, so apply's results are the same before and after.
  /// `cycles` >= 1 (5 is enough for a median); b has n entries on backend(). Throws InvalidInput
  /// before setup or when cycles < 1, DimensionMismatch or InvalidInput for a wrong b, BackendError
  /// when queued device work failed.
  std::vector<CycleComponentTime> profile_cycle(const Vector& b, int cycles) const;
  /// True after setup when every level (MultigridLevel::supports_recording), the coarsest
  /// operator and the coarse solver support recording: a cycle is then a fixed sequence of
  /// kernels with no host logic, which a Krylov solver may record once and replay.
  bool supports_recording() const override;
  /// True: a cycle launches tens of small kernels on the coarse levels, whose launch gaps a
  /// replayed recording removes (LinearOperator::prefers_recording).
  bool prefers_recording() const override { return true; }

  const Parameters& parameters() const noexcept { return parameters_; }
  /// Levels with smoothers and transfers (the coarsest level is not one of them).
  std::size_t num_levels() const noexcept { return levels_.size(); }
  const MultigridLevel& level(std::size_t l) const { return *levels_.at(l); }
  /// The solver of the coarsest level (null before setup).
  const Preconditioner* coarse_solver() const noexcept { return coarse_solver_.get(); }

 protected:
  /// Installs a hierarchy: levels[0] is the finest (its operator is the A of setup), level l's
  /// coarse_rows() equals level l + 1's rows, and `coarse_operator` (not owned, outliving the
  /// hierarchy) is the coarsest operator, which coarse_solver has already been set up for.
  /// Allocates the work vectors of every level. Throws DimensionMismatch when sizes disagree,
  /// OutOfMemory when the work vectors do not fit; then nothing changes and coarse_solver
  /// stays with the caller.
  void set_hierarchy(std::vector<std::unique_ptr<MultigridLevel>> levels,
                     const LinearOperator& coarse_operator,
                     std::unique_ptr<Preconditioner>&& coarse_solver);
  /// Takes the coarse solver back (null before set_hierarchy), e.g. to reuse it in a new
  /// hierarchy; the hierarchy cannot cycle until set_hierarchy is called again.
  std::unique_ptr<Preconditioner> release_coarse_solver() { return std::move(coarse_solver_); }
  /// Drops the levels, the coarse operator and the work vectors, and returns the coarse solver
  /// (null if none): the state before the first set_hierarchy (apply throws InvalidInput).
  std::unique_ptr<Preconditioner> clear_hierarchy();

 private:
  struct Work {
    Vector b, x, r, z;  // right-hand side and solution (coarser levels), residual, coarse work
  };
  class CycleTimer;  // the marks of profile_cycle (multigrid.cpp)
  /// One visit of level l; `timer` (null outside profile_cycle) marks its components.
  void visit(std::size_t l, const Vector& b, Vector& x, bool x_is_zero, CycleType type,
             CycleTimer* timer) const;
  void coarse_solve(const Vector& b, Vector& x, bool x_is_zero) const;
  void check_vectors(const Vector& b, const Vector& x, const char* who) const;

  Parameters parameters_;
  std::vector<std::unique_ptr<MultigridLevel>> levels_;
  const LinearOperator* coarse_operator_ = nullptr;
  std::unique_ptr<Preconditioner> coarse_solver_;
  mutable std::vector<Work> work_;  // one per level, the coarsest included
};

}  // namespace kryflow
