// Internal: the arrays of an AMG hierarchy and the setup steps that build them from kernels.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "kernels/amg/amg.hpp"
#include "kryflow/amg/amg.hpp"

namespace kryflow {

/// A CSR matrix under construction: arrays on one backend (values empty for a pattern).
struct CsrArrays {
  index_t num_rows = 0;
  index_t num_cols = 0;
  Array<index_t> row_ptr;
  Array<index_t> col_idx;
  Array<double> values;
  kernels::sparse_setup::PatternView pattern() const {
    return {num_rows, num_cols, row_ptr.span().data(), col_idx.span().data()};
  }
  kernels::sparse_setup::MatrixView matrix() const { return {pattern(), values.span().data()}; }
  /// The stored entries (col_idx's size, known on the host).
  std::int64_t nnz() const { return static_cast<std::int64_t>(col_idx.size()); }
};

/// Multi-pass interpolation of an aggressive level with m >= 2 passes, P = W^(m-1) X_1: what a
/// value-only re-setup recomputes P's values from, pass by pass on P's pattern
/// (kernels::amg::multipass_prolongation_values).
struct MultipassArrays {
  Array<index_t> pass;     // of every row: 0 coarse, p >= 1, -1 none
  index_t passes = 0;      // the largest pass, m
  Array<index_t> order;    // the rows grouped by pass (kernels::amg::multipass_order)
  Array<index_t> offsets;  // where each pass's rows start in order (m + 3 entries)
  CsrArrays weights;       // W's pattern (no values)
};

/// Matrix-product extended+i, P = L B or its truncation (kernels::amg::InterpolationKind::
/// mm_extended_i): what a value-only re-setup recomputes P's values from (with the level's S).
struct MatrixProductArrays {
  Array<index_t> coarse_index;    // exclusive scan of the splitting (B's columns)
  CsrArrays left;                 // L's row pointers (n x n)
  CsrArrays right;                // B's row pointers (n x n_c)
  std::size_t left_entries = 0;   // room for L's columns and values (a bound: nnz(S) + n)
  std::size_t right_entries = 0;  // room for B's (the same bound)
  CsrArrays product;  // L B's row pointers when P is its truncation (else empty: P = L B)
  std::size_t product_entries = 0;
};

/// Everything one level of the hierarchy keeps for the cycle and for value-only re-setup.
struct AmgLevelArrays {
  CsrMatrix prolongation;           // n x n_c
  CsrMatrix restriction;            // n_c x n, P^T
  Array<index_t> splitting;         // kCoarse / kFine per row
  Array<index_t> coarse_points;     // row of each coarse point
  CsrArrays product;                // A P's row pointers (columns and values only during setups)
  std::size_t product_entries = 0;  // nnz of A P
  CsrArrays strength;  // S, kept for extended_i and mm_extended_i re-setup only (else empty)
  /// The interpolation P was built with (classical coarsening; its re-setup recomputes it).
  kernels::amg::InterpolationKind interpolation = kernels::amg::InterpolationKind::direct;
  std::unique_ptr<MultipassArrays> multipass;           // aggressive levels with two passes or more
  std::unique_ptr<MatrixProductArrays> matrix_product;  // mm_extended_i levels
};

struct AmgPreconditioner::Hierarchy {
  std::vector<std::unique_ptr<AmgLevelArrays>> levels;
  std::vector<std::unique_ptr<CsrMatrix>> matrices;  // A_1 .. A_L (A_0 is the user's)
};

namespace amg_setup {

/// Checks whose results a setup leaves on the backend and reads at once, after the work of
/// every level is queued, so that a re-setup waits for the device once instead of once per
/// check: each check is a first failing index in its own slot (kernels::blas::kNoIndex: none),
/// with the error its failure throws.
class DeferredChecks {
 public:
  explicit DeferredChecks(const Backend& backend) : backend_(backend) {}
  /// A slot on the backend for one check; `fail` is called with the index found there (and
  /// throws). The slot stays valid until the object dies.
  unsigned int* add(std::function<void(index_t)> fail);
  /// Reads every slot (one wait per 64 checks) and calls the first failed check's `fail`, in
  /// the order the checks were added. BackendError when queued device work failed.
  void resolve();

