// CUDA CSR kernels: CSR-stream row blocks (Greathouse and Daga, SC'14) and chunked long rows.
//
// A block of 256 threads per row block (spmv.hpp; with fused dots over many row blocks, one
// wave of blocks taking the row blocks in turn, strided_row_block_kernel): the threads load the
// block's values and column indices with coalesced streaming loads (thread t takes entries t, t +
// 256, ... of the block's contiguous range, four at a time so several loads are in flight),
// multiply by the gathered x and stage the products in shared memory; after one barrier, thread j
// adds row j's products in stored order, the order of the plain sequential loop, so the cpu backend
// needs no emulation for ordinary rows. Rows longer than the tile are computed first by a second
// kernel, one block per chunk of kLongRowChunk entries, whose last block to finish adds the chunk
// sums with a fixed tree; the row block of a long row then only reads its result. The fused x·y
// adds one block_sum per row block and, in the last block to finish, the block sums in the order of
// grid_sum (kernels/backend/reduction.cuh); with many row blocks, a one-wave grid strides over
// them and sums once per block (spmv.hpp); all in per-matrix buffers (CsrView scratch).
// Multiplications and additions use the _rn intrinsics, so no fused multiply-add can change the
// rounding whatever the compiler flags. Every kernel is one template on the stored value type:
// float values are loaded as float (half the bytes) and converted to double, exactly, before
// the product.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/reduction.cuh"
#include "kernels/spmv/spmv.hpp"

