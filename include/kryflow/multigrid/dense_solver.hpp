// A direct solver for the small coarsest level of a multigrid hierarchy.
#pragma once

#include <vector>

#include "kryflow/preconditioners/preconditioner.hpp"

namespace kryflow {

/// z = A^-1 r by a dense factorization on the host (LAPACK): Cholesky (dpotrf) when A is
/// symmetric positive definite, LU with partial pivoting (dgetrf) otherwise (Golub and Van Loan,
/// Matrix Computations, 4th ed., Algorithms 4.2.2 and 3.4.1). For the coarsest level of
/// multigrid, whatever the backend: setup copies the n x n matrix to the host explicitly (from a
/// CsrMatrix's arrays, or for another operator by applying it to the n unit vectors), and every
/// apply copies r to the host and z back, one round trip. Memory: n^2 + 2n doubles on the host.
class DenseDirectSolver final : public Preconditioner {
 public:
  /// The largest n setup accepts (its n^2 doubles take 512 MiB).
  static constexpr index_t kMaxRows = 8192;
  /// Throws DimensionMismatch when A is not square, InvalidInput when n > kMaxRows, when an
  /// entry is not finite, or when A is singular (the message names the zero pivot of LU).
  void setup(const LinearOperator& A) override;
  std::string name() const override { return "dense"; }
  index_t num_rows() const override { return n_; }
  index_t num_cols() const override { return n_; }
  const Backend& backend() const override { return backend_; }
  void apply(const Vector& r, Vector& z) const override;
  using Preconditioner::apply;
  /// "cholesky" or "lu" (after setup; empty before).
  const std::string& factorization() const noexcept { return factorization_; }

 private:
  index_t n_ = 0;
  Backend backend_ = Backend::reference();
  std::string factorization_;
  std::vector<double> factors_;  // column-major n x n
  std::vector<int> pivots_;      // LU's row interchanges; empty for Cholesky
  mutable std::vector<double> rhs_;
};

}  // namespace kryflow
