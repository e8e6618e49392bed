// Block Jacobi: the inverses of the diagonal blocks of a BSR matrix.
#pragma once

#include "kryflow/core/array.hpp"
#include "kryflow/core/precision.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"

namespace kryflow {

/// z_I = omega D_I^-1 r_I for every block row I, D_I the B x B diagonal block of A (Saad,
/// Iterative Methods, 2nd ed., sec. 4.1.1: block Jacobi; sec. 10.2). Each D_I is inverted once at
/// setup by LU with partial pivoting (Golub, Van Loan, Matrix Computations, Algorithm 3.4.1) on
/// A's backend, B = 1..8; the inverses take B^2 values per block row, stored in float64 or, with
/// inverse_precision float32, in float (the products are in double either way). A CsrMatrix has
/// 1 x 1 blocks: point Jacobi. Memory: n B values. Parameters: `omega`, `inverse_precision`.
class BlockJacobiPreconditioner final : public Preconditioner {
 public:
  struct Parameters {
    double omega = 1.0;                                ///< damping factor, > 0
    Precision inverse_precision = Precision::float64;  ///< storage of D_I^-1
  };
  BlockJacobiPreconditioner() : BlockJacobiPreconditioner(Parameters{}) {}
  /// Throws ConfigError when omega <= 0.
  explicit BlockJacobiPreconditioner(Parameters parameters);

  /// A: a square BsrMatrix (B <= 8) or CsrMatrix, values in either precision. Throws
  /// InvalidInput naming the first (1-based) block row whose diagonal block is singular, not
  /// stored or not finite; DimensionMismatch when A is not square; NotSupported for another
  /// operator type or B > 8.
  void setup(const LinearOperator& A) override;
  std::string name() const override { return "block_jacobi"; }
  index_t num_rows() const override { return n_; }
  index_t num_cols() const override { return n_; }
  const Backend& backend() const override { return backend_; }
  void apply(const Vector& r, Vector& z) const override;
  bool supports_recording() const override { return true; }
  /// "block Jacobi: <n> blocks of 5 x 5, inverses in float64".
  std::string summary() const override;
  int block_size() const noexcept { return block_size_; }

 private:
  Parameters parameters_;
  index_t n_ = 0;
  int block_size_ = 1;
  Backend backend_ = Backend::reference();
  Array<double> inverse64_;
  Array<float> inverse32_;
};

}  // namespace kryflow
