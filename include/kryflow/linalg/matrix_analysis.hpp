// Structural and numerical properties of a matrix for `kryflow info` and the solver suggestion.
#pragma once

#include <string>

#include "kryflow/linalg/csr_matrix.hpp"

namespace kryflow {

/// Properties of a CSR matrix computed on the host.
struct MatrixProperties {
  index_t num_rows = 0;
  index_t num_cols = 0;
  std::int64_t nnz = 0;
  RowLengthStats row_lengths;
  bool pattern_symmetric = false;
  double asymmetry = 0.0;                ///< max |a_ij - a_ji| / max |a_ij|; 0 means symmetric
  index_t missing_diagonal = 0;          ///< rows with no stored or a zero diagonal entry
  index_t positive_diagonal = 0;         ///< rows with a_ii > 0
  index_t negative_diagonal = 0;         ///< rows with a_ii < 0
  index_t diagonally_dominant_rows = 0;  ///< |a_ii| >= sum_{j != i} |a_ij|
  bool has_nonfinite = false;
  std::string suggested_solver;   ///< a preset name: "pcg_jacobi", "bicgstab_jacobi", ...
  std::string suggestion_reason;  ///< one sentence

  bool numerically_symmetric(double tolerance = 1e-12) const noexcept {
    return asymmetry <= tolerance;
  }
};

/// Analyses A (any backend; copied to the host for the analysis).
MatrixProperties analyse(const CsrMatrix& A);

}  // namespace kryflow
