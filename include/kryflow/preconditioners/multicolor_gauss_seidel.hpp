// Multicolor (block) Gauss-Seidel: the sweeps, and their use as a preconditioner and as a
// multigrid smoother.
#pragma once

#include <cstdint>
#include <memory>

#include "kryflow/core/array.hpp"
#include "kryflow/core/precision.hpp"
#include "kryflow/linalg/coloring.hpp"
#include "kryflow/multigrid/smoother.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"

namespace kryflow {

/// The cuda kernel of a multicolor sweep (the host backends have one each; results agree within
/// rounding: the coefficient and block_row kernels give the reference's bits, the warp kernel
/// adds in another order).
enum class SweepKernel {
  coefficient,  ///< one thread per block coefficient, products reduced in shared memory
  warp,         ///< one warp per block row, shuffles
  block_row,    ///< B threads per block row, one scalar row each (the reference's bits)
  automatic,    ///< the faster measured one for the block size and value type
};

/// "coefficient", "warp", "block_row" or "automatic"; parse_sweep_kernel throws ConfigError
/// otherwise.
const char* to_string(SweepKernel kernel) noexcept;
SweepKernel parse_sweep_kernel(const std::string& name);

/// Multicolor block Gauss-Seidel sweeps on a BsrMatrix (B = 1..8) or CsrMatrix (1 x 1 blocks),
/// as NOISEtte's block SGS (Gorobets et al.; Saad, Iterative Methods, 2nd ed., sec. 12.4.1):
/// setup colors the block graph (color_matrix) and inverts the diagonal blocks (as
/// BlockJacobiPreconditioner); a forward sweep visits the colors in increasing order and updates
/// every block row I of a color at once,
///   x_I <- (1 - omega) x_I + omega D_I^-1 (b_I - sum_{J != I} A_IJ x_J),
/// a backward sweep visits the colors in decreasing order. The block rows of a color are not
/// neighbours, so within a color the order does not matter: with one block row per color this
/// is sequential Gauss-Seidel in the coloring's order, with a single color (a diagonal matrix)
/// block Jacobi. As in NOISEtte, setup copies A reordered by color (its block rows grouped by
/// color, so that a color is a contiguous range a sweep streams), here split into its strictly
/// lower part, strictly upper part and diagonal blocks: a forward sweep reads the lower part and
/// the upper products saved by the backward sweep before it, a backward sweep the reverse
/// (Conrad and Wallach's saved products), so a symmetric sweep reads every off-diagonal block
/// once; with omega = 1 the backward sweep skips the last color, which the forward sweep just
/// updated with the same values. b is read through the order and x written back in A's order
/// inside the kernels: the order is hidden, vectors stay in A's numbering. Everything runs on
/// A's backend (one launch per color and sweep on cuda, one gather of x unless it starts at 0,
/// no host wait). Memory: a copy of A's blocks and indices (2 n / B + 1 more row pointers), n B
/// inverse values, two n-vectors, 5 n / B indices. Keeps a reference to A, which must outlive
/// it.
class MulticolorGaussSeidel {
 public:
  struct Parameters {
    int sweeps = 1;         ///< >= 1 (symmetric) sweeps per application
    double omega = 1.0;     ///< relaxation factor, in (0, 2)
    bool symmetric = true;  ///< forward then backward (SGS); false: one direction only
    bool reverse = false;   ///< with symmetric false: backward sweeps instead of forward
    ColoringAlgorithm coloring = ColoringAlgorithm::jones_plassmann_luby;
    std::uint64_t seed = 1;  ///< of the Jones-Plassmann-Luby keys
    Precision inverse_precision = Precision::float64;
    SweepKernel kernel = SweepKernel::automatic;
  };
  /// Throws ConfigError naming the field that is out of range.
  explicit MulticolorGaussSeidel(Parameters parameters);
  ~MulticolorGaussSeidel();
  MulticolorGaussSeidel(MulticolorGaussSeidel&&) noexcept;
  MulticolorGaussSeidel& operator=(MulticolorGaussSeidel&&) noexcept;

