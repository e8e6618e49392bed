// CUDA smoother kernels: l1 row norms and the hybrid diagonal with one thread per row (double or
// float values) (the row's sum in the reference's order, hence the same bits). Gauss-Seidel is
// sequential by definition and has no cuda kernel: it throws NotSupported naming the parallel
// smoothers. Hybrid Gauss-Seidel copies x to x_start on the stream, then sweeps with one thread
// per block of rows, each walking its block's rows in order (kernels/smoothers/hybrid_rows.hpp):
// correct and deterministic, not tuned (a thread's rows are not coalesced with its neighbours').
#include <cuda_runtime.h>

#include <math.h>

#include <type_traits>

#include "kernels/backend/cooperative.cuh"
#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/device_scratch.cuh"
#include "kernels/smoothers/hybrid_rows.hpp"
#include "kernels/smoothers/smoothers.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::smoothers::cuda {
namespace {

constexpr int kBlock = 256;

/// d_i = s sum_j |a_ij| in stored order (hybrid::l1_row_norm); work: the row's entries.
template <class Value>
__global__ void l1_row_norms_kernel(PatternView a, const Value* values, double* d) {
  for (long long i = blockIdx.x * static_cast<long long>(kBlock) + threadIdx.x; i < a.num_rows;
       i += static_cast<long long>(gridDim.x) * kBlock) {
    d[i] = hybrid::l1_row_norm(a, values, static_cast<index_t>(i));
  }
}

/// d_i of hybrid_diagonal for blocks of block_rows rows; work: the row's entries.
template <class Value>
__global__ void hybrid_diagonal_kernel(PatternView a, const Value* values, index_t block_rows,
                                       bool l1, double* d) {
  for (long long i = blockIdx.x * static_cast<long long>(kBlock) + threadIdx.x; i < a.num_rows;
       i += static_cast<long long>(gridDim.x) * kBlock) {
    const auto row = static_cast<index_t>(i);
    d[i] = hybrid::diagonal(a, values, row, hybrid::block_of_row(row, a.num_rows, block_rows), l1);
  }
}

/// One thread per block of rows sweeps them in order; work: the block's entries.
template <class Value>
__global__ void hybrid_gauss_seidel_kernel(PatternView a, const Value* values, index_t block_rows,
                                           long long blocks, bool l1,
                                           const double* inverse_diagonal, const double* b,
                                           double* x, const double* x_start, bool forward) {
  for (long long g = blockIdx.x * static_cast<long long>(kBlock) + threadIdx.x; g < blocks;
       g += static_cast<long long>(gridDim.x) * kBlock) {
    hybrid::sweep(a, values, hybrid::block(g, a.num_rows, block_rows), l1, inverse_diagonal, b, x,
                  x_start, forward);
  }
}

constexpr int kLanczosBlock = 1024;
constexpr int kWarpSize = 32;

/// cg_lanczos in one cooperative launch, grid-stride: per step the product q = A p_j by groups
/// of `lanes` threads per row (p_j = z_j + beta p_(j-1) formed for the row and its columns as
/// they are read, into the other p buffer) with p_j.q, then r -= alpha q with r.z by a thread
/// per row, each followed by a grid barrier and the sum of the blocks' partials. The launches of
/// the unfused steps (a product, an update and a direction kernel each) bound the setup of
/// small levels. A thread per row took 25 us per step on a Galerkin level of long rows (5
/// blocks; H200). Blocks of 1,024 threads: a grid barrier's cost grows with the blocks (the
/// finest OpenFOAM level, 23,325 rows: 88 us for ten steps in 365 blocks of 256 threads).
template <class Value>
__global__ void __launch_bounds__(kLanczosBlock)
    cg_lanczos_kernel(PatternView a, const Value* values, const double* dinv, int steps, int lanes,
                      double* r, double* p, double* p_next, double* q, double* partials,
                      double* scalars) {
  using GridSum = kernels::cuda::GridSum<kLanczosBlock>;
  __shared__ typename GridSum::Storage storage;
  GridSum grid_sum(storage, partials);
  const long long n = a.num_rows;
  const auto [first, stride] = kernels::cuda::grid_stride<kLanczosBlock>();
  // The row's group: `lanes` consecutive threads (a power of two, at most a warp).
  const int lane = static_cast<int>(threadIdx.x) % lanes;
  const int warp_lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const unsigned int group_mask =
      lanes == kWarpSize ? 0xffffffffu : ((1u << lanes) - 1u) << (warp_lane / lanes * lanes);
  double local = 0.0;
  for (long long i = first; i < n; i += stride) {
    const double z = dinv[i] * r[i];
    p[i] = z;
    local += r[i] * z;
  }
  double rz = grid_sum(local);
  const bool writer = blockIdx.x == 0 && threadIdx.x == 0;
  if (writer) scalars[2] = rz;
  double beta = 0.0;
  for (int j = 0; j < steps && rz != 0.0 && isfinite(rz); ++j) {
    const bool first_step = j == 0;
    const auto direction = [&](index_t k) {
      return first_step ? p[k] : dinv[k] * r[k] + beta * p[k];
    };
    local = 0.0;
    for (long long i = first / lanes; i < n; i += stride / lanes) {
      double sum = 0.0;
      for (index_t k = a.row_ptr[i] + lane; k < a.row_ptr[i + 1]; k += lanes) {
        sum += static_cast<double>(values[k]) * direction(a.col_idx[k]);
      }
      for (int offset = lanes / 2; offset > 0; offset /= 2) {
        sum += __shfl_xor_sync(group_mask, sum, offset, lanes);
      }
      if (lane == 0) {
        q[i] = sum;
        const double p_i = direction(static_cast<index_t>(i));
        p_next[i] = p_i;
        local += p_i * sum;
      }
    }
    const double pq = grid_sum(local);
    if (writer) scalars[6 + j] = pq;
    if (!(pq != 0.0) || !isfinite(pq)) return;
    const double alpha = rz / pq;
    local = 0.0;
    for (long long i = first; i < n; i += stride) {
      const double r_i = r[i] - alpha * q[i];
      r[i] = r_i;
      local += r_i * (dinv[i] * r_i);
    }
    const double rz_next = grid_sum(local);
    if (writer) scalars[6 + steps + j] = rz_next;
    beta = rz_next / rz;
    rz = rz_next;
    double* swap = p;
    p = p_next;
    p_next = swap;
  }
}

}  // namespace

