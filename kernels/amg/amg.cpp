// Dispatch of the algebraic multigrid setup kernels to the backend that owns the data.
#include "kernels/amg/amg.hpp"

#include "kernels/backend/dispatch.hpp"

namespace kryflow::kernels::amg {

void strength_count(const Backend& backend, const MatrixView& a, const StrengthParameters& p,
                    Span<index_t> counts) {
  KRYFLOW_DISPATCH(amg, strength_count, backend, a, p, counts);
}

void strength_fill(const Backend& backend, const MatrixView& a, const StrengthParameters& p,
                   const index_t* s_row_ptr, index_t* s_col_idx) {
  KRYFLOW_DISPATCH(amg, strength_fill, backend, a, p, s_row_ptr, s_col_idx);
}

void greedy_splitting(const Backend& backend, const PatternView& s, Span<index_t> cf) {
  KRYFLOW_DISPATCH(amg, greedy_splitting, backend, s, cf);
}

void pmis_splitting(const Backend& backend, const PatternView& s, const PatternView& st,
                    std::uint64_t seed, Span<index_t> cf) {
  KRYFLOW_DISPATCH(amg, pmis_splitting, backend, s, st, seed, cf);
}

void hmis_splitting(const Backend& backend, const PatternView& s, const PatternView& st,
                    std::uint64_t seed, Span<index_t> cf) {
  KRYFLOW_DISPATCH(amg, hmis_splitting, backend, s, st, seed, cf);
}

void coarse_points(const Backend& backend, Span<const index_t> cf, Span<const index_t> coarse_index,
                   Span<index_t> coarse_points) {
  KRYFLOW_DISPATCH(amg, coarse_points, backend, cf, coarse_index, coarse_points);
}

void interpolation_count(const Backend& backend, const MatrixView& a, const PatternView& s,
                         Span<const index_t> cf, const InterpolationParameters& p,
                         Span<index_t> counts) {
  KRYFLOW_DISPATCH(amg, interpolation_count, backend, a, s, cf, p, counts);
}

void interpolation_fill(const Backend& backend, const MatrixView& a, const PatternView& s,
                        Span<const index_t> cf, Span<const index_t> coarse_index,
                        const InterpolationParameters& p, const index_t* p_row_ptr,
                        index_t* p_col_idx, double* p_values) {
  KRYFLOW_DISPATCH(amg, interpolation_fill, backend, a, s, cf, coarse_index, p, p_row_ptr,
                   p_col_idx, p_values);
}

void interpolation_values(const Backend& backend, const MatrixView& a, const PatternView& s,
                          Span<const index_t> cf, Span<const index_t> coarse_points,
                          InterpolationKind kind, const PatternView& prolongation,
                          double* p_values) {
  KRYFLOW_DISPATCH(amg, interpolation_values, backend, a, s, cf, coarse_points, kind, prolongation,
                   p_values);
}

void mis2_roots(const Backend& backend, const PatternView& s, const PatternView& st,
                std::uint64_t seed, Span<index_t> roots) {
  KRYFLOW_DISPATCH(amg, mis2_roots, backend, s, st, seed, roots);
}

index_t mis2_aggregates(const Backend& backend, const PatternView& s, const PatternView& st,
                        std::uint64_t seed, Span<const index_t> roots,
                        Span<const index_t> root_index, Span<index_t> aggregate) {
  KRYFLOW_DISPATCH(amg, mis2_aggregates, backend, s, st, seed, roots, root_index, aggregate);
}

void tentative_prolongation(const Backend& backend, Span<const index_t> aggregate, index_t* row_ptr,
                            index_t* col_idx, double* values) {
  KRYFLOW_DISPATCH(amg, tentative_prolongation, backend, aggregate, row_ptr, col_idx, values);
}

void gershgorin_bound(const Backend& backend, const MatrixView& a, double* bound) {
  KRYFLOW_DISPATCH(amg, gershgorin_bound, backend, a, bound);
}

void restriction_values(const Backend& backend, const MatrixView& p, const PatternView& r,
                        double* r_values) {
  KRYFLOW_DISPATCH(amg, restriction_values, backend, p, r, r_values);
}

void smoothed_aggregation_count(const Backend& backend, const PatternView& a,
                                Span<const index_t> aggregate, Span<index_t> counts) {
  KRYFLOW_DISPATCH(amg, smoothed_aggregation_count, backend, a, aggregate, counts);
}

void smoothed_aggregation_fill(const Backend& backend, const PatternView& a,
                               Span<const index_t> aggregate, const index_t* row_ptr,
                               index_t* col_idx) {
  KRYFLOW_DISPATCH(amg, smoothed_aggregation_fill, backend, a, aggregate, row_ptr, col_idx);
}

void smoothed_aggregation_values(const Backend& backend, const MatrixView& a, double factor,
                                 const double* bound, Span<const index_t> aggregate,
                                 const PatternView& p, double* values) {
  KRYFLOW_DISPATCH(amg, smoothed_aggregation_values, backend, a, factor, bound, aggregate, p,
                   values);
}

void select_pattern_count(const Backend& backend, const PatternView& a, Span<const index_t> cf,
                          Span<const index_t> coarse_index, bool coarse_rows, bool coarse_columns,
                          Span<index_t> counts) {
  KRYFLOW_DISPATCH(amg, select_pattern_count, backend, a, cf, coarse_index, coarse_rows,
                   coarse_columns, counts);
}

void select_pattern_fill(const Backend& backend, const PatternView& a, Span<const index_t> cf,
                         Span<const index_t> coarse_index, bool coarse_rows, bool coarse_columns,
                         const index_t* row_ptr, index_t* col_idx) {
  KRYFLOW_DISPATCH(amg, select_pattern_fill, backend, a, cf, coarse_index, coarse_rows,
                   coarse_columns, row_ptr, col_idx);
}

void distance_two_strength_count(const Backend& backend, const PatternView& s,
                                 const PatternView& ss, Span<const index_t> cf,
                                 Span<const index_t> coarse_index, Span<index_t> counts) {
  KRYFLOW_DISPATCH(amg, distance_two_strength_count, backend, s, ss, cf, coarse_index, counts);
}

void distance_two_strength_fill(const Backend& backend, const PatternView& s, const PatternView& ss,
                                Span<const index_t> cf, Span<const index_t> coarse_index,
                                const index_t* row_ptr, index_t* col_idx) {
  KRYFLOW_DISPATCH(amg, distance_two_strength_fill, backend, s, ss, cf, coarse_index, row_ptr,
                   col_idx);
}

void aggressive_splitting(const Backend& backend, Span<const index_t> first,
                          Span<const index_t> first_index, Span<const index_t> second,
                          Span<index_t> cf) {
  KRYFLOW_DISPATCH(amg, aggressive_splitting, backend, first, first_index, second, cf);
}

index_t interpolation_passes(const Backend& backend, const PatternView& s, Span<const index_t> cf,
                             Span<index_t> pass) {
  KRYFLOW_DISPATCH(amg, interpolation_passes, backend, s, cf, pass);
}

void multipass_count(const Backend& backend, const PatternView& s, Span<const index_t> pass,
                     Span<index_t> counts) {
  KRYFLOW_DISPATCH(amg, multipass_count, backend, s, pass, counts);
}

void multipass_fill(const Backend& backend, const MatrixView& a, const PatternView& s,
                    Span<const index_t> pass, InterpolationKind kind, const index_t* row_ptr,
                    index_t* col_idx, double* values) {
  KRYFLOW_DISPATCH(amg, multipass_fill, backend, a, s, pass, kind, row_ptr, col_idx, values);
}

void multipass_order(const Backend& backend, Span<const index_t> pass, index_t passes,
                     Span<index_t> order, Span<index_t> offsets) {
  KRYFLOW_DISPATCH(amg, multipass_order, backend, pass, passes, order, offsets);
}

void multipass_prolongation_values(const Backend& backend, const MatrixView& a,
                                   Span<const index_t> pass, index_t passes,
                                   Span<const index_t> order, Span<const index_t> offsets,
                                   InterpolationKind kind, const PatternView& w,
                                   const PatternView& p, double* values) {
  KRYFLOW_DISPATCH(amg, multipass_prolongation_values, backend, a, pass, passes, order, offsets,
                   kind, w, p, values);
}

bool multipass_prolongation_slots(const Backend& backend, const MatrixView& a,
                                  Span<const index_t> pass, index_t passes,
                                  Span<const index_t> order, Span<const index_t> offsets,
                                  InterpolationKind kind, const PatternView& w,
                                  Span<const index_t> coarse_index, index_t capacity,
                                  index_t* slot_columns, double* slot_values,
                                  Span<index_t> counts) {
  KRYFLOW_DISPATCH(amg, multipass_prolongation_slots, backend, a, pass, passes, order, offsets,
                   kind, w, coarse_index, capacity, slot_columns, slot_values, counts);
}

void multipass_slots_compact(const Backend& backend, index_t n, index_t capacity,
                             const index_t* slot_columns, const double* slot_values,
                             const index_t* row_ptr, index_t* col_idx, double* values) {
  KRYFLOW_DISPATCH(amg, multipass_slots_compact, backend, n, capacity, slot_columns, slot_values,
                   row_ptr, col_idx, values);
}

void mm_extended_coarse_sums(const Backend& backend, const MatrixView& a, const PatternView& s,
                             Span<const index_t> cf, Span<double> coarse_sum) {
  KRYFLOW_DISPATCH(amg, mm_extended_coarse_sums, backend, a, s, cf, coarse_sum);
}

void mm_extended_count(const Backend& backend, const PatternView& s, Span<const index_t> cf,
                       Span<index_t> left_counts, Span<index_t> right_counts) {
  KRYFLOW_DISPATCH(amg, mm_extended_count, backend, s, cf, left_counts, right_counts);
}

void mm_extended_fill(const Backend& backend, const MatrixView& a, const PatternView& s,
                      Span<const index_t> cf, Span<const index_t> coarse_index,
                      Span<const double> coarse_sum, const index_t* left_row_ptr,
                      index_t* left_col_idx, double* left_values, const index_t* right_row_ptr,
                      index_t* right_col_idx, double* right_values) {
  KRYFLOW_DISPATCH(amg, mm_extended_fill, backend, a, s, cf, coarse_index, coarse_sum, left_row_ptr,
                   left_col_idx, left_values, right_row_ptr, right_col_idx, right_values);
}

void truncation_count(const Backend& backend, const MatrixView& p,
                      const InterpolationParameters& params, Span<index_t> counts) {
  KRYFLOW_DISPATCH(amg, truncation_count, backend, p, params, counts);
}

void truncation_fill(const Backend& backend, const MatrixView& p,
                     const InterpolationParameters& params, const index_t* row_ptr,
                     index_t* col_idx, double* values) {
  KRYFLOW_DISPATCH(amg, truncation_fill, backend, p, params, row_ptr, col_idx, values);
}

void truncation_values(const Backend& backend, const MatrixView& p, const PatternView& t,
                       double* values) {
  KRYFLOW_DISPATCH(amg, truncation_values, backend, p, t, values);
}

}  // namespace kryflow::kernels::amg
