// Dispatch of the sparse setup kernels to the backend that owns the data.
#include "kernels/sparse_setup/sparse_setup.hpp"

#include "kernels/backend/dispatch.hpp"

namespace kryflow::kernels::sparse_setup {

std::int64_t exclusive_scan(const Backend& backend, Span<const index_t> counts,
                            Span<index_t> offsets) {
  KRYFLOW_DISPATCH(sparse_setup, exclusive_scan, backend, counts, offsets);
}

void exclusive_scan_bounded(const Backend& backend, Span<const index_t> counts,
                            Span<index_t> offsets, std::int64_t bound) {
  KRYFLOW_DISPATCH(sparse_setup, exclusive_scan_bounded, backend, counts, offsets, bound);
}

void transpose_count(const Backend& backend, const PatternView& a, Span<index_t> counts) {
  KRYFLOW_DISPATCH(sparse_setup, transpose_count, backend, a, counts);
}

void transpose_fill(const Backend& backend, const PatternView& a, std::int64_t nnz,
                    const index_t* at_row_ptr, index_t* at_col_idx, index_t* source) {
  KRYFLOW_DISPATCH(sparse_setup, transpose_fill, backend, a, nnz, at_row_ptr, at_col_idx, source);
}

bool pattern_symmetric(const Backend& backend, const PatternView& a) {
  KRYFLOW_DISPATCH(sparse_setup, pattern_symmetric, backend, a);
}

void expand_blocks(const Backend& backend, const PatternView& blocks, index_t block_size,
                   index_t* row_ptr, index_t* col_idx, index_t* block_position) {
  KRYFLOW_DISPATCH(sparse_setup, expand_blocks, backend, blocks, block_size, row_ptr, col_idx,
                   block_position);
}

index_t first_invalid_row(const Backend& backend, const PatternView& a) {
  KRYFLOW_DISPATCH(sparse_setup, first_invalid_row, backend, a);
}

void gather(const Backend& backend, Span<const double> x, Span<const index_t> map, Span<double> y) {
  KRYFLOW_DISPATCH(sparse_setup, gather, backend, x, map, y);
}

void spgemm_count(const Backend& backend, const PatternView& a, const PatternView& b,
                  Span<index_t> counts) {
  KRYFLOW_DISPATCH(sparse_setup, spgemm_count, backend, a, b, counts);
}

void spgemm_fill(const Backend& backend, const PatternView& a, const PatternView& b,
                 const index_t* c_row_ptr, index_t* c_col_idx) {
  KRYFLOW_DISPATCH(sparse_setup, spgemm_fill, backend, a, b, c_row_ptr, c_col_idx);
}

void spgemm_numeric(const Backend& backend, const MatrixView& a, const MatrixView& b,
                    const PatternView& c, double* c_values) {
  KRYFLOW_DISPATCH(sparse_setup, spgemm_numeric, backend, a, b, c, c_values);
}

void spgemm_fill_numeric(const Backend& backend, const MatrixView& a, const MatrixView& b,
                         const index_t* c_row_ptr, index_t* c_col_idx, double* c_values) {
  KRYFLOW_DISPATCH(sparse_setup, spgemm_fill_numeric, backend, a, b, c_row_ptr, c_col_idx,
                   c_values);
}

}  // namespace kryflow::kernels::sparse_setup
