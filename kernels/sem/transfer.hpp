// Contract of the grid transfers between spectral-element spaces of two polynomial orders on the
// same mesh (p-multigrid, Rønquist and Patera 1987; the transfers of nekRS's p-multigrid):
// element by element, the tensor product J (x) J (x) J of the 1D Lagrange interpolation matrix
// J (n_out x n_in, between the two GLL rules) applied to the element's values, read from and
// written to assembled (global) vectors: with a weight per global point, or through the owner
// of each point (one local point per global point).
//
// transfer_interpolate, the same order of operations on every backend: per element, the input
// u[(k n + j) n + i] for its local points (g the point's global index): weight[g] * x[g], or,
// where the side has owners, x[g] at the local point that owns g (owner 1) and 0 at the others
// (each global point counted once; 0 at Dirichlet points); then the three contractions, r
// first: t1[a, j, k] = sum_i J[a, i] u[i, j, k], t2[a, b, k] = sum_j J[b, j] t1[a, j, k],
// y[a, b, c] = sum_k J[c, k] t2[a, b, k], each sum started at 0 and added in increasing index;
// y is written to the element's out-side local points (element e's point (a, b, c) at
// (e n_out + c) n_out + b) n_out + a).
//
// transfer_prolongate: the same interpolation, written straight to the out side's global
// points: y[g] = beta y[g] + y_e[q] at the local point q that owns g (owner 1), y[g] = beta y[g]
// where that local point's owner is 2 (a Dirichlet point). On a conforming mesh the
// interpolants of neighbouring elements agree on their shared points (a face's values depend
// on the face's coarse points only), so this is the weighted average of the copies without
// forming them.
//
// transfer_assemble: y[g] = beta y[g] + weight[g] * (sum of y_local over the locals of g in
// increasing local index), beta = 0 not reading y.
//
// With products rounded as on the host (the library compiles CUDA with --fmad=false) the cuda
// kernels give the reference's bits; tests allow rounding all the same.
#pragma once

#include <cstdint>

#include "kryflow/core/array.hpp"

namespace kryflow::kernels::sem {

/// One side of a transfer: a global numbering of the GLL points of order n - 1 (all arrays on
/// one backend).
struct TransferSideView {
  std::int64_t num_elements = 0;
  int n = 0;  // points per direction
  std::int64_t num_global = 0;
  const index_t* local_to_global = nullptr;      // num_elements x n^3
  const std::int64_t* global_offsets = nullptr;  // num_global + 1
  const index_t* global_locals = nullptr;        // num_elements x n^3, grouped by global point
  const double* weight = nullptr;                // num_global
  /// num_elements x n^3, or null: 1 at the first local point (in increasing local index) of
  /// every global point that is not a Dirichlet point, 2 at the first of every Dirichlet point,
  /// 0 elsewhere.
  const std::uint8_t* owner = nullptr;
  /// Optional, for schwarz_assemble on cuda (SemPoissonOperator::shared_offsets and
  /// dirichlet_mask): global points 0 .. num_shared - 1 are the shared ones, with the lists
  /// global_locals[shared_offsets[g] .. shared_offsets[g + 1] - 1]; every later point has one
  /// local, global_locals[shared_offsets[num_shared] + g - num_shared]; mask[g] = 1 at the
  /// Dirichlet points (null: none). The weight must then be 0 at the Dirichlet points and 1 / (the
  /// list's length) elsewhere (restricted additive Schwarz): the kernel computes it instead of
  /// reading it, and reads no global_offsets.
  std::int64_t num_shared = 0;
  const index_t* shared_offsets = nullptr;
  const char* mask = nullptr;
};

#define KRYFLOW_SEM_TRANSFER_DECLARATIONS                                                      \
  /** y_local (num_elements x n_out^3) = per element (J x J x J) of the weighted gather of x   \
   * (in.num_global entries); matrix: n_out x in.n, row-major */                               \
  void transfer_interpolate(const Backend& backend, const TransferSideView& in, int n_out,     \
                            const double* matrix, Span<const double> x, Span<double> y_local); \
  /** y = beta y + the interpolation of x, written by the owners of out's points (out.owner    \
   * and out.local_to_global set); matrix: out.n x in.n, row-major */                          \
  void transfer_prolongate(const Backend& backend, const TransferSideView& in,                 \
                           const TransferSideView& out, const double* matrix,                  \
                           Span<const double> x, double beta, Span<double> y);                 \
  /** y = beta y + weight * Q^T y_local on out's numbering */                                  \
  void transfer_assemble(const Backend& backend, const TransferSideView& out,                  \
                         Span<const double> y_local, double beta, Span<double> y);

/// Dispatch.
KRYFLOW_SEM_TRANSFER_DECLARATIONS

namespace reference {
KRYFLOW_SEM_TRANSFER_DECLARATIONS
}
namespace cpu {
KRYFLOW_SEM_TRANSFER_DECLARATIONS
}
namespace cuda {
KRYFLOW_SEM_TRANSFER_DECLARATIONS
}

#undef KRYFLOW_SEM_TRANSFER_DECLARATIONS

}  // namespace kryflow::kernels::sem
