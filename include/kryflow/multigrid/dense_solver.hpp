// A direct solver for the small coarsest level of a multigrid hierarchy.
#pragma once

#include "kryflow/core/array.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"

namespace kryflow {

/// z = A^-1 r by the explicit inverse of a small matrix, formed at setup on A's backend
/// (kernels/dense): Cholesky when A is symmetric positive definite, Cholesky of -A when it is
/// negative definite (tried when a_11 < 0; the sign convention of finite-volume pressure
/// matrices); for other symmetric A an
/// eigendecomposition whose eigenvalues at rounding level (|lambda| <= 1000 n eps max|lambda|)
/// count as zero, so a singular symmetric A, such as a coarse pure-Neumann pressure matrix with
/// its constant null space, is applied as its pseudo-inverse (symmetric, so PCG may use it on
/// consistent systems); LU with partial pivoting for nonsymmetric A (Golub and Van Loan, Matrix
/// Computations, 4th ed., Algorithms 4.2.2, 8.3.3 and 3.4.1). LAPACK on the reference and cpu
/// backends, cuSOLVER on cuda. For the coarsest level of multigrid: setup densifies a
/// CsrMatrix on its backend (another operator is applied to the n unit vectors), factors it and
/// solves against the identity (a float32 CsrMatrix's values are widened to double on the
/// backend, exactly); apply is one dense matrix-vector product on the backend (one
/// kernel on a device, no host synchronization). Memory: n^2 doubles on the backend, twice that
/// and the factorization's workspace during setup; setup takes O(n^3) operations (seconds for a
/// few thousand rows on the host). On cuda the inverse differs from the host backends' by
/// rounding (kernels/dense/dense.hpp).
class DenseDirectSolver final : public Preconditioner {
 public:
  /// The largest n setup accepts (its n^2 doubles take 512 MiB).
  static constexpr index_t kMaxRows = 8192;
  /// Throws DimensionMismatch when A is not square, InvalidInput when n > kMaxRows, when an
  /// entry is not finite, when a nonsymmetric A is singular (the message names the zero pivot
  /// of LU) or the eigendecomposition does not converge; OutOfMemory when the n^2 doubles do
  /// not fit on the backend. On an error the solver keeps its previous state.
  void setup(const LinearOperator& A) override;
  std::string name() const override { return "dense"; }
  index_t num_rows() const override { return n_; }
  index_t num_cols() const override { return n_; }
  const Backend& backend() const override { return backend_; }
  /// z = A^-1 r (r and z on backend(), n entries each, distinct).
  void apply(const Vector& r, Vector& z) const override;
  using Preconditioner::apply;
  /// True: apply is one dense matrix-vector kernel over the stored inverse.
  bool supports_recording() const override { return true; }
  /// "cholesky", "cholesky of -A", "lu", "eigen" or "eigen, pseudo-inverse over a null space of
  /// dimension k"
  /// (after setup; empty before).
  std::string factorization() const;

 private:
  enum class Method { none, cholesky, cholesky_of_negated, lu, eigen };

  index_t n_ = 0;
  Backend backend_ = Backend::reference();
  Method method_ = Method::none;
  int null_space_dimension_ = 0;
  Array<double> inverse_;  // n x n row-major on backend_
};

}  // namespace kryflow
