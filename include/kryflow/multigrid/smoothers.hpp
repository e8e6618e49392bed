// Smoothers of multigrid levels: damped Jacobi, l1-Jacobi, Chebyshev, Gauss-Seidel and hybrid
// (l1) Gauss-Seidel.
#pragma once

#include <memory>

#include "kryflow/linalg/scalars.hpp"
#include "kryflow/multigrid/smoother.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"

namespace kryflow {

namespace detail {
class LanczosBatch;
}  // namespace detail

class CsrMatrix;

/// Damped Jacobi, the Parallel Toolbox's omega-Jacobi smoother: x <- x + omega D^-1 (b - A x),
/// D = diag(A) (Saad, Iterative Methods, 2nd ed., sec. 4.1; Liebmann 2016). One smooth = one
/// sweep. Works with any operator that provides its diagonal (LinearOperator::diagonal).
/// Memory: two n-vectors.
class JacobiSmoother final : public Smoother {
 public:
  /// Throws ConfigError when omega is not in (0, 2).
  explicit JacobiSmoother(double omega = 2.0 / 3.0);
  /// Throws InvalidInput naming the first (1-based) row whose diagonal is zero, missing or not
  /// finite; DimensionMismatch when A is not square; NotSupported when A lacks its diagonal.
  void setup(const LinearOperator& A) override;
  void smooth(const Vector& b, Vector& x, bool x_is_zero) const override;
  std::string name() const override { return "jacobi"; }
  bool supports_recording() const override { return A_ != nullptr && A_->supports_recording(); }

 private:
  double omega_;
  const LinearOperator* A_ = nullptr;
  Vector scaled_inverse_diagonal_;  // omega / a_ii
  mutable Vector r_;
};

/// l1-Jacobi: x <- x + D_l1^-1 (b - A x) with (D_l1)_ii = s_i sum_j |a_ij|, s_i = -1 where
/// a_ii < 0 and +1 otherwise (Baker, Falgout, Kolev, Yang, "Multigrid smoothers for
/// ultraparallel computing", SIAM J. Sci. Comput. 33, 2011): convergent for every symmetric
/// positive definite A without a damping parameter; with s_i a negative definite A (a
/// finite-volume pressure matrix as assembled) is smoothed as -A is. Needs the
/// entries: A must be a CsrMatrix, its values stored in float64 or float32 (summed in double),
/// on any backend. Memory: two n-vectors.
class L1JacobiSmoother final : public Smoother {
 public:
  /// Throws NotSupported when A is not a CsrMatrix; InvalidInput naming the first (1-based) row
  /// whose l1 norm is zero or not finite; DimensionMismatch when A is not square.
  void setup(const LinearOperator& A) override;
  void smooth(const Vector& b, Vector& x, bool x_is_zero) const override;
  std::string name() const override { return "l1_jacobi"; }
  bool supports_recording() const override { return A_ != nullptr && A_->supports_recording(); }

