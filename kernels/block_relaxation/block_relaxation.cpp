// Dispatch of the block relaxation kernels to the backend that owns the data.
#include "kernels/block_relaxation/block_relaxation.hpp"

#include "kernels/backend/dispatch.hpp"

namespace kryflow::kernels::block_relaxation {

template <class V, class W>
index_t invert_diagonal_blocks(const Backend& backend, const BsrView<V>& a, Span<W> inverse) {
  KRYFLOW_DISPATCH(block_relaxation, invert_diagonal_blocks<V>, backend, a, inverse);
}

template <class W>
void block_diagonal_apply(const Backend& backend, int block_size, Span<const W> inverse,
                          double omega, Span<const double> r, Span<double> z) {
  KRYFLOW_DISPATCH(block_relaxation, block_diagonal_apply<W>, backend, block_size, inverse, omega,
                   r, z);
}

template <class V, class W>
void multicolor_sweep(const Backend& backend, const BsrView<V>& a, SweepVariant variant,
                      Span<const W> inverse, ColorRows color, double omega, Span<const double> b,
                      Span<double> x) {
  KRYFLOW_DISPATCH(block_relaxation, multicolor_sweep<V>, backend, a, variant, inverse, color,
                   omega, b, x);
}

#define KRYFLOW_INSTANTIATE(V, W)                                                            \
  template index_t invert_diagonal_blocks<V, W>(const Backend&, const BsrView<V>&, Span<W>); \
  template void multicolor_sweep<V, W>(const Backend&, const BsrView<V>&, SweepVariant,      \
                                       Span<const W>, ColorRows, double, Span<const double>, \
                                       Span<double>);
KRYFLOW_INSTANTIATE(double, double)
KRYFLOW_INSTANTIATE(double, float)
KRYFLOW_INSTANTIATE(float, double)
KRYFLOW_INSTANTIATE(float, float)
#undef KRYFLOW_INSTANTIATE
template void block_diagonal_apply<double>(const Backend&, int, Span<const double>, double,
                                           Span<const double>, Span<double>);
template void block_diagonal_apply<float>(const Backend&, int, Span<const float>, double,
                                          Span<const double>, Span<double>);

}  // namespace kryflow::kernels::block_relaxation