 private:
  static constexpr std::size_t kBlockSlots = 64;
  Backend backend_;
  std::vector<Array<unsigned int>> blocks_;
  std::vector<std::function<void(index_t)>> failures_;
};

/// The strength pattern S of A (kernels::amg::strength_count / strength_fill).
CsrArrays strength(const CsrMatrix& A, const kernels::amg::StrengthParameters& parameters);
/// The transpose of a pattern of `nnz` entries; `source` (optional) receives the position in
/// `a` of each entry. The entry count is the caller's, so nothing waits for the device.
CsrArrays transpose(const Backend& backend, const kernels::sparse_setup::PatternView& a,
                    std::int64_t nnz, Array<index_t>* source);
/// The C/F splitting of S (greedy or PMIS with `seed`).
Array<index_t> splitting(const Backend& backend, const CsrArrays& S,
                         AmgPreconditioner::Coarsening coarsening, std::uint64_t seed);
/// The sub-pattern of a with the coarse rows only (coarse_rows) and the coarse columns only,
/// renumbered (coarse_columns) (kernels::amg::select_pattern_*).
CsrArrays select_pattern(const Backend& backend, const kernels::sparse_setup::PatternView& a,
                         const Array<index_t>& splitting, const Array<index_t>& coarse_index,
                         std::int64_t num_coarse, bool coarse_rows, bool coarse_columns);
/// Aggressive coarsening's splitting: C1 = the splitting of S, then the splitting of the
/// distance-two strength S2 among C1 (kernels::amg::distance_two_strength_*); returns the
/// splitting with C2 coarse (kernels::amg::aggressive_splitting; C1 itself when it is empty).
Array<index_t> aggressive_splitting(const Backend& backend, const CsrArrays& S,
                                    AmgPreconditioner::Coarsening coarsening, std::uint64_t seed);
/// Multi-pass interpolation P = W^(m-1) X_1 (n x num_coarse) from A, S and the splitting
/// (AmgPreconditioner's class comment); kind direct or seed. With m >= 2 passes `kept` receives
/// what update_values needs and is left non-null; with fewer P = X_1 and `kept` is reset.
CsrArrays multipass_prolongation(const CsrMatrix& A, const CsrArrays& S,
                                 const Array<index_t>& splitting,
                                 const Array<index_t>& coarse_index, index_t num_coarse,
                                 kernels::amg::InterpolationKind kind,
                                 std::unique_ptr<MultipassArrays>& kept);
/// Value-only re-setup of multipass_prolongation: P's values on its pattern from a (the level's
/// matrix in double) and level.multipass.
Array<double> multipass_prolongation_values(const Backend& backend,
                                            const kernels::sparse_setup::MatrixView& a,
                                            const AmgLevelArrays& level);
/// Matrix-product extended+i interpolation P = L B (n x num_coarse) from A, S and the splitting
/// (kernels::amg::mm_extended_* and the sparse product), truncated when `parameters` ask
/// (kernels::amg::truncation_*); coarse_index (the exclusive scan of the splitting) is kept.
/// `kept` receives what update_values needs.
CsrArrays mm_extended_prolongation(const CsrMatrix& A, const CsrArrays& S,
                                   const Array<index_t>& splitting, Array<index_t> coarse_index,
                                   index_t num_coarse,
                                   const kernels::amg::InterpolationParameters& parameters,
                                   std::unique_ptr<MatrixProductArrays>& kept);
/// Value-only re-setup of mm_extended_prolongation: P's values on its pattern from a (the level's
/// matrix in double), level.strength and level.matrix_product.
Array<double> mm_extended_prolongation_values(const Backend& backend,
                                              const kernels::sparse_setup::MatrixView& a,
                                              const AmgLevelArrays& level);
/// The aggregate of every row (mis2_roots and mis2_aggregates on the graph S + S^T) and their
/// number. Throws BackendError when a row is left without one (not a maximal set).
Array<index_t> aggregation(const Backend& backend, const CsrArrays& S, std::uint64_t seed,
                           std::int64_t& num_aggregates);
/// The tentative prolongation of the aggregates (n x num_aggregates, one 1 per row).
CsrArrays tentative_prolongation(const Backend& backend, const Array<index_t>& aggregate,
                                 index_t num_aggregates);
/// The smoothed prolongation P = (I - omega D^-1 A) T of smoothed aggregation, T the tentative
/// prolongation of `aggregate`, omega = factor / rho with rho Gershgorin's bound of the
/// spectral radius of D^-1 A: pattern (each row's distinct aggregates) and values from A and the
/// aggregates directly (kernels::amg::smoothed_aggregation_*), no sparse product formed.
CsrArrays smoothed_prolongation(const CsrMatrix& A, const Array<index_t>& aggregate,
                                index_t num_aggregates, double factor);
/// Value-only re-setup of smoothed_prolongation: P's values on its pattern from a's values
/// (a double view of the level's matrix).
Array<double> smoothed_prolongation_values(const Backend& backend,
                                           const kernels::sparse_setup::MatrixView& a,
                                           const Array<index_t>& aggregate,
                                           const CsrMatrix& prolongation, double factor);
/// coarse_index (exclusive scan of the splitting, n + 1 entries) and its total n_c.
Array<index_t> coarse_index(const Backend& backend, const Array<index_t>& splitting,
                            std::int64_t& num_coarse);
/// P (n x num_coarse) from A, S and the splitting.
CsrArrays interpolation(const CsrMatrix& A, const CsrArrays& S, const Array<index_t>& splitting,
                        const Array<index_t>& coarse_index, index_t num_coarse,
                        const kernels::amg::InterpolationParameters& parameters);
/// The pattern of C = A B (no values): the count, its scan (one wait on a device), the fill.
CsrArrays spgemm_pattern(const Backend& backend, const kernels::sparse_setup::PatternView& a,
                         const kernels::sparse_setup::PatternView& b);
/// C = A B: the count and its scan, then the fill and numeric phases in one pass
/// (spgemm_fill_numeric).
CsrArrays spgemm(const Backend& backend, const kernels::sparse_setup::MatrixView& a,
                 const kernels::sparse_setup::MatrixView& b);
/// The Galerkin product A_c = R (A P) of level A with levels.prolongation: forms the
/// restriction R = P^T explicitly (levels.restriction; its values found in P's rows) and keeps
/// A P's row pointers (levels.product; columns and values released) for value-only re-setup.
CsrMatrix galerkin_product(const CsrMatrix& A, AmgLevelArrays& level);
/// Value-only re-setup of the Galerkin product in double: R's values found in the rows of
/// `prolongation_values` (P's new values, in double, on A's backend), then A P's columns and
/// values in one pass on its kept row pointers (spgemm_fill_numeric) and the numeric phase of
/// R (A P), with `a` the level's matrix in double (the pattern of the level's
/// matrix with its double values). Stores R's and A_c's values into level.restriction and
/// `coarse` (update_values: rounded when they store float32) and returns A_c's double values
/// for the next level (same patterns as galerkin_product built).
/// The float32 overflow checks of R and A_c go to `checks` (named by `level_number`).
Array<double> galerkin_product_values(const Backend& backend,
                                      const kernels::sparse_setup::MatrixView& a,
                                      const Array<double>& prolongation_values,
                                      AmgLevelArrays& level, CsrMatrix& coarse,
                                      DeferredChecks& checks, std::size_t level_number);
/// Registers with `checks` the float32 overflow check of `matrix`'s update to `values` (the
/// level's `what`: "prolongation", ...); CsrMatrix::update_values with a deferred check.
void update_values_checked(CsrMatrix& matrix, const Array<double>& values, DeferredChecks& checks,
                           std::size_t level_number, const char* what);
/// matrix.set_precision(precision) with its overflow check deferred to `checks` (the same
/// message as update_values_checked).
void set_precision_checked(CsrMatrix& matrix, Precision precision, DeferredChecks& checks,
                           std::size_t level_number, const char* what);
/// A CsrMatrix (float64) taking `arrays`' pattern and values, on their backend, without its
/// row-block partition yet (CsrMatrix::from_arrays with Partition::deferred): the setup builds
/// the partitions of every level together (CsrMatrix::build_partitions), one wait in all.
CsrMatrix to_matrix(CsrArrays&& arrays);
/// Index of the first row (0-based) whose diagonal is zero, missing or not finite, or -1; with
/// `slot` (an address on A's backend) the index is left there instead, no wait, and -1 returned
/// (kernels::blas::invert_diagonal).
index_t first_bad_diagonal(const CsrMatrix& A, unsigned int* slot = nullptr,
                           Vector* inverse = nullptr);

}  // namespace amg_setup
}  // namespace kryflow
