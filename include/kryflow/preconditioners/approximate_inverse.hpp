// AINV: a factored approximate inverse M = Z D^-1 W^T of A, built on the host by
// biconjugation, applied as two sparse products on the matrix's backend.
#pragma once

#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "kryflow/core/precision.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/vector.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"

namespace kryflow {

/// Which biconjugation AINV runs.
enum class AinvSymmetry {
  automatic,     ///< symmetric when A's pattern and values are symmetric, else nonsymmetric
  symmetric,     ///< Z = W (A symmetric; the stabilized SAINV)
  nonsymmetric,  ///< Z and W apart
};
/// "automatic", "symmetric" or "nonsymmetric"; throws ConfigError naming `symmetry` otherwise.
AinvSymmetry parse_ainv_symmetry(const std::string& name);
/// The name parse_ainv_symmetry reads.
const char* to_string(AinvSymmetry symmetry);

/// The parameters of AINV (Benzi, Meyer, Tuma 1996; Benzi, Cullum, Tuma 2000).
struct AinvParameters {
  /// tau >= 0: after each update of a column z_j (w_j) of the factors of the scaled matrix
  /// S A S (S = |diag(A)|^-1/2, unit diagonal), its entries below tau in magnitude are dropped
  /// (never the unit diagonal). 0 drops nothing by size.
  double drop_tolerance = 0.1;
  /// p: the largest entries kept in each column of Z and W besides the diagonal; -1 keeps all
  /// (the tolerance alone bounds the fill), 0 keeps as many as A's column has above the
  /// diagonal.
  int fill = -1;
  AinvSymmetry symmetry = AinvSymmetry::automatic;
  /// Threads of the factorization on the host: 0 all OpenMP threads (omp_get_max_threads(); 1
  /// without OpenMP), 1 the sequential biconjugation, k > 1 the biconjugation by domain
  /// decomposition in k parts on k threads, for n >= 20000 (a smaller matrix factors
  /// sequentially). Its shape: the rows are cut into k blocks, contiguous in A's numbering or,
  /// when that leaves more than n / 8 rows coupled across blocks, in a breadth-first order of
  /// A + A^T's graph; a row coupled to a later block goes to the separator. The unknowns are
  /// ordered block interiors first, block by block, then the separator (P A P^T, returned in
  /// AinvFactors::permutation); each thread runs the biconjugation over its block's interior
  /// columns (no other block's columns meet them) and the separator columns' partial updates,
  /// then the separator columns are finished on one thread. The result is that of the
  /// sequential algorithm on P A P^T bit for bit (while the factors stay finite), except with
  /// fill >= 0: the p-largest cut of a separator column is applied per block during the
  /// interior steps and once to the merged column (the sequential algorithm cuts the whole
  /// column after each update). Errors and their messages are the sequential form's. It depends on
  /// k (the parts), not on how the threads run, so a given k gives the same bits every run;
  /// other k (and threads = 1) order the unknowns otherwise, so their factors and iteration
  /// counts differ a little. The separator grows with k (about k - 1 planes of a 3D grid in
  /// natural order), and its steps are sequential. Memory besides the sequential form's: the
  /// rows of A of each block in its local numbering, each block's copies of the separator
  /// columns it updates, and the rows of A (and A^T) that the separator columns meet.
  int threads = 0;
};

/// The factors of AINV on the host, for B = S A S with S = diag(scale): unit upper triangular Z
/// and W stored by columns (column j: rows <= j, increasing, the diagonal 1 last), and the
/// pivots D, with W^T B Z = D exactly when nothing is dropped. Symmetric: W is empty (W = Z).
/// When `permutation` is not empty (the parallel form, AinvParameters::threads) B is
/// S P A P^T S instead, with row k of P A P^T row permutation[k] of A: scale, Z, W and the
/// pivots are in that numbering (so A^-1 ~ P^T S Z D^-1 W^T S P), `shifted` in A's.
struct AinvFactors {
  index_t n = 0;
  bool symmetric = true;
  std::vector<double> scale;          // S: |a_ii|^-1/2
  std::vector<index_t> z_ptr, z_row;  // n + 1, nnz(Z)
  std::vector<double> z_values;
  std::vector<index_t> w_ptr, w_row;  // nonsymmetric only
  std::vector<double> w_values;
  std::vector<double> pivots;        // D
  std::vector<index_t> shifted;      // rows (0-based, of A, increasing) whose pivot was replaced
  std::vector<index_t> permutation;  // empty (the identity) or the rows of A in P A P^T's order
  std::int64_t stored() const { return static_cast<std::int64_t>(z_row.size() + w_row.size()); }
};

/// The right-looking biconjugation (Benzi, Tuma, "A sparse approximate inverse preconditioner
/// for nonsymmetric linear systems", SIAM J. Sci. Comput. 19, 1998, Algorithm 2, in the
/// stabilized form of Benzi, Cullum, Tuma, SIAM J. Sci. Comput. 22, 2000: the pivots
/// d_i = w_i^T A z_i, for SPD A positive whatever is dropped) on the host, for the n x n CSR
/// matrix (row_ptr, col_idx, values; columns in any order, no repeats) scaled to a unit
/// diagonal: z_j = e_j, w_j = e_j, then for i = 1..n the later columns are made conjugate to
/// column i, z_j -= (w_i^T A z_j / d_i) z_i and w_j -= (w_j^T A z_i / d_i) w_i, each updated
/// column dropped by tau and cut to its p largest entries. A pivot that is (numerically) zero,
/// or in the symmetric case of the other sign than a_ii (A not definite), is replaced by a_ii
/// of the scaled matrix (+1 or -1) and its row listed in `shifted`. Work: for each i, the
/// columns j > i that the update touches (found through a row index of the factors), so about
/// n times the product of the factors' and A's column lengths. With parameters.threads other
/// than 1 and n >= 20000, the factors of a permuted P A P^T computed on several threads
/// (AinvParameters::threads; AinvFactors::permutation).
///
/// Throws InvalidInput naming the 1-based row of a zero, missing or non-finite diagonal entry
/// or of a non-finite value, and (symmetry `symmetric`) the first entry whose transpose
/// differs; ConfigError for tau < 0, p < -1 or threads < 0. When `stop` is requested the
/// factorization ends early (every thread looks every 1024 steps) and returns factors with
/// n = 0 (the caller discards them).
AinvFactors ainv_factor(index_t n, const std::vector<index_t>& row_ptr,
                        const std::vector<index_t>& col_idx, const std::vector<double>& values,
                        const AinvParameters& parameters, std::stop_token stop = {});

/// z = M r with M = S Z D^-1 W^T S ~ A^-1 (ainv_factor), applied as two sparse products on A's
/// backend, no triangular solve (OpenFOAM's GPU AINV, seed 004 of the kryflow sources): the
/// lower factor L = D^-1 W^T S (symmetric: D^-1/2 Z^T S) and the upper U = S Z (symmetric:
/// S Z D^-1/2 = L^T) with D folded in, stored in `factor_precision` (float32 by default: the
/// products are bound by memory and the preconditioner needs no more accuracy; sums in double)
/// in the reversed triangular layout J L and U J (J the exchange matrix; U L = (U J)(J L)), so
/// that the densest rows of L come first. For pcg the symmetric factors give a symmetric M,
/// positive definite when A is (after any pivot shift).
///
/// Memory on the backend: (nnz(L) + nnz(U)) (4 + 4 bytes in float32, 4 + 8 in float64), two
/// row pointer arrays and one n-vector. Setup on the host is sequential in i (the step after
/// i needs its columns) within each part of AinvParameters::threads' domain decomposition; its
/// cost is what the reuse of a preconditioner across systems amortizes.
///
/// The same form of preconditioner with its setup on the backend, row by row in parallel:
/// FsaiPreconditioner (kryflow/preconditioners/fsai.hpp).
///
/// Throws (setup): NotSupported unless A is a CsrMatrix; DimensionMismatch when A is not
/// square; InvalidInput (ainv_factor).
class AinvPreconditioner final : public Preconditioner {
 public:
  struct Parameters {
    AinvParameters ainv;
    Precision factor_precision = Precision::float32;
  };
  AinvPreconditioner() : AinvPreconditioner(Parameters{}) {}
  /// Throws ConfigError naming the field out of range.
  explicit AinvPreconditioner(Parameters parameters);
  ~AinvPreconditioner() override;

