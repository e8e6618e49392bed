// cuSPARSE's BSR product (cusparseDbsrmv) on a kryflow BsrMatrix, for the BSR benchmark.
// Host-visible: including it needs no CUDA header.
#pragma once

#include <memory>

#include "kryflow/linalg/bsr_matrix.hpp"

namespace kryflow::bench {

/// y = A x by cusparseDbsrmv (CUSPARSE_DIRECTION_ROW: row-major blocks, as kryflow stores them;
/// double values, 32-bit indices) on the stream of A's cuda backend. x (num_cols) and y
/// (num_rows) are device arrays that, like A, must outlive this object. Throws InvalidInput when
/// A is not on a cuda backend, is stored in float32 or has 1 x 1 blocks (cuSPARSE needs
/// blockDim > 1); BackendError when a cuSPARSE call fails.
class CusparseBsrmv {
 public:
  CusparseBsrmv(const BsrMatrix& A, const double* x, double* y);
  ~CusparseBsrmv();
  CusparseBsrmv(const CusparseBsrmv&) = delete;
  CusparseBsrmv& operator=(const CusparseBsrmv&) = delete;

  /// Enqueues y = A x on the backend's stream; does not wait.
  void apply();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kryflow::bench
