// Contract of the CSR sparse matrix-vector kernels: y = A x, r = b - A x, y = A x fused with x·y,
// and the diagonal; and the row-block partition the cpu and cuda kernels share.
//
// Values are stored in double or in float (CsrView::values or CsrView::values_f32); vectors and
// all arithmetic are double. A float value a_ik enters every formula below as double(a_ik), an
// exact conversion, so a float-stored matrix gives the same bits as the double kernels on the
// float-rounded values (docs/decisions/002-formats-sum-like-csr.md). Every kernel is one template
// on the value type, instantiated for double and float.
//
// Same layout as kernels/blas: namespaces reference, cpu and cuda with identical signatures, and
// unqualified functions that dispatch on the backend. Column indices within a row need not be
// sorted; rows may be empty. Spans live on the backend and have the lengths the matrix implies.
//
// Order of operations (CSR-stream, Greathouse and Daga, "Efficient sparse matrix-vector
// multiplication on GPUs using the CSR storage format", SC'14). Rows are split once, where the
// matrix lives (build_partition), into row blocks of at most kRowBlockRows rows and at most `tile`
// stored entries; a row with more than `tile` entries (a long row) is a row block of its own. With
// fused multiply-add disabled on both sides (--fmad=false, -ffp-contract=off) the cpu and cuda
// kernels add in the same order and give the same bits:
//  - ordinary row i: y_i = 0; y_i = y_i + a_ik * x_k over the stored entries in stored order,
//    exactly as the reference does;
//  - long row i: its entries are cut into chunks of kLongRowChunk; in chunk c, lane l
//    (0 <= l < kRowBlockRows) adds the products of entries c_begin + l, c_begin + l + 256, ...
//    in order from 0; the lane sums are added by block_sum (kernels/backend/reduction.cuh); then
//    lane l adds the chunk sums l, l + 256, ... in order from 0 and block_sum gives y_i;
//  - residual: r_i = b_i - y_i with y_i as above;
//  - diagonal: as the product with a_ik x_k replaced by a_ik where k == i (other entries skipped);
//  - csr_spmv_combination_dot multiplies v = s ∘ u + c w (Combination), with v_k = s_k * u_k + c *
//    w_k (or u_k + c * w_k) computed in that order wherever v_k is needed; otherwise it is
//    csr_spmv_dot with x = v, in the same order, so it gives the bits of storing v first;
//  - csr_spmv_dots: each w·y as x·y below, with the term w_i y_i (y_i y_i for y·y);
//  - csr_spmv_shifted_dots multiplies z = d ∘ s with s = u + c w and c = -(numerator /
//    denominator) (ShiftedStep), s_k = u_k + c * w_k and z_k = d_k * s_k computed in that order
//    wherever z_k is needed; the row's own s_i and z_i are stored; s·s, y·y and y·s as x·y
//    below, with the terms s_i s_i, y_i y_i and y_i s_i;
//  - x·y of csr_spmv_dot: with at most kLatencyBoundRowBlocks row blocks, row block g sums
//    t_j = x_i y_i (i = first row of g + j, j < kRowBlockRows; t_j = 0 for j past the block's
//    rows) by block_sum into p_g, then lane l adds p_l, p_{l+256}, ... in order from 0 and
//    block_sum gives x·y (the order of grid_sum). With more, the row blocks are strided over
//    G = strided_blocks(num_row_blocks, tile) sums: sum b has, in lane j, 0 + t_j(b) + t_j(b + G) +
//    ... added in order of the row blocks b, b + G, ... < num_row_blocks (t_j(g) as above for row
//    block g); p_b = block_sum of its lanes; then the ordered sum of p_0 ... p_{G-1} as above. On
//    cuda block b of a one-wave grid of G blocks takes row blocks b, b + G, ... in turn, so the
//    block-wide sum runs once per block instead of once per row block (at 3D Poisson 200^3,
//    31,250 row blocks, the product with p·q took 215 instead of 231 us on the H200: every
//    row block held its SM's slot through a block sum after its last load).
#pragma once

#include <cstdint>
#include <vector>

#include "kryflow/core/array.hpp"