  /// install(factor_on_host(A's entries), A's backend).
  void setup(const LinearOperator& A) override;
  /// The factorization and the layout of J L and U J, on the host (thread-safe).
  bool has_host_factorization() const override { return true; }
  std::unique_ptr<HostFactorization> factor_on_host(const HostCsrMatrix& A,
                                                    std::stop_token stop) const override;
  /// Uploads the factors (in factor_precision) to `backend`.
  void install(std::unique_ptr<HostFactorization> factorization, const Backend& backend) override;
  std::string name() const override { return "ainv"; }
  index_t num_rows() const override { return n_; }
  index_t num_cols() const override { return n_; }
  const Backend& backend() const override { return backend_; }
  /// r and z have n entries on A's backend (DimensionMismatch otherwise).
  void apply(const Vector& r, Vector& z) const override;
  bool supports_recording() const override { return true; }
  /// "AINV (symmetric, tau = 0.1): nnz(L + U) = 2.4 x nnz(A), factors in float32, 0 pivots
  /// shifted, setup 0.012 s on the host".
  std::string summary() const override;
  /// The host factors of the last setup (tests, benchmarks).
  const AinvFactors& factors() const noexcept { return factors_; }
  /// The stored factors on the backend: J L and U J.
  const CsrMatrix& lower() const noexcept { return lower_; }
  const CsrMatrix& upper() const noexcept { return upper_; }
  /// Bytes of the stored factors and the work vector on the backend.
  std::int64_t memory_bytes() const noexcept;
  /// Seconds the host factorization of the last setup took.
  double factor_seconds() const noexcept { return factor_seconds_; }

 private:
  Parameters parameters_;
  AinvFactors factors_;
  CsrMatrix lower_, upper_;
  mutable Vector work_;
  std::int64_t a_entries_ = 0;
  double factor_seconds_ = 0.0;
  index_t n_ = 0;
  Backend backend_ = Backend::reference();
};

}  // namespace kryflow
