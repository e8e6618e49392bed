// Contract of the BSR (block compressed sparse row) kernels: y = A x, r = b - A x, y = A x fused
// with x·y, the diagonal, and the scatter of CSR-ordered values into the blocks.
//
// Layout (Saad, Iterative Methods, 2nd ed., sec. 3.4; cuSPARSE BSR with CUSPARSE_DIRECTION_ROW):
// square B x B blocks, block row I covers rows I B .. I B + B - 1; block k of block row I sits in
// block column col_idx[k] (row_ptr[I] <= k < row_ptr[I + 1], increasing within a block row) and
// holds a(I B + i, col_idx[k] B + c) at values[k B^2 + i B + c] (row-major). Values are double or
// float; a float is converted to double before the product, and all arithmetic is double.
//
// Order of operations (docs/decisions/002-formats-sum-like-csr.md): scalar row i = I B + ii is
//     y_i = 0;  y_i = y_i + double(a) * x  over the row's stored entries in increasing column
//     order,
// i.e. block by block, and within a block column by column, one addition at a time, on every
// backend and in both cuda variants; so y equals the CSR kernels' on the same (filled) matrix
// bit for bit. residual: r_i = b_i - y_i. diagonal: d_i = 0 + a_ii when the diagonal block of
// block row I is stored, else 0 (the CSR order).
// x·y of bsr_spmv_dot (cpu and cuda): block rows are cut into groups of group_block_rows(B); in
// group g, term j (0 <= j < kGroupThreads) is x_i y_i for scalar row i = g R B + j when j < R B and
// that row exists, else 0 (R = group_block_rows(B)); the terms are added by block_sum
// (kernels/backend/reduction.cuh) into p_g; lane l adds p_l, p_{l+256}, ... in order from 0 and a
// block_sum of the lanes gives x·y. The reference adds x_i y_i sequentially instead.
#pragma once

#include <cstdint>

#include "kryflow/core/array.hpp"

