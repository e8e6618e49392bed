// The benchmarks' CUDA helpers: cuSPARSE's SpMV on a kryflow CSR matrix, and event timing on a
// backend's stream. Host-visible: including it needs no CUDA header.
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

/// Runs `batches` batches of `batch_size` back-to-back calls of `enqueue` (which only enqueues
/// work on the backend's stream), times each batch with CUDA events and returns the median over
/// batches of the seconds per call. Launch gaps between calls are hidden by the queue.
double median_seconds_per_call(const Backend& backend, const std::function<void()>& enqueue,
                               int batch_size, int batches);

/// As median_seconds_per_call, but each batch is captured once into a CUDA graph and the graph
/// is launched and timed: the host's launch cost (several microseconds per kernel) leaves the
/// measurement, and back-to-back kernels of small matrices show their own time. `enqueue` must
/// be capturable (no synchronisation, allocation or host copy). Throws BackendError otherwise.
double median_seconds_per_call_graph(const Backend& backend, const std::function<void()>& enqueue,
                                     int batch_size, int batches);

/// The size of the device's L2 cache in bytes.
std::size_t l2_cache_bytes(const Backend& backend);

}  // namespace kryflow::bench
