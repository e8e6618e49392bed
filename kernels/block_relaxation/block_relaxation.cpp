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
                      Span<const W> inverse, ColorRange color, double omega, Span<const double> b,
                      Span<double> x) {
  KRYFLOW_DISPATCH(block_relaxation, multicolor_sweep<V>, backend, a, variant, inverse, color,
                   omega, b, x);
}

void invert_permutation(const Backend& backend, Span<const index_t> order, Span<index_t> position) {
  KRYFLOW_DISPATCH(block_relaxation, invert_permutation, backend, order, position);
}

template <class V>
void permuted_row_lengths(const Backend& backend, const BsrView<V>& a, Span<const index_t> order,
                          Span<index_t> counts) {
  KRYFLOW_DISPATCH(block_relaxation, permuted_row_lengths<V>, backend, a, order, counts);
}

template <class V>
void permute_fill(const Backend& backend, const BsrView<V>& a, Span<const index_t> order,
                  Span<const index_t> position, const index_t* row_ptr, index_t* col_idx,
                  V* values) {
  KRYFLOW_DISPATCH(block_relaxation, permute_fill<V>, backend, a, order, position, row_ptr, col_idx,
                   values);
}

void gather_blocks(const Backend& backend, int block_size, Span<const index_t> map,
                   Span<const double> in, Span<double> out) {
  KRYFLOW_DISPATCH(block_relaxation, gather_blocks, backend, block_size, map, in, out);
}

KRYFLOW_BLOCK_RELAXATION_INSTANTIATIONS

}  // namespace kryflow::kernels::block_relaxation
