// Internal: the checks and kernel views of the multigrid components that need a CsrMatrix's
// entries (l1-Jacobi, Gauss-Seidel, the AMG setup).
#pragma once

#include <string>

#include "kernels/smoothers/smoothers.hpp"
#include "kernels/sparse_setup/sparse_setup.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/csr_matrix.hpp"

namespace kryflow::detail {

/// A as a square CsrMatrix of either precision; throws NotSupported naming `who` when A is not
/// a CsrMatrix, DimensionMismatch when it is not square.
inline const CsrMatrix& require_square_csr(const LinearOperator& A, const std::string& who) {
  const auto* csr = dynamic_cast<const CsrMatrix*>(&A);
  if (csr == nullptr) {
    throw NotSupported(who + " needs the matrix entries: pass a CsrMatrix");
  }
  if (csr->num_rows() != csr->num_cols()) {
    throw DimensionMismatch(who + " needs a square matrix, got " + std::to_string(csr->num_rows()) +
                            " x " + std::to_string(csr->num_cols()));
  }
  return *csr;
}

/// A as a float64 CsrMatrix; throws NotSupported naming `who` otherwise.
inline const CsrMatrix& require_csr(const LinearOperator& A, const std::string& who) {
  const auto* csr = dynamic_cast<const CsrMatrix*>(&A);
  if (csr == nullptr) {
    throw NotSupported(who + " needs the matrix entries: pass a CsrMatrix");
  }
  if (csr->precision() != Precision::float64) {
    throw NotSupported(who + " needs float64 values: use with_precision(Precision::float64)");
  }
  if (csr->num_rows() != csr->num_cols()) {
    throw DimensionMismatch(who + " needs a square matrix, got " + std::to_string(csr->num_rows()) +
                            " x " + std::to_string(csr->num_cols()));
  }
  return *csr;
}

inline kernels::sparse_setup::PatternView pattern_view(const CsrMatrix& A) {
  return {A.num_rows(), A.num_cols(), A.row_ptr().span().data(), A.col_idx().span().data()};
}

/// A's pattern and double values (NotSupported from CsrMatrix::values when A stores float32).
inline kernels::sparse_setup::MatrixView matrix_view(const CsrMatrix& A) {
  return {pattern_view(A), A.values().span().data()};
}

/// A's pattern and its stored values in either precision, for the smoother kernels.
inline kernels::smoothers::MatrixView smoother_view(const CsrMatrix& A) {
  if (A.precision() == Precision::float32) {
    return {pattern_view(A), nullptr, A.values_float32().span().data()};
  }
  return {pattern_view(A), A.values().span().data()};
}

}  // namespace kryflow::detail