 private:
  const LinearOperator* A_ = nullptr;
  Vector inverse_l1_;
  mutable Vector r_;
};

/// Chebyshev polynomial smoother of degree k on D^-1 A (Saad, Iterative Methods, 2nd ed.,
/// Algorithm 12.1; Adams, Brezina, Hu, Tuminaro, "Parallel multigrid smoothing: polynomial
/// versus Gauss-Seidel", J. Comput. Phys. 188, 2003): damps the eigencomponents in
/// [lambda_max / alpha, beta lambda_max], lambda_max of D^-1 A estimated at setup by the
/// largest Ritz value of `eigen_iterations` Jacobi-preconditioned CG steps (CG-Lanczos) from a
/// fixed right-hand side (setup reads two scalars per step on the host). For symmetric A that
/// is positive definite with a positive diagonal, or negative definite with a negative one
/// (then D^-1 A is positive definite all the same). One smooth = k products with A, all on the
/// backend. Any operator that provides its diagonal and residual (a CsrMatrix of either value
/// precision); each step after the first is one LinearOperator::chebyshev_step (one pass on a
/// CsrMatrix), which writes the new iterate to a second vector, so the iterate alternates
/// between x and a work vector and ends in x (one copy when an odd number of steps follows a
/// nonzero x). Memory: three n-vectors (D^-1, the direction, the second iterate).
class ChebyshevSmoother final : public Smoother {
 public:
  /// The polynomial: `first`, the first-kind Chebyshev polynomial on [lambda_max / alpha,
  /// beta lambda_max] (Saad, Algorithm 12.1); `fourth`, the fourth-kind Chebyshev smoother of
  /// Lottes ("Optimal polynomial smoothers for multigrid V-cycles", Numer. Linear Algebra Appl.
  /// 30(6), e2518, 2023, sec. 4), which minimizes the V-cycle's error bound over
  /// [0, beta lambda_max] with no lower bound to choose (alpha unused): d_0 = 4 / (3 rho) M^-1
  /// r_0, d_i = (2i - 1) / (2i + 3) d_{i-1} + (8i + 4) / ((2i + 3) rho) M^-1 r_i, x_i = x_{i-1} +
  /// d_{i-1}, rho = beta lambda_max. The preconditioned smoother only; ChebyshevSmoother
  /// throws ConfigError for fourth.
  enum class Kind { first, fourth };
  struct Parameters {
    int degree = 2;             ///< k >= 1
    double alpha = 30.0;        ///< > 1: the damped range starts at lambda_max / alpha
    double beta = 1.1;          ///< >= 1: safety factor on the estimated lambda_max
    int eigen_iterations = 10;  ///< >= 1 CG-Lanczos steps
    Kind kind = Kind::first;
  };
  /// Throws ConfigError naming the field that is out of range.
  explicit ChebyshevSmoother(Parameters parameters);
  ChebyshevSmoother() : ChebyshevSmoother(Parameters{}) {}
  /// As JacobiSmoother::setup, plus InvalidInput when the estimate of lambda_max is not
  /// positive and finite (A indefinite, or A and D of different signs).
  void setup(const LinearOperator& A) override;
  /// setup in two phases (Smoother::begin_setup): the diagonal check and the Lanczos scalars
  /// are read by finish_setup, which throws setup's errors.
  void begin_setup(const LinearOperator& A) override;
  /// Throws DimensionMismatch when inverse_diagonal does not have A's rows.
  void begin_setup_with_diagonal(const LinearOperator& A, Vector inverse_diagonal) override;
  /// Internal (the AMG setup): the next begin_setup queues its fused Lanczos steps in `batch`
  /// instead of launching them; the batch's owner launches them before finish_setup.
  void set_lanczos_batch(detail::LanczosBatch* batch) noexcept { lanczos_batch_ = batch; }
  void finish_setup() override;
  void smooth(const Vector& b, Vector& x, bool x_is_zero) const override;
  std::string name() const override { return "chebyshev"; }
  bool supports_recording() const override { return A_ != nullptr && A_->supports_recording(); }
  /// The estimate of lambda_max(D^-1 A) from the last setup (before the factor beta).
  double lambda_max() const noexcept { return lambda_max_; }
  /// Products with A per smoothing step (Parameters::degree).
  int degree() const noexcept { return parameters_.degree; }

