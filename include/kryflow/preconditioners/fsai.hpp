// FSAI: the factorized sparse approximate inverse M = G^T G ~ A^-1 of an SPD matrix, built on
// A's backend one independent row at a time, applied as two sparse products.
#pragma once

#include <cstdint>
#include <string>

#include "kryflow/core/array.hpp"
#include "kryflow/core/precision.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/vector.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"

namespace kryflow {

/// Which FSAI the preconditioner builds.
enum class FsaiSymmetry {
  symmetric,     ///< M = G^T G from Cholesky factors (A symmetric definite; for pcg)
  nonsymmetric,  ///< M = Z W' from LU factors without pivoting (for bicgstab, gmres)
};
/// "symmetric" or "nonsymmetric"; throws ConfigError naming `symmetry` otherwise.
FsaiSymmetry parse_fsai_symmetry(const std::string& name);
/// The name parse_fsai_symmetry reads.
const char* to_string(FsaiSymmetry symmetry);

/// z = G^T (G r), the factorized sparse approximate inverse of Kolotilina and Yeremin ("Factorized
/// sparse approximate inverse preconditionings I. Theory", SIAM J. Matrix Anal. Appl. 14, 1993,
/// sec. 2): G is lower triangular with the a priori pattern of the lower triangle of A^k
/// (`pattern_power` k = 1, 2 or 3; E. Chow, IJHPCA 15, 2001, sec. 2), and its row i is the
/// solution y of A[J_i, J_i] y = e_m (J_i the row's columns, increasing, i last) scaled by
/// 1/sqrt(y_m). Up to the row scaling that makes diag(G A G^T) = I, G minimizes ||I - G L||_F
/// over lower triangular matrices with that pattern (L the exact Cholesky factor of A), and
/// G^T G is SPD whenever A is, so pcg may use it. With a pattern that
/// holds the whole lower triangle, G^T G = A^-1 exactly.
///
/// The setup runs on A's backend: the pattern of A^k (a symbolic sparse product), its lower
/// triangle, then one dense Cholesky factorization of A[J_i, J_i] per row, independent of every
/// other row (kernels/fsai; one warp per row on cuda); with post-filtration, the small entries
/// dropped and the rows factored again on what is left. Rows of the pattern with more than
/// `max_row_entries` columns j <= i keep the ones nearest the diagonal. Only A's lower triangle is
/// read: A is taken as symmetric. A negative definite A (the sum of its diagonal negative, as
/// OpenFOAM stores its pressure matrix) is factored as -A, and M = -(G^T G). The apply is two
/// products with the stored G and G^T, in `factor_precision` (float32 by default: the products are
/// bound by memory; sums in double), the same form as AINV's M = Z D^-1 Z^T with Z = G^T, D = I.
///
/// `symmetry` nonsymmetric (Kolotilina and Yeremin's nonsymmetric form; bicgstab_fsai): for a
/// nonsymmetric A, on the same pattern J_i, the LU factorization without pivoting A[J_i, J_i] =
/// L_i U_i gives row i of W' = L_i^-T e_m (lower triangular, unit diagonal) and column i of
/// Z = U_i^-1 e_m (upper triangular), so that (W' A Z)_ii = 1 and M = Z W' ~ A^-1 (exact with
/// full patterns, no filter); both triangles of A are read. A's diagonal must be nonzero and the
/// submatrices must factor without pivoting (setup fails naming the first row whose elimination
/// meets a zero pivot; a tiny nonzero pivot can leave entries of Z that overflow, which the
/// Krylov method then reports as nan_detected). The filter keeps an entry that passes its test
/// in W' or in Z; the test is invariant under a symmetric diagonal scaling S A S, not under a row
/// or a column scaling alone.
///
/// Memory on the backend: nnz(G) (4 + 4 bytes in float32, 4 + 8 in float64) twice (G and G^T),
/// two row pointer arrays, the transposition map of G (4 bytes per entry, for update_values) and
/// one n-vector. The setup also holds the pattern of A^k (4 bytes per entry) and G's values in
/// double while it runs.
///
/// Throws (setup): NotSupported unless A is a float64 CsrMatrix; DimensionMismatch when A is not
/// square; InvalidInput naming the first (1-based) row whose diagonal entry is zero, missing or
/// not finite, or whose submatrix A[J_i, J_i] is not definite of the sign of A's diagonal sum (a
/// diagonal entry of the other sign, or an A indefinite on that submatrix). Only these blocks are
/// checked: an indefinite A whose blocks are all definite passes setup, and pcg then stops with
/// the status breakdown ("operator not definite").
class FsaiPreconditioner final : public Preconditioner {
 public:
  /// The longest row of G: one warp's shared memory on cuda holds its packed m x m triangle.
  static constexpr index_t kMaxRowEntries = 150;
  struct Parameters {
    /// k: the pattern of G is the lower triangle of A^k's pattern; 1..3.
    int pattern_power = 2;
    /// The most columns kept in a row of G; 1..150 (the shared memory of one warp on cuda).
    index_t max_row_entries = 128;
    /// Post-filtration (>= 0; 0: none): G is computed on the pattern, its entries with
    /// |g_ij| sqrt|a_jj| < filter_tolerance |g_ii| sqrt|a_ii| are dropped, and G is computed
    /// again on what is left (Kolotilina and Yeremin 1993, sec. 5). 0.05 halves G on ex10hs, the
    /// OpenFOAM pressure matrix and 7-point Poisson at the same iteration counts (175, 177 and
    /// 81 at 64^3, against 177, 175 and 79 unfiltered); 0.1 doubles ex10hs's.
    double filter_tolerance = 0.05;
    Precision factor_precision = Precision::float32;
    FsaiSymmetry symmetry = FsaiSymmetry::symmetric;
  };
  FsaiPreconditioner() : FsaiPreconditioner(Parameters{}) {}
  /// Throws ConfigError naming the field out of range.
  explicit FsaiPreconditioner(Parameters parameters);

