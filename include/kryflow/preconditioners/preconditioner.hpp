// Preconditioners z = M^-1 r as linear operators with a setup phase.
#pragma once

#include <memory>
#include <string>

#include "kryflow/linalg/linear_operator.hpp"

namespace kryflow {

/// A preconditioner M^-1: `apply(r, z)` computes z = M^-1 r. `setup(A)` must precede the first
/// apply; `update_values(A)` redoes the numerical part when only A's values changed.
class Preconditioner : public LinearOperator {
 public:
  /// Builds M from A (A square, on the backend the preconditioner will run on).
  virtual void setup(const LinearOperator& A) = 0;
  /// Refreshes M after A's values (not its pattern) changed. Default: setup(A) again.
  virtual void update_values(const LinearOperator& A) { setup(A); }
  /// Short name for reports ("jacobi", "identity").
  virtual std::string name() const = 0;
  /// For point-Jacobi-like preconditioners: the vector d with M^-1 = diag(d), which lets PCG fuse
  /// the preconditioner into its vector updates. Null otherwise.
  virtual const Vector* inverse_diagonal() const { return nullptr; }
  /// What setup built, as text for reports (multigrid: levels, complexities, setup phases);
  /// empty for preconditioners with nothing to tell. `kryflow solve` prints it.
  virtual std::string summary() const { return {}; }
};

/// M = I: z = r. Used instead of a null preconditioner.
class IdentityPreconditioner final : public Preconditioner {
 public:
  IdentityPreconditioner() = default;
  void setup(const LinearOperator& A) override;
  std::string name() const override { return "identity"; }
  index_t num_rows() const override { return n_; }
  index_t num_cols() const override { return n_; }
  const Backend& backend() const override { return backend_; }
  void apply(const Vector& r, Vector& z) const override;
  bool supports_recording() const override { return true; }

 private:
  index_t n_ = 0;
  Backend backend_ = Backend::reference();
};

}  // namespace kryflow
