// Contract of the block relaxation kernels: the inverses of the diagonal blocks of a BSR matrix
// (block Jacobi), their application, the split of a matrix into color-ordered triangular parts,
// and one color of a multicolor block Gauss-Seidel sweep or triangular solve.
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
// entry, so one color is updated at once. As in NOISEtte the matrix is first reordered by color,
// so that a color is one contiguous range of block rows; here it is moreover split (split_pattern)
// into its strictly lower part L (the blocks whose renamed column p' = position[J] is an earlier
// block row: earlier colors), its strictly upper part U and its diagonal blocks D, each row of L
// and U sorted by column. A forward sweep of color c then reads L's rows of c, a backward sweep
// U's rows, and the other half of a row's product comes from the preceding sweep in the other
// direction, which left exactly those x entries in place (Conrad and Wallach's saved products,
// the trick that makes a symmetric sweep cost one matrix read): forward (colors in order)
//   t_I = b_I - (L x)_I - u_I,   x_I = (1 - omega) x_I + omega D_I^-1 t_I,   l_I = (L x)_I
// and backward (colors in reverse) the same with L and U exchanged, where u_I = (U x)_I was saved
// by the backward sweep before (0 when x started at 0), l_I by the forward sweep just before.
// The same update, with other scalars, is a triangular solve of ILU(0) and DILU in color order
// (triangular_sweep, SweepUpdate).
//
// ILU(0) and DILU in color order (factor_color, one color after another: a block row's lower
// blocks all lie in earlier colors, so the rows of one color factor at once). ILU(0): Saad,
// Iterative Methods, 2nd ed., Algorithm 10.4 (IKJ) on blocks, in place: L unit lower with
// blocks L_IK = A_IK U_KK^-1 (updated), U the updated upper blocks and diagonal; its solves are
// y_I = b_I - (L y)_I forward and x_I = U_II^-1 (y_I - (U x)_I) backward. DILU (the diagonal-only
// ILU of AmgX and OpenFOAM: M = (D' + L) D'^-1 (D' + U) with L, U the strict parts of A):
// D'_I = A_II - sum_{J < I} A_IJ D'_J^-1 A_JI, solves y_I = D'_I^-1 (b_I - (L y)_I) and
// x_I = y_I - D'_I^-1 (U x)_I. The reference sums p_I = (part x)_I from 0 over the row's
// blocks in stored (column) order, each block row by row and column by column, then forms
// t_I = beta b_I + gamma x_I - p_I - q_I left to right; the cpu kernel gives its bits, the
// coefficient and block_row cuda kernels too (--fmad=false), the warp kernel adds a row's terms
// in a tree (the same bits from run to run).
#pragma once

#include <cstdint>

#include "kernels/bsr/bsr.hpp"
#include "kernels/sparse_setup/sparse_setup.hpp"
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

/// The scalars of triangular_sweep's update of block row I (file comment):
///   t_I = beta b_I + gamma x_I - p_I - q_I,   x_I = alpha x_I + omega D_I^-1 t_I
/// (D_I^-1 the identity when no inverse is given). Gauss-Seidel: alpha = 1 - omega, beta = 1,
/// gamma = 0; ILU(0) forward (unit L): alpha 0, beta 1, no inverse; ILU(0) backward: alpha 0,
/// beta 0, gamma 1, U's diagonal inverses; DILU backward: alpha 1, beta 0, gamma 0.
struct SweepUpdate {
  double alpha = 0.0;
  double beta = 1.0;
  double gamma = 0.0;
  double omega = 1.0;
};

/// The vectors of triangular_sweep, B entries per block row; x in the color order. b is read
/// (when beta != 0) at b_map[I] (the caller's order) or at I when b_map is null. q_I is the
/// second part's product when one is given, else other_in_I, else 0; p_I is written to
/// product_out_I (other_in and product_out may be the same array). x_out[out_map[I]] = x_I when
/// x_out is given.
struct SweepVectors {
  const double* b = nullptr;
  const index_t* b_map = nullptr;
  double* x = nullptr;
  const double* other_in = nullptr;
  double* product_out = nullptr;
  double* x_out = nullptr;
  const index_t* out_map = nullptr;
};

/// The incomplete factorizations of factor_color.
enum class Factorization { ilu0, dilu };

// Dispatch. Spans live on the backend; inverse has num_block_rows B^2 entries, r, z, b and x
// num_block_rows B. Throws NotSupported for B > kMaxRelaxationBlockSize.

