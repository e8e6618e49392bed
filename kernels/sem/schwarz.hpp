// Contract of the local solves of the overlapping Schwarz smoothers of the spectral-element
// Poisson operator (Lottes and Fischer, "Hybrid multigrid/Schwarz algorithms for the spectral
// element method", J. Sci. Comput. 24, 2005; the ASM/RAS smoothers of nekRS): each element's
// patch is the element's (n = p + 1)^3 GLL points extended by one layer of points into each
// face neighbour, an N^3 box with N = n + 2, and its local problem is the separable
// approximation
//   A_e = B_t (x) B_s (x) A_r + B_t (x) A_s (x) B_r + A_t (x) B_s (x) B_r,
// inverted by the fast diagonalization method (Lynch, Rice and Thomas, Numer. Math. 6, 1964):
// with S_d^T A_d S_d = Lambda_d and S_d^T B_d S_d = I in each direction d,
//   A_e^-1 = (S_t (x) S_s (x) S_r) (I (x) I (x) Lambda_r + I (x) Lambda_s (x) I
//            + Lambda_t (x) I (x) I)^-1 (S_t (x) S_s (x) S_r)^T.
// Points of the box that are not in the patch (the box's edges and corners outside the
// element, points beyond the mesh boundary or on the Dirichlet boundary) have zero rows in
// S_d or no global point, so they neither read nor receive anything.
//
// schwarz_fdm_solve, the same order of operations on every backend: per element e, the gather
// u[(k N + j) N + i] = r[g] for the box point's global point g (0 where it has none); then the
// six contractions, each sum started at 0 and added in increasing index:
//   t1[m, j, k] = sum_i S_r[i, m] u[i, j, k],  t2[m, l, k] = sum_j S_s[j, l] t1[m, j, k],
//   t3[m, l, o] = sum_k S_t[k, o] t2[m, l, k],
//   t3[m, l, o] = t3[m, l, o] * d[m, l, o], d = 1 / (lambda_r[m] + lambda_s[l] + lambda_t[o])
//   (0 where that sum is not positive),
//   y1[i, l, o] = sum_m S_r[i, m] t3[m, l, o], y2[i, j, o] = sum_l S_s[j, l] y1[i, l, o],
//   y[i, j, k] = sum_o S_t[k, o] y2[i, j, o];
// then the writes: the whole box (element e's box point q at e N^3 + q; the additive method
// sums them over the patches that hold each point), or with `restricted` only the element's own
// points (box point (i + 1, j + 1, k + 1) at ((e n + k) n + j) n + i: the restricted additive
// method, summed with the operator's own assembly lists).
//
// schwarz_assemble: z[g] = weight[g] * (sum of y_local over the patch points of g in increasing
// index, in double) where weight[g] != 0, and z[g] = r[g] where weight[g] == 0 (the Dirichlet
// points, where the operator is the identity). With a SchwarzUpdate u (a step of a preconditioned
// Chebyshev smoother), z[g] is not stored but used at once: d[g] = u.alpha * z[g] + u.beta * d[g]
// (d not read when beta == 0: d[g] = u.alpha * z[g]), then x[g] = d[g] + x[g] (x[g] = d[g] when
// x_is_zero): the bits of z, then axpby(alpha, z, beta, d) and axpby(1, d, 1, x).
//
// schwarz_scatter_add (the multiplicative Schwarz methods, whose patches of one color share no
// point): x[g] = x[g] + w * y for every box point of patch e with a global point g, w = omega *
// patch_scale[e] (omega alone when patch_scale is null; y widened to double first; a rounded
// product and sum, so every backend gives the same bits). The caller guarantees that no global
// point appears at two box points of the view (else the cpu and cuda sums race).
//
// schwarz_patch_norms: norms[e] = sum over the box points of patch e with a global point g of
// v[g]^2 (double; in increasing box index on the host backends, in a fixed order of warp
// partial sums on cuda, which agrees to rounding).
//
// vertex_patch_fused_step (the seed's fused multiplicative step on vertex patches of one color,
// Cui and Kanschat, Alg. 2 with the residual computed on the fly): per patch P, x_B = x at every
// point of P's box (0 at the Dirichlet points, as the operator's element kernels see them); the
// 8 elements' Laplacians A_e x_e (the operator's element arithmetic, a.float_arithmetic) summed
// into the box in element order; r_P = b - (sum) at P's unknowns (the box points with a global
// point in view.box_to_global), 0 elsewhere; then schwarz_fdm_solve's local solve of r_P and
// schwarz_scatter_add's update of x. At P's unknowns the sum is (A x)_P, since every element
// holding such a point is one of P's, so the step equals schwarz_fdm_solve of b - A x followed
// by schwarz_scatter_add to rounding; patches of one color read and write no common unknown.
// cuda: one block per patch (boxes of at most 17 points, p <= 8), fused multiply-adds.
//
// With float32 patches (eigenvectors32 and eigenvalues32 set) the gathered r is rounded to float
// and the contractions run in float, so every y is a float: stored as such in float locals
// (SchwarzLocals::values32, half the bytes), or widened to double in double locals. The sums of
// schwarz_assemble are in double either way (each local value widened to double as it is added),
// so float and double locals of the same local solves give the same z, bit for bit. float64
// patches take double locals. The cuda kernel fuses each multiply-add (fma): it agrees with the
// host backends to rounding, not bit for bit.
#pragma once

