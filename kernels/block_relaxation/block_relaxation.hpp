// Contract of the block relaxation kernels: the inverses of the diagonal blocks of a BSR matrix
// (block Jacobi), their application, and one color of a multicolor block Gauss-Seidel sweep.
//
// Same layout as kernels/bsr (reference oracle, cpu, cuda, dispatch). The matrix is a BsrView
// (kernels/bsr/bsr.hpp) with B = 1..kMaxRelaxationBlockSize; a CSR matrix is the BsrView with
// B = 1 (its row pointers, columns and values are those of a BSR matrix of 1 x 1 blocks). Values
// V are double or float, the inverse blocks W double or float; all arithmetic is double.
//
// Diagonal block inverses: block row I's diagonal block D_I (the stored block whose column is I)
// is factored P D_I = L U by Gaussian elimination with partial pivoting (Golub, Van Loan, Matrix
// Computations, 4th ed., Algorithm 3.4.1: the pivot of column k is the first largest |u_ik|,
// i >= k), then D_I^-1 is obtained column by column from L U x = P e_c, and stored row-major
// (B^2 entries per block row, rounded to W).
//
// Multicolor Gauss-Seidel (Saad, Iterative Methods, 2nd ed., sec. 12.4: multicoloring; the
// NOISEtte CFD code's block SGS of Gorobets et al.): the block rows of one color share no
// entry, so one color is updated at once. As in NOISEtte the matrix is first reordered by color
// (permute_fill: block row p of the copy is block row order[p] of A, its block columns renamed
// by position = order^-1, kept in A's order within the row), so that a color is one contiguous
// range of block rows and a sweep streams it like a product. For each block row I of the color,
//   t_I = b_I - sum over the stored blocks k of row I with column J != I of A_k x_J
//   x_I = (1 - omega) x_I + omega D_I^-1 t_I
// reading only x entries of other colors. The reference adds the terms of scalar row ii of t
// in stored order (block by block, column by column); the cpu kernel gives its bits; the cuda
// kernels add the same terms in another order (tests compare within a stated tolerance), the
// same bits from run to run.
#pragma once

#include <cstdint>

#include "kernels/bsr/bsr.hpp"
#include "kryflow/core/array.hpp"

