// Contract of the smoother kernels that need a matrix's entries: l1 row norms (l1-Jacobi),
// sequential Gauss-Seidel sweeps and hybrid Gauss-Seidel sweeps.
//
// Same layout as kernels/sparse_setup (reference oracle, cpu, cuda, dispatch). Gauss-Seidel is
// sequential by definition; the cpu kernel is the same loop, and the cuda one throws
// NotSupported naming the parallel smoothers (a parallel variant needs a coloring,
// kernels/coloring).
//
// Hybrid Gauss-Seidel (Baker, Falgout, Kolev, Yang, "Multigrid smoothers for ultraparallel
// computing", SIAM J. Sci. Comput. 33, 2011, sec. 6: hybrid and l1 Gauss-Seidel) cuts the rows
// into blocks of block_rows consecutive rows: block g holds rows [g block_rows, min((g + 1)
// block_rows, n)), the same partition on every backend whatever its threads. Inside a block a
// sweep is Gauss-Seidel in row order (forward) or reverse row order (backward) with the newest
// x of the block's rows; an entry whose column lies outside the row's block reads x as it was
// at the start of the sweep (Jacobi across blocks), from x_start, a copy the kernel makes first.
// Blocks are independent: the cpu kernel sweeps them in parallel, the cuda kernel with one
// thread per block walking its rows in order (a first kernel: correct, not tuned). Every row is
// computed in the reference's order, so every backend gives the same bits (fused multiply-add is
// off: --fmad=false, -ffp-contract=off).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/sparse_setup/sparse_setup.hpp"