 private:
  Parameters parameters_;
  const LinearOperator* A_ = nullptr;
  const CsrMatrix* csr_ = nullptr;  // A_ as a CsrMatrix (chebyshev_first_steps), else null
  double lambda_max_ = 0.0;
  Vector inverse_diagonal_;
  mutable Vector w_, d_;  // the second iterate (the Lanczos estimate's residual at setup)
  void begin(const LinearOperator& A, Vector* inverse_diagonal);
  const LinearOperator* pending_A_ = nullptr;      // between begin_setup and finish_setup
  detail::LanczosBatch* lanczos_batch_ = nullptr;  // set_lanczos_batch, for one begin_setup
  DeviceScalars pending_;                          // the Lanczos scalars and the diagonal check
  bool diagonal_given_ = false;                    // begin_setup_with_diagonal: no check of ours
};

/// Chebyshev acceleration of a preconditioner M: the Chebyshev polynomial smoother of degree k
/// on M^-1 A (Saad, Iterative Methods, 2nd ed., Algorithm 12.1 with the preconditioned
/// residual; the Chebyshev-accelerated Schwarz smoothers of nekRS, Phillips and Fischer,
/// "Optimal Chebyshev smoothers and one-sided V-cycles", arXiv 2210.03179, 2022): damps the
/// eigencomponents of M^-1 A in [lambda_max / alpha, beta lambda_max] (first kind), or on
/// [0, beta lambda_max] with Lottes's fourth-kind polynomial (Parameters::kind). lambda_max is
/// estimated at setup as the largest real part of the Ritz values of `eigen_iterations` Arnoldi
/// steps on M^-1 A from a fixed pseudo-random vector (LAPACK dhseqr on the Hessenberg matrix;
/// Arnoldi rather than Lanczos because M may be nonsymmetric, restricted additive Schwarz). With M
/// = D^-1 this is ChebyshevSmoother (which is faster: fused steps, no host reads at setup). One
/// smooth = k products with A (k - 1 from x = 0) and k applications of M, all on the backend.
/// Symmetric when M is; a nonsymmetric M gives a nonsymmetric V-cycle (use a flexible Krylov
/// method). Memory: three n-vectors, and eigen_iterations + 1 during setup.
class PreconditionedChebyshevSmoother final : public Smoother {
 public:
  using Parameters = ChebyshevSmoother::Parameters;
  /// Throws ConfigError naming the field that is out of range, InvalidInput when M is null.
  PreconditionedChebyshevSmoother(Parameters parameters, std::unique_ptr<Preconditioner> M);
  /// M->setup(A), then the Arnoldi estimate (reads 2 + j scalars to the host at step j).
  /// Throws what M's setup throws, DimensionMismatch when A is not square, InvalidInput when
  /// the estimate is not positive and finite (A or M indefinite).
  void setup(const LinearOperator& A) override;
  void smooth(const Vector& b, Vector& x, bool x_is_zero) const override;
  /// "chebyshev(<M's name>)", or "chebyshev4(<M's name>)" for the fourth kind.
  std::string name() const override;
  bool supports_recording() const override {
    return A_ != nullptr && A_->supports_recording() && M_->supports_recording();
  }
  double lambda_max() const noexcept { return lambda_max_; }
  /// Products with A per smoothing step (Parameters::degree).
  int degree() const noexcept { return parameters_.degree; }
  const Preconditioner& preconditioner() const noexcept { return *M_; }

 private:
  Parameters parameters_;
  std::unique_ptr<Preconditioner> M_;
  const LinearOperator* A_ = nullptr;
  double lambda_max_ = 0.0;
  mutable Vector r_, z_, d_;
};

/// Sequential Gauss-Seidel, the Parallel Toolbox's forward/backward smoother: each sweep updates
/// x_i = (b_i - sum_{j != i} a_ij x_j) / a_ii in increasing (forward) or decreasing (backward)
/// row order; symmetric = forward then backward (Saad, Iterative Methods, 2nd ed., sec. 4.1).
/// Forward before and backward after the coarse correction keep a V-cycle symmetric. Needs the
/// entries and runs sequentially: a CsrMatrix (values in float64 or float32, summed in double) on
/// the reference or cpu backend (cuda throws NotSupported at the first smooth until a colored
/// variant exists). Memory: one n-vector.
class GaussSeidelSmoother final : public Smoother {
 public:
  enum class Direction { forward, backward, symmetric };
  explicit GaussSeidelSmoother(Direction direction = Direction::symmetric)
      : direction_(direction) {}
  /// Throws NotSupported when A is not a CsrMatrix; DimensionMismatch when A is not square;
  /// InvalidInput naming the first (1-based) row whose diagonal is zero, missing or not finite.
  void setup(const LinearOperator& A) override;
  void smooth(const Vector& b, Vector& x, bool x_is_zero) const override;
  std::string name() const override;