namespace kryflow::kernels::spmv {

/// Threads of a cuda row block, and the most rows one row block holds.
inline constexpr int kRowBlockThreads = 256;
inline constexpr int kRowBlockRows = kRowBlockThreads;
/// Stored entries per chunk of a long row (one cuda block of kRowBlockThreads threads each).
inline constexpr int kLongRowChunk = 4096;
/// Row blocks up to which a product is bound by latency rather than bandwidth on the GPU
/// (measured on the H200, bench_krylov): up to it a fused x·y is summed per row block and
/// completed by the last row block, and CsrMatrix fuses CG's direction into its product. Above
/// it the direction fused into the product costs more than its own pass: the product becomes
/// bound by the three gathers per entry (0.64 of the copy bandwidth at 200^3 against 0.81).
inline constexpr index_t kLatencyBoundRowBlocks = 1024;
/// Blocks (and partial sums) of the strided product with fused dots of a matrix with more
/// than kLatencyBoundRowBlocks row blocks (file comment): one wave of 256-thread blocks on 128
/// SMs, at most the SMs of an H100 SXM or H200 (132), so that the grid is a function of the
/// matrix alone (the same bits on every device). A GPU with fewer SMs (an H100 PCIe has 114, a
/// MIG slice fewer) runs it in two waves, and the product with dots takes up to twice as long.
/// 8 blocks per SM (32 registers per thread) make 1024; tile 4096 stages 32 KiB per block and
/// leaves room for 6 (768). The kernels whose input is formed from three gathers per entry
/// (Combination, ShiftedStep) spill a few registers under this cap; they are strided only when
/// called on such a matrix (CsrMatrix fuses them up to kLatencyBoundRowBlocks row blocks).
inline constexpr index_t kStridedSms = 128;
/// strided_blocks(row_blocks, tile) for a matrix of more than kLatencyBoundRowBlocks row
/// blocks, else 0.
inline constexpr index_t strided_blocks(index_t row_blocks, int tile) {
  return row_blocks <= kLatencyBoundRowBlocks ? 0 : kStridedSms * (tile >= 4096 ? 6 : 8);
}
static_assert(kStridedSms * 8 <= kLatencyBoundRowBlocks, "fewer strided sums than row blocks");
/// The tiles (most stored entries of a row block) the kernels are compiled for.
inline constexpr int kTiles[] = {1024, 2048, 4096};

/// A CSR matrix as the kernels see it, with its row-block partition (see the file comment).
/// The partition arrays and the scratch live on the same backend as the matrix; the reference
/// kernels read only the first seven fields. Exactly one of values and values_f32 is non-null
/// when nnz > 0 (both may be null when nnz == 0); the dispatch throws InvalidInput otherwise.
struct CsrView {
  index_t num_rows = 0;
  index_t num_cols = 0;
  std::int64_t nnz = 0;
  const index_t* row_ptr = nullptr;   // num_rows + 1 entries
  const index_t* col_idx = nullptr;   // nnz entries
  const double* values = nullptr;     // nnz entries, or null when stored in float
  const float* values_f32 = nullptr;  // nnz entries, or null when stored in double

  int tile = 0;                              // most stored entries of an ordinary row block
  index_t num_row_blocks = 0;                // 0 only when num_rows == 0
  const index_t* row_blocks = nullptr;       // num_row_blocks + 1 first rows (last: num_rows)
  index_t num_long_rows = 0;                 // rows with more than `tile` entries
  const index_t* long_rows = nullptr;        // num_long_rows rows, increasing
  const index_t* long_row_chunks = nullptr;  // num_long_rows + 1 offsets into the chunks
  index_t num_chunks = 0;                    // chunks of kLongRowChunk entries over all long rows
  const index_t* chunk_long_row = nullptr;   // num_chunks: the long row (its slot) of each chunk

