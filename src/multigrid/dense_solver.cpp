// Direct solver of a small matrix by its explicit inverse, formed on the matrix's backend.
#include "kryflow/multigrid/dense_solver.hpp"

#include <string>
#include <vector>

#include "kernels/blas/blas.hpp"
#include "kernels/dense/dense.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "src/multigrid/csr_access.hpp"

namespace kryflow {
namespace {

/// A as a dense column-major n x n array on its backend: a CsrMatrix by the densify kernel
/// (float32 values widened to double on the backend first, exactly); another operator column
/// by column, applied to the unit vectors (one upload of e_j each, and a copy of the column
/// within the backend).
Array<double> dense_copy(const LinearOperator& A) {
  const Backend& backend = A.backend();
  const auto n = static_cast<std::size_t>(A.num_rows());
  Array<double> dense(backend, n * n);
  const auto* csr = dynamic_cast<const CsrMatrix*>(&A);
  if (csr != nullptr && csr->precision() == Precision::float64) {
    kernels::dense::densify(backend, detail::matrix_view(*csr), dense.span());
    return dense;
  }
  if (csr != nullptr) {
    Array<double> widened(backend, static_cast<std::size_t>(csr->nnz()));
    kernels::blas::widen_to_double(backend, csr->values_float32().span(), widened.span());
    kernels::dense::densify(backend, {detail::pattern_view(*csr), widened.span().data()},
                            dense.span());
    return dense;
  }
  Vector column(backend, n);
  std::vector<double> unit(n, 0.0);
  for (std::size_t j = 0; j < n; ++j) {
    unit[j] = 1.0;
    const Vector e = Vector::from_host(backend, unit);
    unit[j] = 0.0;
    A.apply(e, column);
    copy_bytes(backend, dense.span().data() + j * n, backend, column.span().data(),
               n * sizeof(double));
  }
  return dense;
}

}  // namespace

void DenseDirectSolver::setup(const LinearOperator& A) {
  namespace kd = kernels::dense;
  if (A.num_rows() != A.num_cols()) {
    throw DimensionMismatch("dense coarse solver needs a square matrix, got " +
                            std::to_string(A.num_rows()) + " x " + std::to_string(A.num_cols()));
  }
  if (A.num_rows() > kMaxRows) {
    throw InvalidInput("dense coarse solver: " + std::to_string(A.num_rows()) +
                       " rows exceed the limit of " + std::to_string(kMaxRows) +
                       " (lower coarse_size or raise max_levels)");
  }
  const index_t n = A.num_rows();
  const Backend& backend = A.backend();
  Array<double> dense = dense_copy(A);
  const kd::Properties properties = kd::properties(backend, n, dense.span());
  if (!properties.finite) {
    throw InvalidInput("dense coarse solver: the matrix has a non-finite entry");
  }
  const kd::Inverse inverse = kd::invert(backend, n, properties, dense.span());
  if (inverse.zero_pivot != 0) {
    throw InvalidInput("dense coarse solver: the matrix is singular (LU pivot " +
                       std::to_string(inverse.zero_pivot) + " of " + std::to_string(n) +
                       " is zero)");
  }
  if (!inverse.converged) {
    throw InvalidInput("dense coarse solver: the eigendecomposition did not converge");
  }
  // Nothing is changed before here: a failed setup keeps the previous state.
  switch (inverse.method) {
    case kd::Method::cholesky:
      method_ = Method::cholesky;
      break;
    case kd::Method::cholesky_of_negated:
      method_ = Method::cholesky_of_negated;
      break;
    case kd::Method::lu:
      method_ = Method::lu;
      break;
    case kd::Method::eigen:
      method_ = Method::eigen;
      break;
  }
  null_space_dimension_ = static_cast<int>(inverse.null_space_dimension);
  n_ = n;
  backend_ = backend;
  inverse_ = std::move(dense);
}

std::string DenseDirectSolver::factorization() const {
  switch (method_) {
    case Method::none:
      return "";
    case Method::cholesky:
      return "cholesky";
    case Method::cholesky_of_negated:
      return "cholesky of -A";
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
  if (&r == &z) throw InvalidInput("DenseDirectSolver::apply: r and z must be distinct");
  if (!(r.backend() == backend_) || !(z.backend() == backend_)) {
    throw InvalidInput("DenseDirectSolver::apply: r and z must live on the solver's backend (" +
                       backend_.name() + ")");
  }
  kernels::dense::apply(backend_, n_, inverse_.span(), r.span(), z.span());
}

}  // namespace kryflow