 private:
  Direction direction_;
  const CsrMatrix* A_ = nullptr;
  Vector inverse_diagonal_;
};

/// Hybrid Gauss-Seidel with the l1 diagonal, the "l1 Gauss-Seidel" of Baker, Falgout, Kolev, Yang,
/// "Multigrid smoothers for ultraparallel computing", SIAM J. Sci. Comput. 33, 2011, sec. 6: the
/// rows are cut into blocks of block_rows consecutive rows (block g holds the rows from
/// g block_rows up to (g + 1) block_rows - 1, the last block maybe fewer); a sweep is Gauss-Seidel
/// inside each block (rows in increasing order forward, decreasing backward, with the newest x of
/// the block's rows) and Jacobi across blocks (columns outside the row's block read x from the
/// start of the sweep), so the blocks are swept in parallel. With l1 the diagonal is
/// d_i = a_ii + sum_{j outside i's block} |a_ij| and each row update is x_i <- x_i + r_i / d_i
/// (r_i the residual with the newest x): the smoother then converges for every symmetric positive
/// definite A whatever the block size (Baker et al., sec. 6); without l1 it is plain hybrid
/// Gauss-Seidel, x_i = (b_i - sum_{j != i} a_ij x_j) / a_ii, which can diverge when the couplings
/// across blocks are strong. block_rows >= n is sequential Gauss-Seidel (without l1, the bits of
/// GaussSeidelSmoother); block_rows = 1 with l1 is l1-Jacobi (with a_ii != 0, the bits of
/// L1JacobiSmoother on the reference backend). The partition depends only on n and block_rows, so
/// every backend gives the same bits (kernels/smoothers). Symmetric = forward then backward;
/// forward before and backward after the coarse correction keep a V-cycle symmetric for symmetric
/// A. Needs the entries: a CsrMatrix with values in float64 or float32 (summed in double), on any
/// backend (cuda: one device thread per block, the blocks in parallel). A sweep copies x and reads
/// A once; smooth runs on the backend alone (no host synchronization). Memory: two n-vectors (the
/// inverse diagonal and the copy of x).
class HybridGaussSeidelSmoother final : public Smoother {
 public:
  enum class Direction { forward, backward, symmetric };
  struct Parameters {
    Direction direction = Direction::symmetric;
    index_t block_rows = 32;  ///< >= 1 rows per block
    bool l1 = true;           ///< add the off-block l1 norm to the diagonal
  };
  /// Throws ConfigError (key hybrid_block_rows) when block_rows < 1.
  explicit HybridGaussSeidelSmoother(Parameters parameters);
  HybridGaussSeidelSmoother() : HybridGaussSeidelSmoother(Parameters{}) {}
  /// Throws NotSupported when A is not a CsrMatrix; DimensionMismatch when A is not square;
  /// InvalidInput naming the first (1-based) row whose diagonal (the l1 diagonal with l1) is
  /// zero, missing or not finite.
  void setup(const LinearOperator& A) override;
  void smooth(const Vector& b, Vector& x, bool x_is_zero) const override;
  /// "hybrid_gauss_seidel (<direction>, blocks of <block_rows> rows[, l1])".
  std::string name() const override;
  /// True when A supports recording: a sweep is a copy and a kernel on A's backend.
  bool supports_recording() const override;
  const Parameters& parameters() const noexcept { return parameters_; }

 private:
  Parameters parameters_;
  const CsrMatrix* A_ = nullptr;
  Vector inverse_diagonal_;
  mutable Vector x_start_;
};

}  // namespace kryflow
