// Overlapping Schwarz preconditioners of the spectral-element Poisson operator on element
// patches, with fast-diagonalization local solves.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kryflow/core/array.hpp"
#include "kryflow/core/precision.hpp"
#include "kryflow/multigrid/smoother.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"
#include "kryflow/sem/poisson_operator.hpp"

namespace kryflow::kernels::sem {
struct SchwarzUpdate;
struct SchwarzView;
struct SchwarzLocals;
}  // namespace kryflow::kernels::sem

namespace kryflow::sem {

/// Additive (ASM) or restricted additive (RAS) overlapping Schwarz on element patches for the
/// SemPoissonOperator (Lottes and Fischer, "Hybrid multigrid/Schwarz algorithms for the
/// spectral element method", J. Sci. Comput. 24, 2005, sec. 3; the smoothers of nekRS's
/// p-multigrid, Phillips and Fischer, "Optimal Chebyshev smoothers and one-sided V-cycles",
/// 2022). Each element's patch is its (p + 1)^3 GLL points extended by one layer of points into
/// each face neighbour; its local problem is the separable approximation of the element's
/// operator on the box of (p + 3)^3 points, built per direction from the GLL stiffness and mass
/// matrices of three intervals (the element and its two neighbours along that direction) of
/// the elements' averaged lengths (the mean length of the element's four edges along the
/// direction: exact for boxes, an approximation for deformed elements), and solved by the fast
/// diagonalization method (Lynch, Rice and Thomas 1964; kernels/sem/schwarz.hpp). A direction
/// whose face lies on the mesh boundary drops the point beyond it (and the face's points too
/// when the face is Dirichlet: the points of a Dirichlet face are not unknowns).
///
///   ASM: z = sum_e R_e^T A_e^-1 R_e r, R_e the restriction to patch e (symmetric: for PCG).
///   RAS: z = sum_e R_e^T W_e A_e^-1 R_e r with W_e keeping the element's own points and
///        weighting them by 1 / multiplicity (cheaper and usually a better smoother, but not
///        symmetric: use a flexible Krylov method outside, fcg or fgmres).
/// At the Dirichlet points, where the operator is the identity, z = r.
///
/// Used alone it is a one-level preconditioner whose iterations grow with the element count;
/// its purpose is smoothing inside p-multigrid (PreconditionedChebyshevSmoother in PMultigrid).
/// Setup builds the patches on the host (GlobalNumbering::face_neighbours, one symmetric
/// eigenproblem of size at most p + 3 per direction and element, LAPACK dsyev) and copies them
/// to the operator's backend; apply is one kernel for the local solves and one for the sums.
/// Memory per element: (p + 3)^3 4-byte indices, 3 (p + 3)^2 + 3 (p + 3) values, and
/// (p + 3)^3 (ASM) or (p + 1)^3 (RAS) values of scratch for the local solves' results (values:
/// doubles with float64 patches, floats with float32 ones); ASM adds its assembly lists (an
/// 8-byte offset per global point and a 4-byte index per patch point).
class SchwarzPreconditioner final : public Preconditioner {
 public:
  enum class Method { additive, restricted };
  /// precision: of the patches' eigenvectors and eigenvalues, of the local solves' arithmetic and
  /// of their stored results (float32: r rounded to float per patch, the sums of z in double;
  /// half the memory and about twice the speed of float64 on a GPU, enough for a smoother).
  explicit SchwarzPreconditioner(Method method = Method::additive,
                                 Precision precision = Precision::float64)
      : method_(method), precision_(precision) {}
  /// Throws NotSupported when A is not a SemPoissonOperator, or when the patch points exceed
  /// 2^31 - 1 entries; what the operator's backend throws (OutOfMemory).
  void setup(const LinearOperator& A) override;
  /// z = M^-1 r: r and z with A's rows, on A's backend; z is overwritten. Throws
  /// DimensionMismatch for other sizes, InvalidInput before setup. Only queues kernels.
  void apply(const Vector& r, Vector& z) const override;
  using Preconditioner::apply;
  /// Preconditioner::apply_update with the updates of d and x fused into the sums of the local
  /// solves (z not written); the same bits as the default.
  void apply_update(const Vector& r, double alpha, double beta, Vector& d, Vector& x,
                    bool x_is_zero, Vector& z) const override;
  index_t num_rows() const override { return rows_; }
  index_t num_cols() const override { return rows_; }
  const Backend& backend() const override;
  bool supports_recording() const override { return true; }
  /// "additive_schwarz" or "restricted_additive_schwarz", with " (float32)" for float local
  /// solves.
  std::string name() const override;
  Method method() const noexcept { return method_; }
  Precision precision() const noexcept { return precision_; }

  /// The host data of the patches, for tests: per element, the box's global points
  /// ((p + 3)^3, -1: none), S_r, S_s, S_t ((p + 3)^2 each, S_d[i (p + 3) + m]) and the
  /// eigenvalues ((p + 3) per direction).
  struct Patches {
    int n = 0;  ///< p + 1
    std::vector<index_t> box_to_global;
    std::vector<double> eigenvectors;
    std::vector<double> eigenvalues;
  };
  /// Builds the patches of A (the setup's host phase). Throws NotSupported as setup.
  static Patches build_patches(const SemPoissonOperator& A);

