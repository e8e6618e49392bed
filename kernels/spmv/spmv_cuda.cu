// CUDA CSR kernels: a sub-warp of kLanes lanes per row (kLanes = 1: a thread per row).
//
// Lane j of a row's sub-warp handles entries begin + j, begin + j + kLanes, ...: with 8 lanes a
// warp covers 4 consecutive rows, whose entries are contiguous, so value and index loads are
// coalesced; x is gathered through the read-only cache. The lanes' partial sums are added by a
// fixed xor-shuffle tree. Blocks of 256 threads walk the rows with a grid-stride loop; the fused
// x·y reduction runs on min(ceil(rows / rows_per_block), kMaxReductionBlocks) blocks, a fixed
// function of the matrix, and is deterministic (kernels/backend/reduction.cuh).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/reduction.cuh"
#include "kernels/spmv/spmv.hpp"

namespace kryflow::kernels::spmv::cuda {
namespace {

using kernels::cuda::check_launch;
using kernels::cuda::Context;
using kernels::cuda::kMaxReductionBlocks;
using size_type = long long;

constexpr int kBlock = 256;
/// Resident blocks per SM the kernels are compiled for: 8 x 256 threads fill an sm_90 SM
/// (2048 threads), which caps registers at 32 per thread. Memory-bound kernels need the
/// occupancy for enough loads in flight.
constexpr int kMinBlocksPerSm = 8;
/// Grid cap of the kernels without a reduction; the grid-stride loop covers larger matrices.
constexpr size_type kMaxBlocks = size_type{1} << 30;

enum class Mode {
  product,      // y = A x
  residual,     // y = b - A x
  product_dot,  // y = A x, returns x·y
  diagonal,     // y_i = sum of the stored a_ii
};

/// The sum of the lane's share of row entries [begin, end): a_ik x_k (or the diagonal entries).
template <int kLanes, Mode kMode>
__device__ __forceinline__ double lane_row_sum(size_type row, size_type begin, size_type end,
                                               int lane, const index_t* col_idx,
                                               const double* values, const double* x) {
  double sum = 0.0;
  size_type k = begin + lane;
  if constexpr (kMode == Mode::diagonal) {
    for (; k < end; k += kLanes) {
      if (__ldg(col_idx + k) == row) sum += __ldg(values + k);
    }
  } else {
    // Long rows: four entries per lane per step, so several gathers are in flight at once.
#pragma unroll 1
    for (; k + 3 * kLanes < end; k += 4 * kLanes) {
      const index_t c0 = __ldg(col_idx + k);
      const index_t c1 = __ldg(col_idx + k + kLanes);
      const index_t c2 = __ldg(col_idx + k + 2 * kLanes);
      const index_t c3 = __ldg(col_idx + k + 3 * kLanes);
      const double v0 = __ldg(values + k);
      const double v1 = __ldg(values + k + kLanes);
      const double v2 = __ldg(values + k + 2 * kLanes);
      const double v3 = __ldg(values + k + 3 * kLanes);
      const double x0 = __ldg(x + c0);
      const double x1 = __ldg(x + c1);
      const double x2 = __ldg(x + c2);
      const double x3 = __ldg(x + c3);
      sum += v0 * x0;
      sum += v1 * x1;
      sum += v2 * x2;
      sum += v3 * x3;
    }
#pragma unroll 1
    for (; k < end; k += kLanes) sum += __ldg(values + k) * __ldg(x + __ldg(col_idx + k));
  }
  return sum;
}

/// One kernel for the four modes. `b` is read only for the residual; `partials`, `counter` and
/// `result` are used only for product_dot.
template <int kLanes, Mode kMode>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
    csr_kernel(index_t num_rows, const index_t* __restrict__ row_ptr,
               const index_t* __restrict__ col_idx, const double* __restrict__ values,
               const double* __restrict__ x, const double* b, double* y, double* partials,
               unsigned int* counter, double* result) {
  static_assert(kLanes >= 1 && kLanes <= 32 && (kLanes & (kLanes - 1)) == 0,
                "lanes per row: a power of two up to 32");
  constexpr int kRowsPerBlock = kBlock / kLanes;
  const int lane = static_cast<int>(threadIdx.x) % kLanes;
  const int row_in_block = static_cast<int>(threadIdx.x) / kLanes;
  const size_type stride = static_cast<size_type>(gridDim.x) * kRowsPerBlock;
  double dot = 0.0;
  // row0 is uniform over the block, so every lane takes part in every shuffle below.
  for (size_type row0 = static_cast<size_type>(blockIdx.x) * kRowsPerBlock; row0 < num_rows;
       row0 += stride) {
    const size_type row = row0 + row_in_block;
    double sum = 0.0;
    if (row < num_rows) {
      const size_type begin = __ldg(row_ptr + row);
      const size_type end = __ldg(row_ptr + row + 1);
      sum = lane_row_sum<kLanes, kMode>(row, begin, end, lane, col_idx, values, x);
    }
    if constexpr (kLanes > 1) {
      for (int offset = kLanes / 2; offset > 0; offset /= 2) {
        sum += __shfl_xor_sync(0xffffffffu, sum, offset, kLanes);
      }
    }
    if (lane == 0 && row < num_rows) {
      if constexpr (kMode == Mode::residual) sum = b[row] - sum;
      y[row] = sum;
      if constexpr (kMode == Mode::product_dot) dot += __ldg(x + row) * sum;
    }
  }
  if constexpr (kMode == Mode::product_dot) {
    double sums[1] = {dot};
    kernels::cuda::grid_sum<kBlock, 1>(sums, partials, counter, result);
  }
}

template <int kLanes, Mode kMode>
void launch_lanes(Context& context, const CsrView& a, const double* x, const double* b, double* y) {
  constexpr int kRowsPerBlock = kBlock / kLanes;
  const size_type needed = (static_cast<size_type>(a.num_rows) + kRowsPerBlock - 1) / kRowsPerBlock;
  const size_type cap = kMode == Mode::product_dot ? size_type{kMaxReductionBlocks} : kMaxBlocks;
  const auto blocks = static_cast<unsigned int>(std::min(needed, cap));
  csr_kernel<kLanes, kMode><<<blocks, kBlock, 0, context.stream>>>(
      a.num_rows, a.row_ptr, a.col_idx, a.values, x, b, y, context.reduction_partials,
      context.reduction_counter, context.host_results_on_device);
}

/// Launches the kernel for a.threads_per_row; does nothing for a matrix without rows.
template <Mode kMode>
void launch(const Backend& backend, const CsrView& a, const double* x, const double* b, double* y,
            const char* name) {
  if (a.num_rows == 0) return;
  Context& context = *backend.cuda_context();
  switch (a.threads_per_row) {
    case 1:
      launch_lanes<1, kMode>(context, a, x, b, y);
      break;
    case 2:
      launch_lanes<2, kMode>(context, a, x, b, y);
      break;
    case 4:
      launch_lanes<4, kMode>(context, a, x, b, y);
      break;
    case 8:
      launch_lanes<8, kMode>(context, a, x, b, y);
      break;
    case 16:
      launch_lanes<16, kMode>(context, a, x, b, y);
      break;
    case 32:
      launch_lanes<32, kMode>(context, a, x, b, y);
      break;
    default:
      throw InvalidInput(std::string(name) +
                         ": threads_per_row must be 1, 2, 4, 8, 16 or 32, got " +
                         std::to_string(a.threads_per_row));
  }
  check_launch(name);
}

}  // namespace

void csr_spmv(const Backend& backend, const CsrView& a, Span<const double> x, Span<double> y) {
  launch<Mode::product>(backend, a, x.data(), nullptr, y.data(), "spmv::csr_spmv");
}

void csr_residual(const Backend& backend, const CsrView& a, Span<const double> b,
                  Span<const double> x, Span<double> r) {
  launch<Mode::residual>(backend, a, x.data(), b.data(), r.data(), "spmv::csr_residual");
}

double csr_spmv_dot(const Backend& backend, const CsrView& a, Span<const double> x,
                    Span<double> y) {
  if (a.num_rows == 0) return 0.0;
  launch<Mode::product_dot>(backend, a, x.data(), nullptr, y.data(), "spmv::csr_spmv_dot");
  Context& context = *backend.cuda_context();
  KRYFLOW_CUDA_CHECK(cudaStreamSynchronize(context.stream));
  return context.host_results[0];
}

void csr_diagonal(const Backend& backend, const CsrView& a, Span<double> d) {
  launch<Mode::diagonal>(backend, a, nullptr, nullptr, d.data(), "spmv::csr_diagonal");
}

}  // namespace kryflow::kernels::spmv::cuda
