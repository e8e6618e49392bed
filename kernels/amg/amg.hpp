// Contract of the classical algebraic multigrid setup kernels: strength of connection, C/F
// splitting (the Parallel Toolbox greedy algorithm and PMIS) and interpolation (the Parallel
// Toolbox 1/n_i weights, Stüben's direct interpolation and the distance-two extended+i
// interpolation, with truncation).
//
// Same layout as kernels/sparse_setup (reference oracle, cpu, cuda, dispatch). Every kernel is
// deterministic: cpu, cuda and reference give the same bits (the per-row formulas are one
// host-and-device definition, kernels/amg/amg_rows.hpp). On cuda, greedy_splitting runs in one
// thread (sequential by definition; slow for large matrices: PMIS is the parallel splitting),
// pmis_splitting waits once per three rounds and the interpolation kernels once per call (none for
// interpolation_count without truncation). Patterns are
// 0-based CSR with sorted unique columns; every pointer is an address on the backend. The
// matrix A (n x n) has a nonzero diagonal entry in every row (callers check it).
//
// Sources: K. Stüben, "A review of algebraic multigrid", J. Comput. Appl. Math. 128 (2001),
// sec. 7 (also U. Trottenberg, C. Oosterlee, A. Schüller, "Multigrid", Academic Press 2001,
// appendix A, sec. A.7); H. De Sterck, U. M. Yang, J. J. Heys, "Reducing complexity in parallel
// algebraic multigrid preconditioners", SIAM J. Matrix Anal. Appl. 27 (2006), sec. 3 (PMIS);
// M. Liebmann, "Algebraic multigrid methods on GPU-accelerated hybrid architectures" (the
// Parallel Toolbox, TU München 2016): coarsening algorithm and prolongation operator (1)-(3);
// H. De Sterck, R. D. Falgout, J. W. Nolting, U. M. Yang, "Distance-two interpolation for
// parallel algebraic multigrid", Numer. Linear Algebra Appl. 15 (2008) (extended+i).
#pragma once

#include <cstdint>

#include "kernels/backend/host_device.hpp"
#include "kernels/sparse_setup/sparse_setup.hpp"

