// The steps of a classical or aggregation AMG setup as sequences of kernel calls (kernels/amg,
// kernels/sparse_setup): each count phase, a scan, each fill phase, all on A's backend.
#include <cstdint>
#include <string>

#include "kernels/blas/blas.hpp"
#include "kryflow/core/error.hpp"
#include "src/amg/amg_hierarchy.hpp"
#include "src/multigrid/csr_access.hpp"

namespace kryflow::amg_setup {
namespace {

namespace ss = kernels::sparse_setup;

/// Row pointers from per-row counts: a scan on the backend; nnz returned.
Array<index_t> row_pointers(const Backend& backend, const Array<index_t>& counts,
                            std::int64_t& nnz) {
  Array<index_t> row_ptr(backend, counts.size() + 1);
  nnz = ss::exclusive_scan(backend, counts.span(), row_ptr.span());
  return row_ptr;
}

/// Slots per row of multi-pass interpolation's P formed pass by pass
/// (kernels::amg::multipass_prolongation_slots): 192 bytes per row of the aggressive level for
/// the setup's duration; a longer row takes the symbolic products.
constexpr index_t kMultipassSlots = 16;

}  // namespace

CsrArrays strength(const CsrMatrix& A, const kernels::amg::StrengthParameters& parameters) {
  const Backend& backend = A.backend();
  const auto a = detail::matrix_view(A);
  CsrArrays S;
  S.num_rows = S.num_cols = A.num_rows();
  Array<index_t> counts(backend, static_cast<std::size_t>(A.num_rows()));
  kernels::amg::strength_count(backend, a, parameters, counts.span());
  std::int64_t nnz = 0;
  S.row_ptr = row_pointers(backend, counts, nnz);
  S.col_idx = Array<index_t>(backend, static_cast<std::size_t>(nnz));
  kernels::amg::strength_fill(backend, a, parameters, S.row_ptr.span().data(),
                              S.col_idx.span().data());
  return S;
}

CsrArrays transpose(const Backend& backend, const ss::PatternView& a, std::int64_t nnz,
                    Array<index_t>* source) {
  CsrArrays t;
  t.num_rows = a.num_cols;
  t.num_cols = a.num_rows;
  Array<index_t> counts(backend, static_cast<std::size_t>(a.num_cols));
  ss::transpose_count(backend, a, counts.span());
  t.row_ptr = Array<index_t>(backend, counts.size() + 1);
  ss::exclusive_scan_bounded(backend, counts.span(), t.row_ptr.span(), nnz);
  t.col_idx = Array<index_t>(backend, static_cast<std::size_t>(nnz));
  Array<index_t> positions(backend, static_cast<std::size_t>(nnz));
  ss::transpose_fill(backend, a, nnz, t.row_ptr.span().data(), t.col_idx.span().data(),
                     positions.span().data());
  if (source != nullptr) *source = std::move(positions);
  return t;
}

Array<index_t> splitting(const Backend& backend, const CsrArrays& S,
                         AmgPreconditioner::Coarsening coarsening, std::uint64_t seed) {
  Array<index_t> cf(backend, static_cast<std::size_t>(S.num_rows));
  if (coarsening == AmgPreconditioner::Coarsening::greedy) {
    kernels::amg::greedy_splitting(backend, S.pattern(), cf.span());
  } else {
    const CsrArrays St = transpose(backend, S.pattern(), S.nnz(), nullptr);
    if (coarsening == AmgPreconditioner::Coarsening::hmis) {
      kernels::amg::hmis_splitting(backend, S.pattern(), St.pattern(), seed, cf.span());
    } else {
      kernels::amg::pmis_splitting(backend, S.pattern(), St.pattern(), seed, cf.span());
    }
  }
  return cf;
}

CsrArrays select_pattern(const Backend& backend, const ss::PatternView& a,
                         const Array<index_t>& splitting, const Array<index_t>& coarse_index,
                         std::int64_t num_coarse, bool coarse_rows, bool coarse_columns) {
  CsrArrays out;
  out.num_rows = coarse_rows ? static_cast<index_t>(num_coarse) : a.num_rows;
  out.num_cols = coarse_columns ? static_cast<index_t>(num_coarse) : a.num_cols;
  Array<index_t> counts(backend, static_cast<std::size_t>(out.num_rows));
  kernels::amg::select_pattern_count(backend, a, splitting.span(), coarse_index.span(), coarse_rows,
                                     coarse_columns, counts.span());
  std::int64_t nnz = 0;
  out.row_ptr = row_pointers(backend, counts, nnz);
  out.col_idx = Array<index_t>(backend, static_cast<std::size_t>(nnz));
  kernels::amg::select_pattern_fill(backend, a, splitting.span(), coarse_index.span(), coarse_rows,
                                    coarse_columns, out.row_ptr.span().data(),
                                    out.col_idx.span().data());
  return out;
}

Array<index_t> aggressive_splitting(const Backend& backend, const CsrArrays& S,
                                    AmgPreconditioner::Coarsening coarsening, std::uint64_t seed) {
  const auto n = static_cast<std::size_t>(S.num_rows);
  Array<index_t> first = splitting(backend, S, coarsening, seed);
  std::int64_t num_first = 0;
  const Array<index_t> first_index = coarse_index(backend, first, num_first);
  if (num_first == 0) return first;
  CsrArrays S2;
  S2.num_rows = S2.num_cols = static_cast<index_t>(num_first);
  {
    // The coarse points reached in two steps: S[C1, :] S[:, C1] in coarse numbering, a product
    // of about a sixteenth of S S's work (a quarter of the rows, a quarter of the columns).
    const CsrArrays rows =
        select_pattern(backend, S.pattern(), first, first_index, num_first, true, false);
    const CsrArrays columns =
        select_pattern(backend, S.pattern(), first, first_index, num_first, false, true);
    const CsrArrays SS = spgemm_pattern(backend, rows.pattern(), columns.pattern());
    Array<index_t> counts(backend, static_cast<std::size_t>(num_first));
    std::int64_t nnz = 0;
    kernels::amg::distance_two_strength_count(backend, S.pattern(), SS.pattern(), first.span(),
                                              first_index.span(), counts.span());
    S2.row_ptr = row_pointers(backend, counts, nnz);
    S2.col_idx = Array<index_t>(backend, static_cast<std::size_t>(nnz));
    kernels::amg::distance_two_strength_fill(backend, S.pattern(), SS.pattern(), first.span(),
                                             first_index.span(), S2.row_ptr.span().data(),
                                             S2.col_idx.span().data());
  }
  const Array<index_t> second = splitting(backend, S2, coarsening, seed);
  Array<index_t> cf(backend, n);
  kernels::amg::aggressive_splitting(backend, first.span(), first_index.span(), second.span(),
                                     cf.span());
  return cf;
}

CsrArrays multipass_prolongation(const CsrMatrix& A, const CsrArrays& S,
                                 const Array<index_t>& splitting,
                                 const Array<index_t>& coarse_index, index_t num_coarse,
                                 kernels::amg::InterpolationKind kind,
                                 std::unique_ptr<MultipassArrays>& kept) {
  const Backend& backend = A.backend();
  const auto n = static_cast<std::size_t>(A.num_rows());
  auto arrays = std::make_unique<MultipassArrays>();
  arrays->pass = Array<index_t>(backend, n);
  const index_t passes = kernels::amg::interpolation_passes(backend, S.pattern(), splitting.span(),
                                                            arrays->pass.span());
  if (passes < 2) {
    kept.reset();
    return interpolation(A, S, splitting, coarse_index, num_coarse, {kind, 0, 0.0});
  }
  const auto a = detail::matrix_view(A);
  CsrArrays W;
  W.num_rows = W.num_cols = A.num_rows();
  Array<index_t> counts(backend, n);
  kernels::amg::multipass_count(backend, S.pattern(), arrays->pass.span(), counts.span());
  std::int64_t nnz = 0;
  W.row_ptr = row_pointers(backend, counts, nnz);
  W.col_idx = Array<index_t>(backend, static_cast<std::size_t>(nnz));
  // W's pattern only: multipass_prolongation_values forms the weights where it needs them.
  kernels::amg::multipass_fill(backend, a, S.pattern(), arrays->pass.span(), kind,
                               W.row_ptr.span().data(), W.col_idx.span().data(), nullptr);
  arrays->passes = passes;
  arrays->order = Array<index_t>(backend, n);
  arrays->offsets = Array<index_t>(backend, static_cast<std::size_t>(passes) + 3);
  kernels::amg::multipass_order(backend, arrays->pass.span(), passes, arrays->order.span(),
                                arrays->offsets.span());
  CsrArrays P;
  P.num_rows = A.num_rows();
  P.num_cols = num_coarse;
  {
    // P pass by pass in kMultipassSlots slots per row (multipass_prolongation_slots): one
    // launch and one wait where the pattern below takes ceil(log2(passes - 1)) + 1 symbolic
    // products, each about ten launches and a wait (the aggressive level of the OpenFOAM
    // pressure matrix: 19 passes, at most 8 entries per row of P; 7-point Poisson: at most 11).
    Array<index_t> slot_counts(backend, n);
    Array<index_t> slot_columns(backend, n * kMultipassSlots);
    Array<double> slot_values(backend, n * kMultipassSlots);
    if (kernels::amg::multipass_prolongation_slots(
            backend, a, arrays->pass.span(), passes, arrays->order.span(), arrays->offsets.span(),
            kind, W.pattern(), coarse_index.span(), kMultipassSlots, slot_columns.span().data(),
            slot_values.span().data(), slot_counts.span())) {
      P.row_ptr = row_pointers(backend, slot_counts, nnz);
      P.col_idx = Array<index_t>(backend, static_cast<std::size_t>(nnz));
      P.values = Array<double>(backend, static_cast<std::size_t>(nnz));
      kernels::amg::multipass_slots_compact(backend, A.num_rows(), kMultipassSlots,
                                            slot_columns.span().data(), slot_values.span().data(),
                                            P.row_ptr.span().data(), P.col_idx.span().data(),
                                            P.values.span().data());
      arrays->weights = std::move(W);
      kept = std::move(arrays);
      return P;
    }
  }
  // A row of P longer than the slots: P = W^(passes - 1) X_1, the end of the chain X_(t+1) =
  // W X_t, whose rows of pass <= t + 1 are complete in X_(t+1): W changes none of them again,
  // so W^j X_1 is P for every j >= passes - 1, and so is its pattern. The pattern comes from W
  // squared until j = 2^k reaches passes - 1, then one product with X_1: ceil(log2(passes -
  // 1)) + 1 symbolic products instead of the chain's passes - 1 numeric ones. Boolean products
  // are associative, so the pattern is the chain's. The values then come pass by pass
  // (multipass_prolongation_values, as in a value-only re-setup): the chain's bits.
  const CsrArrays X = interpolation(A, S, splitting, coarse_index, num_coarse, {kind, 0, 0.0});
  CsrArrays power;
  ss::PatternView reach = W.pattern();  // the pattern of W^j
  for (index_t j = 1; j < passes - 1; j *= 2) {
    power = spgemm_pattern(backend, reach, reach);
    reach = power.pattern();
  }
  P = spgemm_pattern(backend, reach, X.pattern());
  power = CsrArrays();
  P.values = Array<double>(backend, static_cast<std::size_t>(P.nnz()));
  kernels::amg::multipass_prolongation_values(backend, a, arrays->pass.span(), passes,
                                              arrays->order.span(), arrays->offsets.span(), kind,
                                              W.pattern(), P.pattern(), P.values.span().data());
  arrays->weights = std::move(W);
  kept = std::move(arrays);
  return P;
}

Array<double> multipass_prolongation_values(const Backend& backend, const ss::MatrixView& a,
                                            const AmgLevelArrays& level) {
  const MultipassArrays& m = *level.multipass;
  Array<double> prolongation_values(backend, static_cast<std::size_t>(level.prolongation.nnz()));
  kernels::amg::multipass_prolongation_values(
      backend, a, m.pass.span(), m.passes, m.order.span(), m.offsets.span(), level.interpolation,
      m.weights.pattern(), detail::pattern_view(level.prolongation),
      prolongation_values.span().data());
  return prolongation_values;
}

CsrArrays mm_extended_prolongation(const CsrMatrix& A, const CsrArrays& S,
                                   const Array<index_t>& splitting, Array<index_t> coarse_index,
                                   index_t num_coarse,
                                   const kernels::amg::InterpolationParameters& parameters,
                                   std::unique_ptr<MatrixProductArrays>& kept) {
  const Backend& backend = A.backend();
  const auto n = static_cast<std::size_t>(A.num_rows());
  const auto a = detail::matrix_view(A);
  auto arrays = std::make_unique<MatrixProductArrays>();
  Array<double> coarse_sum(backend, n);
  kernels::amg::mm_extended_coarse_sums(backend, a, S.pattern(), splitting.span(),
                                        coarse_sum.span());
  Array<index_t> left_counts(backend, n), right_counts(backend, n);
  kernels::amg::mm_extended_count(backend, S.pattern(), splitting.span(), left_counts.span(),
                                  right_counts.span());
  CsrArrays L, B;
  L.num_rows = L.num_cols = B.num_rows = A.num_rows();
  B.num_cols = num_coarse;
  // Row i of L and row i of B hold |S_i| + 1 entries together (2 for a coarse row), so each
  // factor has at most nnz(S) + n: its arrays are sized by that bound, no total read back.
  const std::int64_t bound = S.nnz() + static_cast<std::int64_t>(n);
  L.row_ptr = Array<index_t>(backend, n + 1);
  B.row_ptr = Array<index_t>(backend, n + 1);
  ss::exclusive_scan_bounded(backend, left_counts.span(), L.row_ptr.span(), bound);
  ss::exclusive_scan_bounded(backend, right_counts.span(), B.row_ptr.span(), bound);
  L.col_idx = Array<index_t>(backend, static_cast<std::size_t>(bound));
  L.values = Array<double>(backend, static_cast<std::size_t>(bound));
  B.col_idx = Array<index_t>(backend, static_cast<std::size_t>(bound));
  B.values = Array<double>(backend, static_cast<std::size_t>(bound));
  kernels::amg::mm_extended_fill(
      backend, a, S.pattern(), splitting.span(), coarse_index.span(), coarse_sum.span(),
      L.row_ptr.span().data(), L.col_idx.span().data(), L.values.span().data(),
      B.row_ptr.span().data(), B.col_idx.span().data(), B.values.span().data());
  CsrArrays product = spgemm(backend, L.matrix(), B.matrix());
  arrays->coarse_index = std::move(coarse_index);
  arrays->left_entries = L.col_idx.size();
  arrays->right_entries = B.col_idx.size();
  arrays->left.num_rows = arrays->left.num_cols = L.num_rows;
  arrays->left.row_ptr = std::move(L.row_ptr);
  arrays->right.num_rows = B.num_rows;
  arrays->right.num_cols = B.num_cols;
  arrays->right.row_ptr = std::move(B.row_ptr);
  const bool truncating = parameters.truncation_factor > 0.0 || parameters.max_elements_per_row > 0;
  if (!truncating) {
    kept = std::move(arrays);
    return product;
  }
  CsrArrays P;
  P.num_rows = product.num_rows;
  P.num_cols = product.num_cols;
  Array<index_t> counts(backend, n);
  kernels::amg::truncation_count(backend, product.matrix(), parameters, counts.span());
  std::int64_t nnz = 0;
  P.row_ptr = row_pointers(backend, counts, nnz);
  P.col_idx = Array<index_t>(backend, static_cast<std::size_t>(nnz));
  P.values = Array<double>(backend, static_cast<std::size_t>(nnz));
  kernels::amg::truncation_fill(backend, product.matrix(), parameters, P.row_ptr.span().data(),
                                P.col_idx.span().data(), P.values.span().data());
  arrays->product_entries = product.col_idx.size();
  arrays->product.num_rows = product.num_rows;
  arrays->product.num_cols = product.num_cols;
  arrays->product.row_ptr = std::move(product.row_ptr);
  kept = std::move(arrays);
  return P;
}

Array<double> mm_extended_prolongation_values(const Backend& backend, const ss::MatrixView& a,
                                              const AmgLevelArrays& level) {
  const MatrixProductArrays& m = *level.matrix_product;
  const auto n = static_cast<std::size_t>(a.pattern.num_rows);
  const ss::PatternView s = level.strength.pattern();
  Array<double> coarse_sum(backend, n);
  kernels::amg::mm_extended_coarse_sums(backend, a, s, level.splitting.span(), coarse_sum.span());
  // L's and B's columns and values, formed again on their kept row pointers.
  Array<index_t> left_columns(backend, m.left_entries), right_columns(backend, m.right_entries);
  Array<double> left_values(backend, m.left_entries), right_values(backend, m.right_entries);
  kernels::amg::mm_extended_fill(
      backend, a, s, level.splitting.span(), m.coarse_index.span(), coarse_sum.span(),
      m.left.row_ptr.span().data(), left_columns.span().data(), left_values.span().data(),
      m.right.row_ptr.span().data(), right_columns.span().data(), right_values.span().data());
  const ss::MatrixView left{
      {m.left.num_rows, m.left.num_cols, m.left.row_ptr.span().data(), left_columns.span().data()},
      left_values.span().data()};
  const ss::MatrixView right{{m.right.num_rows, m.right.num_cols, m.right.row_ptr.span().data(),
                              right_columns.span().data()},
                             right_values.span().data()};
  Array<double> values(backend, static_cast<std::size_t>(level.prolongation.nnz()));
  if (m.product.row_ptr.size() == 0) {
    ss::spgemm_numeric(backend, left, right, detail::pattern_view(level.prolongation),
                       values.span().data());
    return values;
  }
  Array<index_t> product_columns(backend, m.product_entries);
  Array<double> product_values(backend, m.product_entries);
  ss::spgemm_fill_numeric(backend, left, right, m.product.row_ptr.span().data(),
                          product_columns.span().data(), product_values.span().data());
  const ss::MatrixView product{{m.product.num_rows, m.product.num_cols,
                                m.product.row_ptr.span().data(), product_columns.span().data()},
                               product_values.span().data()};
  kernels::amg::truncation_values(backend, product, detail::pattern_view(level.prolongation),
                                  values.span().data());
  return values;
}

Array<index_t> aggregation(const Backend& backend, const CsrArrays& S, std::uint64_t seed,
                           std::int64_t& num_aggregates) {
  const auto n = static_cast<std::size_t>(S.num_rows);
  // G = S + S^T; a symmetric S (the symmetric strength of a symmetric A) is G itself, and the
  // transpose, which costs more than a pass over S, is skipped (st with a null row_ptr).
  CsrArrays St;
  ss::PatternView st{S.num_cols, S.num_rows, nullptr, nullptr};
  if (!ss::pattern_symmetric(backend, S.pattern())) {
    St = transpose(backend, S.pattern(), S.nnz(), nullptr);
    st = St.pattern();
  }
  Array<index_t> roots(backend, n);
  kernels::amg::mis2_roots(backend, S.pattern(), st, seed, roots.span());
  const Array<index_t> root_index = row_pointers(backend, roots, num_aggregates);
  Array<index_t> aggregate(backend, n);
  const index_t left = kernels::amg::mis2_aggregates(backend, S.pattern(), st, seed, roots.span(),
                                                     root_index.span(), aggregate.span());
  if (left != 0) {
    throw BackendError("AMG aggregation: " + std::to_string(left) +
                       " rows were left without an aggregate (the distance-two independent set "
                       "is not maximal)");
  }
  return aggregate;
}

CsrArrays tentative_prolongation(const Backend& backend, const Array<index_t>& aggregate,
                                 index_t num_aggregates) {
  CsrArrays T;
  T.num_rows = static_cast<index_t>(aggregate.size());
  T.num_cols = num_aggregates;
  T.row_ptr = Array<index_t>(backend, aggregate.size() + 1);
  T.col_idx = Array<index_t>(backend, aggregate.size());
  T.values = Array<double>(backend, aggregate.size());
  kernels::amg::tentative_prolongation(backend, aggregate.span(), T.row_ptr.span().data(),
                                       T.col_idx.span().data(), T.values.span().data());
  return T;
}

namespace {

/// Gershgorin's bound rho of the spectral radius of D^-1 A, left on the backend: the prolongation
/// smoother I - omega D^-1 A takes omega = factor / rho there, so no wait comes between the two.
Array<double> gershgorin_bound(const Backend& backend, const ss::MatrixView& a) {
  Array<double> bound(backend, 1);
  kernels::amg::gershgorin_bound(backend, a, bound.span().data());
  return bound;
}

}  // namespace

CsrArrays smoothed_prolongation(const CsrMatrix& A, const Array<index_t>& aggregate,
                                index_t num_aggregates, double factor) {
  const Backend& backend = A.backend();
  const ss::MatrixView a = detail::matrix_view(A);
  const Array<double> bound = gershgorin_bound(backend, a);
  // The pattern of (I - omega D^-1 A) T is that of A T: row i holds the distinct aggregates of
  // its columns. Pattern and values come from A and the aggregates directly
  // (kernels::amg::smoothed_aggregation_*), neither T nor a product formed.
  CsrArrays P;
  P.num_rows = A.num_rows();
  P.num_cols = num_aggregates;
  Array<index_t> counts(backend, static_cast<std::size_t>(A.num_rows()));
  kernels::amg::smoothed_aggregation_count(backend, a.pattern, aggregate.span(), counts.span());
  std::int64_t nnz = 0;
  P.row_ptr = row_pointers(backend, counts, nnz);
  P.col_idx = Array<index_t>(backend, static_cast<std::size_t>(nnz));
  P.values = Array<double>(backend, static_cast<std::size_t>(nnz));
  kernels::amg::smoothed_aggregation_fill(backend, a.pattern, aggregate.span(),
                                          P.row_ptr.span().data(), P.col_idx.span().data());
  kernels::amg::smoothed_aggregation_values(backend, a, factor, bound.span().data(),
                                            aggregate.span(), P.pattern(), P.values.span().data());
  return P;
}

Array<double> smoothed_prolongation_values(const Backend& backend, const ss::MatrixView& a,
                                           const Array<index_t>& aggregate,
                                           const CsrMatrix& prolongation, double factor) {
  const Array<double> bound = gershgorin_bound(backend, a);
  Array<double> values(backend, static_cast<std::size_t>(prolongation.nnz()));
  kernels::amg::smoothed_aggregation_values(backend, a, factor, bound.span().data(),
                                            aggregate.span(), detail::pattern_view(prolongation),
                                            values.span().data());
  return values;
}

Array<index_t> coarse_index(const Backend& backend, const Array<index_t>& splitting,
                            std::int64_t& num_coarse) {
  return row_pointers(backend, splitting, num_coarse);
}

CsrArrays interpolation(const CsrMatrix& A, const CsrArrays& S, const Array<index_t>& splitting,
                        const Array<index_t>& coarse_index, index_t num_coarse,
                        const kernels::amg::InterpolationParameters& parameters) {
  const Backend& backend = A.backend();
  const auto a = detail::matrix_view(A);
  CsrArrays P;
  P.num_rows = A.num_rows();
  P.num_cols = num_coarse;
  Array<index_t> counts(backend, static_cast<std::size_t>(A.num_rows()));
  kernels::amg::interpolation_count(backend, a, S.pattern(), splitting.span(), parameters,
                                    counts.span());
  std::int64_t nnz = 0;
  P.row_ptr = row_pointers(backend, counts, nnz);
  P.col_idx = Array<index_t>(backend, static_cast<std::size_t>(nnz));
  P.values = Array<double>(backend, static_cast<std::size_t>(nnz));
  kernels::amg::interpolation_fill(backend, a, S.pattern(), splitting.span(), coarse_index.span(),
                                   parameters, P.row_ptr.span().data(), P.col_idx.span().data(),
                                   P.values.span().data());
  return P;
}

CsrArrays spgemm_pattern(const Backend& backend, const ss::PatternView& a,
                         const ss::PatternView& b) {
  CsrArrays C;
  C.num_rows = a.num_rows;
  C.num_cols = b.num_cols;
  Array<index_t> counts(backend, static_cast<std::size_t>(C.num_rows));
  ss::spgemm_count(backend, a, b, counts.span());
  std::int64_t nnz = 0;
  C.row_ptr = row_pointers(backend, counts, nnz);
  C.col_idx = Array<index_t>(backend, static_cast<std::size_t>(nnz));
  ss::spgemm_fill(backend, a, b, C.row_ptr.span().data(), C.col_idx.span().data());
  return C;
}

CsrArrays spgemm(const Backend& backend, const ss::MatrixView& a, const ss::MatrixView& b) {
  CsrArrays C;
  C.num_rows = a.pattern.num_rows;
  C.num_cols = b.pattern.num_cols;
  Array<index_t> counts(backend, static_cast<std::size_t>(C.num_rows));
  ss::spgemm_count(backend, a.pattern, b.pattern, counts.span());
  std::int64_t nnz = 0;
  C.row_ptr = row_pointers(backend, counts, nnz);
  C.col_idx = Array<index_t>(backend, static_cast<std::size_t>(nnz));
  C.values = Array<double>(backend, static_cast<std::size_t>(nnz));
  ss::spgemm_fill_numeric(backend, a, b, C.row_ptr.span().data(), C.col_idx.span().data(),
                          C.values.span().data());
  return C;
}

CsrMatrix galerkin_product(const CsrMatrix& A, AmgLevelArrays& level) {
  const Backend& backend = A.backend();
  const ss::MatrixView p = detail::matrix_view(level.prolongation);
  CsrArrays R = transpose(backend, p.pattern, level.prolongation.nnz(), nullptr);
  R.values = Array<double>(backend, R.col_idx.size());
  kernels::amg::restriction_values(backend, p, R.pattern(), R.values.span().data());
  level.restriction = to_matrix(std::move(R));
  level.product = spgemm(backend, detail::matrix_view(A), p);
  CsrMatrix coarse =
      to_matrix(spgemm(backend, detail::matrix_view(level.restriction), level.product.matrix()));
  // Only A P's row pointers stay for re-setup: its columns and values are formed again there in
  // one pass (spgemm_fill_numeric), 4 bytes per entry of A P less in the hierarchy.
  level.product_entries = level.product.col_idx.size();
  level.product.col_idx = Array<index_t>();
  level.product.values = Array<double>();
  return coarse;
}

Array<double> galerkin_product_values(const Backend& backend, const ss::MatrixView& a,
                                      const Array<double>& prolongation_values,
                                      AmgLevelArrays& level, CsrMatrix& coarse,
                                      DeferredChecks& checks, std::size_t level_number) {
  Array<double> restriction_values(backend, static_cast<std::size_t>(level.restriction.nnz()));
  kernels::amg::restriction_values(
      backend, {detail::pattern_view(level.prolongation), prolongation_values.span().data()},
      detail::pattern_view(level.restriction), restriction_values.span().data());
  update_values_checked(level.restriction, restriction_values, checks, level_number, "restriction");
  // A P's columns and values live only here (its row pointers are kept from setup): 12 bytes
  // per entry of A P less in the hierarchy, two allocations from the pool per re-setup.
  Array<index_t> product_columns(backend, level.product_entries);
  Array<double> product_values(backend, level.product_entries);
  const ss::MatrixView p{detail::pattern_view(level.prolongation),
                         prolongation_values.span().data()};
  ss::spgemm_fill_numeric(backend, a, p, level.product.row_ptr.span().data(),
                          product_columns.span().data(), product_values.span().data());
  const ss::MatrixView product{{level.product.num_rows, level.product.num_cols,
                                level.product.row_ptr.span().data(), product_columns.span().data()},
                               product_values.span().data()};
  const ss::MatrixView r{detail::pattern_view(level.restriction), restriction_values.span().data()};
  Array<double> coarse_values(backend, static_cast<std::size_t>(coarse.nnz()));
  ss::spgemm_numeric(backend, r, product, detail::pattern_view(coarse),
                     coarse_values.span().data());
  update_values_checked(coarse, coarse_values, checks, level_number + 1, "matrix");
  return coarse_values;
}

CsrMatrix to_matrix(CsrArrays&& arrays) {
  return CsrMatrix::from_arrays(arrays.num_rows, arrays.num_cols, std::move(arrays.row_ptr),
                                std::move(arrays.col_idx), std::move(arrays.values),
                                CsrMatrix::Partition::deferred);
}

index_t first_bad_diagonal(const CsrMatrix& A, unsigned int* slot, Vector* inverse) {
  Vector d(A.backend(), static_cast<std::size_t>(A.num_rows()));
  A.diagonal(d);
  Vector dinv(A.backend(), d.size());
  const index_t bad = kernels::blas::invert_diagonal(A.backend(), d.span(), dinv.span(), slot);
  if (inverse != nullptr) *inverse = std::move(dinv);
  return bad;
}

unsigned int* DeferredChecks::add(std::function<void(index_t)> fail) {
  const std::size_t k = failures_.size();
  if (k % kBlockSlots == 0) blocks_.emplace_back(backend_, kBlockSlots);
  failures_.push_back(std::move(fail));
  return blocks_.back().span().data() + k % kBlockSlots;
}

void DeferredChecks::resolve() {
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    const std::vector<unsigned int> slots = blocks_[b].to_host();
    for (std::size_t s = 0; s < kBlockSlots && b * kBlockSlots + s < failures_.size(); ++s) {
      const index_t first = kernels::blas::first_index_of(slots[s]);
      if (first >= 0) failures_[b * kBlockSlots + s](first);
    }
  }
}

namespace {

/// A deferred check's slot that reports an overflow to float32 of entry `entry` of level
/// `level_number`'s `what`.
unsigned int* overflow_check(DeferredChecks& checks, std::size_t level_number, const char* what) {
  const std::string name = what;
  return checks.add([name, level_number](index_t entry) {
    throw InvalidInput("AMG: entry " + std::to_string(entry + 1) + " of level " +
                       std::to_string(level_number) + "'s " + name +
                       " overflows float32 (largest finite float: 3.4028235e+38); use "
                       "hierarchy_precision float64");
  });
}

}  // namespace

void update_values_checked(CsrMatrix& matrix, const Array<double>& values, DeferredChecks& checks,
                           std::size_t level_number, const char* what) {
  matrix.update_values(values, overflow_check(checks, level_number, what));
}

void set_precision_checked(CsrMatrix& matrix, Precision precision, DeferredChecks& checks,
                           std::size_t level_number, const char* what) {
  matrix.set_precision(precision, overflow_check(checks, level_number, what));
}

}  // namespace kryflow::amg_setup
