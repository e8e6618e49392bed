// Dispatch of the CSR kernels to the backend that owns the data.
#include "kernels/spmv/spmv.hpp"

#include "kryflow/core/error.hpp"

namespace kryflow::kernels::spmv {

int choose_threads_per_row(double mean_row_length, index_t max_row_length) {
  int lanes = 1;
  while (lanes < 32 && lanes < mean_row_length) lanes *= 2;
  if (max_row_length > 1024) lanes = 32;
  return lanes;
}

void csr_spmv(const Backend& backend, const CsrView& a, Span<const double> x, Span<double> y) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::csr_spmv(backend, a, x, y);
    case BackendKind::cpu:
      return cpu::csr_spmv(backend, a, x, y);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::csr_spmv(backend, a, x, y);
#else
      throw NotCompiled("spmv::csr_spmv: cuda backend not compiled");
#endif
  }
  throw NotSupported("spmv::csr_spmv: unknown backend");
}

void csr_residual(const Backend& backend, const CsrView& a, Span<const double> b,
                  Span<const double> x, Span<double> r) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::csr_residual(backend, a, b, x, r);
    case BackendKind::cpu:
      return cpu::csr_residual(backend, a, b, x, r);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::csr_residual(backend, a, b, x, r);
#else
      throw NotCompiled("spmv::csr_residual: cuda backend not compiled");
#endif
  }
  throw NotSupported("spmv::csr_residual: unknown backend");
}

double csr_spmv_dot(const Backend& backend, const CsrView& a, Span<const double> x,
                    Span<double> y) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::csr_spmv_dot(backend, a, x, y);
    case BackendKind::cpu:
      return cpu::csr_spmv_dot(backend, a, x, y);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::csr_spmv_dot(backend, a, x, y);
#else
      throw NotCompiled("spmv::csr_spmv_dot: cuda backend not compiled");
#endif
  }
  throw NotSupported("spmv::csr_spmv_dot: unknown backend");
}

void csr_diagonal(const Backend& backend, const CsrView& a, Span<double> d) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::csr_diagonal(backend, a, d);
    case BackendKind::cpu:
      return cpu::csr_diagonal(backend, a, d);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::csr_diagonal(backend, a, d);
#else
      throw NotCompiled("spmv::csr_diagonal: cuda backend not compiled");
#endif
  }
  throw NotSupported("spmv::csr_diagonal: unknown backend");
}

}  // namespace kryflow::kernels::spmv
