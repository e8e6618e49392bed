// A direct solver for the small coarsest level of a multigrid hierarchy.
#pragma once

#include <vector>

#include "kryflow/preconditioners/preconditioner.hpp"

namespace kryflow {

/// z = A^-1 r by a dense factorization on the host (LAPACK): Cholesky (dpotrf) when A is
/// symmetric positive definite; for other symmetric A an eigendecomposition (dsyev) whose
/// eigenvalues at rounding level (|lambda| <= 1000 n eps max|lambda|) count as zero, so a
/// singular symmetric A, such as a coarse pure-Neumann pressure matrix with its constant null
/// space, is applied as its pseudo-inverse (symmetric, so PCG may use it on consistent
/// systems); LU with partial pivoting (dgetrf) for nonsymmetric A (Golub and Van Loan, Matrix
/// Computations, 4th ed., Algorithms 4.2.2, 8.3.3 and 3.4.1). For the coarsest level of
/// multigrid, whatever the backend: setup copies the n x n matrix to the host explicitly (from a
/// CsrMatrix's arrays, or for another operator by applying it to the n unit vectors), and every
/// apply copies r to the host and z back, one round trip. Memory: n^2 + 3n doubles on the host;
/// setup takes O(n^3) operations (seconds for a few thousand rows).
class DenseDirectSolver final : public Preconditioner {
 public:
  /// The largest n setup accepts (its n^2 doubles take 512 MiB).
  static constexpr index_t kMaxRows = 8192;
  /// Throws DimensionMismatch when A is not square, InvalidInput when n > kMaxRows, when an
  /// entry is not finite, or when a nonsymmetric A is singular (the message names the zero
  /// pivot of LU).
  void setup(const LinearOperator& A) override;
  std::string name() const override { return "dense"; }
  index_t num_rows() const override { return n_; }
  index_t num_cols() const override { return n_; }
  const Backend& backend() const override { return backend_; }
  void apply(const Vector& r, Vector& z) const override;
  using Preconditioner::apply;
  /// "cholesky", "lu", "eigen" or "eigen, pseudo-inverse over a null space of dimension k"
  /// (after setup; empty before).
  std::string factorization() const;

 private:
  enum class Method { cholesky, lu, eigen };
  void factor_lu(int n);
  void factor_eigen(int n);

  index_t n_ = 0;
  Backend backend_ = Backend::reference();
  Method method_ = Method::cholesky;
  std::vector<double> factors_;              // column-major n x n: L, LU, or the eigenvectors
  std::vector<int> pivots_;                  // LU's row interchanges
  std::vector<double> inverse_eigenvalues_;  // 1/lambda, 0 for the null space
  int null_space_dimension_ = 0;
  mutable std::vector<double> rhs_, work_;
};

}  // namespace kryflow