namespace kryflow::kernels::bsr {

/// The two cuda SpMV kernels (the reference and cpu backends have one each and ignore this).
enum class Variant {
  /// B threads per block row, thread ii of block row I computes row I B + ii, reading row ii of
  /// each block directly from global memory.
  block_row,
  /// A team of 256 threads loads the consecutive block coefficients of its block rows coalesced,
  /// each thread multiplying one coefficient by its x entry into shared memory; then thread ii of
  /// block row I adds row I B + ii's products from shared memory in the fixed order (the
  /// one-work-item-per-coefficient scheme of Gorobets et al. for NOISEtte's 5 x 5 blocks).
  coefficient,
};

/// Block sizes the kernels are compiled for: 1..kMaxSpecialisedBlockSize as compile-time
/// constants, kMaxSpecialisedBlockSize + 1 .. kMaxBlockSize through one runtime-B kernel.
inline constexpr int kMaxSpecialisedBlockSize = 8;
inline constexpr int kMaxBlockSize = 32;

/// The variant BsrKernel::automatic picks for values stored in double, indexed by block size
/// B = 1..8; index 0 stands for every B of the generic kernel (9..32). From kryflow_bench_bsr
/// on an H200 (bench/results/h200_block_relaxation/c19c96e, 81ae6a2, h200_automatic_choices),
/// fraction of the copy bandwidth on block 3D Poisson 64^3, coefficient against block_row: B = 2
/// 0.82 / 0.74, B = 3 0.82 / 0.78 (0.81 / 0.73 with pair loads, 81ae6a2), B = 4 0.90 / 0.99, B = 5
/// 0.86 / 0.72 (0.84 / 0.84 with pair loads), B = 6 0.83 / 0.93 (the H100 had a tie and
/// coefficient), B = 7 0.78 / 0.56 (0.78 / 0.88 with pair loads), B = 8 0.82 / 1.01; at B = 4
/// block_row also wins on ex19_cavity_129 and 257 (0.51 / 0.41, 0.87 / 0.70). B = 1 is a CSR
/// product: block_row. Edit here after new measurements.
inline constexpr Variant kAutomaticVariant[kMaxSpecialisedBlockSize + 1] = {
    Variant::coefficient,  // generic B (9..32)
    Variant::block_row,    // B = 1
    Variant::coefficient,  // B = 2
    Variant::coefficient,  // B = 3
    Variant::block_row,    // B = 4
    Variant::coefficient,  // B = 5
    Variant::block_row,    // B = 6
    Variant::block_row,    // B = 7
    Variant::block_row,    // B = 8
};

/// For values stored in float, block_row (with 16-byte loads) was faster for every measured B
/// (2..8, block 3D Poisson 64^3 and the ex19 cavities), by 1.1x to 1.7x on an H100 and 1.2x to
/// 2.1x on an H200.
inline constexpr Variant kAutomaticVariantFloat32 = Variant::block_row;

/// The automatic variant for block size B (1..kMaxBlockSize) and the stored value type.
constexpr Variant automatic_variant(int block_size, bool float32_values = false) noexcept {
  if (float32_values) return kAutomaticVariantFloat32;
  return kAutomaticVariant[block_size <= kMaxSpecialisedBlockSize ? block_size : 0];
}

/// Threads of a cuda group (one cuda block) and of the x·y block_sum.
inline constexpr int kGroupThreads = 256;
/// Block rows of one group: as many as give every thread of the group one scalar row.
constexpr index_t group_block_rows(int block_size) noexcept {
  return kGroupThreads / block_size;
}
/// Groups of a matrix with `num_block_rows` block rows (0 without block rows).
constexpr index_t num_groups(index_t num_block_rows, int block_size) noexcept {
  return (num_block_rows + group_block_rows(block_size) - 1) / group_block_rows(block_size);
}

/// Value bytes above which the cuda kernels stream the values past the cache (an H100's L2 holds
/// 50 MB, an H200's 60 MB; below a quarter of it repeated products of a small matrix find its
/// values there).
inline constexpr std::int64_t kStreamValuesBytes = std::int64_t{12} << 20;

/// A BSR matrix as the kernels see it (layout in the file comment); all pointers on one backend.
template <class V>
struct BsrView {
  index_t num_block_rows = 0;
  index_t num_block_cols = 0;
  int block_size = 1;                // B, 1..kMaxBlockSize
  std::int64_t num_blocks = 0;       // stored blocks
  const index_t* row_ptr = nullptr;  // num_block_rows + 1
  const index_t* col_idx = nullptr;  // num_blocks
  const V* values = nullptr;         // num_blocks * B * B
  // Whether the cuda kernels read the values with an evict-first hint: yes when they are too
  // large to stay in the cache between products (then x keeps its place), no for a matrix
  // small enough to stay there (kStreamValuesBytes).
  bool stream_values = true;
  // Scratch of bsr_spmv_dot (one call at a time per matrix): one sum per group (cpu and cuda),
  // and a completion counter that is 0 between calls (cuda).
  double* group_partials = nullptr;  // num_groups(num_block_rows, block_size)
  unsigned int* counter = nullptr;   // 1
};

// Dispatch (the variant matters on cuda only). Spans live on the backend; x has
// num_block_cols B entries, y, b, r and d num_block_rows B. V is double or float.

/// y = A x
template <class V>
void bsr_spmv(const Backend& backend, const BsrView<V>& a, Variant variant, Span<const double> x,
              Span<double> y);
/// r = b - A x
template <class V>
void bsr_residual(const Backend& backend, const BsrView<V>& a, Variant variant,
                  Span<const double> b, Span<const double> x, Span<double> r);
/// y = A x and x·y written to *result, an address on the backend (square A), deterministic in
/// the order of the file comment; nothing waits for the device.
template <class V>
void bsr_spmv_dot(const Backend& backend, const BsrView<V>& a, Variant variant,
                  Span<const double> x, Span<double> y, double* result);
/// d_i = a_ii (0 where the diagonal block is not stored).
template <class V>
void bsr_diagonal(const Backend& backend, const BsrView<V>& a, Span<double> d);
/// values[position[k]] = V(source[k]) for every k (positions distinct); other values untouched.
template <class V>
void bsr_scatter_values(const Backend& backend, Span<const index_t> position,
                        Span<const double> source, Span<V> values);

#define KRYFLOW_BSR_DECLARATIONS                                                       \
  template <class V>                                                                   \
  void bsr_spmv(const Backend& backend, const BsrView<V>& a, Span<const double> x,     \
                Span<double> y);                                                       \
  template <class V>                                                                   \
  void bsr_residual(const Backend& backend, const BsrView<V>& a, Span<const double> b, \
                    Span<const double> x, Span<double> r);                             \
  template <class V>                                                                   \
  void bsr_spmv_dot(const Backend& backend, const BsrView<V>& a, Span<const double> x, \
                    Span<double> y, double* result);                                   \
  template <class V>                                                                   \
  void bsr_diagonal(const Backend& backend, const BsrView<V>& a, Span<double> d);      \
  template <class V>                                                                   \
  void bsr_scatter_values(const Backend& backend, Span<const index_t> position,        \
                          Span<const double> source, Span<V> values);

// Per backend, instantiated for double and float in their .cpp/.cu files. The reference and cpu
// backends have one kernel each; cuda takes the variant.
namespace reference {
KRYFLOW_BSR_DECLARATIONS
}
namespace cpu {
KRYFLOW_BSR_DECLARATIONS
}

#undef KRYFLOW_BSR_DECLARATIONS

namespace cuda {
template <class V>
void bsr_spmv(const Backend& backend, const BsrView<V>& a, Variant variant, Span<const double> x,
              Span<double> y);
template <class V>
void bsr_residual(const Backend& backend, const BsrView<V>& a, Variant variant,
                  Span<const double> b, Span<const double> x, Span<double> r);
template <class V>
void bsr_spmv_dot(const Backend& backend, const BsrView<V>& a, Variant variant,
                  Span<const double> x, Span<double> y, double* result);
template <class V>
void bsr_diagonal(const Backend& backend, const BsrView<V>& a, Span<double> d);
template <class V>
void bsr_scatter_values(const Backend& backend, Span<const index_t> position,
                        Span<const double> source, Span<V> values);
}  // namespace cuda

}  // namespace kryflow::kernels::bsr
