// Reference dense kernels: plain loops and LAPACK, the oracle of the cpu and cuda versions.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/dense/dense.hpp"

extern "C" {
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void dpotrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda,
             double* b, const int* ldb, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info);
void dsyev_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
            double* work, const int* lwork, int* info);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc);
}

namespace kryflow::kernels::dense::reference {
namespace {

using Size = std::size_t;

/// The identity, column-major n x n.
std::vector<double> identity(int n) {
  std::vector<double> e(Size(n) * Size(n), 0.0);
  for (int i = 0; i < n; ++i) e[Size(i) * Size(n) + Size(i)] = 1.0;
  return e;
}

/// A^-1 by LU with partial pivoting; A^-T solved for, so that the column-major result is A^-1
/// row-major. Returns the first pivot at rounding level (1-based) or 0.
index_t invert_lu(int n, double largest, double* a) {
  std::vector<double> lu(a, a + Size(n) * Size(n));
  std::vector<int> pivots(static_cast<Size>(n), 0);
  int info = 0;
  dgetrf_(&n, &n, lu.data(), &n, pivots.data(), &info);
  const double tiny = 1e3 * n * std::numeric_limits<double>::epsilon() * largest;
  for (int k = 0; k < n; ++k) {
    if (std::abs(lu[Size(k) * Size(n) + Size(k)]) <= tiny) return k + 1;
  }
  if (info != 0) return info;
  std::vector<double> x = identity(n);
  dgetrs_("T", &n, &n, lu.data(), &n, pivots.data(), x.data(), &n, &info);
  std::copy(x.begin(), x.end(), a);
  return 0;
}

/// The pseudo-inverse V diag(1/lambda or 0) V^T (symmetric A). Returns false when dsyev fails.
bool invert_eigen(int n, double* a, index_t& null_space_dimension) {
  std::vector<double> v(a, a + Size(n) * Size(n));
  std::vector<double> lambda(static_cast<Size>(n));
  int info = 0, lwork = -1;
  double query = 0.0;
  dsyev_("V", "L", &n, v.data(), &n, lambda.data(), &query, &lwork, &info);
  lwork = static_cast<int>(query);
  std::vector<double> work(Size(std::max(lwork, 1)));
  dsyev_("V", "L", &n, v.data(), &n, lambda.data(), work.data(), &lwork, &info);
  if (info != 0) return false;
  double largest = 0.0;
  for (const double l : lambda) largest = std::max(largest, std::abs(l));
  const double tiny = 1e3 * n * std::numeric_limits<double>::epsilon() * largest;
  // W = V diag(w), w_k = 1/lambda_k or 0; then a = W V^T.
  std::vector<double> w(v);
  null_space_dimension = 0;
  for (int k = 0; k < n; ++k) {
    const bool zero = std::abs(lambda[Size(k)]) <= tiny;
    const double scale = zero ? 0.0 : 1.0 / lambda[Size(k)];
    null_space_dimension += zero ? 1 : 0;
    for (int i = 0; i < n; ++i) w[Size(k) * Size(n) + Size(i)] *= scale;
  }
  const double one = 1.0, zero = 0.0;
  dgemm_("N", "T", &n, &n, &n, &one, w.data(), &n, v.data(), &n, &zero, a, &n);
  return true;
}

}  // namespace

void densify(const Backend&, const MatrixView& a, Span<double> dense) {
  const Size n = static_cast<Size>(a.pattern.num_rows);
  std::fill(dense.begin(), dense.end(), 0.0);
  for (Size i = 0; i < n; ++i) {
    for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
      double& entry = dense[static_cast<Size>(a.pattern.col_idx[k]) * n + i];
      entry = entry + a.values[k];
    }
  }
}

Properties properties(const Backend&, index_t n, Span<const double> dense) {
  Properties p;
  for (const double v : dense) {
    if (!std::isfinite(v)) {
      p.finite = false;
    } else {
      p.largest = std::max(p.largest, std::abs(v));
    }
  }
  p.symmetric = p.finite;
  if (n > 0) p.first_diagonal = dense[0];
  const Size m = static_cast<Size>(n);
  for (Size j = 0; j < m && p.symmetric; ++j) {
    for (Size i = j + 1; i < m; ++i) {
      if (std::abs(dense[j * m + i] - dense[i * m + j]) > 1e-12 * p.largest) {
        p.symmetric = false;
        break;
      }
    }
  }
  return p;
}

Inverse invert(const Backend&, index_t n, const Properties& properties, Span<double> dense) {
  Inverse result;
  const int m = static_cast<int>(n);
  if (m == 0) return result;
  if (properties.symmetric) {
    // Cholesky of A, or of -A when A may be negative definite (a_11 < 0): then A^-1 = -(-A)^-1.
    const double sign = properties.first_diagonal < 0.0 ? -1.0 : 1.0;
    std::vector<double> factor(dense.begin(), dense.end());
    for (double& v : factor) v = sign * v;
    int info = 0;
    dpotrf_("L", &m, factor.data(), &m, &info);
    if (info == 0) {
      std::vector<double> x = identity(m);
      dpotrs_("L", &m, &m, factor.data(), &m, x.data(), &m, &info);
      for (std::size_t k = 0; k < x.size(); ++k) dense[k] = sign * x[k];
      if (sign < 0.0) result.method = Method::cholesky_of_negated;
      return result;
    }
    result.method = Method::eigen;
    result.converged = invert_eigen(m, dense.data(), result.null_space_dimension);
    return result;
  }
  result.method = Method::lu;
  result.zero_pivot = invert_lu(m, properties.largest, dense.data());
  return result;
}

void apply(const Backend&, index_t n, Span<const double> inverse, Span<const double> r,
           Span<double> z) {
  const Size m = static_cast<Size>(n);
  for (Size i = 0; i < m; ++i) {
    double sum = 0.0;
    for (Size j = 0; j < m; ++j) sum = sum + inverse[i * m + j] * r[j];
    z[i] = sum;
  }
}

}  // namespace kryflow::kernels::dense::reference