/// Writes the inverses of the diagonal blocks; returns the first (0-based) block row whose
/// diagonal block is not stored, is singular (a zero pivot) or gives a non-finite inverse, or
/// -1 when there is none (the inverse blocks of such rows are unspecified). One wait on a
/// device.
template <class V, class W>
index_t invert_diagonal_blocks(const Backend& backend, const BsrView<V>& a, Span<W> inverse);

/// inverse block I = blocks block I ^-1 for I < count (dense arrays of B x B row-major blocks);
/// returns the first singular or non-finite one, or -1. One wait on a device.
template <class V, class W>
index_t invert_blocks(const Backend& backend, int block_size, index_t count, const V* blocks,
                      W* inverse);

/// z_I = omega D_I^-1 r_I for every block row I (block Jacobi), summed over c in order.
template <class W>
void block_diagonal_apply(const Backend& backend, int block_size, Span<const W> inverse,
                          double omega, Span<const double> r, Span<double> z);

/// The update (file comment, SweepUpdate) of every block row of one color; `part` and `second`
/// (null: none) are color-ordered parts from split_pattern, inverse null for the identity.
/// Nothing waits for the device.
template <class V, class W>
void triangular_sweep(const Backend& backend, const BsrView<V>& part, const BsrView<V>* second,
                      SweepVariant variant, const W* inverse, ColorRange color, SweepUpdate update,
                      const SweepVectors& vectors);

/// Factors the block rows of one color (block_rows.hpp: ilu0_row, dilu_row) of a color-ordered
/// split matrix in place (ILU(0): lower, upper and diagonal values; DILU: none), writing their
/// inverse pivot blocks; earlier colors must be factored. *first_bad (one entry on the backend,
/// initialized by the caller to num_block_rows) becomes the smallest block row whose pivot block
/// is singular or has a non-finite inverse. Nothing waits for the device.
template <class V, class W>
void factor_color(const Backend& backend, Factorization kind, const BsrView<V>& lower,
                  const BsrView<V>& upper, V* diagonal, W* inverse, ColorRange color,
                  index_t* first_bad);

/// position[order[p]] = p (order a permutation of 0 .. n - 1).
void invert_permutation(const Backend& backend, Span<const index_t> order, Span<index_t> position);
/// lower[p], upper[p] = the stored blocks of block row order[p] of a whose renamed column
/// position[J] is < p, > p (the row lengths of the parts).
void split_lengths(const Backend& backend, const sparse_setup::PatternView& a,
                   Span<const index_t> order, Span<const index_t> position, Span<index_t> lower,
                   Span<index_t> upper);
/// The parts' columns, sorted within each row (rows from exclusive_scan of split_lengths), and
/// for each of their blocks its index in a (lower_source, upper_source); diagonal_source[p] = the
/// index of row order[p]'s diagonal block, or -1 when it is not stored. a has no repeated column
/// in a row.
void split_pattern(const Backend& backend, const sparse_setup::PatternView& a,
                   Span<const index_t> order, Span<const index_t> position,
                   const index_t* lower_ptr, const index_t* upper_ptr, index_t* lower_col,
                   index_t* upper_col, index_t* lower_source, index_t* upper_source,
                   index_t* diagonal_source);
/// out block k = in block source[k] (block_entries values each), zeros where source[k] < 0.
template <class V>
void gather_values(const Backend& backend, int block_entries, Span<const index_t> source,
                   const V* in, V* out);
/// out[p B + i] = in[map[p] B + i] for every block row p < out.size() / B and i < B.
void gather_blocks(const Backend& backend, int block_size, Span<const index_t> map,
                   Span<const double> in, Span<double> out);

