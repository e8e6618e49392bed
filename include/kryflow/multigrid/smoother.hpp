// The smoother seam of multigrid: algebraic and spectral-element levels share it.
#pragma once

#include <string>

#include "kryflow/linalg/linear_operator.hpp"

namespace kryflow {

/// A smoother S for A x = b: a few cheap iterations that damp the high-frequency error
/// (Trottenberg, Oosterlee, Schüller, "Multigrid", 2001, sec. 2.1). `setup(A)` must precede
/// `smooth`; the smoother keeps a reference to A, which must outlive it (or the next setup).
/// Workspaces are allocated by setup, never by smooth. One object smooths one system at a time.
class Smoother {
 public:
  virtual ~Smoother() = default;
  /// Prepares S for the square operator A (n x n, on the backend smooth runs on). Throws
  /// DimensionMismatch when A is not square, InvalidInput when A lacks what the method needs
  /// (a nonzero diagonal), NotSupported when A's type or backend cannot run it.
  virtual void setup(const LinearOperator& A) = 0;
  /// setup in two phases, for a caller that sets up many smoothers (a multigrid hierarchy):
  /// begin_setup(A) queues the work on A's backend and may leave the results the host needs
  /// (the diagonal check, an eigenvalue estimate) on the device; finish_setup() reads them and
  /// throws what setup would have thrown. Called for every level in turn, the device works
  /// through all levels' setups with one wait for the host instead of one or two per level
  /// (the split-phase pattern of kryflow's reductions). smooth() between the two throws
  /// InvalidInput. Default: begin_setup = setup, finish_setup does nothing.
  virtual void begin_setup(const LinearOperator& A) { setup(A); }
  /// begin_setup given D^-1, the inverse of A's diagonal (n entries on A's backend, formed and
  /// checked by the caller, e.g. a multigrid level that checked A's diagonal): a smoother that
  /// needs D^-1 keeps it instead of a pass over A of its own and does not check it again.
  /// Default: begin_setup(A) (inverse_diagonal unused).
  virtual void begin_setup_with_diagonal(const LinearOperator& A, Vector inverse_diagonal) {
    (void)inverse_diagonal;
    begin_setup(A);
  }
  virtual void finish_setup() {}
  /// Refreshes S after A's values (not its pattern) changed. Default: setup(A).
  virtual void update_values(const LinearOperator& A) { setup(A); }
  /// Improves x for A x = b by one application of the method (its sweeps). b and x have n
  /// entries on A's backend; with x_is_zero the old x is not read (taken as 0), which saves a
  /// product. Throws DimensionMismatch or InvalidInput for vectors of another size or backend.
  virtual void smooth(const Vector& b, Vector& x, bool x_is_zero) const = 0;
  /// "jacobi", "l1_jacobi", "chebyshev", "gauss_seidel" (with its direction).
  virtual std::string name() const = 0;
  /// True when smooth() only queues work on the operator's backend with no host logic that
  /// changes between calls (LinearOperator::supports_recording), so that a cycle may be recorded
  /// as a CUDA graph and replayed. The default is false.
  virtual bool supports_recording() const { return false; }
};

}  // namespace kryflow
