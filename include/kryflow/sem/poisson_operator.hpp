// The matrix-free spectral-element Poisson operator on a conforming hexahedral mesh.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kryflow/core/array.hpp"
#include "kryflow/linalg/linear_operator.hpp"
#include "kryflow/sem/geometry.hpp"
#include "kryflow/sem/gll.hpp"
#include "kryflow/sem/numbering.hpp"

namespace kryflow::sem {

/// A = Q^T A_L Q, the stiffness matrix of -Laplace(u) on GLL points of order p, applied without
/// forming it: the element Laplacians A_e = D^T G^e D by sum factorization (Deville, Fischer and
/// Mund, 2002, sec. 4.4; the Neko paper's eq. (5)-(8)), assembled over the global numbering of
/// number_gll_points. Rows and columns of the Dirichlet points (by default every boundary point,
/// as in CEED BP5) are those of the identity, so A stays symmetric positive definite and a right-
/// hand side that is 0 there gives a solution that is 0 there.
///
/// Vectors are assembled (global): num_global() entries, one per distinct GLL point, so every
/// Krylov solver's inner products are the standard ones. On the reference and cpu backends;
/// cuda throws NotSupported for now.
class SemPoissonOperator : public LinearOperator {
 public:
  /// `vertices`: 8 x 3 corner coordinates per element (lexicographic corner order), order p in
  /// 1..15. `dirichlet_boundary` false leaves every point free (the pure Neumann operator,
  /// singular: for tests). Throws what number_gll_points, gll_rule and geometric_factors throw;
  /// OutOfMemory when the data do not fit on `backend`.
  SemPoissonOperator(const Backend& backend, std::int64_t num_elements,
                     std::span<const double> vertices, int order, bool dirichlet_boundary = true);

  index_t num_rows() const override { return static_cast<index_t>(numbering_.num_global); }
  index_t num_cols() const override { return num_rows(); }
  const Backend& backend() const override { return g_.backend(); }
  /// y = A x. Errors as LinearOperator::apply. Not for concurrent calls (shared scratch).
  void apply(const Vector& x, Vector& y) const override;
  /// d = diag(A), assembled without forming A: per element and point q = (i, j, k),
  /// sum_m G11(m,j,k) D_mi^2 + G22(i,m,k) D_mj^2 + G33(i,j,m) D_mk^2 (the Neko paper's eq. (9))
  /// plus the cross terms 2 (G12 D_ii D_jj + G13 D_ii D_kk + G23 D_jj D_kk)(q) of deformed
  /// elements (D_ii is nonzero only at the element's end points), summed over the elements that
  /// share the point; 1 at Dirichlet points. Computed on the host at construction and copied.
  /// Errors as LinearOperator::diagonal.
  void diagonal(Vector& d) const override;

  const GlobalNumbering& numbering() const noexcept { return numbering_; }
  const GllRule& rule() const noexcept { return rule_; }
  /// The assembled diagonal of the GLL mass matrix B = Q^T diag(w |J|) (host, num_global),
  /// for right-hand sides b = B f.
  const std::vector<double>& mass() const noexcept { return mass_; }
  /// Whether each global point is a Dirichlet point (host, num_global).
  const std::vector<char>& dirichlet() const noexcept { return mask_host_; }
  /// Physical coordinates of each global point (host, 3 x num_global, x y z interleaved).
  const std::vector<double>& coordinates() const noexcept { return coordinates_; }
  /// Bytes one application must move at least: metric terms (6 per local point), x and y once
  /// each per global point, the numbering (8 bytes per local point): the roofline's numerator.
  double apply_bytes() const noexcept;

 private:
  GlobalNumbering numbering_;
  GllRule rule_;
  std::vector<double> mass_;
  std::vector<double> diagonal_;
  std::vector<char> mask_host_;
  std::vector<double> coordinates_;
  Array<double> derivative_;
  Array<double> g_;
  Array<std::int64_t> local_to_global_;
  Array<std::int64_t> global_offsets_;
  Array<index_t> global_locals_;
  Array<char> mask_;
  mutable Array<double> local_x_;
  mutable Array<double> local_y_;
};

}  // namespace kryflow::sem