#define KRYFLOW_BLOCK_RELAXATION_DECLARATIONS                                                      \
  template <class V, class W>                                                                      \
  index_t invert_diagonal_blocks(const Backend& backend, const BsrView<V>& a, Span<W> inverse);    \
  template <class V, class W>                                                                      \
  index_t invert_blocks(const Backend& backend, int block_size, index_t count, const V* blocks,    \
                        W* inverse);                                                               \
  template <class W>                                                                               \
  void block_diagonal_apply(const Backend& backend, int block_size, Span<const W> inverse,         \
                            double omega, Span<const double> r, Span<double> z);                   \
  template <class V, class W>                                                                      \
  void triangular_sweep(const Backend& backend, const BsrView<V>& part, const BsrView<V>* second,  \
                        SweepVariant variant, const W* inverse, ColorRange color,                  \
                        SweepUpdate update, const SweepVectors& vectors);                          \
  template <class V, class W>                                                                      \
  void factor_color(const Backend& backend, Factorization kind, const BsrView<V>& lower,           \
                    const BsrView<V>& upper, V* diagonal, W* inverse, ColorRange color,            \
                    index_t* first_bad);                                                           \
  void invert_permutation(const Backend& backend, Span<const index_t> order,                       \
                          Span<index_t> position);                                                 \
  void split_lengths(const Backend& backend, const sparse_setup::PatternView& a,                   \
                     Span<const index_t> order, Span<const index_t> position, Span<index_t> lower, \
                     Span<index_t> upper);                                                         \
  void split_pattern(const Backend& backend, const sparse_setup::PatternView& a,                   \
                     Span<const index_t> order, Span<const index_t> position,                      \
                     const index_t* lower_ptr, const index_t* upper_ptr, index_t* lower_col,       \
                     index_t* upper_col, index_t* lower_source, index_t* upper_source,             \
                     index_t* diagonal_source);                                                    \
  template <class V>                                                                               \
  void gather_values(const Backend& backend, int block_entries, Span<const index_t> source,        \
                     const V* in, V* out);                                                         \
  void gather_blocks(const Backend& backend, int block_size, Span<const index_t> map,              \
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
/// the dispatch's): V and W in {double, float}. The cuda backend expands its three parts in three
/// files (three modules: block Jacobi does not load the sweeps, nor the sweeps the
/// factorizations).
#define KRYFLOW_BLOCK_RELAXATION_FOR_VW(M) \
  M(double, double)                        \
  M(double, float)                         \
  M(float, double)                         \
  M(float, float)
#define KRYFLOW_BLOCK_RELAXATION_SETUP_VW(V, W)                                              \
  template index_t invert_diagonal_blocks<V, W>(const Backend&, const BsrView<V>&, Span<W>); \
  template index_t invert_blocks<V, W>(const Backend&, int, index_t, const V*, W*);
#define KRYFLOW_BLOCK_RELAXATION_SWEEP_VW(V, W)                                              \
  template void triangular_sweep<V, W>(const Backend&, const BsrView<V>&, const BsrView<V>*, \
                                       SweepVariant, const W*, ColorRange, SweepUpdate,      \
                                       const SweepVectors&);
#define KRYFLOW_BLOCK_RELAXATION_FACTOR_VW(V, W)                                     \
  template void factor_color<V, W>(const Backend&, Factorization, const BsrView<V>&, \
                                   const BsrView<V>&, V*, W*, ColorRange, index_t*);
#define KRYFLOW_BLOCK_RELAXATION_SETUP_V(V)                                               \
  template void gather_values<V>(const Backend&, int, Span<const index_t>, const V*, V*); \
  template void block_diagonal_apply<V>(const Backend&, int, Span<const V>, double,       \
                                        Span<const double>, Span<double>);
#define KRYFLOW_BLOCK_RELAXATION_SETUP_INSTANTIATIONS                \
  KRYFLOW_BLOCK_RELAXATION_FOR_VW(KRYFLOW_BLOCK_RELAXATION_SETUP_VW) \
  KRYFLOW_BLOCK_RELAXATION_SETUP_V(double)                           \
  KRYFLOW_BLOCK_RELAXATION_SETUP_V(float)
#define KRYFLOW_BLOCK_RELAXATION_SWEEP_INSTANTIATIONS \
  KRYFLOW_BLOCK_RELAXATION_FOR_VW(KRYFLOW_BLOCK_RELAXATION_SWEEP_VW)
#define KRYFLOW_BLOCK_RELAXATION_FACTOR_INSTANTIATIONS \
  KRYFLOW_BLOCK_RELAXATION_FOR_VW(KRYFLOW_BLOCK_RELAXATION_FACTOR_VW)
#define KRYFLOW_BLOCK_RELAXATION_INSTANTIATIONS \
  KRYFLOW_BLOCK_RELAXATION_SETUP_INSTANTIATIONS \
  KRYFLOW_BLOCK_RELAXATION_SWEEP_INSTANTIATIONS \
  KRYFLOW_BLOCK_RELAXATION_FACTOR_INSTANTIATIONS

}  // namespace kryflow::kernels::block_relaxation
