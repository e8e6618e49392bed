// ILUT, Saad's dual-threshold incomplete LU: factored on the host, its triangular solves on the
// matrix's backend by level scheduling.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/preconditioners/multicolor_gauss_seidel.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"

namespace kryflow {

/// The parameters of ILUT (Saad, Iterative Methods, 2nd ed., sec. 10.4.3).
struct IlutParameters {
  /// tau >= 0: in row i, an entry w_k of the working row is dropped when |w_k| < tau ||a_i||_2
  /// (the multipliers while eliminating, and every entry once the row is done; never the
  /// diagonal). 0 drops nothing by size.
  double drop_tolerance = 1e-4;
  /// p: the largest entries kept in each of row i's L and U parts (besides the diagonal); 0
  /// keeps as many as row i of A has in that triangle (fill about 1.0 x nnz(A)), -1 keeps all.
  int fill = 0;
};

/// The factors of ILUT in the natural order on the host: L unit lower triangular (its strict
/// part stored), U upper triangular with its diagonal stored apart; columns increasing in each
/// row. A = L U - R with R the dropped terms.
struct IlutFactors {
  index_t n = 0;
  std::vector<index_t> lower_ptr, lower_col;  // n + 1, nnz(L) (strict)
  std::vector<double> lower_values;
  std::vector<index_t> upper_ptr, upper_col;  // n + 1, nnz(U) (strict)
  std::vector<double> upper_values;
  std::vector<double> diagonal;  // u_ii
  std::int64_t stored() const {
    return static_cast<std::int64_t>(lower_col.size() + upper_col.size() + diagonal.size());
  }
};

/// Saad's Algorithm 10.6 (ILUT(p, tau)) on the host for the n x n CSR matrix (row_ptr, col_idx,
/// values; columns in any order, no repeats) in row order: for each row, the IKJ elimination
/// over the working row's lower entries in increasing column order, dropping multipliers and
/// entries below tau ||a_i||_2, then keeping the p largest of each part. No pivoting. Throws
/// InvalidInput "ilut: zero or non-finite pivot in row i (1-based)" when u_ii is 0 or not
/// finite (a missing diagonal included), ConfigError for tau < 0 or fill < -1.
IlutFactors ilut_factor(index_t n, const std::vector<index_t>& row_ptr,
                        const std::vector<index_t>& col_idx, const std::vector<double>& values,
                        const IlutParameters& parameters);

/// How the triangular solves of an incomplete LU in the natural order run on a device.
enum class TriangularSolve {
  /// Level scheduling (Saad, sec. 11.6.2; Anderson and Saad 1989): the rows of L are grouped
  /// into levels (level(i) = 1 + the largest level of the rows it depends on), those of U
  /// likewise from the last row, and each level is one launch, its rows solved at once.
  level_scheduled,
  /// Synchronization-free (Liu, Li, Hou and Vinter, Euro-Par 2016; kernels/triangular): one
  /// launch per factor, each row waiting on ready flags of the rows it depends on; no level
  /// analysis, no launch per level.
  sync_free,
};
/// "level_scheduled" or "sync_free"; parse_triangular_solve throws ConfigError naming the valid
/// choices for another name.
const char* to_string(TriangularSolve solve) noexcept;
TriangularSolve parse_triangular_solve(const std::string& name);

/// z = (L U)^-1 r with L U = ILUT(p, tau) of A (ilut_factor) in the natural order. The factors
/// come from the host (A's entries are copied there; a BsrMatrix is factored entry by entry,
/// as a point matrix) and go back to A's backend for the solves (Parameters::solve):
/// level scheduled (kernels/block_relaxation: triangular_sweep on the factors stored level by
/// level; an application costs one launch per level of L and of U plus one gather) or
/// synchronization-free (two launches and two clears of the ready flags). The host backends
/// solve row by row either way (level by level for level_scheduled). For the systems where zero
/// fill is not enough; the natural order is kept (no reordering, no pivoting: a different
/// ordering can fail where the natural one works).
///
/// Memory: the factors (12 bytes per stored entry), 3 n indices (level_scheduled) or n + 1
/// ready flags (sync_free), two n-vectors on the backend.
///
/// Throws (setup): NotSupported unless A is a CsrMatrix or BsrMatrix; DimensionMismatch when A
/// is not square; InvalidInput on a zero pivot (ilut_factor).
class IlutPreconditioner final : public Preconditioner {
 public:
  struct Parameters {
    IlutParameters ilut;
    SweepKernel kernel = SweepKernel::automatic;  ///< cuda kernel of level-scheduled solves
    TriangularSolve solve = TriangularSolve::level_scheduled;
  };
  IlutPreconditioner();
  explicit IlutPreconditioner(Parameters parameters);
  ~IlutPreconditioner() override;

  void setup(const LinearOperator& A) override;
  std::string name() const override { return "ilut"; }
  index_t num_rows() const override { return n_; }
  index_t num_cols() const override { return n_; }
  const Backend& backend() const override { return backend_; }
  /// r and z have n entries on A's backend (DimensionMismatch otherwise).
  void apply(const Vector& r, Vector& z) const override;
  bool supports_recording() const override { return true; }
  bool prefers_recording() const override { return true; }
  /// "ILUT(p, tau): nnz(L + U) = 1.02 x nnz(A), 257 + 255 levels".
  std::string summary() const override;
  /// The host factors of the last setup (tests, benchmarks).
  const IlutFactors& factors() const noexcept { return factors_; }
  /// The levels of L and of U of the last setup (launches per application of level-scheduled
  /// solves: their sum + 1); 0 for sync_free solves, which form no levels.
  index_t lower_levels() const noexcept;
  index_t upper_levels() const noexcept;

 private:
  struct State;
  Parameters parameters_;
  IlutFactors factors_;
  std::int64_t a_entries_ = 0;
  std::unique_ptr<State> state_;
  index_t n_ = 0;
  Backend backend_ = Backend::reference();
};

}  // namespace kryflow
