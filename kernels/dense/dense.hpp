// Contract of the dense kernels of a small matrix, the coarsest level of multigrid
// (DenseDirectSolver): densify a CSR matrix, inspect the dense array, form its explicit
// (pseudo-)inverse, and apply it as one dense matrix-vector product.
//
// Same layout as kernels/blas: namespaces reference (the oracle), cpu (OpenMP) and cuda with
// identical signatures, and unqualified functions that dispatch on the backend
// (kernels/backend/dispatch.hpp). Every pointer is an address on the backend. n x n arrays
// hold n * n doubles.
//
// Methods (Golub and Van Loan, Matrix Computations, 4th ed., Algorithms 4.2.2, 8.3.3, 3.4.1):
// a symmetric A is factored by Cholesky; when Cholesky fails (A not positive definite) by a
// symmetric eigendecomposition A = V diag(lambda) V^T whose eigenvalues at rounding level
// (|lambda| <= 1000 n eps max|lambda|) count as zero, giving the pseudo-inverse
// V diag(1/lambda or 0) V^T; a nonsymmetric A by LU with partial pivoting, where a pivot
// |u_kk| <= 1000 n eps max|a_ij| counts as zero (A singular: no inverse is formed). The
// inverse is then formed explicitly by solving against the identity (or by the product of the
// eigenvectors): setup costs O(n^3), and an application is one product of n^2 multiply-adds,
// which for the few hundred rows of a coarsest level is cheaper on a GPU than two triangular
// solves (one launch instead of 2n dependent steps).
//
// The reference and cpu backends call LAPACK (dpotrf/dpotrs, dsyev with dgemm, dgetrf/dgetrs)
// and give the same bits. The cuda backend calls cuSOLVER (cusolverDnDpotrf/Dpotrs, Dsyevd,
// Dgetrf/Dgetrs) and cuBLAS (dgemm): its inverse differs from LAPACK's by rounding (other
// blockings and pivot choices of equal magnitude), within about n eps cond(A) relative;
// densify and properties give the same bits on every backend; apply sums each row in order on
// the host backends and as 32 strided partial sums combined in a fixed tree on cuda
// (deterministic run to run, not the host's bits).
#pragma once

#include <cstdint>

#include "kernels/sparse_setup/sparse_setup.hpp"

namespace kryflow::kernels::dense {

using sparse_setup::MatrixView;

/// What properties() finds in a dense n x n array.
struct Properties {
  bool finite = true;      ///< every entry finite
  double largest = 0.0;    ///< max |a_ij| (over the finite entries)
  bool symmetric = false;  ///< |a_ij - a_ji| <= 1e-12 largest for all i, j (true for n <= 1)
  /// a_11 (0 for n = 0): its sign picks the Cholesky factorization of a symmetric A (of A when
  /// a_11 >= 0, of -A when a_11 < 0; the other cannot succeed, as a_11 = e_1^T A e_1).
  double first_diagonal = 0.0;
};

/// cholesky_of_negated: A symmetric negative definite (a pressure matrix of the other sign
/// convention), inverted as -(-A)^-1 by Cholesky of -A.
enum class Method { cholesky, cholesky_of_negated, lu, eigen };

/// What invert() did.
struct Inverse {
  Method method = Method::cholesky;
  /// LU only: the (1-based) first pivot at rounding level, 0 when none (then the inverse is
  /// formed); when nonzero the array's contents are unspecified.
  index_t zero_pivot = 0;
  /// eigen only: eigenvalues taken as zero.
  index_t null_space_dimension = 0;
  /// eigen only: false when the eigendecomposition did not converge (contents unspecified).
  bool converged = true;
};

#define KRYFLOW_DENSE_DECLARATIONS                                                                 \
  /** dense (n * n, column-major, n = a's rows = a's columns) = A: a_ij at dense[j n + i],         \
      duplicate entries of a row summed in stored order, zero where nothing is stored. */          \
  void densify(const Backend& backend, const MatrixView& a, Span<double> dense);                   \
  /** Finiteness, largest magnitude and symmetry of the n x n array `dense` (n * n entries).       \
      The results are read on the host (one wait on a device). */                                  \
  Properties properties(const Backend& backend, index_t n, Span<const double> dense);              \
  /** Overwrites the n x n column-major A in `dense` with its inverse (pseudo-inverse for the      \
      eigen method) stored row-major: inverse_ij at dense[i n + j]. `properties` are A's, from     \
      properties() (finite; the method is chosen by its symmetric flag: symmetric A by Cholesky,   \
      else, when a_11 < 0, by Cholesky of -A, else by eigendecomposition). Workspace: 3 n^2 + O(n) \
      doubles at most, allocated on the backend (OutOfMemory when they cannot be). One wait on a   \
      device for Cholesky's status, two for the other factorizations. */                           \
  Inverse invert(const Backend& backend, index_t n, const Properties& properties,                  \
                 Span<double> dense);                                                              \
  /** z = M r, M the n x n row-major `inverse` from invert(); r and z have n entries, distinct.    \
      One kernel on a device, no wait. */                                                          \
  void apply(const Backend& backend, index_t n, Span<const double> inverse, Span<const double> r,  \
             Span<double> z);

/// Dispatch.
KRYFLOW_DENSE_DECLARATIONS

namespace reference {
KRYFLOW_DENSE_DECLARATIONS
}
namespace cpu {
KRYFLOW_DENSE_DECLARATIONS
}
namespace cuda {
KRYFLOW_DENSE_DECLARATIONS
}

#undef KRYFLOW_DENSE_DECLARATIONS

}  // namespace kryflow::kernels::dense
