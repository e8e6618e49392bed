// CUDA scaled CSR product: one thread per row, the row summed in stored order.
#include <cuda_runtime.h>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/spmv_axpby/spmv_axpby.hpp"

namespace kryflow::kernels::spmv_axpby::cuda {
namespace {

constexpr int kBlock = 256;

template <class V>
__global__ void csr_spmv_axpby_kernel(index_t num_rows, const index_t* row_ptr,
                                      const index_t* col_idx, const V* values, double alpha,
                                      const double* x, double beta, double* y) {
  const index_t i = static_cast<index_t>(blockIdx.x) * kBlock + static_cast<index_t>(threadIdx.x);
  if (i >= num_rows) return;
  double sum = 0.0;
  for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
    sum = sum + static_cast<double>(values[k]) * x[col_idx[k]];
  }
  y[i] = beta == 0.0 ? alpha * sum : alpha * sum + beta * y[i];
}

}  // namespace

void csr_spmv_axpby(const Backend& backend, const spmv::CsrView& a, double alpha,
                    Span<const double> x, double beta, Span<double> y) {
  if (a.num_rows == 0) return;
  const unsigned int blocks = static_cast<unsigned int>((a.num_rows + kBlock - 1) / kBlock);
  cudaStream_t stream = backend.cuda_context()->stream;
  spmv::visit_values(a, [&](const auto* values) {
    csr_spmv_axpby_kernel<<<blocks, kBlock, 0, stream>>>(a.num_rows, a.row_ptr, a.col_idx, values,
                                                         alpha, x.data(), beta, y.data());
  });
  kernels::cuda::check_launch("csr_spmv_axpby");
}

}  // namespace kryflow::kernels::spmv_axpby::cuda
