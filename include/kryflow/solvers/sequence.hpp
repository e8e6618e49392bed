// Sequences of systems A_k x_k = b_k with one pattern and changing values (the time steps of a
// CFD run): the preconditioner kept, reused or rebuilt by a policy, and rebuilt on a host thread
// while the device solves.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/vector.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"
#include "kryflow/solvers/krylov_solver.hpp"

namespace kryflow {

/// When a sequence rebuilds its preconditioner. A rebuild is due before system k when the
/// current preconditioner was built from the values of system k - `rebuild_every` or earlier
/// (its age; a host rebuild swapped in is as old as the system it started from), or when the
/// last solve took more than `iteration_growth` times the iterations of the first solve with it.
/// With neither set the first preconditioner serves the whole sequence.
struct ReusePolicy {
  /// k >= 1: a rebuild every k systems (1: every system); 0: no schedule.
  int rebuild_every = 0;
  /// g > 1: a rebuild when the iterations grew by more than the factor g; 0: off.
  double iteration_growth = 0.0;
  /// true: a due rebuild of a preconditioner with a host factorization (AINV) runs on a host
  /// thread from the values of the system that asked for it, while the device keeps solving
  /// with the current one; the result is swapped in before the first solve after it finished
  /// (OpenFOAM's GPU AINV, seed 004). Preconditioners without one (AMG's value-only re-setup,
  /// Jacobi) rebuild synchronously. false (deterministic): every rebuild happens before the
  /// solve that asked for it, so a run reproduces bit for bit.
  bool asynchronous = false;

  /// "never", "always" (every:1), "every:K", "growth:G" or "every:K,growth:G". Throws
  /// ConfigError naming `reuse` for anything else.
  static ReusePolicy parse(const std::string& text);
  /// The text parse reads ("every:5,growth:1.5").
  std::string to_string() const;
};

/// What happened to the preconditioner before a solve of the sequence.
enum class PreconditionerAction {
  built,       ///< the first system: setup(A)
  rebuilt,     ///< a due rebuild, synchronous (update_values(A): same pattern)
  reused,      ///< the previous preconditioner, unchanged
  swapped_in,  ///< a preconditioner built on the host thread was installed
};
const char* to_string(PreconditionerAction action);

/// One system of a sequence. Times in seconds from the start of the sequence (the timeline).
struct SequenceStep {
  int index = 0;  ///< 0-based position in the sequence
  PreconditionerAction action = PreconditionerAction::reused;
  bool rebuild_started = false;  ///< a host rebuild began from this system's values
  SolveReport report;
  /// Time the main thread spent on the preconditioner before the solve (setup, value-only
  /// re-setup, the copy of the values for the host thread, or installing its result): the
  /// device waits for the host during it.
  double preconditioner_seconds = 0.0;
  double solve_begin = 0.0, solve_end = 0.0;
};

/// One run of the host builder: from the values of system `system`.
struct BuilderRun {
  int system = 0;
  double begin = 0.0, end = 0.0;  ///< seconds from the start of the sequence; end 0 while running
  bool installed = false;         ///< swapped in (false: superseded, stopped or failed)
};

/// Solves a sequence of systems with one Krylov solver and one preconditioner under a
/// ReusePolicy. The caller updates the matrix's values in place between systems
/// (CsrMatrix::update_values: same pattern) and passes x with the initial guess, usually the
/// previous solution.
///
/// The asynchronous rebuild runs Preconditioner::factor_on_host on one host thread (std::jthread)
/// from a host copy of the values; solve() only checks whether it finished and never waits for
/// it. finish() (and the destructor) request it to stop and join it, so no thread is left
/// competing for the CPU after the sequence. A builder error (e.g. a zero pivot the values
/// caused) is thrown by the solve() after it.
///
/// A reused preconditioner keeps what its setup computed; one that refers to A itself (AMG's
/// finest level, its smoothers' operator) applies A's new values where it refers to them and
/// its old data elsewhere (the smoothers' diagonal and eigenvalue estimate), which a large drift
/// can break: rebuild such preconditioners often (AMG's value-only re-setup is cheap). AINV and
/// Jacobi keep copies and stay consistent preconditioners of the old matrix.
///
/// The solver and the preconditioner are borrowed and must outlive this object; `M` is set up by
/// the first solve. Not thread-safe: one caller thread.
class SequenceSolver {
 public:
  /// Throws ConfigError for rebuild_every < 0 or iteration_growth in (0, 1].
  SequenceSolver(const KrylovSolver& solver, Preconditioner& M, ReusePolicy policy);
  ~SequenceSolver();
  SequenceSolver(const SequenceSolver&) = delete;
  SequenceSolver& operator=(const SequenceSolver&) = delete;

  /// The next system: A (square; the first system's pattern and size), b and x on A's
  /// backend, x the initial guess on entry and the solution on return. Throws
  /// DimensionMismatch for another size, InvalidInput after finish(), and the setup's or the
  /// builder's errors.
  SequenceStep solve(const CsrMatrix& A, const Vector& b, Vector& x);
  /// Ends the sequence: stops and joins the builder thread (its result is dropped). Idempotent.
  void finish();
  /// True while a host rebuild is in flight.
  bool builder_running() const;
  /// Every host rebuild so far, in order.
  const std::vector<BuilderRun>& builder_runs() const;
  const std::vector<SequenceStep>& steps() const;

 private:
  struct Builder;
  const KrylovSolver& solver_;
  Preconditioner& M_;
  ReusePolicy policy_;
  std::unique_ptr<Builder> builder_;
  std::vector<SequenceStep> steps_;
  int built_from_ = 0;           // the system whose values built the current preconditioner
  int baseline_iterations_ = 0;  // iterations of the first solve after it
  bool finished_ = false;
  HostCsrMatrix host_pattern_;  // A's pattern on the host, copied once for the host rebuilds
  index_t n_ = -1;
  std::int64_t nnz_ = -1;
};

}  // namespace kryflow