  void setup(const LinearOperator& A) override;
  /// Recomputes G's values on the kept pattern when A has the same size, backend and number of
  /// entries; otherwise setup(A). With another pattern of the same size G is the FSAI of the new
  /// A on the old pattern (valid, but not the pattern setup would choose). Throws as setup.
  void update_values(const LinearOperator& A) override;
  std::string name() const override { return "fsai"; }
  index_t num_rows() const override { return n_; }
  index_t num_cols() const override { return n_; }
  const Backend& backend() const override { return backend_; }
  /// r and z have n entries on A's backend (DimensionMismatch otherwise).
  void apply(const Vector& r, Vector& z) const override;
  bool supports_recording() const override { return true; }
  /// "FSAI (pattern lower(A^2), at most 128 per row, longest 13, filter 0.05): nnz(G + G^T) =
  /// 1.95 x nnz(A), factors in float32, setup 0.0031 s on cuda:0 (NVIDIA H200), 145.2 bytes per
  /// row on the backend".
  std::string summary() const override;
  /// The stored factors on the backend: G (lower) and G^T (upper).
  const CsrMatrix& lower() const noexcept { return lower_; }
  const CsrMatrix& upper() const noexcept { return upper_; }
  /// Bytes of the stored factors, the transposition map and the work vector on the backend.
  std::int64_t memory_bytes() const noexcept;
  /// Seconds the last setup or update_values took (the last one waits for the backend).
  double setup_seconds() const noexcept { return setup_seconds_; }

 private:
  /// The lower factor's values (G or W', in G's pattern) into lower_, and the upper factor's into
  /// upper_: Z from the rows of Z^T in `upper_rows` (nonsymmetric), or G^T from `lower`,
  /// negated when sign < 0 (symmetric; upper_rows unused).
  void install_values(const Vector& lower, const Vector& upper_rows, double sign);

  Parameters parameters_;
  CsrMatrix lower_, upper_;
  Array<index_t> transpose_source_;  // entry k of G^T is entry transpose_source_[k] of G
  index_t longest_ = 0;
  mutable Vector work_;
  std::int64_t a_entries_ = 0;
  double setup_seconds_ = 0.0;
  index_t n_ = 0;
  Backend backend_ = Backend::reference();
};

}  // namespace kryflow