namespace kryflow::kernels::block_relaxation {

using bsr::BsrView;

/// Block sizes of the relaxation kernels, each a compile-time constant.
inline constexpr int kMaxRelaxationBlockSize = 8;

/// The cuda kernels of a multicolor sweep (the reference and cpu backends have one).
enum class SweepVariant {
  /// The NOISEtte scheme: a team of 256 threads takes R = 256 / B consecutive block rows of the
  /// color; thread t loads coefficients t, t + 256, ... of their contiguous range, multiplies
  /// each by its x entry into shared memory, then thread ii of each block row subtracts its
  /// row's products from b in order, and the team applies D_I^-1.
  coefficient,
  /// One warp per block row (16 lanes for B = 2, 8 for B = 1): lane l multiplies coefficients
  /// l, l + 32, ... of the row and keeps B partial row sums, which shuffles add; lanes 0..B-1
  /// apply D_I^-1.
  warp,
  /// B threads per block row, thread ii walking row ii of each block (the BSR product's
  /// block_row kernel), then the block row's t through shared memory for D_I^-1.
  block_row,
};

/// The variant SweepKernel::automatic picks, indexed by block size B = 1..8 (index 0 unused),
/// for values stored in double and in float. From kryflow_bench_relaxation on an H200 (forward
/// sweep of block 3D Poisson, values about 256 MiB; bench/results/h200_block_relaxation): the
/// coefficient kernel is fastest for B = 1..3 (0.52, 0.50, 0.45 of the copy bandwidth against
/// 0.36, 0.44, 0.39 for the next), block_row for B = 4..8 (0.69, 0.51, 0.58, 0.48, 0.49) and for
/// float values (B = 4: 0.61, B = 5: 0.53). Edit after new measurements.
inline constexpr SweepVariant kAutomaticSweepVariant[kMaxRelaxationBlockSize + 1] = {
    SweepVariant::block_row,    // unused
    SweepVariant::coefficient,  // B = 1
    SweepVariant::coefficient,  // B = 2
    SweepVariant::coefficient,  // B = 3
    SweepVariant::block_row,    // B = 4
    SweepVariant::block_row,    // B = 5
    SweepVariant::block_row,    // B = 6
    SweepVariant::block_row,    // B = 7
    SweepVariant::block_row,    // B = 8
};
inline constexpr SweepVariant kAutomaticSweepVariantFloat32[kMaxRelaxationBlockSize + 1] = {
    SweepVariant::block_row,   SweepVariant::coefficient, SweepVariant::coefficient,
    SweepVariant::coefficient, SweepVariant::block_row,   SweepVariant::block_row,
    SweepVariant::block_row,   SweepVariant::block_row,   SweepVariant::block_row,
};
constexpr SweepVariant automatic_sweep_variant(int block_size, bool float32_values) noexcept {
  const int b = block_size >= 1 && block_size <= kMaxRelaxationBlockSize ? block_size : 0;
  return float32_values ? kAutomaticSweepVariantFloat32[b] : kAutomaticSweepVariant[b];
}

/// The block rows of one color of a color-ordered matrix: first .. first + count - 1.
struct ColorRange {
  index_t first = 0;
  index_t count = 0;
};

// Dispatch. Spans live on the backend; inverse has num_block_rows B^2 entries, r, z, b and x
// num_block_rows B. Throws NotSupported for B > kMaxRelaxationBlockSize.

/// Writes the inverses of the diagonal blocks; returns the first (0-based) block row whose
/// diagonal block is not stored, is singular (a zero pivot) or gives a non-finite inverse, or
/// -1 when there is none (the inverse blocks of such rows are unspecified). One wait on a
/// device.
template <class V, class W>
index_t invert_diagonal_blocks(const Backend& backend, const BsrView<V>& a, Span<W> inverse);

/// z_I = omega D_I^-1 r_I for every block row I (block Jacobi), summed over c in order.
template <class W>
void block_diagonal_apply(const Backend& backend, int block_size, Span<const W> inverse,
                          double omega, Span<const double> r, Span<double> z);

/// The update of every block row of one color (file comment) of a color-ordered matrix;
/// nothing waits for the device.
template <class V, class W>
void multicolor_sweep(const Backend& backend, const BsrView<V>& a, SweepVariant variant,
                      Span<const W> inverse, ColorRange color, double omega, Span<const double> b,
                      Span<double> x);

/// position[order[p]] = p (order a permutation of 0 .. n - 1).
void invert_permutation(const Backend& backend, Span<const index_t> order, Span<index_t> position);
/// counts[p] = stored blocks of block row order[p] of a (the row lengths of the reordered copy).
template <class V>
void permuted_row_lengths(const Backend& backend, const BsrView<V>& a, Span<const index_t> order,
                          Span<index_t> counts);
/// The reordered copy: block row p of it holds the blocks of block row order[p] of a, in a's
/// order, block column J renamed position[J], values copied (row_ptr from exclusive_scan of
/// permuted_row_lengths).
template <class V>
void permute_fill(const Backend& backend, const BsrView<V>& a, Span<const index_t> order,
                  Span<const index_t> position, const index_t* row_ptr, index_t* col_idx,
                  V* values);
/// out[p B + i] = in[map[p] B + i] for every block row p < out.size() / B and i < B.
void gather_blocks(const Backend& backend, int block_size, Span<const index_t> map,
                   Span<const double> in, Span<double> out);

#define KRYFLOW_BLOCK_RELAXATION_DECLARATIONS                                                   \
  template <class V, class W>                                                                   \
  index_t invert_diagonal_blocks(const Backend& backend, const BsrView<V>& a, Span<W> inverse); \
  template <class W>                                                                            \
  void block_diagonal_apply(const Backend& backend, int block_size, Span<const W> inverse,      \
                            double omega, Span<const double> r, Span<double> z);                \
  template <class V, class W>                                                                   \
  void multicolor_sweep(const Backend& backend, const BsrView<V>& a, SweepVariant variant,      \
                        Span<const W> inverse, ColorRange color, double omega,                  \
                        Span<const double> b, Span<double> x);                                  \
  void invert_permutation(const Backend& backend, Span<const index_t> order,                    \
                          Span<index_t> position);                                              \
  template <class V>                                                                            \
  void permuted_row_lengths(const Backend& backend, const BsrView<V>& a,                        \
                            Span<const index_t> order, Span<index_t> counts);                   \
  template <class V>                                                                            \
  void permute_fill(const Backend& backend, const BsrView<V>& a, Span<const index_t> order,     \
                    Span<const index_t> position, const index_t* row_ptr, index_t* col_idx,     \
                    V* values);                                                                 \
  void gather_blocks(const Backend& backend, int block_size, Span<const index_t> map,           \
                     Span<const double> in, Span<double> out);

// Per backend (the host backends ignore the variant), instantiated for V, W in {double, float}.
namespace reference {
KRYFLOW_BLOCK_RELAXATION_DECLARATIONS
}
namespace cpu {
KRYFLOW_BLOCK_RELAXATION_DECLARATIONS
}
namespace cuda {
KRYFLOW_BLOCK_RELAXATION_DECLARATIONS
}

#undef KRYFLOW_BLOCK_RELAXATION_DECLARATIONS

/// The one instantiation list of the operation, expanded once in each backend's namespace (and
/// the dispatch's): V and W in {double, float}.
#define KRYFLOW_BLOCK_RELAXATION_INSTANTIATE_VW(V, W)                                         \
  template index_t invert_diagonal_blocks<V, W>(const Backend&, const BsrView<V>&, Span<W>);  \
  template void multicolor_sweep<V, W>(const Backend&, const BsrView<V>&, SweepVariant,       \
                                       Span<const W>, ColorRange, double, Span<const double>, \
                                       Span<double>);
#define KRYFLOW_BLOCK_RELAXATION_INSTANTIATE_V(V)                                               \
  template void permuted_row_lengths<V>(const Backend&, const BsrView<V>&, Span<const index_t>, \
                                        Span<index_t>);                                         \
  template void permute_fill<V>(const Backend&, const BsrView<V>&, Span<const index_t>,         \
                                Span<const index_t>, const index_t*, index_t*, V*);             \
  template void block_diagonal_apply<V>(const Backend&, int, Span<const V>, double,             \
                                        Span<const double>, Span<double>);
#define KRYFLOW_BLOCK_RELAXATION_INSTANTIATIONS           \
  KRYFLOW_BLOCK_RELAXATION_INSTANTIATE_VW(double, double) \
  KRYFLOW_BLOCK_RELAXATION_INSTANTIATE_VW(double, float)  \
  KRYFLOW_BLOCK_RELAXATION_INSTANTIATE_VW(float, double)  \
  KRYFLOW_BLOCK_RELAXATION_INSTANTIATE_VW(float, float)   \
  KRYFLOW_BLOCK_RELAXATION_INSTANTIATE_V(double)          \
  KRYFLOW_BLOCK_RELAXATION_INSTANTIATE_V(float)

}  // namespace kryflow::kernels::block_relaxation
