// CUDA spectral-element transfers: one block per element for the interpolation (the weighted
// gather, then the three contractions through shared memory, each output entry's sum in the
// reference's order), one thread per global point for the assembly.
#include <cuda_runtime.h>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"
#include "kernels/sem/transfer.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::sem::cuda {
namespace {

constexpr int kThreads = 128;

__global__ void __launch_bounds__(kThreads)
    interpolate_kernel(const TransferSideView in, int no, const double* __restrict__ J,
                       const double* __restrict__ x, double* __restrict__ y_local) {
  extern __shared__ double shared[];
  const int ni = in.n;
  const int ni3 = ni * ni * ni;
  double* j_s = shared;            // no x ni
  double* u = j_s + no * ni;       // ni^3
  double* t1 = u + ni3;            // ni x ni x no
  double* t2 = t1 + ni * ni * no;  // ni x no x no
  const std::int64_t e = blockIdx.x;
  for (int q = threadIdx.x; q < no * ni; q += kThreads) j_s[q] = J[q];
  for (int q = threadIdx.x; q < ni3; q += kThreads) {
    const index_t g = __ldg(in.local_to_global + e * ni3 + q);
    u[q] = __dmul_rn(__ldg(in.weight + g), __ldg(x + g));
  }
  __syncthreads();
  for (int q = threadIdx.x; q < ni * ni * no; q += kThreads) {
    const int a = q % no;
    const int jk = q / no;  // k * ni + j
    double sum = 0.0;
    for (int i = 0; i < ni; ++i) sum = __dadd_rn(sum, __dmul_rn(j_s[a * ni + i], u[jk * ni + i]));
    t1[q] = sum;
  }
  __syncthreads();
  for (int q = threadIdx.x; q < ni * no * no; q += kThreads) {
    const int a = q % no;
    const int b = (q / no) % no;
    const int k = q / (no * no);
    double sum = 0.0;
    for (int j = 0; j < ni; ++j) {
      sum = __dadd_rn(sum, __dmul_rn(j_s[b * ni + j], t1[(k * ni + j) * no + a]));
    }
    t2[q] = sum;
  }
  __syncthreads();
  const int no3 = no * no * no;
  double* y = y_local + e * no3;
  for (int q = threadIdx.x; q < no3; q += kThreads) {
    const int ab = q % (no * no);  // b * no + a
    const int c = q / (no * no);
    double sum = 0.0;
    for (int k = 0; k < ni; ++k) {
      sum = __dadd_rn(sum, __dmul_rn(j_s[c * ni + k], t2[k * no * no + ab]));
    }
    y[q] = sum;
  }
}

__global__ void __launch_bounds__(256)
    assemble_kernel(const TransferSideView out, const double* __restrict__ y_local, double beta,
                    double* __restrict__ y) {
  const std::int64_t g = static_cast<std::int64_t>(blockIdx.x) * 256 + threadIdx.x;
  if (g >= out.num_global) return;
  double sum = 0.0;
  const std::int64_t end = __ldg(out.global_offsets + g + 1);
  for (std::int64_t q = __ldg(out.global_offsets + g); q < end; ++q) {
    sum = __dadd_rn(sum, __ldg(y_local + __ldg(out.global_locals + q)));
  }
  const double value = __dmul_rn(__ldg(out.weight + g), sum);
  y[g] = beta == 0.0 ? value : __dadd_rn(__dmul_rn(beta, y[g]), value);
}

}  // namespace

void transfer_interpolate(const Backend& backend, const TransferSideView& in, int n_out,
                          const double* matrix, Span<const double> x, Span<double> y_local) {
  if (in.num_elements == 0) return;
  const int ni = in.n;
  const std::size_t bytes =
      sizeof(double) *
      static_cast<std::size_t>(n_out * ni + ni * ni * ni + ni * ni * n_out + ni * n_out * n_out);
  if (bytes > 48 * 1024) {
    KRYFLOW_CUDA_CHECK(cudaFuncSetAttribute(
        interpolate_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  }
  if (in.num_elements > 0x7fffffffLL) {
    throw NotSupported("sem::transfer_interpolate: more than 2^31 - 1 elements");
  }
  interpolate_kernel<<<static_cast<unsigned int>(in.num_elements), kThreads, bytes,
                       backend.cuda_context()->stream>>>(in, n_out, matrix, x.data(),
                                                         y_local.data());
  kernels::cuda::check_launch("sem::transfer_interpolate");
}

void transfer_assemble(const Backend& backend, const TransferSideView& out,
                       Span<const double> y_local, double beta, Span<double> y) {
  if (out.num_global == 0) return;
  const auto blocks = static_cast<unsigned int>((out.num_global + 255) / 256);
  assemble_kernel<<<blocks, 256, 0, backend.cuda_context()->stream>>>(out, y_local.data(), beta,
                                                                      y.data());
  kernels::cuda::check_launch("sem::transfer_assemble");
}

}  // namespace kryflow::kernels::sem::cuda