namespace kryflow::kernels::amg {

using sparse_setup::MatrixView;
using sparse_setup::PatternView;

/// Values of a C/F splitting array (one entry per row).
inline constexpr index_t kFine = 0;
inline constexpr index_t kCoarse = 1;

/// Which rule says that i strongly depends on j (j != i, a_ij stored).
enum class StrengthMeasure {
  /// Stüben (2001) eq. (7.2), sign-aware as for M-matrices: with s = -sign(a_ii),
  /// s a_ij >= threshold max_{k != i} s a_ik and s a_ij > 0.
  classical,
  /// The Parallel Toolbox rule: |a_ij| > threshold |a_ii|.
  seed,
  /// The smoothed-aggregation rule (Vaněk, Mandel, Brezina, "Algebraic multigrid by smoothed
  /// aggregation for second and fourth order elliptic problems", Computing 56, 1996, eq. (3.2)):
  /// |a_ij| >= threshold sqrt(|a_ii a_jj|) (a_jj = 0 when not stored). Symmetric for symmetric A.
  symmetric,
};

struct StrengthParameters {
  StrengthMeasure measure = StrengthMeasure::classical;
  double threshold = 0.25;
  /// When < 1, a row with |sum_j a_ij| > max_row_sum |a_ii| (strongly diagonally dominant)
  /// depends strongly on nothing (as hypre's BoomerAMG); 1 disables the test.
  double max_row_sum = 1.0;
};

enum class InterpolationKind {
  /// The Parallel Toolbox: (P_FC)_ij = 1/n_i over the n_i coarse points i depends on.
  seed,
  /// Stüben (2001) sec. 7.2.1 (Trottenberg et al. A.7.2.1): direct interpolation from the
  /// strongly coupled coarse points, negative and positive couplings scaled separately.
  direct,
  /// De Sterck, Falgout, Nolting, Yang (2008), "extended+i" (as hypre BoomerAMG's
  /// interp_type 6): distance-two interpolation from C_i^ = the coarse points of S_i and of
  /// S_k for the fine points k of S_i. With a^_kl = a_kl where sign(a_kl) != sign(a_kk), else
  /// 0, and d_k = sum_{l in C_i^ + {i}} a^_kl for k in F_i^s (the fine points of S_i):
  ///   w_ij = -(a_ij + sum_{k in F_i^s, d_k != 0} a_ik a^_kj / d_k) / a~_ii,
  ///   a~_ii = a_ii + sum_{n in N_i, n not in C_i^ + F_i^s} a_in
  ///                + sum_{k in F_i^s, d_k != 0} a_ik a^_ki / d_k + sum_{k in F_i^s, d_k = 0} a_ik
  /// (a_ij = 0 when not stored; N_i the off-diagonal columns of row i). sum_j w_ij =
  /// 1 - r_i / a~_ii with r_i the sum of row i of A: constants are interpolated exactly in
  /// zero-row-sum rows. When a~_ii = 0 the row's weights are 0. Truncation keeps a subset K of
  /// C_i^ and recomputes the formula with C_i^ = K (the dropped points' a_ij join a~_ii).
  extended_i,
  /// Matrix-product extended+i, "MM-ext+i" (R. Li, B. Sjögreen, U. M. Yang, "A new class of AMG
  /// interpolation methods based on matrix-matrix multiplications", SIAM J. Sci. Comput. 43,
  /// 2021, sec. 3; hypre BoomerAMG's extended+i on GPUs): extended+i with the distribution
  /// denominators of a fine point k taken over its own strong coarse points, so that P's fine
  /// rows are one sparse product W = L B:
  ///   w_ij = -(a_ij [j in C_i^s] + sum_{k in F_i^s} a_ik a_kj [j in C_k^s] / d_ik) / t_i,
  ///   d_ik = beta_k + a_ki [i in S_k],  beta_k = sum_{l in C_k^s} a_kl,
  ///   t_i = a_ii + sum_{n in N_i \ S_i} a_in + sum_{k in F_i^s} a_ki [i in S_k] a_ik / d_ik,
  /// (C_i^s, F_i^s: the coarse and fine points of S_i; a term with d_ik = 0 moves a_ik into
  /// t_i instead; weights 0 when t_i = 0). No sign filtering: with the classical strength
  /// every strong coupling has the sign opposite to the diagonal. Built by the mm_extended_*
  /// kernels and the sparse product (rows::mm_extended_left_row, mm_extended_right_row), then
  /// truncated by the truncation_* kernels (the kept weights rescaled to the row sum), not by
  /// interpolation_count / fill / values.
  mm_extended_i,
};

struct InterpolationParameters {
  InterpolationKind kind = InterpolationKind::direct;
  /// Most interpolatory points per row (0: no limit); the largest |weights| are kept (for seed
  /// weights, the largest |a_ij|), ties to the smaller column.
  int max_elements_per_row = 0;
  /// Drops weights below truncation_factor * max |w_ij| of the row (0: keeps all).
  double truncation_factor = 0.0;
};

#define KRYFLOW_AMG_DECLARATIONS                                                                   \
  /** counts[i] = points row i strongly depends on (counts has n entries) */                       \
  void strength_count(const Backend& backend, const MatrixView& a, const StrengthParameters& p,    \
                      Span<index_t> counts);                                                       \
  /** The strength pattern S (row i: the j that i strongly depends on): s_row_ptr from             \
      exclusive_scan of strength_count given, writes s_col_idx */                                  \
  void strength_fill(const Backend& backend, const MatrixView& a, const StrengthParameters& p,     \
                     const index_t* s_row_ptr, index_t* s_col_idx);                                \
  /** The Parallel Toolbox coarsening: rows in increasing order; an undecided row i becomes        \
      coarse and every undecided j in S_i fine. cf has n entries (kCoarse or kFine). */            \
  void greedy_splitting(const Backend& backend, const PatternView& s, Span<index_t> cf);           \
  /** PMIS (De Sterck, Yang, Heys 2006): weights w_i = |S^T_i| + u_i with u_i in [0, 1) from       \
      `seed` and i (splitmix64); rows no one depends on are fine; then rounds: undecided rows      \
      whose weight beats every undecided neighbour in S and S^T become coarse, undecided rows      \
      depending on a new coarse row become fine. st is the pattern of S^T. */                      \
  void pmis_splitting(const Backend& backend, const PatternView& s, const PatternView& st,         \
                      std::uint64_t seed, Span<index_t> cf);                                       \
  /** HMIS (De Sterck, Yang, Heys 2006): the Ruge-Stueben first pass on each domain of             \
      kHmisDomainRows consecutive rows, S restricted to the domain (rows::hmis_domain_pass), then  \
      PMIS with its coarse rows as the first independent set: they are coarse, undecided rows      \
      depending on them fine, and PMIS rounds (weights as pmis_splitting's) decide the rest. */    \
  void hmis_splitting(const Backend& backend, const PatternView& s, const PatternView& st,         \
                      std::uint64_t seed, Span<index_t> cf);                                       \
  /** coarse_points[coarse_index[i]] = i for every coarse row i (coarse_index: exclusive_scan      \
      of cf, n + 1 entries) */                                                                     \
  void coarse_points(const Backend& backend, Span<const index_t> cf,                               \
                     Span<const index_t> coarse_index, Span<index_t> coarse_points);               \
  /** counts[i] = entries of row i of the prolongation P (1 for coarse rows); S is the strength    \
      pattern the splitting cf was made from (extended_i reads rows S_k of i's fine points k) */   \
  void interpolation_count(const Backend& backend, const MatrixView& a, const PatternView& s,      \
                           Span<const index_t> cf, const InterpolationParameters& p,               \
                           Span<index_t> counts);                                                  \
  /** P (n x n_c): p_row_ptr from exclusive_scan of interpolation_count given; writes columns      \
      (coarse indices, sorted) and weights: 1 at coarse_index[i] for coarse rows, the kept         \
      interpolatory set's weights (recomputed over the kept set) for fine rows */                  \
  void interpolation_fill(const Backend& backend, const MatrixView& a, const PatternView& s,       \
                          Span<const index_t> cf, Span<const index_t> coarse_index,                \
                          const InterpolationParameters& p, const index_t* p_row_ptr,              \
                          index_t* p_col_idx, double* p_values);                                   \
  /** Value-only re-setup: the weights of P's fixed pattern (coarse columns; coarse_points maps    \
      them to rows of A) from the values of a; the same bits as interpolation_fill when a and      \
      the pattern are those it was built from. s: the strength pattern P was built from, read      \
      only for extended_i (which needs the fine points of S_i; may be empty otherwise) */          \
  void interpolation_values(const Backend& backend, const MatrixView& a, const PatternView& s,     \
                            Span<const index_t> cf, Span<const index_t> coarse_points,             \
                            InterpolationKind kind, const PatternView& prolongation,               \
                            double* p_values);                                                     \
  /** Distance-two maximal independent set of the graph G = S + S^T (Bell, Dalton, Olson,          \
      "Exposing fine-grained parallelism in algebraic multigrid methods", SIAM J. Sci. Comput.     \
      34, 2012, sec. 4.2, MIS(k) with k = 2): every row has the key (state, u_i, i) with u_i       \
      from `seed` and i (mis2_key); per round, each row takes the largest key within distance      \
      two of it (two propagations along G); an undecided row whose own key is that largest         \
      joins the set, an undecided row within distance two of a member leaves. roots[i] = 1 for     \
      members, 0 otherwise (n entries). Rows of G without neighbours are members. st is the        \
      pattern of S^T, or has a null row_ptr when S is symmetric (then G = S; the same result       \
      without the transpose). One wait per round on a device. */                                   \
  void mis2_roots(const Backend& backend, const PatternView& s, const PatternView& st,             \
                  std::uint64_t seed, Span<index_t> roots);                                        \
  /** Aggregates around the roots of mis2_roots: root r is aggregate root_index[r]                 \
      (root_index: exclusive_scan of roots); a row adjacent in G to a root joins the root's        \
      aggregate (of the largest key if several), then a row still without one joins the            \
      aggregate of its neighbour in G of largest key that has one (st as in mis2_roots).           \
      aggregate has n entries.                                                                     \
      Returns the rows left without an aggregate (0 when roots is a maximal distance-two           \
      independent set of G; they get -1). */                                                       \
  index_t mis2_aggregates(const Backend& backend, const PatternView& s, const PatternView& st,     \
                          std::uint64_t seed, Span<const index_t> roots,                           \
                          Span<const index_t> root_index, Span<index_t> aggregate);                \
  /** The tentative prolongation of aggregation with the constant near-null space: one entry       \
      1 per row, in column aggregate[i] (row_ptr n + 1, col_idx and values n entries). */          \
  void tentative_prolongation(const Backend& backend, Span<const index_t> aggregate,               \
                              index_t* row_ptr, index_t* col_idx, double* values);                 \
  /** *bound = max_i sum_j |a_ij| / |a_ii|: Gershgorin's bound of the spectral radius of D^-1 A    \
      (rows of a nonzero diagonal; 0 for an empty matrix). bound is an address on the backend;     \
      nothing waits (smoothed_aggregation_values reads it there). */                               \
  void gershgorin_bound(const Backend& backend, const MatrixView& a, double* bound);               \
  /** The values of smoothed aggregation's prolongation P = (I - omega D^-1 A) T on P's pattern    \
      p (the pattern of that product: spgemm_count / spgemm_fill of a's pattern and T's), T the    \
      tentative prolongation of `aggregate` (one 1 per row): p_ij = sum, over the entries          \
      k = (i, m) of row i in stored order with aggregate[m] = j, of delta_im - omega a_im / a_ii   \
      (rows::jacobi_smoothing_entry), starting from 0: the bits of spgemm_numeric of the           \
     smoother's values and T (each product s_im 1 is exact and Gustavson adds them in that order), \
     without forming either. omega = factor / *bound, bound an address on the backend (as          \
     gershgorin_bound writes it: no wait between the two). a has a nonzero diagonal in every row;  \
     values has p's entries. */                                                                    \
  /** The values of R = P^T on R's pattern r (the transpose of p's pattern): entry k = (c, i)      \
      of R gets p_ic, the first entry of column c in p's row i (a search of that row), so no       \
      map from R's entries to P's is kept. r_values has r's entries. */                            \
  void restriction_values(const Backend& backend, const MatrixView& p, const PatternView& r,       \
                          double* r_values);                                                       \
  /** The pattern of smoothed aggregation's P = (I - omega D^-1 A) T, T the tentative              \
      prolongation of `aggregate`: row i holds the distinct aggregates of the columns of a's       \
      row i, ascending (the pattern the sparse product a T has). count: counts[i] = their          \
      number; fill: their columns from row_ptr[i] (the exclusive scan of counts). O(m^2) per       \
      row of m entries. */                                                                         \
  void smoothed_aggregation_count(const Backend& backend, const PatternView& a,                    \
                                  Span<const index_t> aggregate, Span<index_t> counts);            \
  void smoothed_aggregation_fill(const Backend& backend, const PatternView& a,                     \
                                 Span<const index_t> aggregate, const index_t* row_ptr,            \
                                 index_t* col_idx);                                                \
  void smoothed_aggregation_values(const Backend& backend, const MatrixView& a, double factor,     \
                                   const double* bound, Span<const index_t> aggregate,             \
                                   const PatternView& p, double* values);                          \
  /** A sub-pattern of a: the rows of the coarse points of cf only (coarse_rows; row               \
      coarse_index[i] for coarse row i) or every row, and the coarse columns only, renumbered by   \
      coarse_index (coarse_columns), or every column (rows::select_row). count: counts has one     \
      entry per kept row; fill: col_idx from row_ptr, the exclusive scan of the counts. */         \
  void select_pattern_count(const Backend& backend, const PatternView& a, Span<const index_t> cf,  \
                            Span<const index_t> coarse_index, bool coarse_rows,                    \
                            bool coarse_columns, Span<index_t> counts);                            \
  void select_pattern_fill(const Backend& backend, const PatternView& a, Span<const index_t> cf,   \
                           Span<const index_t> coarse_index, bool coarse_rows,                     \
                           bool coarse_columns, const index_t* row_ptr, index_t* col_idx);         \
  /** Aggressive coarsening: the distance-two strength S2 among the coarse points of cf            \
      (coarse_index: the exclusive scan of cf), n_c x n_c: row coarse_index[i] of coarse row i     \
      holds the coarse indices of the coarse j != i with j in S_i or in S_k for a k in S_i         \
      (rows::distance_two_coarse_row; ss is the pattern of S[C, :] S[:, C] in coarse numbering).   \
      count: counts has n_c entries; fill: col_idx (sorted) from row_ptr, the exclusive scan of    \
      the counts. */                                                                               \
  void distance_two_strength_count(const Backend& backend, const PatternView& s,                   \
                                   const PatternView& ss, Span<const index_t> cf,                  \
                                   Span<const index_t> coarse_index, Span<index_t> counts);        \
  void distance_two_strength_fill(                                                                 \
      const Backend& backend, const PatternView& s, const PatternView& ss, Span<const index_t> cf, \
      Span<const index_t> coarse_index, const index_t* row_ptr, index_t* col_idx);                 \
  /** The aggressive splitting: cf[i] = kCoarse when first[i] is coarse and                        \
      second[first_index[i]] is coarse (the splitting of S2), else kFine (n entries) */            \
  void aggressive_splitting(const Backend& backend, Span<const index_t> first,                     \
                            Span<const index_t> first_index, Span<const index_t> second,           \
                            Span<index_t> cf);                                                     \
  /** The passes of multi-pass interpolation: pass[i] = 0 for the coarse rows of cf; in round      \
      p = 1, 2, ... every row without a pass that depends strongly (S) on a row of pass p - 1      \
      gets pass p (rows::reaches_pass); rows never reached get -1. Returns the largest pass        \
      (0 when no fine row was reached). On cuda one wait per four rounds. */                       \
  index_t interpolation_passes(const Backend& backend, const PatternView& s,                       \
                               Span<const index_t> cf, Span<index_t> pass);                        \
  /** Multi-pass interpolation's one-step operator W (n x n, rows::multipass_row): count (counts   \
      has n entries) and fill (columns sorted and, unless values is null, weights from row_ptr,    \
      the exclusive scan of the counts); multipass_prolongation_values forms W's weights on its    \
      fixed pattern. */                                                                            \
  void multipass_count(const Backend& backend, const PatternView& s, Span<const index_t> pass,     \
                       Span<index_t> counts);                                                      \
  void multipass_fill(const Backend& backend, const MatrixView& a, const PatternView& s,           \
                      Span<const index_t> pass, InterpolationKind kind, const index_t* row_ptr,    \
                      index_t* col_idx, double* values);                                           \
  /** The rows grouped by pass for multipass_prolongation_values: order (n entries) lists the      \
      rows without a pass, then those of pass 0, 1, ..., passes, each group in increasing row      \
      order; offsets (passes + 3 entries) starts group g (pass g - 1) at offsets[g], and           \
      offsets[passes + 2] = n. */                                                                  \
  void multipass_order(const Backend& backend, Span<const index_t> pass, index_t passes,           \
                       Span<index_t> order, Span<index_t> offsets);                                \
  /** Multi-pass interpolation's P on its fixed pattern p (n x n_c) for a value-only re-setup:     \
      the rows of pass 0, 1, ..., passes in turn (rows::multipass_prolongation_row, W's weights    \
      formed on W's pattern w; each pass's rows from multipass_order), each pass reading the       \
      rows of the one before; the bits of the product chain P = W (W (... X_1)). On cuda one       \
      launch per pass over that pass's rows alone, no wait. */                                     \
  void multipass_prolongation_values(                                                              \
      const Backend& backend, const MatrixView& a, Span<const index_t> pass, index_t passes,       \
      Span<const index_t> order, Span<const index_t> offsets, InterpolationKind kind,              \
      const PatternView& w, const PatternView& p, double* values);                                 \
  /** Multi-pass interpolation's P formed pass by pass into `capacity` slots per row               \
      (rows::multipass_slot_row; slot_columns and slot_values n capacity entries, counts n):       \
      the rows of pass 0, 1, ..., passes in turn as multipass_prolongation_values, each row's      \
      columns the union of those of the rows it reads, so that neither P's pattern nor a product   \
      is formed first; the same bits. False when a row needs more than capacity slots (counts      \
      and slots then unspecified). On cuda one launch (one per pass above the cooperative rows)    \
      and one wait. */                                                                             \
  bool multipass_prolongation_slots(                                                               \
      const Backend& backend, const MatrixView& a, Span<const index_t> pass, index_t passes,       \
      Span<const index_t> order, Span<const index_t> offsets, InterpolationKind kind,              \
      const PatternView& w, Span<const index_t> coarse_index, index_t capacity,                    \
      index_t* slot_columns, double* slot_values, Span<index_t> counts);                           \
  /** P in CSR (row_ptr: the exclusive scan of the counts) from the slots of                       \
      multipass_prolongation_slots. */                                                             \
  void multipass_slots_compact(const Backend& backend, index_t n, index_t capacity,                \
                               const index_t* slot_columns, const double* slot_values,             \
                               const index_t* row_ptr, index_t* col_idx, double* values);          \
  /** Matrix-product extended+i (InterpolationKind::mm_extended_i): coarse_sum[k] = beta_k         \
      (rows::strong_coarse_sum; n entries, 0 for coarse rows) */                                   \
  void mm_extended_coarse_sums(const Backend& backend, const MatrixView& a, const PatternView& s,  \
                               Span<const index_t> cf, Span<double> coarse_sum);                   \
  /** The factors of P = L B: left_counts[i] = entries of row i of L (n x n), right_counts[k] =    \
      entries of row k of B (n x n_c) (rows::mm_extended_counts); n entries each */                \
  void mm_extended_count(const Backend& backend, const PatternView& s, Span<const index_t> cf,     \
                         Span<index_t> left_counts, Span<index_t> right_counts);                   \
  /** L's and B's columns (sorted) and values (rows::mm_extended_left_row, mm_extended_right_row)  \
      from their row pointers, the exclusive scans of mm_extended_count's counts; coarse_sum from  \
      mm_extended_coarse_sums */                                                                   \
  void mm_extended_fill(const Backend& backend, const MatrixView& a, const PatternView& s,         \
                        Span<const index_t> cf, Span<const index_t> coarse_index,                  \
                        Span<const double> coarse_sum, const index_t* left_row_ptr,                \
                        index_t* left_col_idx, double* left_values, const index_t* right_row_ptr,  \
                        index_t* right_col_idx, double* right_values);                             \
  /** Truncation of a computed prolongation p (rows::truncated_row: max_elements_per_row and       \
      truncation_factor of params, the kept weights rescaled to the row sum). count: counts has    \
      p's rows; fill: columns and values from row_ptr (the exclusive scan of the counts); values:  \
      the values on the fixed truncated pattern t (value-only re-setup,                            \
     rows::truncated_row_values)*/                                                                 \
  void truncation_count(const Backend& backend, const MatrixView& p,                               \
                        const InterpolationParameters& params, Span<index_t> counts);              \
  void truncation_fill(const Backend& backend, const MatrixView& p,                                \
                       const InterpolationParameters& params, const index_t* row_ptr,              \
                       index_t* col_idx, double* values);                                          \
  void truncation_values(const Backend& backend, const MatrixView& p, const PatternView& t,        \
                         double* values);

/// Dispatch.
KRYFLOW_AMG_DECLARATIONS

namespace reference {
KRYFLOW_AMG_DECLARATIONS
}
namespace cpu {
KRYFLOW_AMG_DECLARATIONS
}
namespace cuda {
KRYFLOW_AMG_DECLARATIONS
}

#undef KRYFLOW_AMG_DECLARATIONS

/// The uniform number in [0, 1) PMIS adds to the weight of row i (splitmix64 of seed and i).
KRYFLOW_HOST_DEVICE inline double pmis_random(std::uint64_t seed, index_t i) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(i) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

/// Rows of an HMIS domain: the Ruge-Stueben first pass runs on each run of this many
/// consecutive rows alone (hmis_splitting; on cuda a warp per domain in shared memory).
inline constexpr index_t kHmisDomainRows = 256;

/// The key by which the HMIS first pass picks its next coarse row within a domain: the
/// measure lambda in bits 40-63, 24 random bits of pmis_random(seed, i) in bits 16-39, the
/// row's place in the domain (local < kHmisDomainRows) in bits 0-15. Keys of different rows
/// differ, so the largest is unique.
KRYFLOW_HOST_DEVICE inline std::uint64_t hmis_key(index_t lambda, std::uint64_t seed, index_t i,
                                                  index_t local) {
  const auto random = static_cast<std::uint64_t>(pmis_random(seed, i) * 0x1.0p24);
  return (static_cast<std::uint64_t>(lambda) << 40) | (random << 16) |
         static_cast<std::uint64_t>(local);
}

/// States of mis2_roots in the key's top two bits: a member beats an undecided row, which
/// beats a row that left.
inline constexpr std::uint64_t kMis2Out = 0;
inline constexpr std::uint64_t kMis2Undecided = 1;
inline constexpr std::uint64_t kMis2In = 2;

/// The key of row i in mis2_roots: state in bits 62-63, 30 random bits of pmis_random(seed, i)
/// in bits 32-61, i in bits 0-31. Keys of different rows differ, so the largest is unique.
KRYFLOW_HOST_DEVICE inline std::uint64_t mis2_key(std::uint64_t state, std::uint64_t seed,
                                                  index_t i) {
  const auto random = static_cast<std::uint64_t>(pmis_random(seed, i) * 0x1.0p30);
  return (state << 62) | (random << 32) | static_cast<std::uint32_t>(i);
}

}  // namespace kryflow::kernels::amg