#include <cstdint>

#include "kernels/sem/poisson.hpp"
#include "kernels/sem/transfer.hpp"
#include "kryflow/core/array.hpp"

namespace kryflow::kernels::sem {

/// The patches of one order (all arrays on one backend).
struct SchwarzView {
  std::int64_t num_elements = 0;
  int n = 0;  // inner points per box direction (box N = n + 2): p + 1 for element patches
  const index_t* box_to_global = nullptr;  // num_elements x N^3, -1: no global point
  const double* eigenvectors = nullptr;    // num_elements x 3 x N x N: S_d[i N + m]
  const double* eigenvalues = nullptr;     // num_elements x 3 x N: lambda_d[m]
  const float* eigenvectors32 = nullptr;   // the same in float: used when set
  const float* eigenvalues32 = nullptr;
  bool restricted = false;  // write the element's own points only
};

/// The local solves' results y_local, written by schwarz_fdm_solve and read by schwarz_assemble
/// (on the patches' backend): num_elements x N^3 entries, or x n^3 when restricted. Exactly one
/// of values and values32 is set (both may be null without elements); values32 (float) only with
/// float32 patches. The dispatch throws InvalidInput otherwise.
struct SchwarzLocals {
  double* values = nullptr;
  float* values32 = nullptr;
};

/// What vertex_patch_fused_step needs besides a SchwarzView of the same patches (box of M = 2p + 1
/// points per direction): per patch the global point of every box point (num_patches x M^3, no
/// -1), its 8 elements (num_patches x 8) and where each lies in the box (num_patches x 8 x 9:
/// perm[3], sign[3], base[3]; element point (i_0, i_1, i_2) is box point I_a = base[a] +
/// sign[a] i_{perm[a]}).
struct FusedPatchView {
  const index_t* box_full = nullptr;
  const std::int64_t* elements = nullptr;
  const std::int32_t* placements = nullptr;
};

/// The vector updates schwarz_assemble may fuse: d = alpha z + beta d, x = d + x.
struct SchwarzUpdate {
  double alpha = 1.0;
  double beta = 0.0;
  double* x = nullptr;     // null: no update (z written)
  bool x_is_zero = false;  // x = d (x not read)
};

#define KRYFLOW_SEM_SCHWARZ_DECLARATIONS                                                          \
  /** y_local = the local solves of r (num_global entries), in y_local's type */                  \
  void schwarz_fdm_solve(const Backend& backend, const SchwarzView& view, Span<const double> r,   \
                         const SchwarzLocals& y_local);                                           \
  /** z = the weighted sums (in double) of y_local on out's lists; z = r where the weight is 0;   \
   * with update.x set, z is d and receives d = alpha z + beta d, then x = d + x */               \
  void schwarz_assemble(const Backend& backend, const TransferSideView& out,                      \
                        const SchwarzLocals& y_local, Span<const double> r,                       \
                        const SchwarzUpdate& update, Span<double> z);                             \
  /** x[g] += omega patch_scale[e] y_local at every box point (whole boxes, not restricted) of    \
   * global point g; no point twice; patch_scale null: 1 */                                       \
  void schwarz_scatter_add(const Backend& backend, const SchwarzView& view,                       \
                           const SchwarzLocals& y_local, double omega, const double* patch_scale, \
                           Span<double> x);                                                       \
  /** norms[e] = sum of v[g]^2 over patch e's box points with a global point (num_elements) */    \
  void schwarz_patch_norms(const Backend& backend, const SchwarzView& view, Span<const double> v, \
                           Span<double> norms);                                                   \
  /** one fused multiplicative step on view's patches: x += omega scale A_P^-1 (b - A x)_P */     \
  void vertex_patch_fused_step(const Backend& backend, const SchwarzView& view,                   \
                               const FusedPatchView& fused, const PoissonView& a,                 \
                               Span<const double> b, double omega, const double* patch_scale,     \
                               Span<double> x);

/// Dispatch.
KRYFLOW_SEM_SCHWARZ_DECLARATIONS

namespace reference {
KRYFLOW_SEM_SCHWARZ_DECLARATIONS
}
namespace cpu {
KRYFLOW_SEM_SCHWARZ_DECLARATIONS
}
namespace cuda {
KRYFLOW_SEM_SCHWARZ_DECLARATIONS
}

#undef KRYFLOW_SEM_SCHWARZ_DECLARATIONS

}  // namespace kryflow::kernels::sem
