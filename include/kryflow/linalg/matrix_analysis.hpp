// Structural and numerical properties of a matrix for `kryflow info` and the solver suggestion.
#pragma once

#include <string>
#include <vector>

#include "kryflow/linalg/csr_matrix.hpp"

namespace kryflow {

/// Properties of a CSR matrix computed on the host.
struct MatrixProperties {
  index_t num_rows = 0;
  index_t num_cols = 0;
  std::int64_t nnz = 0;  ///< stored entries (explicit zeros included)
  RowLengthStats row_lengths;
  bool pattern_symmetric =
      false;  ///< every stored (i, j), i != j, has a stored (j, i); square only
  /// max_ij |a_ij - a_ji| / max_ij |a_ij| over the stored off-diagonal entries (a missing
  /// transposed entry counts as 0); 0 means exactly symmetric, +Inf when A is not square.
  double asymmetry = 0.0;
  index_t missing_diagonal = 0;          ///< rows with no stored or a zero diagonal entry
  index_t positive_diagonal = 0;         ///< rows with a_ii > 0
  index_t negative_diagonal = 0;         ///< rows with a_ii < 0
  index_t diagonally_dominant_rows = 0;  ///< a_ii != 0 and |a_ii| >= sum_{j != i} |a_ij|
  bool has_nonfinite = false;            ///< some stored value is NaN or +-Inf
  /// The largest B in 2..8 whose B x B blocks tile the pattern exactly (detect_block_size, the
  /// format advisor's test; coupled unknowns per mesh node), 1 when none or A is not square.
  int block_size = 1;
  /// With block_size >= 2: block rows whose B x B diagonal block is not stored or has a zero
  /// pivot in LU with partial pivoting (the test block Jacobi's setup applies), 0 otherwise.
  index_t singular_diagonal_blocks = 0;
  /// The coupling that (block) Jacobi leaves out, row by row: the median over the (block) rows I
  /// of sum_{J != I} ||D_I^-1 A_IJ||_inf, with D_I the B x B diagonal block (B = block_size; for
  /// B = 1, sum_{j != i} |a_ij| / |a_ii|). Below 1 a row is (block) diagonally dominant. 0 when
  /// A is not square, or for B = 1 a diagonal entry is zero or missing, or for B >= 2 a diagonal
  /// block is singular.
  double jacobi_coupling = 0.0;
  /// Computed only for a nonsymmetric matrix with a full diagonal, at most max_ilut_probe_entries
  /// stored entries, and jacobi_coupling above weak_coupling_threshold, else 0: ||(L U)^-1 A
  /// v||_inf / ||v||_inf for ILUT's factors L U in the natural order with the gmres_ilut preset's
  /// parameters (IlutParameters' defaults) and a fixed pseudo-random v in [-1, 1). About 1 when L U
  /// is close to A; a large value (or +Inf: a zero pivot or a non-finite entry) marks an unstable
  /// factorization (Chow and Saad, "Experimental study of ILU preconditioners for indefinite
  /// matrices", J. Comput. Appl. Math. 86, 1997: their condest on A v instead of e).
  double ilut_growth = 0.0;
  /// jacobi_coupling above which analyse() no longer trusts (block) Jacobi or multicolor
  /// Gauss-Seidel to advise for a nonsymmetric matrix: 2 for B = 1 (airfoil_2d: 1.02; a
  /// central-difference convection-diffusion matrix with cell Peclet number 50: 7.8, on which
  /// BiCGStab-Jacobi breaks down), 20 for blocks (2dcyl1: 13.5, ex19_cavity_*: 1.2-1.8, all
  /// solved by BiCGStab-Jacobi and multicolor Gauss-Seidel; PETSc ex19 Jacobians at Grashof
  /// 1e4-1e5 with lid velocity 100-1000: 33-359, on which BiCGStab-Jacobi stagnates or breaks
  /// down).
  static double weak_coupling_threshold(int block_size) noexcept {
    return block_size >= 2 ? 20.0 : 2.0;
  }
  /// ilut_growth at or below which ILUT counts as stable (analyse()).
  static constexpr double stable_ilut_growth = 1e4;
  /// The largest matrix (stored entries) whose ILUT analyse() factors on the host for
  /// ilut_growth (about 0.2 us per entry on the PETSc ex19 Jacobians: some 2 s at this size);
  /// larger matrices keep the rules for dominant matrices.
  static constexpr std::int64_t max_ilut_probe_entries = 10'000'000;
  /// Rows that sum to zero: stored entries, |sum_j a_ij| <= zero_row_sum_tolerance *
  /// sum_j |a_ij| (relative to the row's magnitude: values written with 6 significant digits, as
  /// OpenFOAM dumps them, leave row sums of up to about 5e-6 of it).
  index_t zero_row_sum_rows = 0;
  static constexpr double zero_row_sum_tolerance = 1e-5;
  /// Square, not empty, and every row sums to zero: A 1 = 0, so A is singular with the constant
  /// vector in its null space (a pure-Neumann pressure matrix). Fixing one unknown
  /// (pin_unknown, the CLI's --pin-unknown) removes that null space.
  bool constant_null_space = false;

