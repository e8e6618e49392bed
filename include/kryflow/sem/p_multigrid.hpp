// p-multigrid for the spectral-element Poisson operator: levels of decreasing polynomial order
// on one mesh, GLL interpolation between them, Chebyshev-Jacobi smoothing, and the order-1
// level assembled and solved by algebraic multigrid.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kryflow/amg/amg.hpp"
#include "kryflow/core/array.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/multigrid/multigrid.hpp"
#include "kryflow/multigrid/smoothers.hpp"
#include "kryflow/sem/poisson_operator.hpp"
#include "kryflow/sem/schwarz.hpp"

namespace kryflow::kernels::sem {
struct TransferSideView;
}

namespace kryflow::sem {

/// The transfers between the spectral-element spaces of two orders p_f > p_c on one mesh
/// (Rønquist and Patera, "Spectral element multigrid I", J. Sci. Comput. 2, 1987; the
/// transfers of nekRS's p-multigrid): the prolongation
///   P = Q_f^T W_f (J (x) J (x) J) Q_c M_c,
/// element by element the tensor product of the 1D Lagrange interpolation matrix J (N_f x N_c,
/// lagrange_interpolation_matrix from the order-p_c GLL nodes to the order-p_f ones), with
/// Q the gather to element-local points, M_c zeroing the coarse Dirichlet points and W_f
/// (diagonal on the fine local points) taking each fine point from one of the elements that
/// share it (1 at its owner, the first of its local points; 0 at the other copies and at fine
/// Dirichlet points). Coarse functions are continuous and a face's
/// interpolated values depend on the face's coarse points only, so every element gives a shared
/// point the same value: W_f equals the average over the copies (1 / multiplicity), without
/// forming them, and P e interpolates e. The restriction is its transpose,
///   R = P^T = M_c Q_c^T (J^T (x) J^T (x) J^T) W_f Q_f,
/// so a V-cycle with symmetric smoothing stays symmetric. Both run on the operators' backend
/// (kernels/sem/transfer.hpp): the prolongation one kernel that writes the owned fine points,
/// the restriction two (the element contractions, then the sums over the coarse copies); both
/// may be recorded. The coarse sums use the coarse operator's assembly lists
/// (SemPoissonOperator::global_offsets and global_locals). Memory: a 4-byte global index per
/// local point of either order, an owner byte per fine local point, a weight per coarse global
/// point, and num_elements N_c^3 doubles of scratch.
class SemTransfer {
 public:
  /// Throws InvalidInput when the two operators are not on one backend and mesh (element
  /// counts) or fine's order is not above coarse's. Both must outlive this object.
  SemTransfer(const SemPoissonOperator& fine, const SemPoissonOperator& coarse);
  /// fine = fine + P coarse (`add`) or fine = P coarse. coarse: coarse.num_rows() entries, fine:
  /// fine.num_rows(), on the backend. Throws DimensionMismatch for other sizes.
  void prolongate(const Vector& coarse, Vector& fine, bool add) const;
  /// coarse = R fine = P^T fine. Throws DimensionMismatch for other sizes.
  void restrict_residual(const Vector& fine, Vector& coarse) const;
  /// The rows of P (the fine operator's unknowns) and of R (the coarse operator's).
  index_t fine_rows() const noexcept { return fine_.A->num_rows(); }
  index_t coarse_rows() const noexcept { return coarse_.A->num_rows(); }

