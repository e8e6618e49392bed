// Dense Cholesky or LU factorization of a small matrix on the host, through LAPACK.
#include "kryflow/multigrid/dense_solver.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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
void dsyev_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
            double* work, const int* lwork, int* info);
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
    if (!std::isfinite(v)) {
      throw InvalidInput("dense coarse solver: the matrix has a non-finite entry");
    }
  }
  method_ = Method::cholesky;
  pivots_.clear();
  inverse_eigenvalues_.clear();
  null_space_dimension_ = 0;
  const bool symmetric = is_symmetric(a, static_cast<std::size_t>(n));
  int info = symmetric ? 0 : 1;
  factors_ = a;
  if (n > 0 && symmetric) dpotrf_("L", &n, factors_.data(), &n, &info);
  if (n > 0 && info != 0) {
    factors_ = std::move(a);
    if (symmetric) {
      factor_eigen(n);
    } else {
      factor_lu(n);
    }
  }
  n_ = n;
  backend_ = A.backend();
  rhs_.assign(static_cast<std::size_t>(n), 0.0);
  work_.assign(static_cast<std::size_t>(n), 0.0);
}

void DenseDirectSolver::factor_lu(int n) {
  method_ = Method::lu;
  double largest = 0.0;
  for (const double v : factors_) largest = std::max(largest, std::abs(v));
  pivots_.assign(static_cast<std::size_t>(n), 0);
  int info = 0;
  dgetrf_(&n, &n, factors_.data(), &n, pivots_.data(), &info);
  // A pivot at rounding level of the largest entry is a zero pivot of the exact matrix.
  const double tiny = 1e3 * n * std::numeric_limits<double>::epsilon() * largest;
  for (int k = 0; k < n && info == 0; ++k) {
    if (std::abs(factors_[static_cast<std::size_t>(k) * n + k]) <= tiny) info = k + 1;
  }
  if (info != 0) {
    throw InvalidInput("dense coarse solver: the matrix is singular (LU pivot " +
                       std::to_string(info) + " of " + std::to_string(n) + " is zero)");
  }
}

void DenseDirectSolver::factor_eigen(int n) {
  // A = V diag(lambda) V^T (dsyev); eigenvalues of magnitude at rounding level of the largest
  // are taken as zero, and their components dropped: z = V diag(1/lambda or 0) V^T r, the
  // pseudo-inverse, symmetric like A.
  method_ = Method::eigen;
  std::vector<double> lambda(static_cast<std::size_t>(n));
  int info = 0, lwork = -1;
  double query = 0.0;
  dsyev_("V", "L", &n, factors_.data(), &n, lambda.data(), &query, &lwork, &info);
  lwork = static_cast<int>(query);
  std::vector<double> work(static_cast<std::size_t>(std::max(lwork, 1)));
  dsyev_("V", "L", &n, factors_.data(), &n, lambda.data(), work.data(), &lwork, &info);
  if (info != 0) {
    throw InvalidInput("dense coarse solver: the eigendecomposition did not converge");
  }
  double largest = 0.0;
  for (const double l : lambda) largest = std::max(largest, std::abs(l));
  const double tiny = 1e3 * n * std::numeric_limits<double>::epsilon() * largest;
  inverse_eigenvalues_.resize(lambda.size());
  for (std::size_t k = 0; k < lambda.size(); ++k) {
    const bool zero = std::abs(lambda[k]) <= tiny;
    inverse_eigenvalues_[k] = zero ? 0.0 : 1.0 / lambda[k];
    null_space_dimension_ += zero ? 1 : 0;
  }
}

std::string DenseDirectSolver::factorization() const {
  switch (method_) {
    case Method::cholesky:
      return rhs_.empty() && n_ == 0 ? "" : "cholesky";
    case Method::lu:
      return "lu";
    case Method::eigen:
      return null_space_dimension_ > 0 ? "eigen, pseudo-inverse over a null space of dimension " +
                                             std::to_string(null_space_dimension_)
                                       : "eigen";
  }
  return "";
}

void DenseDirectSolver::apply(const Vector& r, Vector& z) const {
  check_apply_shapes(r, z, "DenseDirectSolver::apply");
  if (n_ == 0) return;
  copy_bytes(Backend::reference(), rhs_.data(), r.backend(), r.span().data(),
             rhs_.size() * sizeof(double));
  const int one = 1;
  int info = 0;
  const auto n = static_cast<std::size_t>(n_);
  switch (method_) {
    case Method::cholesky:
      dpotrs_("L", &n_, &one, factors_.data(), &n_, rhs_.data(), &n_, &info);
      break;
    case Method::lu:
      dgetrs_("N", &n_, &one, factors_.data(), &n_, pivots_.data(), rhs_.data(), &n_, &info);
      break;
    case Method::eigen:
      // w = diag(1/lambda) V^T r, then rhs = V w (V column-major: column k is eigenvector k).
      for (std::size_t k = 0; k < n; ++k) {
        double sum = 0.0;
        for (std::size_t i = 0; i < n; ++i) sum += factors_[k * n + i] * rhs_[i];
        work_[k] = inverse_eigenvalues_[k] * sum;
      }
      for (std::size_t i = 0; i < n; ++i) rhs_[i] = 0.0;
      for (std::size_t k = 0; k < n; ++k) {
        for (std::size_t i = 0; i < n; ++i) rhs_[i] += factors_[k * n + i] * work_[k];
      }
      break;
  }
  copy_bytes(z.backend(), z.span().data(), Backend::reference(), rhs_.data(),
             rhs_.size() * sizeof(double));
}

}  // namespace kryflow
