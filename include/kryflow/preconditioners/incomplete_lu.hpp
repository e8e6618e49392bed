// Incomplete LU preconditioners in multicolor order: block ILU(0) and DILU on BSR and CSR.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kryflow/core/precision.hpp"
#include "kryflow/linalg/coloring.hpp"
#include "kryflow/preconditioners/multicolor_gauss_seidel.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"

namespace kryflow {

/// The factorization of MulticolorIluPreconditioner.
enum class IluFactorization {
  /// Block ILU(0) (Saad, Iterative Methods, 2nd ed., Algorithm 10.4 on blocks): A = L U - R
  /// with L unit block lower and U block upper on A's block pattern; the B x B pivot blocks
  /// U_II are inverted by LU with partial pivoting.
  ilu0,
  /// DILU (the diagonal ILU of OpenFOAM and AmgX): M = (D' + L_A) D'^-1 (D' + U_A) with L_A,
  /// U_A the strict block triangles of A and D'_I = A_II - sum_{J < I} A_IJ D'_J^-1 A_JI, so
  /// that diag(M) = diag(A) on the pattern. Only the n B^2 pivot inverses are stored beside A's
  /// blocks.
  dilu,
};

/// "ilu0" or "dilu"; parse_ilu_factorization throws ConfigError otherwise.
const char* to_string(IluFactorization factorization) noexcept;
IluFactorization parse_ilu_factorization(const std::string& name);

/// z = M^-1 r with M the incomplete factorization of A in a multicolor order: setup colors the
/// block graph of a BsrMatrix (B = 1..8) or the graph of a CsrMatrix (color_matrix), reorders
/// A by color (as MulticolorGaussSeidel) and factors it one color at a time on A's backend (the
/// block rows of a color only depend on earlier colors); each application is a forward and a
/// backward triangular solve, one launch per color on cuda and no host wait. The ordering is
/// part of the method: M depends on it, and a multicolor ILU(0) is usually a weaker
/// preconditioner than ILU(0) in the natural order (Saad, sec. 12.4; coloring `natural` gives
/// the natural order, with one launch per block row on a device, for small systems and
/// comparisons). No pivoting: rows are not exchanged.
///
/// Memory: A's blocks in the color order (ILU(0) overwrites them with L and U), n B^2 inverse
/// pivots, two n-vectors and 5 n / B indices. Keeps no reference to A after setup.
///
/// Throws (setup): NotSupported unless A is a CsrMatrix or BsrMatrix with B <= 8;
/// DimensionMismatch when A is not square; InvalidInput "<ilu0|dilu>: the pivot block of block
/// row I (1-based) is singular, not stored or not finite" when a pivot breaks down (a zero or
/// missing diagonal included).
class MulticolorIluPreconditioner final : public Preconditioner {
 public:
  struct Parameters {
    IluFactorization factorization = IluFactorization::ilu0;
    ColoringAlgorithm coloring = ColoringAlgorithm::jones_plassmann_luby;
    std::uint64_t seed = 1;                            ///< of the Jones-Plassmann-Luby keys
    Precision inverse_precision = Precision::float64;  ///< of the inverse pivot blocks
    SweepKernel kernel = SweepKernel::automatic;       ///< cuda kernel of the solves
  };
  MulticolorIluPreconditioner();
  explicit MulticolorIluPreconditioner(Parameters parameters);
  ~MulticolorIluPreconditioner() override;

  void setup(const LinearOperator& A) override;
  /// Same pattern, new values: the coloring and the split pattern are kept, the factorization
  /// is recomputed.
  void update_values(const LinearOperator& A) override;
  std::string name() const override { return to_string(parameters_.factorization); }
  index_t num_rows() const override { return n_; }
  index_t num_cols() const override { return n_; }
  const Backend& backend() const override { return backend_; }
  /// r and z have n entries on A's backend (DimensionMismatch otherwise).
  void apply(const Vector& r, Vector& z) const override;
  bool supports_recording() const override { return true; }
  /// One launch per color and direction: replayed recordings remove the launch overhead.
  bool prefers_recording() const override { return true; }
  /// "block ILU(0) in multicolor order: 5 colors, sizes ..., 4 x 4 blocks, ...".
  std::string summary() const override;
  const Parameters& parameters() const noexcept { return parameters_; }
  /// The coloring of the last setup (block rows by color); empty before setup.
  const MulticolorOrdering& ordering() const;

 private:
  struct State;
  void factor();
  Parameters parameters_;
  std::unique_ptr<State> state_;
  index_t n_ = 0;
  Backend backend_ = Backend::reference();
};

}  // namespace kryflow
