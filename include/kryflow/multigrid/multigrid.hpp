// The multigrid cycle (V, W, F) as a preconditioner, over any hierarchy of MultigridLevels.
#pragma once

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
  void visit(std::size_t l, const Vector& b, Vector& x, bool x_is_zero, CycleType type) const;
  void coarse_solve(const Vector& b, Vector& x, bool x_is_zero) const;
  void check_vectors(const Vector& b, const Vector& x, const char* who) const;

  Parameters parameters_;
  std::vector<std::unique_ptr<MultigridLevel>> levels_;
  const LinearOperator* coarse_operator_ = nullptr;
  std::unique_ptr<Preconditioner> coarse_solver_;
  mutable std::vector<Work> work_;  // one per level, the coarsest included
};

}  // namespace kryflow