  // Scratch of the cuda kernels (one call at a time per matrix): sums per row block (or per
  // strided block) and per chunk, and completion counters (counters[0] for x·y, counters[1 + s] for
  // long row s) that are 0 between calls. The cpu kernels use the partial sums only.
  double* block_partials = nullptr;  // kMaxFusedDots * num_row_blocks
  double* chunk_partials = nullptr;  // num_chunks
  unsigned int* counters = nullptr;  // 1 + num_long_rows
};

/// The vector v = s ∘ u + c w of csr_spmv_combination_dot, never stored: u, w (and s, the
/// element-wise scale, when non-null) have num_cols entries on the backend; c is a scalar in the
/// backend's memory (read by the kernel, so it may be written by work queued before). This is
/// the search direction p = D^-1 r + beta p of preconditioned CG, fused into its product.
struct Combination {
  const double* u = nullptr;
  const double* scale = nullptr;  ///< null: v = u + c w
  const double* w = nullptr;
  const double* coefficient = nullptr;
};

/// BiCGStab's half step fused into the product that follows it (csr_spmv_shifted_dots):
/// s = u + c w with c = -(*numerator / *denominator) read on the backend, z = d ∘ s, y = A z.
/// u, w, d have num_cols entries on the backend, s and z receive num_rows entries; s and z are
/// distinct from u, w, d and y. For BiCGStab-Jacobi: u = r, w = v, c = -alpha with
/// alpha = rho / r^·v, d = D^-1, so s is the half-step residual and z = M^-1 s (van der Vorst
/// 1992; Saad, Iterative Methods, 2nd ed., Algorithm 7.7, lines 5 and 6).
struct ShiftedStep {
  const double* u = nullptr;
  const double* w = nullptr;
  const double* scale = nullptr;
  const double* numerator = nullptr;
  const double* denominator = nullptr;
  double* s = nullptr;
  double* z = nullptr;
};

/// Inner products of csr_spmv_dots: up to kMaxProductDots sums w_k·y of the product y = A x,
/// where w_k = with[k], or y itself when with[k] is null (y·y).
inline constexpr int kMaxProductDots = 2;
/// The most inner products one product kernel sums (csr_spmv_shifted_dots: three); sets the
/// size of CsrView::block_partials.
inline constexpr int kMaxFusedDots = 3;
struct ProductDots {
  int count = 1;
  const double* with[kMaxProductDots] = {};
};

/// Calls `f(values)` with the view's stored values, `const float*` or `const double*` (the
/// double pointer, possibly null, when values_f32 is null): how each backend instantiates its
/// one kernel template for both value types.
template <class F>
decltype(auto) visit_values(const CsrView& a, F&& f) {
  if (a.values_f32 != nullptr) return f(a.values_f32);
  return f(a.values);
}

/// The row-block partition of a CSR pattern, built on the host (fields as in CsrView).
struct RowPartition {
  int tile = 0;
  std::vector<index_t> row_blocks;
  std::vector<index_t> long_rows;
  std::vector<index_t> long_row_chunks;
  std::vector<index_t> chunk_long_row;
};

/// Rows per partition segment: partition_rows restarts its greedy split at every multiple of
/// kPartitionSegmentRows, so that segments are split independently (one GPU thread each when a
/// matrix is built on the device, build_partition). A multiple of kRowBlockRows: rows of a
/// uniform length that fit a tile fill whole blocks, as one greedy pass over all rows would.
/// Each GPU thread walks its segment's blocks one binary search after another, a chain of
/// dependent loads: 4 x kRowBlockRows keeps it short and costs at most one partly filled row
/// block per 1024 rows (on the H200 the setup of smoothed aggregation at 3D Poisson 200^3 went
/// from 0.052 to 0.049-0.050 s against 16 x kRowBlockRows; its coarse operator's partition
/// alone took 0.5 ms).
inline constexpr index_t kPartitionSegmentRows = 4 * kRowBlockRows;

/// Splits rows 0..num_rows-1 greedily, segment by segment (kPartitionSegmentRows), into row
/// blocks of at most kRowBlockRows rows and `tile` entries; a row longer than `tile` is a block
/// of its own and is cut into chunks of kLongRowChunk entries (partition_walk.hpp). `row_ptr`
/// has num_rows + 1 non-decreasing entries on the host. Throws InvalidInput when `tile` is not
/// one of kTiles. O(num_rows / kRowBlockRows * log2(kRowBlockRows)) reads of row_ptr.
RowPartition partition_rows(Span<const index_t> row_ptr, int tile);

/// What build_partition learns about row_ptr, for CsrMatrix's checks and row statistics.
struct RowPointerFacts {
  std::int64_t first = 0;            ///< row_ptr[0]
  std::int64_t last = 0;             ///< row_ptr[num_rows]
  std::int64_t first_decrease = -1;  ///< the smallest i with row_ptr[i + 1] < row_ptr[i], or -1
  index_t min_length = 0;            ///< over the rows (0 without rows)
  index_t max_length = 0;
  index_t empty_rows = 0;
  /// row_ptr starts at 0 and never decreases (its end is checked by the caller, who knows nnz).
  bool valid() const noexcept { return first == 0 && first_decrease < 0; }
};

/// A RowPartition on a backend (CsrMatrix's arrays), with the facts of row_ptr.
struct PartitionArrays {
  int tile = 0;
  Array<index_t> row_blocks;
  Array<index_t> long_rows;
  Array<index_t> long_row_chunks;
  Array<index_t> chunk_long_row;
  Array<unsigned int> counters;  // long_rows.size() + 1 completion counters, zeroed
  RowPointerFacts facts;
};

/// One matrix of build_partitions: its row pointers (num_rows + 1 >= 1 entries on the backend)
/// and its tile (one of kTiles).
struct PartitionRequest {
  Span<const index_t> row_ptr;
  int tile = 0;
};

/// partition_rows(row_ptr, tile) built where row_ptr lives, with the facts of row_ptr; when
/// !facts.valid() the arrays are left empty. On cuda the segments are split in parallel on the
/// device and the host reads only the sizes and the facts (one wait): a matrix built by device
/// kernels needs no host copy of its row pointers. Throws InvalidInput when `tile` is not one of
/// kTiles or row_ptr is empty.
PartitionArrays build_partition(const Backend& backend, Span<const index_t> row_ptr, int tile);

/// build_partition for several matrices on one backend, in order. On cuda the matrices share
/// their launches (three in all, whatever their number) and one host wait: an AMG hierarchy's
/// interpolation, restriction and coarse operators get their partitions together. Throws as
/// build_partition for the first bad request.
#define KRYFLOW_SPMV_PARTITION_DECLARATIONS                             \
  std::vector<PartitionArrays> build_partitions(const Backend& backend, \
                                                const std::vector<PartitionRequest>& requests);
KRYFLOW_SPMV_PARTITION_DECLARATIONS
namespace reference {
KRYFLOW_SPMV_PARTITION_DECLARATIONS
}
namespace cpu {
KRYFLOW_SPMV_PARTITION_DECLARATIONS
}
namespace cuda {
KRYFLOW_SPMV_PARTITION_DECLARATIONS
}
#undef KRYFLOW_SPMV_PARTITION_DECLARATIONS

/// Stored entries up to which default_tile picks 1024 whatever the mean row length: at most
/// about kLatencyBoundRowBlocks / 2 row blocks, so the product stays bound by latency, where
/// one load batch per thread (tile 1024) instead of two shortens its chain of dependent memory
/// accesses. Measured on the H200 (bench_krylov, check_every 10, graphs): PCG-Jacobi on
/// openfoam_p_23325 9.0 instead of 10.3 us per iteration, BiCGStab-Jacobi on ex19_cavity_33
/// 17.6 instead of 20.3 and on 2dcyl1 18.0 instead of 19.8; at 3D Poisson 200^3 (bound by
/// bandwidth) tile 1024 made the product 16% slower.
inline constexpr std::int64_t kSmallProductEntries = std::int64_t{512} * 1024;

/// The default tile for a matrix of nnz stored entries with mean row length mean_row_length:
/// 1024 when nnz <= kSmallProductEntries or when kRowBlockRows rows of mean length fit in it,
/// 2048 otherwise. Not 4096: its 32 KiB of staged products leave room for 6 instead of 8
/// resident blocks per sm_90 SM, and on matrices of a few tens of MB its larger blocks leave
/// a longer tail (bench_spmv --tiles measures all three).
int default_tile(double mean_row_length, std::int64_t nnz);

#define KRYFLOW_SPMV_DECLARATIONS                                                                 \
  /** y = A x */                                                                                  \
  void csr_spmv(const Backend& backend, const CsrView& a, Span<const double> x, Span<double> y);  \
  /** r = b - A x */                                                                              \
  void csr_residual(const Backend& backend, const CsrView& a, Span<const double> b,               \
                    Span<const double> x, Span<double> r);                                        \
  /** y = A x and x·y written to *result, an address on the backend (square A); nothing waits    \
      for the device; deterministic like blas::dot */                                             \
  void csr_spmv_dot(const Backend& backend, const CsrView& a, Span<const double> x,               \
                    Span<double> y, double* result);                                              \
  /** y = A x and result[k] = w_k·y for the dots' vectors (square A); as csr_spmv_dot            \
      otherwise */                                                                                \
  void csr_spmv_dots(const Backend& backend, const CsrView& a, Span<const double> x,              \
                     Span<double> y, const ProductDots& dots, double* result);                    \
  /** y = A v and v·y (square A), v the Combination (not stored); as csr_spmv_dot otherwise.     \
      Returns 0 when *result holds v·y. With leave_partials, a product of at most                \
      kLatencyBoundRowBlocks row blocks on cuda may instead leave its row blocks' sums in         \
      a.block_partials and return their number, for the next kernel to add in the order of        \
      emulation::ordered_sum (one chain of memory round trips less than adding them in the        \
      last row block); *result is then not written. */                                            \
  int csr_spmv_combination_dot(const Backend& backend, const CsrView& a, const Combination& v,    \
                               Span<double> y, double* result, bool leave_partials);              \
  /** y = A z with z = d ∘ (u + c w) (ShiftedStep; s and z stored), result[0] = s·s,           \
      result[1] = y·y, result[2] = y·s (square A); nothing waits for the device. Returns 0, or, \
      with leave_partials, as csr_spmv_combination_dot: the row blocks' sums left in              \
      a.block_partials (sum k at k * count) and their count returned. */                          \
  int csr_spmv_shifted_dots(const Backend& backend, const CsrView& a, const ShiftedStep& v,       \
                            Span<double> y, double* result, bool leave_partials);                 \
  /** A step of Chebyshev (or Richardson) iteration with the Jacobi preconditioner (Saad,         \
      Iterative Methods, 2nd ed., Algorithm 12.1) in one pass: r = b - A x (csr_residual's        \
      order), d_i = alpha (dinv_i r_i) + beta d_i (d not read when beta == 0), y_i = d_i + x_i;   \
      the bits of csr_residual into y followed by blas::chebyshev_step_update. Square A; y        \
      distinct from x, b, dinv and d (the new iterate cannot overwrite x, which other rows        \
      read). */                                                                                   \
  void csr_chebyshev_step(const Backend& backend, const CsrView& a, Span<const double> b,         \
                          Span<const double> x, Span<const double> dinv, double alpha,            \
                          double beta, Span<double> d, Span<double> y);                           \
  /** The first two steps of csr_chebyshev_step's iteration from x_0 = 0 in one pass: x_1 =       \
      d_0 = alpha0 (dinv ∘ b) is formed where the product needs it and never stored, then       \
      r = b - A x_1, d_i = alpha (dinv_i r_i) + beta d_0i, y_i = d_i + x_1i. The bits of          \
      blas::chebyshev_update (x_is_zero) into x_1 and d followed by csr_chebyshev_step from       \
      x_1; d is only written. Square A; y distinct from b, dinv and d. */                         \
  void csr_chebyshev_first_steps(const Backend& backend, const CsrView& a, Span<const double> b,  \
                                 Span<const double> dinv, double alpha0, double alpha,            \
                                 double beta, Span<double> d, Span<double> y);                    \
  /** d_i = a_ii (sum of duplicates; 0 where the row stores no diagonal entry) */                 \
  void csr_diagonal(const Backend& backend, const CsrView& a, Span<double> d);

/// Dispatch. The cpu and cuda kernels need the partition: they throw InvalidInput when a view
/// with rows has none.
KRYFLOW_SPMV_DECLARATIONS

namespace reference {
KRYFLOW_SPMV_DECLARATIONS
}
namespace cpu {
KRYFLOW_SPMV_DECLARATIONS
}
namespace cuda {
KRYFLOW_SPMV_DECLARATIONS
}

#undef KRYFLOW_SPMV_DECLARATIONS

}  // namespace kryflow::kernels::spmv
