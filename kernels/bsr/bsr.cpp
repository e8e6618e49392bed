// Dispatch of the BSR kernels to the backend that owns the data.
#include "kernels/bsr/bsr.hpp"

#include "kryflow/core/error.hpp"

namespace kryflow::kernels::bsr {

template <class V>
void bsr_spmv(const Backend& backend, const BsrView<V>& a, Variant variant, Span<const double> x,
              Span<double> y) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::bsr_spmv(backend, a, x, y);
    case BackendKind::cpu:
      return cpu::bsr_spmv(backend, a, x, y);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::bsr_spmv(backend, a, variant, x, y);
#else
      (void)variant;
      throw NotCompiled("bsr::bsr_spmv: cuda backend not compiled");
#endif
  }
  throw NotSupported("bsr::bsr_spmv: unknown backend");
}

template <class V>
void bsr_residual(const Backend& backend, const BsrView<V>& a, Variant variant,
                  Span<const double> b, Span<const double> x, Span<double> r) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::bsr_residual(backend, a, b, x, r);
    case BackendKind::cpu:
      return cpu::bsr_residual(backend, a, b, x, r);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::bsr_residual(backend, a, variant, b, x, r);
#else
      (void)variant;
      throw NotCompiled("bsr::bsr_residual: cuda backend not compiled");
#endif
  }
  throw NotSupported("bsr::bsr_residual: unknown backend");
}

template <class V>
void bsr_spmv_dot(const Backend& backend, const BsrView<V>& a, Variant variant,
                  Span<const double> x, Span<double> y, double* result) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::bsr_spmv_dot(backend, a, x, y, result);
    case BackendKind::cpu:
      return cpu::bsr_spmv_dot(backend, a, x, y, result);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::bsr_spmv_dot(backend, a, variant, x, y, result);
#else
      (void)variant;
      throw NotCompiled("bsr::bsr_spmv_dot: cuda backend not compiled");
#endif
  }
  throw NotSupported("bsr::bsr_spmv_dot: unknown backend");
}

template <class V>
void bsr_diagonal(const Backend& backend, const BsrView<V>& a, Span<double> d) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::bsr_diagonal(backend, a, d);
    case BackendKind::cpu:
      return cpu::bsr_diagonal(backend, a, d);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::bsr_diagonal(backend, a, d);
#else
      throw NotCompiled("bsr::bsr_diagonal: cuda backend not compiled");
#endif
  }
  throw NotSupported("bsr::bsr_diagonal: unknown backend");
}

template <class V>
void bsr_scatter_values(const Backend& backend, Span<const index_t> position,
                        Span<const double> source, Span<V> values) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::bsr_scatter_values(backend, position, source, values);
    case BackendKind::cpu:
      return cpu::bsr_scatter_values(backend, position, source, values);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::bsr_scatter_values(backend, position, source, values);
#else
      throw NotCompiled("bsr::bsr_scatter_values: cuda backend not compiled");
#endif
  }
  throw NotSupported("bsr::bsr_scatter_values: unknown backend");
}

#define KRYFLOW_BSR_INSTANTIATE(V)                                                              \
  template void bsr_spmv<V>(const Backend&, const BsrView<V>&, Variant, Span<const double>,     \
                            Span<double>);                                                      \
  template void bsr_residual<V>(const Backend&, const BsrView<V>&, Variant, Span<const double>, \
                                Span<const double>, Span<double>);                              \
  template void bsr_spmv_dot<V>(const Backend&, const BsrView<V>&, Variant, Span<const double>, \
                                Span<double>, double*);                                         \
  template void bsr_diagonal<V>(const Backend&, const BsrView<V>&, Span<double>);               \
  template void bsr_scatter_values<V>(const Backend&, Span<const index_t>, Span<const double>,  \
                                      Span<V>);
KRYFLOW_BSR_INSTANTIATE(double)
KRYFLOW_BSR_INSTANTIATE(float)
#undef KRYFLOW_BSR_INSTANTIATE

}  // namespace kryflow::kernels::bsr
