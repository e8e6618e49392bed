// Structural and numerical properties of a matrix for `kryflow info` and the solver suggestion.
#pragma once

#include <string>

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
  /// A shipped preset (configs/): "pcg_jacobi", "bicgstab_jacobi", "gmres_jacobi" or "gmres";
  /// "none" when no kryflow solver applies (not square, empty, NaN or Inf values).
  std::string suggested_solver;
  std::string suggestion_reason;  ///< one sentence: why, and what to watch for

  /// asymmetry <= tolerance (relative to the largest |a_ij|).
  bool numerically_symmetric(double tolerance = 1e-12) const noexcept {
    return asymmetry <= tolerance;
  }
};

/// Analyses A in O(nnz log(max row length)) on the host: row lengths, symmetry, diagonal signs
/// and dominance, non-finite values, and a preset suggestion (a heuristic, not a proof of
/// definiteness). The suggestion, first rule that matches:
///  - not square, empty, or NaN/Inf values: "none";
///  - a zero or missing diagonal entry: "gmres" (no preconditioner; Jacobi's setup would fail);
///  - symmetric (numerically_symmetric()) with all a_ii > 0 (likely SPD) or all a_ii < 0
///    (likely negative definite): "pcg_jacobi". CG handles A and M both negative definite
///    directly, so A and b are used as they are;
///  - otherwise (nonsymmetric, or symmetric with diagonal entries of both signs, hence
///    indefinite): "bicgstab_jacobi" when at least 90% of the rows are diagonally dominant,
///    else "gmres_jacobi".
/// A may live on any backend; a non-reference A is first copied to the host (the whole matrix,
/// temporarily). float32 values are analysed as the doubles they convert to. Any shape is
/// accepted. Throws only what that copy throws (BackendError,
/// OutOfMemory, std::bad_alloc).
MatrixProperties analyse(const CsrMatrix& A);

}  // namespace kryflow