 private:
  Method method_;
  Precision precision_;
  const SemPoissonOperator* A_ = nullptr;
  index_t rows_ = 0;
  std::int64_t num_elements_ = 0;
  int n_ = 0;
  Array<index_t> box_to_global_;
  Array<double> eigenvectors_, eigenvalues_;     // float64
  Array<float> eigenvectors32_, eigenvalues32_;  // float32
  Array<std::int64_t> offsets_;                  // ASM: the assembly lists of the box points
  Array<index_t> locals_;
  Array<double> weight_;          // per global point
  mutable Array<double> local_;   // the local solves' results: float64
  mutable Array<float> local32_;  // float32
  /// The local solves of r and the sums into z (with `update`: into d and x).
  void run(const Vector& r, const kernels::sem::SchwarzUpdate& update, Vector& z) const;
};

/// Multiplicative Schwarz smoothing on vertex patches for the SemPoissonOperator (the vertex-
/// patch smoother of Cui and Kanschat, "Multigrid methods for the Stokes problem on GPU
/// systems", sec. 3.1 and Algorithm 2, and of Cui, Grosse-Bley, Kanschat and Strzodka 2024 for
/// the Laplacian; Witte 2022 for the tensor-product local solvers). The patch of an interior mesh
/// vertex v is the 2 x 2 x 2 elements around it; its unknowns are the GLL points strictly inside
/// the patch, a box of (2p - 1)^3 points (functions that vanish on the patch boundary), and its
/// local problem is the separable approximation of the operator on that box: per patch
/// direction the 1D GLL stiffness and mass matrices of the two intervals on either side of v,
/// of the averaged lengths of the four elements on each side (exact on affine boxes), solved
/// by fast diagonalization (kernels/sem/schwarz.hpp, as SchwarzPreconditioner's patches).
/// Patches are colored so that patches of one color share no element (so no unknown): the 8
/// parities of a structured mesh's vertex lattice where the elements are arranged as one
/// (propagated through the face adjacency), else a greedy coloring. One smoothing step runs the
/// colors in turn (forward 0, 1, ..., backward in the reverse order, the adjoint sweep, so a
/// forward pre- and a backward post-smoothing step give a symmetric V-cycle); per color:
///   r = b - A x,  x = x + omega sum_{patches P of the color} R_P^T A_P^-1 R_P r,
/// and at the first color x = x + r at the Dirichlet points (where A is the identity); with
/// Parameters::eigen_iterations, each patch's share of the sum is scaled by min(1,
/// damping_bound / lambda_P) (against its estimated local overshoot; a damped block
/// Gauss-Seidel where the separable model is poor).
/// Each color costs one operator application (the residual), one local-solve kernel and one
/// scatter kernel: a step costs about as many operator applications as there are colors.
///
/// Unknowns inside no patch: every interior vertex whose 8 elements form a 2 x 2 x 2 box gets a
/// patch; vertices with another number of elements (the irregular vertices of an unstructured
/// mesh, the vertices of a Neumann boundary) get none, and the points around them that lie in no
/// other patch are relaxed by damped Jacobi, x = x + w D^-1 (b - A x) on those points alone
/// (Parameters::uncovered_weight), after the colors in a forward sweep and before them in a
/// backward one (so the two stay adjoint): one more operator application per step.
///
/// Requirements: setup throws NotSupported when some unknown lies inside no patch and
/// uncovered_weight is 0, when A is not a SemPoissonOperator, when
/// the patch points exceed 2^31 - 1, or when the backend's local-solve kernel lacks the box
/// size (cuda: boxes of at most 17 points, p <= 8); InvalidInput when elements share corners
/// but not the points between them, when an eigenvalue estimate is not finite or LAPACK fails.
/// Memory per patch: (2p + 1)^3 4-byte indices, 3 (2p + 1)^2 + 3 (2p + 1) values (floats with
/// float32 local solves) and one double (its damping), plus (2p + 1)^3 values of scratch for
/// the largest color and three vectors of A's rows (the Dirichlet mask, a residual, scratch).
class VertexPatchSmoother final : public Smoother {
 public:
  enum class Direction { forward, backward };
  struct Parameters {
    /// The local solves' arithmetic and their stored eigenvectors and results (float32: half
    /// the memory; the residuals and x stay double).
    Precision precision = Precision::float32;
    /// omega > 0: the scaling of every correction (1: the multiplicative method).
    double relaxation = 1.0;
    /// >= 0 power steps per patch estimating lambda_P, the largest eigenvalue of
    /// A~_P^-1 A_P (the separable local problem against the true one: 1 on affine boxes, above
    /// 1 where deformed elements are stiffer than their separable model); patch P's correction
    /// is then scaled by omega min(1, damping_bound / lambda_P), so that no local correction
    /// overshoots (a local step of the multiplicative method expands the error in the energy
    /// norm where its scaled lambda_P exceeds 2). 0: no scaling.
    int eigen_iterations = 10;
    /// In (0, 2): the largest scaled local eigenvalue allowed (see eigen_iterations).
    double damping_bound = 1.5;
    /// In [0, 1]: the damped-Jacobi weight w of the unknowns inside no patch (see the class
    /// comment); 0: setup throws NotSupported naming the first such unknown instead.
    double uncovered_weight = 2.0 / 3.0;
    /// The seed's fused step: each patch computes its residual itself from the 8 elements'
    /// Laplacians on its box (kernels/sem/schwarz.hpp, vertex_patch_fused_step) instead of one
    /// operator application per color; the same step to rounding. Experimental (not the
    /// presets' choice); cuda: p <= 8. Memory: (2p + 1)^3 more indices per patch.
    bool fused = false;
  };
  /// Throws ConfigError (relaxation, eigen_iterations, damping_bound, uncovered_weight) when
  /// relaxation is not positive and finite, eigen_iterations is negative, damping_bound is not
  /// in (0, 2) or uncovered_weight not in [0, 1].
  explicit VertexPatchSmoother(Parameters parameters, Direction direction = Direction::forward);
  VertexPatchSmoother() : VertexPatchSmoother(Parameters{}) {}
  /// Builds the patches (host: placement of each vertex's elements, one symmetric eigenproblem
  /// of size 2p - 1 per patch and direction, LAPACK dsyev; threads over patches), copies them
  /// to A's backend and runs the power steps there (per color and step one operator
  /// application, one local solve and a per-patch norm, which the host reads to normalize the
  /// next step). Throws as the class comment says; OutOfMemory when they do not fit.
  void setup(const LinearOperator& A) override;
  /// One step as above (b, x: A's rows on A's backend). Throws InvalidInput before setup,
  /// DimensionMismatch for vectors of another size.
  void smooth(const Vector& b, Vector& x, bool x_is_zero) const override;
  /// "vertex_patch_schwarz(forward, float32)"; with unknowns inside no patch,
  /// "vertex_patch_schwarz(forward, float32, 12 points by Jacobi)".
  std::string name() const override;
  bool supports_recording() const override { return true; }
  /// The same smoother sweeping the colors in the reverse order, sharing this one's patches
  /// and scratch (the two must not smooth at the same time). It keeps the patches of this
  /// setup: a later setup of this smoother leaves it on the old operator, which must outlive
  /// it. Throws InvalidInput before setup.
  std::unique_ptr<VertexPatchSmoother> adjoint() const;
  /// After setup: the patches, the colors and the unknowns inside no patch.
  std::int64_t num_patches() const;
  int num_colors() const;
  std::int64_t num_uncovered() const;
  /// After setup: the estimated lambda_P of each patch (in color order; empty without
  /// eigen_iterations).
  const std::vector<double>& patch_eigenvalues() const;

