// The level seam of multigrid: what one cycle needs from a grid, whatever built it.
#pragma once

#include <memory>

#include "kryflow/linalg/linear_operator.hpp"
#include "kryflow/multigrid/smoother.hpp"

namespace kryflow {

/// One level l of a multigrid hierarchy (not the coarsest): its operator A_l (n_l x n_l), its
/// smoothers, and the transfers to and from level l + 1 (n_{l+1} rows). Five methods, as the
/// level interface of nekRS's multigrid (src/elliptic/MG/MGSolver.hpp): algebraic and
/// spectral-element levels implement the same seam, and Multigrid drives either. Nothing here
/// assumes a matrix format.
class MultigridLevel {
 public:
  virtual ~MultigridLevel() = default;
  /// A_l.
  virtual const LinearOperator& level_operator() const = 0;
  /// The smoother before the coarse-grid correction (pre-smoothing).
  virtual const Smoother& pre_smoother() const = 0;
  /// The smoother after it (post-smoothing); for a symmetric cycle, the adjoint of
  /// pre_smoother (the same object for Jacobi and Chebyshev; backward for forward Gauss-Seidel).
  virtual const Smoother& post_smoother() const = 0;
  /// n_{l+1}, the rows of the next coarser level.
  virtual index_t coarse_rows() const = 0;
  /// b_c = R r: the restriction of a residual r (n_l entries) to the coarse level (n_{l+1}).
  virtual void restrict_residual(const Vector& r, Vector& b_coarse) const = 0;
  /// x = x + P e_c: the prolongation of a coarse correction (n_{l+1}) added to x (n_l).
  virtual void prolongate_add(const Vector& e_coarse, Vector& x) const = 0;
  /// True when the level's operator, transfers and smoothers support recording
  /// (LinearOperator::supports_recording, Smoother::supports_recording). The default is false.
  virtual bool supports_recording() const { return false; }
};

/// A level made of operators: A_l, the restriction R (n_{l+1} x n_l) and the prolongation P
/// (n_l x n_{l+1}) as LinearOperators (sparse matrices for algebraic multigrid, matrix-free
/// transfers for spectral elements), and its smoothers. A, R and P are not owned and must
/// outlive the level; the smoothers are owned, already set up for A. `post` may be null: the
/// pre-smoother then smooths after the correction too. Throws DimensionMismatch when the shapes
/// disagree.
class OperatorLevel final : public MultigridLevel {
 public:
  OperatorLevel(const LinearOperator& A, const LinearOperator& restriction,
                const LinearOperator& prolongation, std::unique_ptr<Smoother> pre,
                std::unique_ptr<Smoother> post);
  const LinearOperator& level_operator() const override { return *A_; }
  const Smoother& pre_smoother() const override { return *pre_; }
  const Smoother& post_smoother() const override { return post_ ? *post_ : *pre_; }
  index_t coarse_rows() const override { return restriction_->num_rows(); }
  /// b_c = R r (LinearOperator::apply).
  void restrict_residual(const Vector& r, Vector& b_coarse) const override;
  /// x = 1 P e_c + 1 x (LinearOperator::apply(alpha, x, beta, y): one fused pass for CSR).
  void prolongate_add(const Vector& e_coarse, Vector& x) const override;
  bool supports_recording() const override;

 private:
  const LinearOperator* A_;
  const LinearOperator* restriction_;
  const LinearOperator* prolongation_;
  std::unique_ptr<Smoother> pre_;
  std::unique_ptr<Smoother> post_;
};

}  // namespace kryflow
