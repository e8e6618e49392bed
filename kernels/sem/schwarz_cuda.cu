// CUDA spectral-element Schwarz local solves: one block per element, its box, eigenvectors and
// eigenvalues in shared memory, each contraction a loop of the block's threads over the box's
// entries (every entry's sum in the reference's order, with fused multiply-adds), in double or
// float.
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"
#include "kernels/sem/schwarz.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::sem::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T, int N>
__global__ void __launch_bounds__(kThreads)
    fdm_kernel(const SchwarzView v, const T* __restrict__ eigenvectors,
               const T* __restrict__ eigenvalues, const double* __restrict__ r,
               double* __restrict__ y_local) {
  extern __shared__ double shared_storage[];
  T* shared = reinterpret_cast<T*>(shared_storage);
  constexpr int n = N - 2;
  constexpr int N2 = N * N;
  constexpr int N3 = N2 * N;
  T* S = shared;           // 3 x N x N: S_r, S_s, S_t
  T* lambda = S + 3 * N2;  // 3 x N
  T* a = lambda + 3 * N;   // N^3
  T* b = a + N3;           // N^3
  const std::int64_t e = blockIdx.x;
  for (int q = threadIdx.x; q < 3 * N2; q += kThreads) S[q] = __ldg(eigenvectors + e * 3 * N2 + q);
  for (int q = threadIdx.x; q < 3 * N; q += kThreads)
    lambda[q] = __ldg(eigenvalues + e * 3 * N + q);
  const index_t* map = v.box_to_global + e * N3;
  for (int q = threadIdx.x; q < N3; q += kThreads) {
    const index_t g = __ldg(map + q);
    a[q] = g >= 0 ? static_cast<T>(__ldg(r + g)) : T(0);
  }
  __syncthreads();
  const T* Sr = S;
  const T* Ss = S + N2;
  const T* St = S + 2 * N2;
  // Forward, r: b[m, j, k] = sum_i S_r[i, m] a[i, j, k].
  for (int q = threadIdx.x; q < N3; q += kThreads) {
    const int m = q % N;
    const int jk = q / N;
    T sum = 0;
    for (int i = 0; i < N; ++i) sum = fma(Sr[i * N + m], a[jk * N + i], sum);
    b[q] = sum;
  }
  __syncthreads();
  // s: a[m, l, k] = sum_j S_s[j, l] b[m, j, k].
  for (int q = threadIdx.x; q < N3; q += kThreads) {
    const int m = q % N;
    const int l = (q / N) % N;
    const int k = q / N2;
    T sum = 0;
    for (int j = 0; j < N; ++j) {
      sum = fma(Ss[j * N + l], b[(k * N + j) * N + m], sum);
    }
    a[q] = sum;
  }
  __syncthreads();
  // t and the eigenvalues: b[m, l, o] = (sum_k S_t[k, o] a[m, l, k]) / (lambda sum).
  for (int q = threadIdx.x; q < N3; q += kThreads) {
    const int ml = q % N2;
    const int o = q / N2;
    T sum = 0;
    for (int k = 0; k < N; ++k) sum = fma(St[k * N + o], a[k * N2 + ml], sum);
    const T total = lambda[ml % N] + lambda[N + ml / N] + lambda[2 * N + o];
    b[q] = total > T(0) ? sum * (T(1) / total) : T(0);
  }
  __syncthreads();
  // Backward, r: a[i, l, o] = sum_m S_r[i, m] b[m, l, o].
  for (int q = threadIdx.x; q < N3; q += kThreads) {
    const int i = q % N;
    const int lo = q / N;
    T sum = 0;
    for (int m = 0; m < N; ++m) sum = fma(Sr[i * N + m], b[lo * N + m], sum);
    a[q] = sum;
  }
  __syncthreads();
  // s: b[i, j, o] = sum_l S_s[j, l] a[i, l, o].
  for (int q = threadIdx.x; q < N3; q += kThreads) {
    const int i = q % N;
    const int j = (q / N) % N;
    const int o = q / N2;
    T sum = 0;
    for (int l = 0; l < N; ++l) {
      sum = fma(Ss[j * N + l], a[(o * N + l) * N + i], sum);
    }
    b[q] = sum;
  }
  __syncthreads();
  // t and the write: y[i, j, k] = sum_o S_t[k, o] b[i, j, o].
  if (v.restricted) {
    const int n2 = n * n;
    const int n3 = n2 * n;
    double* y = y_local + e * n3;
    for (int q = threadIdx.x; q < n3; q += kThreads) {
      const int i = q % n + 1;
      const int j = (q / n) % n + 1;
      const int k = q / n2 + 1;
      T sum = 0;
      for (int o = 0; o < N; ++o) {
        sum = fma(St[k * N + o], b[(o * N + j) * N + i], sum);
      }
      y[q] = static_cast<double>(sum);
    }
  } else {
    double* y = y_local + e * N3;
    for (int q = threadIdx.x; q < N3; q += kThreads) {
      const int ij = q % N2;
      const int k = q / N2;
      T sum = 0;
      for (int o = 0; o < N; ++o) sum = fma(St[k * N + o], b[o * N2 + ij], sum);
      y[q] = static_cast<double>(sum);
    }
  }
}

