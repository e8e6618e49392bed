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
index_t invert_blocks(const Backend& backend, int block_size, index_t count, const V* blocks,
                      W* inverse) {
  KRYFLOW_DISPATCH(block_relaxation, invert_blocks<V>, backend, block_size, count, blocks, inverse);
}

template <class V, class W>
void triangular_sweep(const Backend& backend, const BsrView<V>& part, const BsrView<V>* second,
                      SweepVariant variant, const W* inverse, ColorRange color, SweepUpdate update,
                      const SweepVectors& vectors) {
  KRYFLOW_DISPATCH(block_relaxation, triangular_sweep<V>, backend, part, second, variant, inverse,
                   color, update, vectors);
}

template <class V, class W>
void factor_color(const Backend& backend, Factorization kind, const BsrView<V>& lower,
                  const BsrView<V>& upper, V* diagonal, W* inverse, ColorRange color,
                  index_t* first_bad) {
  KRYFLOW_DISPATCH(block_relaxation, factor_color<V>, backend, kind, lower, upper, diagonal,
                   inverse, color, first_bad);
}

void invert_permutation(const Backend& backend, Span<const index_t> order, Span<index_t> position) {
  KRYFLOW_DISPATCH(block_relaxation, invert_permutation, backend, order, position);
}

void split_lengths(const Backend& backend, const sparse_setup::PatternView& a,
                   Span<const index_t> order, Span<const index_t> position, Span<index_t> lower,
                   Span<index_t> upper) {
  KRYFLOW_DISPATCH(block_relaxation, split_lengths, backend, a, order, position, lower, upper);
}

void split_pattern(const Backend& backend, const sparse_setup::PatternView& a,
                   Span<const index_t> order, Span<const index_t> position,
                   const index_t* lower_ptr, const index_t* upper_ptr, index_t* lower_col,
                   index_t* upper_col, index_t* lower_source, index_t* upper_source,
                   index_t* diagonal_source) {
  KRYFLOW_DISPATCH(block_relaxation, split_pattern, backend, a, order, position, lower_ptr,
                   upper_ptr, lower_col, upper_col, lower_source, upper_source, diagonal_source);
}

template <class V>
void gather_values(const Backend& backend, int block_entries, Span<const index_t> source,
                   const V* in, V* out) {
  KRYFLOW_DISPATCH(block_relaxation, gather_values<V>, backend, block_entries, source, in, out);
}

void gather_blocks(const Backend& backend, int block_size, Span<const index_t> map,
                   Span<const double> in, Span<double> out) {
  KRYFLOW_DISPATCH(block_relaxation, gather_blocks, backend, block_size, map, in, out);
}

KRYFLOW_BLOCK_RELAXATION_INSTANTIATIONS

}  // namespace kryflow::kernels::block_relaxation
