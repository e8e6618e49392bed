// Dispatch of the FSAI setup kernels to the backend that owns the data.
#include "kernels/fsai/fsai.hpp"

#include "kernels/backend/dispatch.hpp"

namespace kryflow::kernels::fsai {

index_t pattern_count(const Backend& backend, const PatternView& s, index_t max_row_entries,
                      Span<index_t> counts) {
  KRYFLOW_DISPATCH(fsai, pattern_count, backend, s, max_row_entries, counts);
}

void pattern_fill(const Backend& backend, const PatternView& s, const index_t* g_row_ptr,
                  index_t* g_col_idx) {
  KRYFLOW_DISPATCH(fsai, pattern_fill, backend, s, g_row_ptr, g_col_idx);
}

index_t factor_values(const Backend& backend, const MatrixView& a, double sign,
                      const PatternView& g, index_t longest, double* g_values) {
  KRYFLOW_DISPATCH(fsai, factor_values, backend, a, sign, g, longest, g_values);
}

index_t factor_values_nonsymmetric(const Backend& backend, const MatrixView& a,
                                   const PatternView& g, index_t longest, double* w_values,
                                   double* z_values) {
  KRYFLOW_DISPATCH(fsai, factor_values_nonsymmetric, backend, a, g, longest, w_values, z_values);
}

index_t filter_count(const Backend& backend, const PatternView& g, const double* g_values,
                     const double* other_values, const double* diagonal, double tolerance,
                     Span<index_t> counts) {
  KRYFLOW_DISPATCH(fsai, filter_count, backend, g, g_values, other_values, diagonal, tolerance,
                   counts);
}

void filter_fill(const Backend& backend, const PatternView& g, const double* g_values,
                 const double* other_values, const double* diagonal, double tolerance,
                 const index_t* f_row_ptr, index_t* f_col_idx) {
  KRYFLOW_DISPATCH(fsai, filter_fill, backend, g, g_values, other_values, diagonal, tolerance,
                   f_row_ptr, f_col_idx);
}

}  // namespace kryflow::kernels::fsai