  /// Colors A and inverts its diagonal blocks. Throws as BlockJacobiPreconditioner::setup.
  void setup(const LinearOperator& A);
  /// Copies the new values and inverts the diagonal blocks again (same pattern): the coloring is
  /// kept.
  void update_values(const LinearOperator& A);
  /// One forward (or backward) sweep over all colors. b and x have n entries on A's backend;
  /// throws DimensionMismatch or InvalidInput otherwise.
  void forward(const Vector& b, Vector& x) const;
  void backward(const Vector& b, Vector& x) const;
  /// `sweeps` times forward then backward (symmetric), or forward only, or backward only
  /// (reverse); with x_is_zero x starts at 0 (its entries are not read).
  void relax(const Vector& b, Vector& x, bool x_is_zero) const;

  const Parameters& parameters() const noexcept { return parameters_; }
  const MulticolorOrdering& ordering() const noexcept;
  int block_size() const noexcept;
  /// The cuda kernel the sweeps use (kernel, or the table's choice for automatic).
  SweepKernel effective_kernel() const noexcept;
  /// "multicolor Gauss-Seidel: 6 colors, sizes .., 5 x 5 blocks, inverses in float64, ...".
  std::string summary() const;

 private:
  struct State;
  void check(const Vector& b, const Vector& x) const;
  /// `passes` times a forward and/or a backward sweep from x (or 0), on the color-ordered copy.
  void run(const Vector& b, Vector& x, bool x_is_zero, int passes, bool forward,
           bool backward) const;
  Parameters parameters_;
  std::unique_ptr<State> state_;
};

/// z = M^-1 r: MulticolorGaussSeidel::relax from z = 0. Symmetric sweeps of a symmetric A give a
/// symmetric M, but not necessarily a positive definite one: use it with BiCGStab, GMRES or
/// FGMRES (Saad, sec. 10.2). Parameters as MulticolorGaussSeidel.
class MulticolorGaussSeidelPreconditioner final : public Preconditioner {
 public:
  explicit MulticolorGaussSeidelPreconditioner(MulticolorGaussSeidel::Parameters parameters = {});
  /// Throws as MulticolorGaussSeidel::setup.
  void setup(const LinearOperator& A) override;
  void update_values(const LinearOperator& A) override;
  std::string name() const override { return "multicolor_gauss_seidel"; }
  index_t num_rows() const override { return n_; }
  index_t num_cols() const override { return n_; }
  const Backend& backend() const override { return backend_; }
  void apply(const Vector& r, Vector& z) const override;
  bool supports_recording() const override { return true; }
  /// One launch per color and sweep: replayed recordings remove the launch overhead.
  bool prefers_recording() const override { return true; }
  std::string summary() const override { return sweeps_.summary(); }
  const MulticolorGaussSeidel& sweeps() const noexcept { return sweeps_; }

 private:
  MulticolorGaussSeidel sweeps_;
  index_t n_ = 0;
  Backend backend_ = Backend::reference();
};

/// Multicolor Gauss-Seidel as a multigrid Smoother: one smooth = MulticolorGaussSeidel::relax.
class MulticolorGaussSeidelSmoother final : public Smoother {
 public:
  explicit MulticolorGaussSeidelSmoother(MulticolorGaussSeidel::Parameters parameters = {});
  void setup(const LinearOperator& A) override { sweeps_.setup(A); }
  void update_values(const LinearOperator& A) override { sweeps_.update_values(A); }
  void smooth(const Vector& b, Vector& x, bool x_is_zero) const override {
    sweeps_.relax(b, x, x_is_zero);
  }
  std::string name() const override { return "multicolor_gauss_seidel"; }
  bool supports_recording() const override { return true; }

 private:
  MulticolorGaussSeidel sweeps_;
};

}  // namespace kryflow
