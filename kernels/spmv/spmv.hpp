// Contract of the CSR sparse matrix-vector kernels: y = A x, r = b - A x, and y = A x fused with
// x·y.
//
// Same layout as kernels/blas: namespaces reference, cpu and cuda with identical signatures, and
// unqualified functions that dispatch on the backend. Column indices within a row need not be
// sorted; rows may be empty. Spans live on the backend and have the lengths the matrix implies.
#pragma once

#include <cstdint>

#include "kryflow/core/array.hpp"

namespace kryflow::kernels::spmv {

/// A CSR matrix as the kernels see it. `threads_per_row` selects the CUDA kernel: 1 is
/// row-per-thread, 2..32 (powers of two) a sub-warp of that many lanes per row.
struct CsrView {
  index_t num_rows = 0;
  index_t num_cols = 0;
  std::int64_t nnz = 0;
  const index_t* row_ptr = nullptr;  // num_rows + 1 entries
  const index_t* col_idx = nullptr;  // nnz entries
  const double* values = nullptr;    // nnz entries
  int threads_per_row = 1;
};

/// The CUDA lanes per row for a row-length distribution: the smallest power of two (1..32) not
/// below the mean row length, and 32 when the longest row is very long. Host-only helper.
int choose_threads_per_row(double mean_row_length, index_t max_row_length);

#define KRYFLOW_SPMV_DECLARATIONS                                                                \
  /** y = A x */                                                                                 \
  void csr_spmv(const Backend& backend, const CsrView& a, Span<const double> x, Span<double> y); \
  /** r = b - A x */                                                                             \
  void csr_residual(const Backend& backend, const CsrView& a, Span<const double> b,              \
                    Span<const double> x, Span<double> r);                                       \
  /** y = A x and returns x·y (square A); deterministic like blas::dot */                       \
  double csr_spmv_dot(const Backend& backend, const CsrView& a, Span<const double> x,            \
                      Span<double> y);                                                           \
  /** d_i = a_ii (sum of duplicates; 0 where the row stores no diagonal entry) */                \
  void csr_diagonal(const Backend& backend, const CsrView& a, Span<double> d);

KRYFLOW_SPMV_DECLARATIONS

namespace reference {
KRYFLOW_SPMV_DECLARATIONS
}
namespace cpu {
KRYFLOW_SPMV_DECLARATIONS
}
namespace cuda {
KRYFLOW_SPMV_DECLARATIONS
}

#undef KRYFLOW_SPMV_DECLARATIONS

}  // namespace kryflow::kernels::spmv
