// Overlapping Schwarz preconditioners of the spectral-element Poisson operator on element
// patches, with fast-diagonalization local solves.
#pragma once

#include <string>
#include <vector>

#include "kryflow/core/array.hpp"
#include "kryflow/core/precision.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"
#include "kryflow/sem/poisson_operator.hpp"

namespace kryflow::kernels::sem {
struct SchwarzUpdate;
}

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

}  // namespace kryflow::sem
