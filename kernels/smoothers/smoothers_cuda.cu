// CUDA smoother kernels: l1 row norms and the hybrid diagonal with one thread per row (double or
// float values) (the row's sum in the reference's order, hence the same bits). Gauss-Seidel is
// sequential by definition and has no cuda kernel: it throws NotSupported naming the parallel
// smoothers. Hybrid Gauss-Seidel copies x to x_start on the stream, then sweeps with one thread
// per block of rows, each walking its block's rows in order (kernels/smoothers/hybrid_rows.hpp):
// correct and deterministic, not tuned (a thread's rows are not coalesced with its neighbours').
#include <cuda_runtime.h>

#include <math.h>

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

}  // namespace kryflow::kernels::smoothers::cuda