namespace kryflow::kernels::spmv::cuda {
namespace {

using kernels::cuda::block_sum;
using kernels::cuda::check_launch;
using kernels::cuda::Context;
using size_type = long long;

constexpr int kBlock = kRowBlockThreads;
/// Resident blocks per SM the row-block kernels are compiled for: 8 x 256 threads fill an sm_90
/// SM (2048 threads), which caps registers at 32 per thread; with tile 4096 the 32 KiB of
/// staged products allow only 6 resident blocks.
constexpr int kMinBlocksPerSm = 8;
/// Entries each thread loads before it uses them (independent loads in flight per thread).
constexpr int kLoadBatch = 4;

enum class Mode {
  product,      // y = A x
  residual,     // y = b - A x
  product_dot,  // y = A x, returns x·y
  diagonal,     // y_i = sum of the stored a_ii
  chebyshev,    // r = b - A x, then the input's finish(i, r_i, y) (ChebyshevInput)
};

/// kernels::cuda::ordered_sum on the row blocks' threads.
template <int kBatch = 8>
__device__ double ordered_sum(const double* v, size_type n) {
  return kernels::cuda::ordered_sum<kBlock, kBatch>(v, n);
}

/// Thread 0 stores values[k] to partials[k * stride + index] (k < K) and counts the block done
/// in *counter; returns true, in every thread, in the block that completes the count to
/// `expected`, which then sees all partials. Every thread of the block calls it.
template <int K>
__device__ bool publish_partials(const double (&values)[K], double* partials, size_type stride,
                                 size_type index, unsigned int* counter, unsigned int expected) {
  __shared__ bool is_last;
  if (threadIdx.x == 0) {
#pragma unroll
    for (int k = 0; k < K; ++k) partials[k * stride + index] = values[k];
    __threadfence();  // the partials are visible before the count says so
    is_last = atomicAdd(counter, 1u) == expected - 1;
  }
  __syncthreads();
  const bool last = is_last;
  if (last) __threadfence();
  return last;
}

/// The terms of the fused inner products: x_i y_i (input), else with[k][i] y_i (with[k][i]
/// with[k][i] where squared[k]), or y_i y_i where with[k] is null.
struct DotTerms {
  /// For an input that stores its own rows (Input::kStoresOwn), a non-null with[k] stands for
  /// the value the input stored (ShiftedInput: s_i).
  const double* with[kMaxFusedDots] = {};
  bool squared[kMaxFusedDots] = {};  ///< the term w_i w_i instead of w_i y_i
  bool input = true;
  bool leave_partials = false;  ///< launch: the row blocks' sums stay in a.block_partials
};

/// The vector a kernel multiplies: x itself.
struct PlainInput {
  static constexpr int kMinBlocksPerSm = spmv::cuda::kMinBlocksPerSm;
  static constexpr bool kStoresOwn = false;
  const double* __restrict__ x;
  __device__ void prepare() {}
  __device__ double operator()(index_t k) const { return __ldg(x + k); }
};

/// The vector a kernel multiplies: v = s ∘ u + c w (s omitted: v = u + c w), c read once from
/// the device; v_k is computed where it is needed and never stored (spmv.hpp, Combination).
struct CombinationInput {
  /// Three gathers per entry, kLoadBatch entries in flight: 40 registers (6 resident blocks;
  /// 4 and 8 measured 2-4% slower at 200^3 on the H200).
  static constexpr int kMinBlocksPerSm = 6;
  Combination v;
  double c = 0.0;
  static constexpr bool kStoresOwn = false;
  __device__ void prepare() { c = *v.coefficient; }
  __device__ double operator()(index_t k) const {
    const double u = __ldg(v.u + k);
    const double su = v.scale != nullptr ? __dmul_rn(__ldg(v.scale + k), u) : u;
    return __dadd_rn(su, __dmul_rn(c, __ldg(v.w + k)));
  }
};

/// The vector a kernel multiplies: z = d ∘ (u + c w) with c = -(numerator / denominator) read
/// once from the device (spmv.hpp, ShiftedStep); z_k is computed where it is needed, and each
/// row's own s_i = u_i + c w_i and z_i are stored by the thread of that row (own()).
struct ShiftedInput {
  static constexpr int kMinBlocksPerSm = CombinationInput::kMinBlocksPerSm;  // three gathers
  static constexpr bool kStoresOwn = true;
  ShiftedStep v;
  double c = 0.0;
  __device__ void prepare() {
    const double numerator = *v.numerator;
    const double denominator = *v.denominator;
    c = -(numerator / denominator);
  }
  __device__ double shifted(index_t k) const {
    return __dadd_rn(__ldg(v.u + k), __dmul_rn(c, __ldg(v.w + k)));
  }
  __device__ double operator()(index_t k) const {
    return __dmul_rn(__ldg(v.scale + k), shifted(k));
  }
  /// Stores s_i and z_i of row i; returns s_i.
  __device__ double own(index_t i) const {
    const double si = shifted(i);
    v.s[i] = si;
    v.z[i] = __dmul_rn(__ldg(v.scale + i), si);
    return si;
  }
};

/// The vector a kernel multiplies: x itself, and the epilogue of a Chebyshev step on row i with
/// its residual r_i (spmv.hpp, csr_chebyshev_step): d_i = alpha (dinv_i r_i) + beta d_i (d not
/// read when beta == 0), y_i = d_i + x_i, in the order and rounding of blas::chebyshev_update.
struct ChebyshevInput {
  static constexpr int kMinBlocksPerSm = spmv::cuda::kMinBlocksPerSm;
  const double* __restrict__ x;
  const double* __restrict__ dinv;
  double* __restrict__ d;
  double alpha = 0.0;
  double beta = 0.0;
  __device__ void prepare() {}
  __device__ double operator()(index_t k) const { return __ldg(x + k); }
  __device__ void finish(index_t i, double r, double* y) const {
    const double z = __dmul_rn(__ldg(dinv + i), r);
    const double di =
        beta == 0.0 ? __dmul_rn(alpha, z) : __dadd_rn(__dmul_rn(alpha, z), __dmul_rn(beta, d[i]));
    d[i] = di;
    y[i] = __dadd_rn(di, __ldg(x + i));
  }
};

/// The vector a kernel multiplies: x_1 = alpha0 (dinv ∘ b), the first Chebyshev step from zero,
/// formed where it is needed and never stored; the epilogue is ChebyshevInput's with x_1 (and
/// d_0 = x_1): d_i = alpha (dinv_i r_i) + beta x_1i, y_i = d_i + x_1i (spmv.hpp,
/// csr_chebyshev_first_steps), in the order and rounding of blas::chebyshev_update.
struct ChebyshevFromZeroInput {
  static constexpr int kMinBlocksPerSm = CombinationInput::kMinBlocksPerSm;  // two gathers
  const double* __restrict__ b;
  const double* __restrict__ dinv;
  double* __restrict__ d;
  double alpha0 = 0.0;
  double alpha = 0.0;
  double beta = 0.0;
  __device__ void prepare() {}
  __device__ double operator()(index_t k) const {
    return __dmul_rn(alpha0, __dmul_rn(__ldg(dinv + k), __ldg(b + k)));
  }
  __device__ void finish(index_t i, double r, double* y) const {
    const double x1 = (*this)(i);
    const double z = __dmul_rn(__ldg(dinv + i), r);
    const double di =
        beta == 0.0 ? __dmul_rn(alpha, z) : __dadd_rn(__dmul_rn(alpha, z), __dmul_rn(beta, x1));
    d[i] = di;
    y[i] = __dadd_rn(di, x1);
  }
};

/// What a row block leaves its thread: the thread's row, whether the thread computed it (an
/// ordinary row of the block), whether the block is a long row, and y of the thread's row.
struct RowOutcome {
  index_t row = 0;
  bool mine = false;
  bool long_row = false;
  double sum = 0.0;
};

/// Row block `block`: stage the products in `products` (kTile entries of shared memory), add
/// each row's in order, write y (or r, or the diagonal). Long rows were written by
/// long_row_kernel; their block writes nothing. Every thread of the block calls it.
template <int kTile, Mode kMode, class Value, class Input>
__device__ __forceinline__ RowOutcome row_block(const CsrView& a, const Value* __restrict__ values,
                                                Input& x, const double* b, double* y, index_t block,
                                                double* products) {
  const int t = static_cast<int>(threadIdx.x);
  const index_t first_row = __ldg(a.row_blocks + block);
  const int rows = __ldg(a.row_blocks + block + 1) - first_row;
  const index_t begin = __ldg(a.row_ptr + first_row);
  const int count = __ldg(a.row_ptr + first_row + rows) - begin;
  RowOutcome out;
  out.long_row = count > kTile;  // then the block is that row alone (uniform)
  out.row = first_row + t;
  out.mine = t < rows && !out.long_row;
  index_t row_begin = 0;
  index_t row_end = 0;
  if (out.mine) {
    row_begin = __ldg(a.row_ptr + out.row);
    row_end = __ldg(a.row_ptr + out.row + 1);
  }

  double sum = 0.0;
  if constexpr (kMode == Mode::diagonal) {
    if (out.mine) {
      for (index_t k = row_begin; k < row_end; ++k) {
        if (__ldg(a.col_idx + k) == out.row)
          sum = __dadd_rn(sum, static_cast<double>(__ldg(values + k)));
      }
    }
  } else if (!out.long_row) {
    const index_t* cols = a.col_idx + begin;
    const Value* vals = values + begin;
#pragma unroll
    for (int g = 0; g < kTile / kBlock; g += kLoadBatch) {
      if (g * kBlock >= count) break;
      // Unconditional loads (past the end: the last entry again, a cached broadcast) so that
      // all of them are issued before the first is used; only the stores are guarded.
      index_t c[kLoadBatch];
      Value v[kLoadBatch];
#pragma unroll
      for (int u = 0; u < kLoadBatch; ++u) {
        const int k = min(t + (g + u) * kBlock, count - 1);
        c[u] = __ldcs(cols + k);  // streamed once: evict first, keep x in the caches
        v[u] = __ldcs(vals + k);
      }
      if (g == 0) {  // the matrix is loaded while the kernel before finishes; x is not
        kernels::cuda::wait_for_prerequisites();
        kernels::cuda::allow_dependents();
        x.prepare();  // device scalars of the input, written by earlier kernels
      }
      double p[kLoadBatch];
#pragma unroll
      for (int u = 0; u < kLoadBatch; ++u) {
        p[u] = __dmul_rn(static_cast<double>(v[u]), x(c[u]));
      }
#pragma unroll
      for (int u = 0; u < kLoadBatch; ++u) {
        const int k = t + (g + u) * kBlock;
        if (k < count) products[k] = p[u];
      }
    }
    kernels::cuda::wait_for_prerequisites();  // blocks that loaded no entry (returns at once
    kernels::cuda::allow_dependents();        // where it was called)
    x.prepare();
    __syncthreads();
    if (out.mine) {
      const int end = row_end - begin;
#pragma unroll 4
      for (int k = row_begin - begin; k < end; ++k) sum = __dadd_rn(sum, products[k]);
    }
  }
  if (kMode == Mode::diagonal || out.long_row) {  // blocks that skipped the staging loop
    kernels::cuda::wait_for_prerequisites();
    kernels::cuda::allow_dependents();
    x.prepare();
  }
  if constexpr (kMode == Mode::chebyshev) {
    // A long row's residual was written to y by long_row_kernel (an earlier launch).
    if (out.mine) {
      x.finish(out.row, __dsub_rn(b[out.row], sum), y);
    } else if (out.long_row && t == 0) {
      x.finish(out.row, y[out.row], y);
    }
  } else if (out.mine) {
    y[out.row] = kMode == Mode::residual ? __dsub_rn(b[out.row], sum) : sum;
  }
  out.sum = sum;
  return out;
}

/// The thread's terms of the fused inner products for the row block that gave `out` (0 for a
/// thread without a row; the long row's thread 0 reads its y).
template <int kDots, class Input>
__device__ __forceinline__ void dot_terms(const RowOutcome& out, const Input& x, const double* y,
                                          const DotTerms& dots, double (&term)[kDots]) {
  const bool has_term = out.mine || (out.long_row && threadIdx.x == 0);
  const double yi = out.mine ? out.sum : has_term ? y[out.row] : 0.0;
  double own = 0.0;
  if constexpr (Input::kStoresOwn) {
    if (has_term) own = x.own(out.row);
  }
#pragma unroll
  for (int k = 0; k < kDots; ++k) {
    term[k] = 0.0;
    if (has_term) {  // row < num_rows only here
      const double w = dots.input                ? x(out.row)
                       : dots.with[k] == nullptr ? yi
                       : Input::kStoresOwn       ? own
                                                 : __ldg(dots.with[k] + out.row);
      term[k] = __dmul_rn(w, dots.squared[k] ? w : yi);
    }
  }
}

/// The fused dots' grid sum: each block adds `sums` over its threads (block_sum) and publishes
/// them to a.block_partials (one per block, stride gridDim.x); the last block to finish adds the
/// gridDim.x block sums in the order of ordered_sum into result[k] and clears the counter.
/// Every thread of every block calls it.
template <int kDots>
__device__ void grid_dot_sums(double (&sums)[kDots], const CsrView& a, double* result) {
  const index_t blocks = gridDim.x;
  block_sum<kBlock, kDots>(sums);
  if (publish_partials(sums, a.block_partials, blocks, blockIdx.x, a.counters,
                       static_cast<unsigned int>(blocks))) {
#pragma unroll
    for (int k = 0; k < kDots; ++k) {
      const double total = ordered_sum(a.block_partials + k * blocks, blocks);
      if (threadIdx.x == 0) result[k] = total;
    }
    if (threadIdx.x == 0) *a.counters = 0u;
  }
}

/// The row block blockIdx.x (row_block); for product_dot also the block's sums of the fused
/// dots, added by the last block into *result (kInlineFinish) or left for the consumer.
template <int kTile, Mode kMode, class Value, class Input, bool kInlineFinish, int kDots = 1>
__global__ void __launch_bounds__(kBlock, Input::kMinBlocksPerSm)
    row_block_kernel(const CsrView a, const Value* __restrict__ values, Input x, const double* b,
                     double* y, DotTerms dots, double* result) {
  static_assert(kTile % (kLoadBatch * kBlock) == 0, "tile: a multiple of 1024");
  __shared__ double products[kMode == Mode::diagonal ? 1 : kTile];
  const RowOutcome out =
      row_block<kTile, kMode, Value, Input>(a, values, x, b, y, blockIdx.x, products);
  if constexpr (kMode == Mode::product_dot) {
    double term[kDots];
    dot_terms<kDots>(out, x, y, dots, term);
    if constexpr (kInlineFinish) {
      // Few row blocks: the last to finish adds the block sums (one launch per product).
      grid_dot_sums(term, a, result);
    } else {
      // The block sums are added by the consumer: no completion count, no fence, no second
      // barrier in each of the (many, short) row blocks.
      kernels::cuda::block_sum_once<kBlock, kDots>(term);
      if (threadIdx.x == 0) {
        const index_t blocks = a.num_row_blocks;
#pragma unroll
        for (int k = 0; k < kDots; ++k) a.block_partials[k * blocks + blockIdx.x] = term[k];
      }
    }
  }
  (void)dots;
  (void)result;
}

/// Row blocks blockIdx.x, blockIdx.x + gridDim.x, ... in turn (spmv.hpp, strided row blocks),
/// each thread adding its terms of the fused inner products over them in that order; then the
/// block sums, and the last block to finish adds them in the order of ordered_sum. One block
/// sum per block instead of one per row block: at 3D Poisson 200^3 the 31,250 row blocks each
/// held their SM's slot through a block-wide sum after their last load.
template <int kTile, class Value, class Input, int kDots>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)  // one wave (strided_blocks)
    strided_row_block_kernel(const CsrView a, const Value* __restrict__ values, Input x, double* y,
                             DotTerms dots, double* result) {
  __shared__ double products[kTile];
  double total[kDots];
#pragma unroll
  for (int k = 0; k < kDots; ++k) total[k] = 0.0;
#pragma unroll 1
  for (index_t g = blockIdx.x; g < a.num_row_blocks; g += gridDim.x) {
    if (g != blockIdx.x) __syncthreads();  // every row of the previous block has been added
    const RowOutcome out =
        row_block<kTile, Mode::product_dot, Value, Input>(a, values, x, nullptr, y, g, products);
    double term[kDots];
    dot_terms<kDots>(out, x, y, dots, term);
#pragma unroll
    for (int k = 0; k < kDots; ++k) total[k] = __dadd_rn(total[k], term[k]);
  }
  grid_dot_sums(total, a, result);
}

/// Chunk blockIdx.x of a long row: lane t adds the products of entries t, t + 256, ... of the
/// chunk in order, block_sum adds the lanes; the row's last chunk to finish adds the chunk sums
/// (ordered_sum) and writes y (b - sum for the residual). kMode is product, residual or
/// diagonal.
template <Mode kMode, class Value, class Input>
__global__ void __launch_bounds__(kBlock)
    long_row_kernel(const CsrView a, const Value* __restrict__ values, Input x, const double* b,
                    double* y) {
  kernels::cuda::wait_for_prerequisites();
  kernels::cuda::allow_dependents();
  x.prepare();
  const int t = static_cast<int>(threadIdx.x);
  const index_t chunk = static_cast<index_t>(blockIdx.x);
  const index_t slot = __ldg(a.chunk_long_row + chunk);
  const index_t row = __ldg(a.long_rows + slot);
  const index_t first_chunk = __ldg(a.long_row_chunks + slot);
  const index_t num_chunks = __ldg(a.long_row_chunks + slot + 1) - first_chunk;
  const size_type begin =
      __ldg(a.row_ptr + row) + static_cast<size_type>(chunk - first_chunk) * kLongRowChunk;
  const size_type end = std::min<size_type>(__ldg(a.row_ptr + row + 1), begin + kLongRowChunk);

  double sum = 0.0;
  size_type k = begin + t;
  if constexpr (kMode == Mode::diagonal) {
    for (; k < end; k += kBlock) {
      if (__ldg(a.col_idx + k) == row) sum = __dadd_rn(sum, static_cast<double>(__ldg(values + k)));
    }
  } else {
#pragma unroll 1
    for (; k + (kLoadBatch - 1) * kBlock < end; k += kLoadBatch * kBlock) {
      index_t c[kLoadBatch];
      Value v[kLoadBatch];
#pragma unroll
      for (int u = 0; u < kLoadBatch; ++u) {
        c[u] = __ldcs(a.col_idx + k + u * kBlock);
        v[u] = __ldcs(values + k + u * kBlock);
      }
#pragma unroll
      for (int u = 0; u < kLoadBatch; ++u) {
        sum = __dadd_rn(sum, __dmul_rn(static_cast<double>(v[u]), x(c[u])));
      }
    }
    for (; k < end; k += kBlock) {
      const double value = static_cast<double>(__ldcs(values + k));
      sum = __dadd_rn(sum, __dmul_rn(value, x(__ldcs(a.col_idx + k))));
    }
  }
  double lanes[1] = {sum};
  block_sum<kBlock, 1>(lanes);
  unsigned int* counter = a.counters + 1 + slot;
  if (publish_partials(lanes, a.chunk_partials, 0, chunk, counter,
                       static_cast<unsigned int>(num_chunks))) {
    const double total = ordered_sum(a.chunk_partials + first_chunk, num_chunks);
    if (t == 0) {
      y[row] = kMode == Mode::residual ? __dsub_rn(b[row], total) : total;
      *counter = 0u;
    }
  }
}

template <int kTile, Mode kMode, int kDots, class Value, class Input>
void launch_row_blocks(Context& context, const CsrView& a, const Value* values, const Input& x,
                       const double* b, double* y, const DotTerms& dots, double* result) {
  const auto blocks = static_cast<unsigned int>(a.num_row_blocks);
  using kernels::cuda::launch_dependent;
  if constexpr (kMode == Mode::product_dot) {
    if (dots.leave_partials) {  // the consumer adds the block sums (csr_spmv_combination_dot)
      launch_dependent(context, row_block_kernel<kTile, kMode, Value, Input, false, kDots>, blocks,
                       kBlock, "spmv: row blocks", a, values, x, b, y, dots, result);
      return;
    }
    if (a.num_row_blocks <= kLatencyBoundRowBlocks) {
      launch_dependent(context, row_block_kernel<kTile, kMode, Value, Input, true, kDots>, blocks,
                       kBlock, "spmv: row blocks", a, values, x, b, y, dots, result);
      return;
    }
    // Many row blocks: strided (not the plain product: 206.5 us strided against 205.4 at
    // 200^3 on the H200).
    const index_t strided = strided_blocks(a.num_row_blocks, kTile);
    launch_dependent(context, strided_row_block_kernel<kTile, Value, Input, kDots>,
                     static_cast<unsigned int>(strided), kBlock, "spmv: strided row blocks", a,
                     values, x, y, dots, result);
  } else {
    launch_dependent(context, row_block_kernel<kTile, kMode, Value, Input, false, kDots>, blocks,
                     kBlock, "spmv: row blocks", a, values, x, b, y, dots, result);
  }
}

/// Launches the long-row kernel (when the matrix has long rows), then the row-block kernel for
/// a.tile, for the stored value type; does nothing for a matrix without rows.
template <Mode kMode, int kDots, class Value, class Input>
void launch_for(const Backend& backend, const CsrView& a, const Value* values, const Input& x,
                const double* b, double* y, const char* name, const DotTerms& dots,
                double* result) {
  if (a.num_rows == 0) return;
  Context& context = *backend.cuda_context();
  if (a.num_chunks > 0) {
    constexpr Mode kLongMode = kMode == Mode::product_dot ? Mode::product
                               : kMode == Mode::chebyshev ? Mode::residual
                                                          : kMode;
    kernels::cuda::launch_dependent(context, long_row_kernel<kLongMode, Value, Input>,
                                    static_cast<unsigned int>(a.num_chunks), kBlock, name, a,
                                    values, x, b, y);
  }
  switch (a.tile) {
    case 1024:
      launch_row_blocks<1024, kMode, kDots>(context, a, values, x, b, y, dots, result);
      break;
    case 2048:
      launch_row_blocks<2048, kMode, kDots>(context, a, values, x, b, y, dots, result);
      break;
    case 4096:
      launch_row_blocks<4096, kMode, kDots>(context, a, values, x, b, y, dots, result);
      break;
    default:
      throw InvalidInput(std::string(name) + ": tile must be 1024, 2048 or 4096, got " +
                         std::to_string(a.tile));
  }
  check_launch(name);
}

/// launch_for with the view's stored values (double or float).
template <Mode kMode, int kDots = 1, class Input = PlainInput>
void launch(const Backend& backend, const CsrView& a, const Input& x, const double* b, double* y,
            const char* name, const DotTerms& dots = {}, double* result = nullptr) {
  visit_values(a, [&](const auto* values) {
    launch_for<kMode, kDots>(backend, a, values, x, b, y, name, dots, result);
  });
}

}  // namespace

