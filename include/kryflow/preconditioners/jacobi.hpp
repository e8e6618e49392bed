// Point-Jacobi (diagonal) preconditioner.
#pragma once

#include <optional>

#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"

namespace kryflow {

/// z = omega * D^-1 r with D = diag(A) (Saad, Iterative Methods, 2nd ed., sec. 10.2).
/// Parameters: `omega` (damping, default 1).
class JacobiPreconditioner final : public Preconditioner {
 public:
  struct Parameters {
    double omega = 1.0;  ///< damping factor, > 0
  };
  JacobiPreconditioner();
  /// Throws ConfigError when omega <= 0.
  explicit JacobiPreconditioner(Parameters parameters);

  /// A is any square operator that provides its diagonal (LinearOperator::diagonal: CsrMatrix,
  /// SellMatrix, BsrMatrix). Throws InvalidInput naming the first (1-based) row whose diagonal
  /// is zero, missing or not finite; DimensionMismatch when A is not square; NotSupported when
  /// A does not provide its diagonal.
  void setup(const LinearOperator& A) override;
  std::string name() const override { return "jacobi"; }
  index_t num_rows() const override { return static_cast<index_t>(inverse_diagonal_.size()); }
  index_t num_cols() const override { return num_rows(); }
  const Backend& backend() const override { return inverse_diagonal_.backend(); }
  void apply(const Vector& r, Vector& z) const override;
  bool supports_recording() const override { return true; }
  const Vector* inverse_diagonal() const override { return &inverse_diagonal_; }

 private:
  Parameters parameters_;
  Vector inverse_diagonal_;
};

}  // namespace kryflow