void l1_row_norms(const Backend& backend, const MatrixView& a, Span<double> d) {
  if (a.pattern.num_rows == 0) return;
  kernels::cuda::Context& context = *backend.cuda_context();
  with_values(a, [&](const auto* values) {
    l1_row_norms_kernel<<<kernels::cuda::blocks_for(a.pattern.num_rows, kBlock), kBlock, 0,
                          context.stream>>>(a.pattern, values, d.data());
  });
  kernels::cuda::check_launch("smoothers::l1_row_norms");
}

void gauss_seidel(const Backend&, const MatrixView&, Span<const double>, Span<const double>,
                  Span<double>, SweepDirection) {
  throw NotSupported(
      "smoothers::gauss_seidel is sequential and has no cuda kernel: on cuda use the parallel "
      "smoothers jacobi, l1_jacobi, chebyshev or hybrid_gauss_seidel");
}

void hybrid_diagonal(const Backend& backend, const MatrixView& a, index_t block_rows, bool l1,
                     Span<double> d) {
  if (a.pattern.num_rows == 0) return;
  kernels::cuda::Context& context = *backend.cuda_context();
  with_values(a, [&](const auto* values) {
    hybrid_diagonal_kernel<<<kernels::cuda::blocks_for(a.pattern.num_rows, kBlock), kBlock, 0,
                             context.stream>>>(a.pattern, values, block_rows, l1, d.data());
  });
  kernels::cuda::check_launch("smoothers::hybrid_diagonal");
}

void hybrid_gauss_seidel(const Backend& backend, const MatrixView& a, index_t block_rows, bool l1,
                         Span<const double> inverse_diagonal, Span<const double> b, Span<double> x,
                         Span<double> x_start, SweepDirection direction) {
  const index_t n = a.pattern.num_rows;
  if (n == 0) return;
  kernels::cuda::Context& context = *backend.cuda_context();
  KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(x_start.data(), x.data(), x.size_bytes(),
                                     cudaMemcpyDeviceToDevice, context.stream));
  const long long blocks = hybrid::block_count(n, block_rows);
  with_values(a, [&](const auto* values) {
    hybrid_gauss_seidel_kernel<<<kernels::cuda::blocks_for(blocks, kBlock), kBlock, 0,
                                 context.stream>>>(
        a.pattern, values, block_rows, blocks, l1, inverse_diagonal.data(), b.data(), x.data(),
        x_start.data(), direction == SweepDirection::forward);
  });
  kernels::cuda::check_launch("smoothers::hybrid_gauss_seidel");
}

void cg_lanczos(const Backend& backend, const MatrixView& a, std::int64_t entries,
                Span<const double> dinv, int steps, Span<double> r, Span<double> p,
                Span<double> p_next, Span<double> q, double* scalars) {
  const index_t n = a.pattern.num_rows;
  if (n == 0) return;
  kernels::cuda::Context& context = *backend.cuda_context();
  with_values(a, [&](const auto* values) {
    using Value = std::remove_cv_t<std::remove_pointer_t<decltype(values)>>;
    const auto kernel = cg_lanczos_kernel<Value>;
    // Lanes per row: the smallest power of two of at least half the row's mean entries, at most
    // a warp.
    int lanes = 1;
    while (lanes < kWarpSize && 2 * lanes * static_cast<std::int64_t>(n) < entries) lanes *= 2;
    const unsigned int blocks = kernels::cuda::cooperative_blocks(
        context, kernel, kLanczosBlock, static_cast<long long>(n) * lanes);
    kernels::cuda::DeviceScratch partials(context, 2 * sizeof(double) * blocks);
    kernels::cuda::launch_cooperative(context, kernel, blocks, kLanczosBlock,
                                      "smoothers::cg_lanczos", a.pattern, values, dinv.data(),
                                      steps, lanes, r.data(), p.data(), p_next.data(), q.data(),
                                      partials.as<double>(), scalars);
  });
}

}  // namespace kryflow::kernels::smoothers::cuda