namespace kryflow::kernels::smoothers {

using sparse_setup::PatternView;

/// A CSR matrix whose values are stored in double (values) or in float (values_f32): exactly
/// one of the two is non-null when the matrix has entries. Every kernel reads a float value as
/// double(a_ij), exactly, and sums in double, so a float view gives the bits of a double view
/// of the float-rounded values. Converts from sparse_setup::MatrixView (double values).
struct MatrixView {
  PatternView pattern;
  const double* values = nullptr;
  const float* values_f32 = nullptr;
  MatrixView() = default;
  MatrixView(const PatternView& p, const double* v, const float* v_f32 = nullptr)
      : pattern(p), values(v), values_f32(v_f32) {}
  MatrixView(const sparse_setup::MatrixView& a)  // NOLINT(google-explicit-constructor)
      : pattern(a.pattern), values(a.values) {}
};

/// One system of cg_lanczos: A (n x n, `entries` = row_ptr[n] stored entries, which shape the
/// cuda kernel's lanes per row), dinv = D^-1, and the vectors r, p, p_next and q (n entries each,
/// distinct) on the backend; scalars: the estimate's slots (ChebyshevSmoother's layout).
struct LanczosSystem {
  MatrixView a;
  std::int64_t entries = 0;
  Span<const double> dinv;
  Span<double> r;
  Span<double> p;
  Span<double> p_next;
  Span<double> q;
  double* scalars = nullptr;
};

/// Calls `f(values)` with the view's stored values, `const float*` when values_f32 is set,
/// else `const double*`: how each backend instantiates its kernel template.
template <class F>
decltype(auto) with_values(const MatrixView& a, F&& f) {
  if (a.values_f32 != nullptr) return f(a.values_f32);
  return f(a.values);
}

enum class SweepDirection { forward, backward };

#define KRYFLOW_SMOOTHERS_DECLARATIONS                                                           \
  /** d_i = s_i sum_j |a_ij|, s_i = -1 where a_ii < 0, else 1 (Baker, Falgout, Kolev, Yang,      \
      SIAM J. Sci. Comput. 33, 2011: the l1 smoother's diagonal on one process) */               \
  void l1_row_norms(const Backend& backend, const MatrixView& a, Span<double> d);                \
  /** One Gauss-Seidel sweep over the rows in `direction`: x_i = (b_i - sum_{j != i} a_ij x_j)   \
      inverse_diagonal_i, with the newest x_j (Saad, Iterative Methods, 2nd ed., sec. 4.1) */    \
  void gauss_seidel(const Backend& backend, const MatrixView& a,                                 \
                    Span<const double> inverse_diagonal, Span<const double> b, Span<double> x,   \
                    SweepDirection direction);                                                   \
  /** The hybrid smoother's diagonal d (n entries) for blocks of block_rows rows: without l1     \
      d_i = a_ii (0 when not stored); with l1 d_i = a_ii + s_i sum of |a_ij| over the columns j  \
      outside i's block (Baker et al. 2011, sec. 6: convergent for every symmetric positive      \
      definite A), summed from 0 over the row's entries in stored order, a_ii for j == i,        \
      s_i |a_ij| for j outside the block, the block's other entries skipped. With block_rows = 1 \
      and a_ii != 0 it is l1_row_norms bit for bit (s_i |a_ii| = a_ii). */                       \
  void hybrid_diagonal(const Backend& backend, const MatrixView& a, index_t block_rows, bool l1, \
                       Span<double> d);                                                          \
  /** One hybrid Gauss-Seidel sweep (above) of every block in `direction`. x_start (n entries,   \
      not x) is overwritten with x first; x~_j is x_j for j in i's block (the newest value)      \
      and x_start_j outside it. inverse_diagonal = 1 / d of hybrid_diagonal for the same         \
      block_rows and l1. Row i, in this order. Without l1 (Gauss-Seidel's form: the bits of      \
      gauss_seidel when block_rows >= n): s = b_i, s = s - a_ij x~_j over j != i in stored       \
      order, x_i = s inverse_diagonal_i. With l1 (the correction form x <- x + (D + D_l1)^-1     \
      (b - A x~) of Baker et al., D_l1 the off-block l1 term: the bits of l1-Jacobi's update     \
      x + D^-1 (b - A x) when block_rows = 1): y = 0, y = y + a_ij x~_j over every entry in      \
      stored order (x~_i = x_i, not yet updated), x_i = x_i + inverse_diagonal_i (b_i - y). */   \
  void hybrid_gauss_seidel(const Backend& backend, const MatrixView& a, index_t block_rows,      \
                           bool l1, Span<const double> inverse_diagonal, Span<const double> b,   \
                           Span<double> x, Span<double> x_start, SweepDirection direction);      \
  /** For each system of `systems`: `steps` Jacobi-preconditioned CG steps on A x = r0 from      \
      x = 0 (x is not formed), for the Lanczos estimate of lambda_max(D^-1 A) (Saad, Iterative   \
      Methods, 2nd ed., sec. 6.7.3); all systems in one launch on cuda (a cooperative kernel,    \
      each system on its own group of blocks; each step is two passes over the rows and three    \
      grid barriers). Per system (LanczosSystem): r holds r0 on entry and the last residual on   \
      return; p, p_next and q are work; writes r0.z0 to scalars[2] and, for step j, p_j.A p_j to \
      scalars[6 + j] and r_(j+1).z_(j+1) to scalars[6 + steps + j] (the slots of                 \
      ChebyshevSmoother's estimate; others untouched): it stops after a zero or non-finite r.z   \
      (its later slots untouched) or p.Ap (the rest untouched). Sums in a fixed order on each    \
      backend (on cuda it depends on the systems launched together); the backends' orders        \
      differ. */                                                                                 \
  void cg_lanczos(const Backend& backend, const std::vector<LanczosSystem>& systems, int steps);

/// Dispatch (gauss_seidel: NotSupported on cuda). Throws InvalidInput when a view with entries
/// has both or neither of values and values_f32, and (hybrid kernels) when block_rows < 1.
KRYFLOW_SMOOTHERS_DECLARATIONS

namespace reference {
KRYFLOW_SMOOTHERS_DECLARATIONS
}
namespace cpu {
KRYFLOW_SMOOTHERS_DECLARATIONS
}
namespace cuda {
KRYFLOW_SMOOTHERS_DECLARATIONS
}

#undef KRYFLOW_SMOOTHERS_DECLARATIONS

}  // namespace kryflow::kernels::smoothers
