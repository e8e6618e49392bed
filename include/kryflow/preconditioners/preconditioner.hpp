// Preconditioners z = M^-1 r as linear operators with a setup phase.
#pragma once

#include <memory>
#include <stop_token>
#include <string>

#include "kryflow/linalg/host_csr.hpp"
#include "kryflow/linalg/linear_operator.hpp"

namespace kryflow {

/// The host part of a preconditioner's setup, computed from A's entries alone and installed
/// later (Preconditioner::factor_on_host, install). Opaque outside the preconditioner that made
/// it.
class HostFactorization {
 public:
  virtual ~HostFactorization() = default;
  /// Seconds the host computation took.
  double seconds = 0.0;
};

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
  /// One step of a preconditioned polynomial smoother (Saad, Iterative Methods, 2nd ed.,
  /// Algorithm 12.1 with M): d = alpha M^-1 r + beta d (d not read when beta == 0), then
  /// x = d + x (x = d when x_is_zero: x not read). r, d, x and the work vector z (overwritten,
  /// or left untouched by a fused override) have the preconditioner's rows, on its backend, and
  /// are four distinct vectors (InvalidInput from the fused override otherwise).
  /// Default: apply(r, z), axpby(alpha, z, beta, d), then axpby(1, d, 1, x) (or copy(d, x));
  /// an override fuses the updates into its last pass with the same bits
  /// (SchwarzPreconditioner). Throws as apply.
  virtual void apply_update(const Vector& r, double alpha, double beta, Vector& d, Vector& x,
                            bool x_is_zero, Vector& z) const;
  /// What setup built, as text for reports (multigrid: levels, complexities, setup phases);
  /// empty for preconditioners with nothing to tell. `kryflow solve` prints it.
  virtual std::string summary() const { return {}; }

  /// True when setup(A) is install(factor_on_host(A's entries), A's backend): the host part can
  /// then run on another thread while this preconditioner keeps being applied (the
  /// asynchronous rebuild of SequenceSolver; OpenFOAM's GPU AINV, seed 004). Default false.
  virtual bool has_host_factorization() const { return false; }
  /// The host part of setup from A's entries. Const and thread-safe: it reads only its
  /// arguments and the parameters, so it may run on any thread while this object is applied
  /// on another. Returns null when `stop` is requested before it ends. Throws setup's errors;
  /// NotSupported unless has_host_factorization().
  virtual std::unique_ptr<HostFactorization> factor_on_host(const HostCsrMatrix& A,
                                                            std::stop_token stop) const;
  /// Replaces M by the preconditioner of `factorization` (factor_on_host of a preconditioner of
  /// the same type and parameters) on `backend`, as setup would. Throws InvalidInput for a null
  /// factorization or one of another kind; NotSupported unless has_host_factorization().
  virtual void install(std::unique_ptr<HostFactorization> factorization, const Backend& backend);
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
