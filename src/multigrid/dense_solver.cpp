// Dense Cholesky or LU factorization of a small matrix on the host, through LAPACK.
#include "kryflow/multigrid/dense_solver.hpp"

#include <cmath>
#include <string>

#include "kryflow/core/error.hpp"
#include "kryflow/linalg/csr_matrix.hpp"

extern "C" {
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void dpotrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda,
             double* b, const int* ldb, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info);
}

namespace kryflow {
namespace {

/// A as a dense column-major n x n array on the host (an explicit copy).
std::vector<double> dense_copy(const LinearOperator& A) {
  const auto n = static_cast<std::size_t>(A.num_rows());
  std::vector<double> dense(n * n, 0.0);
  if (const auto* csr = dynamic_cast<const CsrMatrix*>(&A)) {
    const std::vector<index_t> row_ptr = csr->row_ptr().to_host();
    const std::vector<index_t> col_idx = csr->col_idx().to_host();
    const std::vector<double> values = csr->values_to_host();
    for (std::size_t i = 0; i < n; ++i) {
      for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
        dense[static_cast<std::size_t>(col_idx[k]) * n + i] += values[k];
      }
    }
    return dense;
  }
  Vector e(A.backend(), n);
  Vector column(A.backend(), n);
  std::vector<double> unit(n, 0.0);
  for (std::size_t j = 0; j < n; ++j) {
    unit[j] = 1.0;
    e = Vector::from_host(A.backend(), unit);
    unit[j] = 0.0;
    A.apply(e, column);
    const std::vector<double> host = column.to_host();
    std::copy(host.begin(), host.end(), dense.begin() + static_cast<std::ptrdiff_t>(j * n));
  }
  return dense;
}

bool is_symmetric(const std::vector<double>& a, std::size_t n) {
  double largest = 0.0;
  for (const double v : a) largest = std::max(largest, std::abs(v));
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t i = j + 1; i < n; ++i) {
      if (std::abs(a[j * n + i] - a[i * n + j]) > 1e-12 * largest) return false;
    }
  }
  return true;
}

}  // namespace

void DenseDirectSolver::setup(const LinearOperator& A) {
  if (A.num_rows() != A.num_cols()) {
    throw DimensionMismatch("dense coarse solver needs a square matrix, got " +
                            std::to_string(A.num_rows()) + " x " + std::to_string(A.num_cols()));
  }
  if (A.num_rows() > kMaxRows) {
    throw InvalidInput("dense coarse solver: " + std::to_string(A.num_rows()) +
                       " rows exceed the limit of " + std::to_string(kMaxRows) +
                       " (lower coarse_size or raise max_levels)");
  }
  const int n = A.num_rows();
  std::vector<double> a = dense_copy(A);
  for (const double v : a) {
    if (!std::isfinite(v))
      throw InvalidInput("dense coarse solver: the matrix has a non-finite entry");
  }
  const int lda = std::max(n, 1);
  int info = 0;
  std::vector<int> pivots;
  std::string factorization = "cholesky";
  std::vector<double> factors = a;
  if (n > 0 && is_symmetric(a, static_cast<std::size_t>(n)))
    dpotrf_("L", &n, factors.data(), &lda, &info);
  if (n > 0 && (info != 0 || !is_symmetric(a, static_cast<std::size_t>(n)))) {
    factorization = "lu";
    factors = std::move(a);
    pivots.assign(static_cast<std::size_t>(n), 0);
    dgetrf_(&n, &n, factors.data(), &lda, pivots.data(), &info);
    if (info != 0) {
      throw InvalidInput("dense coarse solver: the matrix is singular (LU pivot " +
                         std::to_string(info) + " of " + std::to_string(n) + " is zero)");
    }
  }
  n_ = n;
  backend_ = A.backend();
  factorization_ = factorization;
  factors_ = std::move(factors);
  pivots_ = std::move(pivots);
  rhs_.assign(static_cast<std::size_t>(n), 0.0);
}

void DenseDirectSolver::apply(const Vector& r, Vector& z) const {
  check_apply_shapes(r, z, "DenseDirectSolver::apply");
  if (n_ == 0) return;
  copy_bytes(Backend::reference(), rhs_.data(), r.backend(), r.span().data(),
             rhs_.size() * sizeof(double));
  const int one = 1;
  int info = 0;
  if (pivots_.empty()) {  // Cholesky
    dpotrs_("L", &n_, &one, factors_.data(), &n_, rhs_.data(), &n_, &info);
  } else {
    dgetrs_("N", &n_, &one, factors_.data(), &n_, pivots_.data(), rhs_.data(), &n_, &info);
  }
  copy_bytes(z.backend(), z.span().data(), Backend::reference(), rhs_.data(),
             rhs_.size() * sizeof(double));
}

}  // namespace kryflow