  /// The host data of the patches (for tests): the box of each patch has M = 2p + 1 points per
  /// direction, patch P's box point (I, J, K) at P M^3 + (K M + J) M + I; -1 where there is no
  /// unknown (the box's boundary layer and Dirichlet points). Patches are grouped by color:
  /// color c holds patches color_offsets[c] .. color_offsets[c + 1] - 1.
  struct Patches {
    int box = 0;  ///< M = 2p + 1
    std::vector<index_t> box_to_global;
    std::vector<double> eigenvectors;  ///< per patch S_1, S_2, S_3 (M x M, S[i M + m])
    std::vector<double> eigenvalues;   ///< per patch M per direction
    std::vector<std::int64_t> color_offsets;
    std::vector<std::int64_t> vertex;  ///< the global point of each patch's vertex
    bool lattice_colors = false;       ///< 8 parity colors (else greedy)
    std::vector<index_t> uncovered;    ///< the unknowns inside no patch, increasing
    /// The fused step's data (build_patches with fused_data; empty otherwise): every box
    /// point's global point (no -1), each patch's 8 elements and their placements (perm[3],
    /// sign[3], base[3]; kernels::sem::FusedPatchView).
    std::vector<index_t> box_full;
    std::vector<std::int64_t> elements;
    std::vector<std::int32_t> placements;
  };
  /// The setup's host phase (it reports the unknowns inside no patch; it does not throw for
  /// them); the fused step's data (box_full, elements, placements) only with fused_data, as
  /// box_full is as large as box_to_global. Throws as setup otherwise.
  static Patches build_patches(const SemPoissonOperator& A, bool fused_data = false);

 private:
  struct Data;
  kernels::sem::SchwarzView color_view(const Data& d, int color) const;
  kernels::sem::SchwarzLocals locals(const Data& d) const;
  void estimate_patch_eigenvalues(Data& d) const;
  Parameters parameters_;
  Direction direction_;
  std::shared_ptr<Data> data_;
};

}  // namespace kryflow::sem