void csr_spmv(const Backend& backend, const CsrView& a, Span<const double> x, Span<double> y) {
  launch<Mode::product>(backend, a, PlainInput{x.data()}, nullptr, y.data(), "spmv::csr_spmv");
}

void csr_residual(const Backend& backend, const CsrView& a, Span<const double> b,
                  Span<const double> x, Span<double> r) {
  launch<Mode::residual>(backend, a, PlainInput{x.data()}, b.data(), r.data(),
                         "spmv::csr_residual");
}

void csr_chebyshev_step(const Backend& backend, const CsrView& a, Span<const double> b,
                        Span<const double> x, Span<const double> dinv, double alpha, double beta,
                        Span<double> d, Span<double> y) {
  launch<Mode::chebyshev>(backend, a, ChebyshevInput{x.data(), dinv.data(), d.data(), alpha, beta},
                          b.data(), y.data(), "spmv::csr_chebyshev_step");
}

void csr_chebyshev_first_steps(const Backend& backend, const CsrView& a, Span<const double> b,
                               Span<const double> dinv, double alpha0, double alpha, double beta,
                               Span<double> d, Span<double> y) {
  launch<Mode::chebyshev>(
      backend, a, ChebyshevFromZeroInput{b.data(), dinv.data(), d.data(), alpha0, alpha, beta},
      b.data(), y.data(), "spmv::csr_chebyshev_first_steps");
}

