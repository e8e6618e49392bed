// The interface every matrix, matrix-free operator and preconditioner implements.
#pragma once

#include <span>

#include "kryflow/linalg/scalars.hpp"
#include "kryflow/linalg/vector.hpp"

namespace kryflow {

/// A linear map y = A x from vectors of num_cols() entries to vectors of num_rows() entries,
/// all on `backend()`. Implementations: CsrMatrix, SellMatrix, BsrMatrix, the preconditioners.
/// Misuse (wrong sizes, vectors on another backend) throws before any output is written, unless
/// stated otherwise.
class LinearOperator {
 public:
  virtual ~LinearOperator() = default;
  virtual index_t num_rows() const = 0;
  virtual index_t num_cols() const = 0;
  /// Where the operator's data lives and its products run.
  virtual const Backend& backend() const = 0;

  /// y = A x. x has num_cols() entries and y num_rows(); both on backend(). The old y is not
  /// read. x and y must not alias (an implementation may throw InvalidInput or give wrong
  /// results). Throws DimensionMismatch on wrong sizes and InvalidInput when x or y lives on
  /// another backend.
  virtual void apply(const Vector& x, Vector& y) const = 0;

  /// y = alpha A x + beta y: shapes, backends and aliasing as apply(x, y); when beta == 0 the
  /// old y is not read (NaN or Inf in it do not matter). The default calls apply(x, y) when
  /// beta == 0 (then scales y unless alpha == 1), and otherwise computes A x into a work vector
  /// of num_rows() entries allocated by the call, then y = alpha (A x) + beta y: override to
  /// fuse (CsrMatrix does) where it runs inside an iteration. A class that declares its own
  /// apply(x, y) brings this one into scope with `using LinearOperator::apply;`. Throws what
  /// apply(x, y) throws.
  virtual void apply(double alpha, const Vector& x, double beta, Vector& y) const;

  /// r = b - A x. b and r have num_rows() entries, x num_cols(); all on backend(); r distinct
  /// from b and x. The default calls apply(x, r), then r = b - r: it throws what apply throws,
  /// and DimensionMismatch or InvalidInput for a b of another size or backend (after r has
  /// been written). Override to fuse into one pass.
  virtual void residual(const Vector& b, const Vector& x, Vector& r) const;

  /// One step of Chebyshev (or Richardson) iteration with a diagonal preconditioner (Saad,
  /// Iterative Methods, 2nd ed., Algorithm 12.1, preconditioned by D): r = b - A x,
  /// d_i = alpha (dinv_i r_i) + beta d_i (d not read when beta == 0), y_i = d_i + x_i. Square
  /// A; b, x, dinv, d and y of num_rows() entries on backend(); y distinct from the others (the
  /// new iterate goes to a second vector because other rows still read x). The default calls
  /// residual(b, x, y), then updates d and y in a second pass (kernels::blas::
  /// chebyshev_step_update); CsrMatrix does it in one pass with the same bits. Throws what
  /// residual throws, DimensionMismatch for a dinv or d of another size, InvalidInput when y
  /// is x, b, dinv or d.
  virtual void chebyshev_step(const Vector& b, const Vector& x, const Vector& dinv, double alpha,
                              double beta, Vector& d, Vector& y) const;

  /// y = A x and x·y written to the device-resident scalar `xy` (on backend()), for square A;
  /// x and y as in apply. Nothing waits for the device: the Krylov solvers read x·y in later
  /// kernels and never on the host. The default calls apply, then a one-pair start_dots into
  /// `xy`, which throws DimensionMismatch when A is not square (after y has been written).
  /// Override to fuse into one pass.
  virtual void apply_dot(const Vector& x, Vector& y, DeviceScalar xy) const;

  /// y = A x and returns x·y (the virtual apply_dot through a scalar of its own, then one wait
  /// for the device): for tests and tools, not for iterations.
  double apply_dot(const Vector& x, Vector& y) const;

  /// The most inner products apply_dots computes with its product.
  static constexpr int kMaxProductDots = 2;

  /// y = A x and, for k < with.size() (1 or 2), the inner product w_k·y written to the
  /// device-resident scalar at first.address + k, where w_k = *with[k], or y itself when
  /// with[k] is null (y·y); square A, x and y as in apply, every w_k of num_rows() entries on
  /// backend() and distinct from y. Nothing waits for the device. BiCGStab's r^·v with v = A p^,
  /// and its t·t and t·s with t = A s^ (van der Vorst 1992; Saad, Algorithm 7.7, lines 4 and 6).
  /// The default calls apply, then one fused multi-dot; throws InvalidInput for another number
  /// of products, DimensionMismatch when A is not square. Override to fuse into one pass.
  virtual void apply_dots(const Vector& x, Vector& y, std::span<const Vector* const> with,
                          DeviceScalar first) const;

