// cuSPARSE's level-scheduled triangular solve (cusparseSpSV) on ILU factors, the peer of
// kryflow's level-scheduled solves in the ILU benchmark. Host-visible: needs no CUDA header.
#pragma once

#include <memory>

#include "kryflow/core/backend.hpp"
#include "kryflow/preconditioners/threshold_ilu.hpp"

namespace kryflow::bench {

/// z = U^-1 L^-1 r by two cusparseSpSV_solve calls (CUSPARSE_SPSV_ALG_DEFAULT, double, 32-bit
/// indices; L unit lower from its strict part, U upper with its diagonal) on the backend's
/// stream. The constructor uploads the factors, creates the descriptors and runs
/// cusparseSpSV_analysis for both (setup_seconds: that, timed with a wait); solve() only
/// enqueues. r and z are device arrays of n doubles that must outlive this object. Throws
/// BackendError when a cuSPARSE call fails, InvalidInput when the backend is not cuda.
class CusparseIluSolve {
 public:
  CusparseIluSolve(const Backend& backend, const IlutFactors& factors, const double* r, double* z);
  ~CusparseIluSolve();
  CusparseIluSolve(const CusparseIluSolve&) = delete;
  CusparseIluSolve& operator=(const CusparseIluSolve&) = delete;

  void solve();
  double analysis_seconds() const noexcept { return analysis_seconds_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  double analysis_seconds_ = 0.0;
};

}  // namespace kryflow::bench