void csr_spmv_dot(const Backend& backend, const CsrView& a, Span<const double> x, Span<double> y,
                  double* result) {
  if (a.num_rows == 0) {
    KRYFLOW_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(double), backend.cuda_context()->stream));
    return;
  }
  launch<Mode::product_dot>(backend, a, PlainInput{x.data()}, nullptr, y.data(),
                            "spmv::csr_spmv_dot", DotTerms{}, result);
}

void csr_spmv_dots(const Backend& backend, const CsrView& a, Span<const double> x, Span<double> y,
                   const ProductDots& dots, double* result) {
  if (a.num_rows == 0) {
    KRYFLOW_CUDA_CHECK(
        cudaMemsetAsync(result, 0, sizeof(double) * dots.count, backend.cuda_context()->stream));
    return;
  }
  DotTerms terms;
  terms.input = false;
  for (int k = 0; k < dots.count; ++k) terms.with[k] = dots.with[k];
  if (dots.count == 1) {
    launch<Mode::product_dot, 1>(backend, a, PlainInput{x.data()}, nullptr, y.data(),
                                 "spmv::csr_spmv_dots", terms, result);
  } else {
    launch<Mode::product_dot, 2>(backend, a, PlainInput{x.data()}, nullptr, y.data(),
                                 "spmv::csr_spmv_dots", terms, result);
  }
}

