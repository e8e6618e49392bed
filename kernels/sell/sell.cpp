// Dispatch of the SELL-C-sigma kernels to the backend that owns the data.
#include "kernels/sell/sell.hpp"

#include "kryflow/core/error.hpp"

namespace kryflow::kernels::sell {

// Each entry point: a plain switch on the backend; cuda throws NotCompiled without CUDA.
#ifdef KRYFLOW_WITH_CUDA
#define KRYFLOW_SELL_CUDA_CASE(name, ...) return cuda::name(__VA_ARGS__);
#else
#define KRYFLOW_SELL_CUDA_CASE(name, ...) \
  throw NotCompiled("sell::" #name ": cuda backend not compiled");
#endif
#define KRYFLOW_SELL_DISPATCH(name, ...)        \
  switch (backend.kind()) {                     \
    case BackendKind::reference:                \
      return reference::name(__VA_ARGS__);      \
    case BackendKind::cpu:                      \
      return cpu::name(__VA_ARGS__);            \
    case BackendKind::cuda:                     \
      KRYFLOW_SELL_CUDA_CASE(name, __VA_ARGS__) \
  }                                             \
  throw NotSupported("sell::" #name ": unknown backend");

void sell_layout(const Backend& backend, const CsrPattern& csr, int slice_height, index_t sigma,
                 index_t* permutation, index_t* slice_width, std::int64_t* slice_ptr) {
  KRYFLOW_SELL_DISPATCH(sell_layout, backend, csr, slice_height, sigma, permutation, slice_width,
                        slice_ptr)
}

template <class T>
void sell_fill(const Backend& backend, const SellView<T>& a, const CsrPattern& csr,
               const double* csr_values, index_t* col_idx, T* values) {
  KRYFLOW_SELL_DISPATCH(sell_fill<T>, backend, a, csr, csr_values, col_idx, values)
}

template <class T>
void sell_gather(const Backend& backend, const SellView<T>& a, const CsrPattern& csr,
                 index_t* csr_col_idx, double* csr_values) {
  KRYFLOW_SELL_DISPATCH(sell_gather<T>, backend, a, csr, csr_col_idx, csr_values)
}

template <class T>
void sell_spmv(const Backend& backend, const SellView<T>& a, Span<const double> x, Span<double> y) {
  KRYFLOW_SELL_DISPATCH(sell_spmv<T>, backend, a, x, y)
}

template <class T>
void sell_residual(const Backend& backend, const SellView<T>& a, Span<const double> b,
                   Span<const double> x, Span<double> r) {
  KRYFLOW_SELL_DISPATCH(sell_residual<T>, backend, a, b, x, r)
}

template <class T>
void sell_spmv_dot(const Backend& backend, const SellView<T>& a, Span<const double> x,
                   Span<double> y, double* result) {
  KRYFLOW_SELL_DISPATCH(sell_spmv_dot<T>, backend, a, x, y, result)
}

template <class T>
void sell_diagonal(const Backend& backend, const SellView<T>& a,
                   Span<double> d){KRYFLOW_SELL_DISPATCH(sell_diagonal<T>, backend, a, d)}

#undef KRYFLOW_SELL_DISPATCH
#undef KRYFLOW_SELL_CUDA_CASE

#define KRYFLOW_SELL_INSTANTIATE(T)                                                                \
  template void sell_fill<T>(const Backend&, const SellView<T>&, const CsrPattern&, const double*, \
                             index_t*, T*);                                                        \
  template void sell_gather<T>(const Backend&, const SellView<T>&, const CsrPattern&, index_t*,    \
                               double*);                                                           \
  template void sell_spmv<T>(const Backend&, const SellView<T>&, Span<const double>,               \
                             Span<double>);                                                        \
  template void sell_residual<T>(const Backend&, const SellView<T>&, Span<const double>,           \
                                 Span<const double>, Span<double>);                                \
  template void sell_spmv_dot<T>(const Backend&, const SellView<T>&, Span<const double>,           \
                                 Span<double>, double*);                                           \
  template void sell_diagonal<T>(const Backend&, const SellView<T>&, Span<double>);
KRYFLOW_SELL_INSTANTIATE(double) KRYFLOW_SELL_INSTANTIATE(float)
#undef KRYFLOW_SELL_INSTANTIATE

}  // namespace kryflow::kernels::sell
