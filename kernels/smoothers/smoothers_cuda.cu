// CUDA smoother kernels: l1 row norms with one thread per row (double or float values) (the row's
// sum in the reference's order, hence the same bits). Gauss-Seidel is sequential by definition and
// has no cuda kernel: it throws NotSupported naming the parallel smoothers.
#include <cuda_runtime.h>

#include <math.h>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/device_scratch.cuh"
#include "kernels/smoothers/smoothers.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::smoothers::cuda {
namespace {

constexpr int kBlock = 256;

/// d_i = sum_j |a_ij| in column order; work: the row's entries.
template <class Value>
__global__ void l1_row_norms_kernel(PatternView a, const Value* values, double* d) {
  for (long long i = blockIdx.x * static_cast<long long>(kBlock) + threadIdx.x; i < a.num_rows;
       i += static_cast<long long>(gridDim.x) * kBlock) {
    double sum = 0.0;
    for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      sum += fabs(static_cast<double>(values[k]));
    }
    d[i] = sum;
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
      "smoothers jacobi, l1_jacobi or chebyshev");
}

}  // namespace kryflow::kernels::smoothers::cuda