 private:
  /// One order: its operator (for its numbering and assembly lists), the global index of each
  /// local point on the backend; on the coarse side the weight of each global point (0 at
  /// Dirichlet points, else 1), on the fine side the owner of each (kernels/sem/transfer.hpp:
  /// the first local point of each global point, which alone writes and reads it).
  struct Side {
    const SemPoissonOperator* A = nullptr;
    Array<index_t> local_to_global;
    Array<double> weight;
    Array<std::uint8_t> owner;
  };
  static Side make_side(const SemPoissonOperator& A, bool owners);
  static kernels::sem::TransferSideView view(const Side& side);
  Side fine_, coarse_;
  Array<double> interpolation_;  // N_f x N_c
  Array<double> transpose_;      // N_c x N_f
  mutable Array<double> local_;  // num_elements x N_c^3: the restriction's element values
};

/// p-multigrid as a preconditioner of the SemPoissonOperator (Rønquist and Patera 1987; Fischer
/// and Lottes, "Hybrid Schwarz-multigrid methods for the spectral element method", 2005; nekRS's
/// pMG, Kerkemeier et al.): the levels are the operator at orders p = p_0 > p_1 > ... > p_L = 1
/// on the same mesh and Dirichlet faces (SemPoissonOperator::at_order), matrix-free on every
/// level; the transfers are SemTransfer's; each level above the coarsest is smoothed by
/// Chebyshev-accelerated Jacobi (ChebyshevSmoother on D^-1 A with the operator's assembled
/// diagonal, lambda_max by CG-Lanczos). The order-1 level (trilinear elements on the mesh
/// vertices) is assembled into a CsrMatrix (SemPoissonOperator::assembled_matrix, on the
/// host, then copied to the backend) and solved by the coarse solver given to the constructor
/// (any Preconditioner that accepts a CsrMatrix; by default one cycle of AmgPreconditioner
/// with default_amg()), or, with coarsest = chebyshev, by chebyshev_coarse_sweeps Chebyshev-
/// Jacobi smoothing steps on the matrix-free order-1 operator (nothing assembled). The cycle is
/// Multigrid's (V by default); with adjoint smoothing and R = P^T it is symmetric, so PCG may
/// use it. With Parameters::cycle_precision float32 the operators inside the cycle compute in
/// float (a flexible method outside then).
///
/// Schedules (Parameters::orders empty), from the operator's order p:
///  - halving (the default): the next order is 1 when p <= 3 and p / 2 otherwise: 7, 3, 1;
///    9, 4, 2, 1; 15, 7, 3, 1; 5, 2, 1;
///  - halving_then_unit: halving while above 3, then every order down to 1: 7, 3, 2, 1;
///    9, 4, 2, 1; 15, 7, 3, 2, 1 (one more level, cheaper than the next one up; on the Kershaw
///    mesh at p = 7 with the Schwarz smoother 17 iterations against halving's 19);
///  - minus_two: p - 2 each step, then 1: 7, 5, 3, 1; 8, 6, 4, 2, 1;
///  - two_level: p, then 1.
class PMultigrid final : public Multigrid {
 public:
  /// The orders of the levels below the operator's when Parameters::orders is empty.
  enum class Schedule { halving, halving_then_unit, minus_two, two_level };
  /// How the order-1 level is solved: assembled (the coarse solver on the CsrMatrix) or
  /// chebyshev (smoothing steps on the matrix-free operator).
  enum class Coarsest { assembled, chebyshev };
  /// The smoothing of the levels above the coarsest: Chebyshev acceleration of Jacobi (the
  /// operator's assembled diagonal), of additive Schwarz or of restricted additive Schwarz on
  /// element patches (SchwarzPreconditioner; restricted makes the cycle nonsymmetric: use
  /// a flexible method outside: fcg or fgmres), or multiplicative Schwarz on vertex patches
  /// (VertexPatchSmoother: a forward sweep over the colors before the coarse-grid correction
  /// and the backward sweep after it, so the cycle is symmetric up to the float rounding of the
  /// local solves; the unknowns inside no patch, near the irregular vertices of unstructured
  /// meshes and on Neumann boundaries, by damped Jacobi).
  enum class SmootherKind { chebyshev_jacobi, chebyshev_asm, chebyshev_ras, vertex_patch };
  struct Parameters {
    SmootherKind smoother = SmootherKind::chebyshev_jacobi;
    /// The Schwarz smoothers' local solves (SchwarzPreconditioner's and VertexPatchSmoother's
    /// precision).
    Precision schwarz_precision = Precision::float32;
    /// The vertex-patch smoother's parameters (its precision is replaced by schwarz_precision;
    /// ranges and errors as VertexPatchSmoother's, named vertex_patch_<field>).
    VertexPatchSmoother::Parameters vertex_patch;
    /// The element arithmetic of the matrix-free operators inside the cycle
    /// (SemPoissonOptions::arithmetic): with float32 every level's operator, the finest one
    /// too (a with_arithmetic copy of A owned by the preconditioner), computes its element
    /// Laplacians in float, so the residuals, the smoothers' products and their lambda_max
    /// estimates use float arithmetic on double vectors (the mixed-precision cycle of
    /// Kronbichler and Ljungkvist, ACM TOPC 6(1), 2019). The transfers, the diagonals and the
    /// assembled order-1 matrix stay double, and the outer Krylov method keeps A itself. The
    /// cycle is then symmetric only to float rounding: use a flexible method outside (fcg or
    /// fgmres).
    Precision cycle_precision = Precision::float64;
    /// The orders below the operator's, decreasing, ending in 1; empty: `schedule`'s.
    std::vector<int> orders;
    Schedule schedule = Schedule::halving;
    int chebyshev_degree = 3;  ///< >= 1, per smoothing step
    /// >= 0: the Chebyshev degree of every level below the finest (0: chebyshev_degree). Their
    /// operators cost about (q / p)^3 of the finest one's, so a higher degree there buys a
    /// stronger coarse-grid correction cheaply.
    int coarse_levels_chebyshev_degree = 0;
    /// The Schwarz smoothers' Chebyshev polynomial (ChebyshevSmoother::Kind; Chebyshev-Jacobi
    /// has the first kind only).
    ChebyshevSmoother::Kind chebyshev_kind = ChebyshevSmoother::Kind::first;
    /// > 1: damps [lambda_max / alpha, 1.1 lambda_max]. 30 against 10 on the H200 (degree 3,
    /// p = 7): Kershaw eps 0.3 56 iterations against 66, the same on deformed boxes
    /// (bench/results/h200_pmg).
    double chebyshev_alpha = 30.0;
    int chebyshev_eigen_iterations = 10;  ///< >= 1 CG-Lanczos steps per level
    Coarsest coarsest = Coarsest::assembled;
    int chebyshev_coarse_sweeps = 4;  ///< >= 1 smoothing steps (coarsest chebyshev)
    Multigrid::Parameters cycle;      ///< cycle shape and sweeps
  };
  /// The pcg_amg preset's AMG: PMIS, one aggressive level, matrix-product extended+i with 4
  /// elements per row, Chebyshev degree 2 with alpha 10, float32 hierarchy, but coarse_size 2000.
  static AmgPreconditioner::Parameters default_amg();
  /// The orders below `order` by `schedule` (the class comment), decreasing and ending in 1;
  /// order >= 1 (empty for order 1). Throws nothing.
  static std::vector<int> default_orders(int order, Schedule schedule = Schedule::halving);
  /// `coarse_solver` (null: AmgPreconditioner(default_amg())) is set up by setup on the
  /// assembled order-1 matrix; unused with coarsest chebyshev. Throws ConfigError naming the
  /// parameter out of range (orders not decreasing, not ending in 1 or not positive; a degree,
  /// alpha or count out of range; a vertex-patch parameter as vertex_patch_relaxation, ...).
  explicit PMultigrid(Parameters parameters, std::unique_ptr<Preconditioner> coarse_solver = {});
  PMultigrid() : PMultigrid(Parameters{}) {}
  ~PMultigrid() override;