  /// The advice: a shipped preset (configs/): "pcg_jacobi", "bicgstab_jacobi",
  /// "bicgstab_block_jacobi", "bicgstab_mcgs", "gmres_ilut" or "gmres"; "none"
  /// when no kryflow solver applies (not square, empty, NaN or Inf values).
  std::string suggested_solver;
  /// Overrides to apply on top of the preset, in the CLI's -p syntax
  /// ("solver.max_iterations=10192"): the iteration limit and stagnation window the advice
  /// needs when they exceed the preset's (see analyse()).
  std::vector<std::string> suggested_overrides;
  /// 1-based unknown to fix to 0 before solving (--pin-unknown), 0 when none: 1 when
  /// constant_null_space.
  index_t suggested_pin_unknown = 0;
  /// The storage the preset needs (--format), "" for the default (CSR): "auto" for the block
  /// presets (bicgstab_block_jacobi, bicgstab_mcgs), which the format advisor stores as BSR-B.
  std::string suggested_format;
  std::string suggestion_reason;  ///< why, and what to watch for

  /// asymmetry <= tolerance (relative to the largest |a_ij|).
  bool numerically_symmetric(double tolerance = 1e-12) const noexcept {
    return asymmetry <= tolerance;
  }
};

/// Analyses A in O(nnz log(max row length)) on the host (plus an ILUT factorization when the
/// dominance is weak, see below): row lengths, symmetry, diagonal signs
/// and dominance, row sums, non-finite values, and a solver suggestion (a heuristic, not a proof
/// of definiteness). The preset, first rule that matches:
///  - not square, empty, or NaN/Inf values: "none";
///  - a zero or missing diagonal entry, the pattern tiling into B x B blocks (block_size >= 2)
///    and every diagonal block nonsingular (coupled unknowns whose block is invertible though a
///    scalar diagonal entry is zero, e.g. a pressure row of a pressure-velocity block):
///    "bicgstab_block_jacobi" (stored as BSR-B, which `--format auto` picks for such a pattern;
///    the block inverses exist where point Jacobi's do not);
///  - any other zero or missing diagonal entry: "gmres" (no preconditioner; Jacobi's setup
///    would fail);
///  - symmetric (numerically_symmetric()) with all a_ii > 0 (likely SPD) or all a_ii < 0
///    (likely negative definite): "pcg_jacobi". CG handles A and M both negative definite
///    directly, so A and b are used as they are;
///  - nonsymmetric, the pattern tiling into B x B blocks (block_size >= 2) and every diagonal
///    block nonsingular (block-coupled Jacobians), dominance not weak: "bicgstab_mcgs", BiCGStab
///    with forward multicolor block Gauss-Seidel on BSR-B in the greedy row-order coloring (on
///    every block matrix of the test corpus faster than BiCGStab-Jacobi on a GPU, with about half
///    its iterations);
///  - nonsymmetric with a full diagonal (every diagonal block nonsingular) and weak (block)
///    diagonal dominance, jacobi_coupling > weak_coupling_threshold(block_size): (block) Jacobi
///    is not to be trusted, so ILUT in the natural order is probed (ilut_growth). Stable
///    (ilut_growth <= stable_ilut_growth): "gmres_ilut" with a restart of 200 (on the PETSc ex19
///    Jacobians above GMRES(30) with ILUT stagnates, GMRES(200) converges in 570-710
///    iterations, as PETSc's own GMRES with ILU(0) needs a restart of 200 there); unstable:
///    "bicgstab_mcgs", multicolor Gauss-Seidel (on BSR-B for blocks), which needs no
///    factorization (it converges on the convection-diffusion matrix above, where ILUT's
///    factors blow up);
///  - otherwise (nonsymmetric, or symmetric with diagonal entries of both signs, hence
///    indefinite): "bicgstab_jacobi". On every nonsymmetric matrix of the test corpus it
///    converges in fewer iterations than right-preconditioned GMRES(30) with Jacobi, which
///    stagnates on some (airfoil_2d); GMRES is the fallback a breakdown's hint names.
/// When constant_null_space, the advice also fixes unknown 1 (suggested_pin_unknown = 1).
/// Iteration budget, added to suggested_overrides where it exceeds the preset's: the iteration
/// limit is n, the number of unknowns (exact-arithmetic CG and full GMRES end within n steps),
/// 4n for CG (on an ill-conditioned matrix its residual needs several n steps in floating
/// point), within [the preset's limit, 100000]; the stagnation window is n within [500, 5000]
/// (the residual of CG, and of BiCGStab on slow problems, can plateau for thousands of
/// iterations before it falls again).
/// A may live on any backend; a non-reference A is first copied to the host (the whole matrix,
/// temporarily). float32 values are analysed as the doubles they convert to. Any shape is
/// accepted. Throws only what that copy throws (BackendError,
/// OutOfMemory, std::bad_alloc).
MatrixProperties analyse(const CsrMatrix& A);

}  // namespace kryflow
