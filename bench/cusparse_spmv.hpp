// The benchmarks' peer: cuSPARSE's SpMV on a kryflow CSR matrix. Host-visible: including it needs
// no CUDA header.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "kryflow/core/backend.hpp"
#include "kryflow/linalg/csr_matrix.hpp"

namespace kryflow::bench {

/// y = A x by cusparseSpMV (CUSPARSE_SPMV_ALG_DEFAULT, double values, 32-bit indices) on the
/// stream of A's cuda backend. The constructor creates the descriptors, allocates the workspace
/// and runs cusparseSpMV_preprocess, so apply() only enqueues the product. x (num_cols) and y
/// (num_rows) are device arrays that must outlive this object. Throws BackendError when a
/// cuSPARSE call fails and InvalidInput when A is not on a cuda backend.
class CusparseSpmv {
 public:
  CusparseSpmv(const CsrMatrix& A, const double* x, double* y);
  ~CusparseSpmv();
  CusparseSpmv(const CusparseSpmv&) = delete;
  CusparseSpmv& operator=(const CusparseSpmv&) = delete;

  /// Enqueues y = A x on the backend's stream; does not wait.
  void apply();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kryflow::bench