  /// Builds the levels for A (with cycle_precision float32, for A.with_arithmetic(float32):
  /// A's data must outlive the preconditioner's applications, as for float64, and A and the
  /// preconditioner must not apply concurrently: they share A's scratch). Throws
  /// NotSupported when A is not a SemPoissonOperator;
  /// ConfigError (path "orders") when an order is not below A's; what SemPoissonOperator,
  /// the smoothers (a lambda_max estimate that is not positive: A not definite) and the coarse
  /// solver throw. On an error the preconditioner is left without a hierarchy.
  void setup(const LinearOperator& A) override;
  std::string name() const override { return "p_multigrid"; }
  /// Orders, unknowns per level, the smoother, "cycle arithmetic float32" with a float cycle,
  /// the coarse matrix and its solver, setup time per phase.
  std::string summary() const override { return summary_; }
  /// The orders of the levels, the operator's first.
  const std::vector<int>& orders() const noexcept { return level_orders_; }
  /// The assembled order-1 matrix (null with coarse_solver chebyshev or before setup).
  const CsrMatrix* coarse_matrix() const noexcept { return coarse_matrix_.get(); }

 private:
  Parameters parameters_;
  std::unique_ptr<Preconditioner> coarse_solver_;  // between setups
  std::vector<int> level_orders_;
  std::unique_ptr<SemPoissonOperator> cycle_fine_;  // A in float arithmetic (cycle_precision)
  std::vector<std::unique_ptr<SemPoissonOperator>> operators_;  // the coarser orders
  std::vector<std::unique_ptr<SemTransfer>> transfers_;
  std::unique_ptr<CsrMatrix> coarse_matrix_;
  std::string summary_;
  void release();
};

}  // namespace kryflow::sem