  /// True when apply_combination_dot is implemented (one fused pass): CsrMatrix. The default
  /// is false.
  virtual bool fuses_combination() const { return false; }

  /// y = A v and v·y, for square A, where v = s ∘ u + c w (s = *scale element-wise, or
  /// v = u + c w when scale is null) is computed where it is needed and never stored; c is a
  /// device-resident scalar read by the queued work. u, w and *scale have num_cols() entries,
  /// y num_rows(), all on backend(); y distinct from them. It is the search direction
  /// p = D^-1 r + beta p of preconditioned CG (Saad, Iterative Methods, 2nd ed., Algorithm 9.1,
  /// lines 7 and 3 of the next iteration) fused into its product, which saves the pass that
  /// stores p before the product reads it. v·y is returned as a DeviceSum: written to `vy`
  /// (count 0), or, when `partials_ok` and the operator prefers it, left as partial sums for
  /// the next kernel to add (scalars.hpp). Its value has the bits of storing v and calling
  /// apply_dot. The default throws NotSupported (check fuses_combination()); implementations
  /// throw DimensionMismatch or InvalidInput like apply_dot.
  virtual DeviceSum apply_combination_dot(const Vector* scale, const Vector& u, DeviceScalar c,
                                          const Vector& w, Vector& y, DeviceScalar vy,
                                          bool partials_ok = false) const;

  /// True when apply_shifted_dots is implemented (one fused pass): CsrMatrix. The default is
  /// false.
  virtual bool fuses_shifted_product() const { return false; }

  /// BiCGStab's half step fused into the product that follows it (van der Vorst 1992; Saad,
  /// Iterative Methods, 2nd ed., Algorithm 7.7, lines 5 and 6, with the Jacobi preconditioner):
  /// with alpha = *numerator / *denominator (device-resident scalars read by the queued work),
  /// s = u - alpha w and z = d ∘ s are stored, y = A z, and sums[0] = s·s, sums[1] = y·y,
  /// sums[2] = y·s are written to three consecutive device scalars starting at `sums`. Square
  /// A; d, u, w, s, z of num_cols() entries and y of num_rows(), all on backend(); s, z and y
  /// distinct from each other and from d, u, w. Nothing waits for the device. Returns
  /// {sums, 0}; or, when `partials_ok` and the operator prefers it, leaves the three sums as
  /// partial sums (DeviceSum: count partials each, s·s first, then y·y at values + count and
  /// y·s at values + 2 count) for the next kernel to add, and does not write `sums`. The
  /// default throws NotSupported (check fuses_shifted_product()); implementations throw
  /// DimensionMismatch or InvalidInput like apply_dots.
  virtual DeviceSum apply_shifted_dots(const Vector& d, const Vector& u, DeviceScalar numerator,
                                       DeviceScalar denominator, const Vector& w, Vector& s,
                                       Vector& z, Vector& y, DeviceScalar sums,
                                       bool partials_ok = false) const;

  /// d_i = a_ii for square operators that know their diagonal (assembled matrices, and
  /// matrix-free operators that assemble it without forming A); the point-Jacobi
  /// preconditioner's setup calls it. d has num_rows() entries on backend(). The default throws
  /// NotSupported naming the operator; implementations throw DimensionMismatch or InvalidInput
  /// for a d of another size or backend.
  virtual void diagonal(Vector& d) const;

  /// True when apply (and residual, apply_dot) only queue work on backend() whose arguments stay
  /// valid while the operator and the vectors live, with no host logic that changes from one
  /// call to the next (no counting, no adaptive choices, no host reads): such calls may be
  /// recorded once and replayed (kernels/backend/graph.hpp; Krylov solvers replay their
  /// iterations on cuda). The default is false, so an operator of the user's is always called
  /// anew; kryflow's matrices and preconditioners say true.
  virtual bool supports_recording() const { return false; }
  /// True when recording pays off even where plain launches are as fast for Krylov iterations
  /// with simple operators: an operator whose apply queues many small kernels (a multigrid
  /// cycle). KrylovSolver's automatic graph mode records when A or M says so (and both support
  /// recording). The default is false.
  virtual bool prefers_recording() const { return false; }

 protected:
  /// For implementations of apply: throws DimensionMismatch unless x has num_cols() and y
  /// num_rows() entries, and InvalidInput unless both live on backend(); `operation` names the
  /// caller in the message.
  void check_apply_shapes(const Vector& x, const Vector& y, const char* operation) const;
  /// For implementations of chebyshev_step: its shape, backend and aliasing checks.
  void check_chebyshev_step(const Vector& b, const Vector& x, const Vector& dinv, const Vector& d,
                            const Vector& y) const;
};

}  // namespace kryflow