__global__ void __launch_bounds__(256)
    assemble_kernel(const TransferSideView out, const double* __restrict__ y_local,
                    const double* __restrict__ r, double* __restrict__ z) {
  const std::int64_t g = static_cast<std::int64_t>(blockIdx.x) * 256 + threadIdx.x;
  if (g >= out.num_global) return;
  const double w = __ldg(out.weight + g);
  if (w == 0.0) {
    z[g] = __ldg(r + g);
    return;
  }
  double sum = 0.0;
  const std::int64_t end = __ldg(out.global_offsets + g + 1);
  for (std::int64_t q = __ldg(out.global_offsets + g); q < end; ++q) {
    sum = __dadd_rn(sum, __ldg(y_local + __ldg(out.global_locals + q)));
  }
  z[g] = __dmul_rn(w, sum);
}

}  // namespace

void schwarz_fdm_solve(const Backend& backend, const SchwarzView& view, Span<const double> r,
                       Span<double> y_local) {
  if (view.num_elements == 0) return;
  if (view.num_elements > 0x7fffffffLL) {
    throw NotSupported("sem::schwarz_fdm_solve: more than 2^31 - 1 elements");
  }
  const std::size_t N = static_cast<std::size_t>(view.n) + 2;
  const std::size_t entries = 3 * N * N + 3 * N + 2 * N * N * N;
  auto launch = [&](auto kernel, std::size_t bytes, const auto* eigenvectors,
                    const auto* eigenvalues) {
    if (bytes > 48 * 1024) {
      KRYFLOW_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(bytes)));
    }
    kernel<<<static_cast<unsigned int>(view.num_elements), kThreads, bytes,
             backend.cuda_context()->stream>>>(view, eigenvectors, eigenvalues, r.data(),
                                               y_local.data());
  };
  // The box size as a template argument: constant index arithmetic and unrolled sums.
  auto with_size = [&](auto size) {
    constexpr int M = decltype(size)::value;
    if (view.eigenvectors32 != nullptr) {
      launch(fdm_kernel<float, M>, sizeof(float) * entries, view.eigenvectors32,
             view.eigenvalues32);
    } else {
      launch(fdm_kernel<double, M>, sizeof(double) * entries, view.eigenvectors, view.eigenvalues);
    }
  };
  switch (view.n + 2) {
    case 3:
      with_size(std::integral_constant<int, 3>{});
      break;
    case 4:
      with_size(std::integral_constant<int, 4>{});
      break;
    case 5:
      with_size(std::integral_constant<int, 5>{});
      break;
    case 6:
      with_size(std::integral_constant<int, 6>{});
      break;
    case 7:
      with_size(std::integral_constant<int, 7>{});
      break;
    case 8:
      with_size(std::integral_constant<int, 8>{});
      break;
    case 9:
      with_size(std::integral_constant<int, 9>{});
      break;
    case 10:
      with_size(std::integral_constant<int, 10>{});
      break;
    case 11:
      with_size(std::integral_constant<int, 11>{});
      break;
    case 12:
      with_size(std::integral_constant<int, 12>{});
      break;
    case 13:
      with_size(std::integral_constant<int, 13>{});
      break;
    case 14:
      with_size(std::integral_constant<int, 14>{});
      break;
    case 15:
      with_size(std::integral_constant<int, 15>{});
      break;
    case 16:
      with_size(std::integral_constant<int, 16>{});
      break;
    case 17:
      with_size(std::integral_constant<int, 17>{});
      break;
    default:
      throw NotSupported("sem::schwarz_fdm_solve: order " + std::to_string(view.n - 1));
  }
  kernels::cuda::check_launch("sem::schwarz_fdm_solve");
}

void schwarz_assemble(const Backend& backend, const TransferSideView& out,
                      Span<const double> y_local, Span<const double> r, Span<double> z) {
  if (out.num_global == 0) return;
  const auto blocks = static_cast<unsigned int>((out.num_global + 255) / 256);
  assemble_kernel<<<blocks, 256, 0, backend.cuda_context()->stream>>>(out, y_local.data(), r.data(),
                                                                      z.data());
  kernels::cuda::check_launch("sem::schwarz_assemble");
}

}  // namespace kryflow::kernels::sem::cuda