int csr_spmv_shifted_dots(const Backend& backend, const CsrView& a, const ShiftedStep& v,
                          Span<double> y, double* result, bool leave_partials) {
  if (a.num_rows == 0) {
    KRYFLOW_CUDA_CHECK(
        cudaMemsetAsync(result, 0, 3 * sizeof(double), backend.cuda_context()->stream));
    return 0;
  }
  DotTerms terms;
  terms.input = false;
  terms.with[0] = v.s;  // s·s
  terms.squared[0] = true;
  terms.with[2] = v.s;  // y·s
  terms.leave_partials = leave_partials && a.num_row_blocks <= kLatencyBoundRowBlocks;
  launch<Mode::product_dot, 3>(backend, a, ShiftedInput{v}, nullptr, y.data(),
                               "spmv::csr_spmv_shifted_dots", terms, result);
  return terms.leave_partials ? static_cast<int>(a.num_row_blocks) : 0;
}

int csr_spmv_combination_dot(const Backend& backend, const CsrView& a, const Combination& v,
                             Span<double> y, double* result, bool leave_partials) {
  if (a.num_rows == 0) {
    KRYFLOW_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(double), backend.cuda_context()->stream));
    return 0;
  }
  if (leave_partials && a.num_row_blocks <= kLatencyBoundRowBlocks) {
    DotTerms partials;
    partials.leave_partials = true;
    launch<Mode::product_dot>(backend, a, CombinationInput{v}, nullptr, y.data(),
                              "spmv::csr_spmv_combination_dot", partials, nullptr);
    return static_cast<int>(a.num_row_blocks);
  }
  launch<Mode::product_dot>(backend, a, CombinationInput{v}, nullptr, y.data(),
                            "spmv::csr_spmv_combination_dot", DotTerms{}, result);
  return 0;
}

void csr_diagonal(const Backend& backend, const CsrView& a, Span<double> d) {
  launch<Mode::diagonal>(backend, a, PlainInput{nullptr}, nullptr, d.data(), "spmv::csr_diagonal");
}

}  // namespace kryflow::kernels::spmv::cuda
