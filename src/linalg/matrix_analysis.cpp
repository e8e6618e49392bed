// Host analysis of a CSR matrix: row lengths, symmetry, diagonal, and a solver suggestion.
#include "kryflow/linalg/matrix_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kryflow {

MatrixProperties analyse(const CsrMatrix& A) {
  const CsrMatrix host =
      A.backend().kind() == BackendKind::reference ? CsrMatrix() : A.copy_to(Backend::reference());
  const CsrMatrix& M = A.backend().kind() == BackendKind::reference ? A : host;
  const index_t* row_ptr = M.row_ptr().data();
  const index_t* col = M.col_idx().data();
  const std::vector<double> values = M.values_to_host();  // either precision, as doubles
  const double* val = values.data();

  MatrixProperties p;
  p.num_rows = M.num_rows();
  p.num_cols = M.num_cols();
  p.nnz = M.nnz();
  p.row_lengths = M.row_length_stats();
  const bool square = p.num_rows == p.num_cols;
  double max_abs = 0.0;
  double max_asym = 0.0;
  bool pattern_symmetric = square;
  for (index_t i = 0; i < p.num_rows; ++i) {
    double diagonal = 0.0;
    double off_sum = 0.0;
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      const index_t j = col[k];
      const double v = val[k];
      if (!std::isfinite(v)) p.has_nonfinite = true;
      max_abs = std::max(max_abs, std::abs(v));
      if (j == i) {
        diagonal = v;
      } else {
        off_sum += std::abs(v);
      }
      if (square && j != i) {
        // a_ji by binary search in row j (columns are sorted)
        const index_t* first = col + row_ptr[j];
        const index_t* last = col + row_ptr[j + 1];
        const index_t* it = std::lower_bound(first, last, i);
        double transposed = 0.0;
        if (it != last && *it == i) {
          transposed = val[row_ptr[j] + (it - first)];
        } else {
          pattern_symmetric = false;
        }
        max_asym = std::max(max_asym, std::abs(v - transposed));
      }
    }
    if (diagonal == 0.0) ++p.missing_diagonal;
    if (diagonal > 0.0) ++p.positive_diagonal;
    if (diagonal < 0.0) ++p.negative_diagonal;
    if (diagonal != 0.0 && std::abs(diagonal) >= off_sum) ++p.diagonally_dominant_rows;
  }
  p.pattern_symmetric = pattern_symmetric;
  p.asymmetry = !square ? INFINITY : (max_abs > 0.0 ? max_asym / max_abs : 0.0);

  const bool symmetric = p.numerically_symmetric();
  const bool dominant = p.diagonally_dominant_rows >= p.num_rows - p.num_rows / 10;
  if (!square) {
    p.suggested_solver = "none";
    p.suggestion_reason = "the matrix is not square; kryflow's Krylov solvers need A square";
  } else if (p.num_rows == 0) {
    p.suggested_solver = "none";
    p.suggestion_reason = "the matrix is empty";
  } else if (p.has_nonfinite) {
    p.suggested_solver = "none";
    p.suggestion_reason = "the matrix holds NaN or Inf values";
  } else if (p.missing_diagonal > 0) {
    p.suggested_solver = "gmres";
    p.suggestion_reason = std::to_string(p.missing_diagonal) +
                          " rows have a zero or missing diagonal entry, so the Jacobi "
                          "preconditioner cannot be used (its setup fails); GMRES without a "
                          "preconditioner is the safe choice";
  } else if (symmetric && p.positive_diagonal == p.num_rows) {
    p.suggested_solver = "pcg_jacobi";
    p.suggestion_reason =
        "symmetric with a positive diagonal, so likely positive definite: "
        "conjugate gradients with Jacobi (CG reports a breakdown if A turns out "
        "to be indefinite)";
  } else if (symmetric && p.negative_diagonal == p.num_rows) {
    p.suggested_solver = "pcg_jacobi";
    p.suggestion_reason =
        "symmetric with a negative diagonal, so likely negative definite: conjugate gradients "
        "with Jacobi as it is (A and the Jacobi preconditioner are then both negative definite, "
        "which CG handles directly; there is no need to negate A and b)";
  } else if (symmetric) {
    // Diagonal entries of both signs: A is indefinite and CG does not apply.
    p.suggested_solver = dominant ? "bicgstab_jacobi" : "gmres_jacobi";
    p.suggestion_reason = std::string("symmetric with diagonal entries of both signs (") +
                          std::to_string(p.positive_diagonal) + " positive, " +
                          std::to_string(p.negative_diagonal) +
                          " negative), so indefinite and unfit for CG: " +
                          (dominant ? "diagonally dominant in at least 90% of the rows, BiCGStab "
                                      "with Jacobi"
                                    : "restarted GMRES with Jacobi is the robust choice");
  } else if (dominant) {
    p.suggested_solver = "bicgstab_jacobi";
    p.suggestion_reason =
        "nonsymmetric and diagonally dominant in at least 90% of the rows: "
        "BiCGStab with Jacobi";
  } else {
    p.suggested_solver = "gmres_jacobi";
    p.suggestion_reason =
        "nonsymmetric and not diagonally dominant in 90% of the rows: "
        "restarted GMRES with Jacobi is the robust choice";
  }
  return p;
}

}  // namespace kryflow
