// CUDA local diagonal of the SEM Poisson operator in the four kernel designs of Wahlgren, "A
// GPU-accelerated Jacobi preconditioner for high-order fluid simulations", KTH 2022, sec. 3.1
// (eq. (9), plus the cross terms of deformed elements; order of operations in diagonal.hpp).
//
// natural:  one block per element, block (N, N, N), one thread per point; G and D from global
//           memory (N <= 10: at most 1024 threads per block).
// shared:   natural, with the element's G11, G22, G33 staged in shared memory first (N <= 10).
// extended: 1D blocks of 1024 threads over all E N^3 points (blocks not aligned to elements),
//           (i, j, k, e) decoded from the flat index; any N (templated up to 16, run-time N above).
// wide:     one thread per (j, k) line of an element, its N points along r accumulated in
//           registers (N <= 16).
// Every sum and product is rounded explicitly (__dadd_rn, __dmul_rn: no fused multiply-adds),
// so each variant gives the reference's bits.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/sem/diagonal.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::sem::cuda {
namespace {

constexpr int kExtendedThreads = 1024;
constexpr int kWideThreads = 128;
constexpr int kMaxTemplatedN = 16;  // p = 15, the largest GLL order
constexpr int kMaxBlockN = 10;      // N^3 <= 1024 threads per block

/// d + G * D_m * D_m, products left to right.
__device__ __forceinline__ double add_term(double d, double g, double dm) {
  return __dadd_rn(d, __dmul_rn(__dmul_rn(g, dm), dm));
}

/// d + 2 (G12 Di Dj + G13 Di Dk + G23 Dj Dk), sums left to right.
__device__ __forceinline__ double add_cross_terms(double d, double g12, double g13, double g23,
                                                  double di, double dj, double dk) {
  const double s =
      __dadd_rn(__dadd_rn(__dmul_rn(__dmul_rn(g12, di), dj), __dmul_rn(__dmul_rn(g13, di), dk)),
                __dmul_rn(__dmul_rn(g23, dj), dk));
  return __dadd_rn(d, __dmul_rn(2.0, s));
}

/// The diagonal at point (i, j, k) of one element: g11, g22, g33 are that element's N^3 terms
/// (global or shared memory), g is the element's 6 N^3 block in global memory.
template <int N>
__device__ __forceinline__ double point_diagonal(const double* g11, const double* g22,
                                                 const double* g33, const double* __restrict__ g,
                                                 const double* __restrict__ D, int i, int j,
                                                 int k) {
  constexpr int n3 = N * N * N;
  double d = 0.0;
#pragma unroll
  for (int m = 0; m < N; ++m) {
    d = add_term(d, g11[(k * N + j) * N + m], __ldg(D + m * N + i));
    d = add_term(d, g22[(k * N + m) * N + i], __ldg(D + m * N + j));
    d = add_term(d, g33[(m * N + j) * N + i], __ldg(D + m * N + k));
  }
  const int q = (k * N + j) * N + i;
  return add_cross_terms(d, __ldg(g + n3 + q), __ldg(g + 2 * n3 + q), __ldg(g + 4 * n3 + q),
                         __ldg(D + i * N + i), __ldg(D + j * N + j), __ldg(D + k * N + k));
}

template <int N>
__global__ void __launch_bounds__(N* N* N)
    natural_kernel(const double* __restrict__ g, const double* __restrict__ D,
                   double* __restrict__ d_local) {
  constexpr int n3 = N * N * N;
  const std::int64_t e = blockIdx.x;
  const int i = threadIdx.x;
  const int j = threadIdx.y;
  const int k = threadIdx.z;
  const double* ge = g + e * 6 * n3;
  d_local[e * n3 + (k * N + j) * N + i] =
      point_diagonal<N>(ge, ge + 3 * n3, ge + 5 * n3, ge, D, i, j, k);
}

template <int N>
__global__ void __launch_bounds__(N* N* N)
    shared_kernel(const double* __restrict__ g, const double* __restrict__ D,
                  double* __restrict__ d_local) {
  constexpr int n3 = N * N * N;
  __shared__ double s11[n3];
  __shared__ double s22[n3];
  __shared__ double s33[n3];
  const std::int64_t e = blockIdx.x;
  const int i = threadIdx.x;
  const int j = threadIdx.y;
  const int k = threadIdx.z;
  const int q = (k * N + j) * N + i;
  const double* ge = g + e * 6 * n3;
  s11[q] = __ldg(ge + q);
  s22[q] = __ldg(ge + 3 * n3 + q);
  s33[q] = __ldg(ge + 5 * n3 + q);
  __syncthreads();
  d_local[e * n3 + q] = point_diagonal<N>(s11, s22, s33, ge, D, i, j, k);
}

/// kN > 0: N known at compile time; kN == 0: N = n at run time.
template <int kN>
__global__ void __launch_bounds__(kExtendedThreads)
    extended_kernel(std::int64_t num_points, int n, const double* __restrict__ g,
                    const double* __restrict__ D, double* __restrict__ d_local) {
  const int N = kN > 0 ? kN : n;
  const std::int64_t point = static_cast<std::int64_t>(blockIdx.x) * kExtendedThreads +
                             static_cast<std::int64_t>(threadIdx.x);
  if (point >= num_points) return;
  const std::int64_t n3 = static_cast<std::int64_t>(N) * N * N;
  const std::int64_t e = point / n3;
  const int q = static_cast<int>(point - e * n3);
  const int i = q % N;
  const int j = (q / N) % N;
  const int k = q / (N * N);
  const double* ge = g + e * 6 * n3;
  const double* g11 = ge;
  const double* g22 = ge + 3 * n3;
  const double* g33 = ge + 5 * n3;
  double d = 0.0;
#pragma unroll
  for (int m = 0; m < N; ++m) {
    d = add_term(d, __ldg(g11 + (k * N + j) * N + m), __ldg(D + m * N + i));
    d = add_term(d, __ldg(g22 + (k * N + m) * N + i), __ldg(D + m * N + j));
    d = add_term(d, __ldg(g33 + (m * N + j) * N + i), __ldg(D + m * N + k));
  }
  d = add_cross_terms(d, __ldg(ge + n3 + q), __ldg(ge + 2 * n3 + q), __ldg(ge + 4 * n3 + q),
                      __ldg(D + i * N + i), __ldg(D + j * N + j), __ldg(D + k * N + k));
  d_local[point] = d;
}

template <int N>
__global__ void __launch_bounds__(kWideThreads)
    wide_kernel(std::int64_t num_lines, const double* __restrict__ g, const double* __restrict__ D,
                double* __restrict__ d_local) {
  constexpr int n2 = N * N;
  constexpr int n3 = N * N * N;
  const std::int64_t line =
      static_cast<std::int64_t>(blockIdx.x) * kWideThreads + static_cast<std::int64_t>(threadIdx.x);
  if (line >= num_lines) return;
  const std::int64_t e = line / n2;
  const int jk = static_cast<int>(line - e * n2);
  const int j = jk % N;
  const int k = jk / N;
  const double* ge = g + e * 6 * n3;
  const double* g11 = ge;
  const double* g22 = ge + 3 * n3;
  const double* g33 = ge + 5 * n3;
  double d[N];
#pragma unroll
  for (int i = 0; i < N; ++i) d[i] = 0.0;
#pragma unroll
  for (int m = 0; m < N; ++m) {
    const double g11_m = __ldg(g11 + (k * N + j) * N + m);
    const double dmj = __ldg(D + m * N + j);
    const double dmk = __ldg(D + m * N + k);
#pragma unroll
    for (int i = 0; i < N; ++i) {
      d[i] = add_term(d[i], g11_m, __ldg(D + m * N + i));
      d[i] = add_term(d[i], __ldg(g22 + (k * N + m) * N + i), dmj);
      d[i] = add_term(d[i], __ldg(g33 + (m * N + j) * N + i), dmk);
    }
  }
  const double dj = __ldg(D + j * N + j);
  const double dk = __ldg(D + k * N + k);
  double* out = d_local + e * n3 + (k * N + j) * N;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int q = (k * N + j) * N + i;
    out[i] = add_cross_terms(d[i], __ldg(ge + n3 + q), __ldg(ge + 2 * n3 + q),
                             __ldg(ge + 4 * n3 + q), __ldg(D + i * N + i), dj, dk);
  }
}

unsigned int blocks_for(std::int64_t work, int threads) {
  return static_cast<unsigned int>((work + threads - 1) / threads);
}

[[noreturn]] void throw_block_too_large(const char* variant, int n) {
  throw NotSupported(std::string("sem::poisson_local_diagonal: the ") + variant +
                     " variant needs N <= 10 (one thread per point of an element in one block), "
                     "got N = " +
                     std::to_string(n));
}

template <int N>
void launch(cudaStream_t stream, const PoissonView& a, DiagonalVariant variant, double* d_local) {
  const std::int64_t n3 = static_cast<std::int64_t>(N) * N * N;
  switch (variant) {
    case DiagonalVariant::natural:
    case DiagonalVariant::shared:
      if constexpr (N <= kMaxBlockN) {
        const dim3 block(N, N, N);
        const auto grid = static_cast<unsigned int>(a.num_elements);
        if (variant == DiagonalVariant::natural) {
          natural_kernel<N><<<grid, block, 0, stream>>>(a.g, a.derivative, d_local);
          kernels::cuda::check_launch("sem::poisson_local_diagonal (natural)");
        } else {
          shared_kernel<N><<<grid, block, 0, stream>>>(a.g, a.derivative, d_local);
          kernels::cuda::check_launch("sem::poisson_local_diagonal (shared)");
        }
        return;
      } else {
        throw_block_too_large(variant == DiagonalVariant::natural ? "natural" : "shared", N);
      }
    case DiagonalVariant::extended: {
      const std::int64_t points = a.num_elements * n3;
      extended_kernel<N><<<blocks_for(points, kExtendedThreads), kExtendedThreads, 0, stream>>>(
          points, N, a.g, a.derivative, d_local);
      kernels::cuda::check_launch("sem::poisson_local_diagonal (extended)");
      return;
    }
    case DiagonalVariant::wide: {
      const std::int64_t lines = a.num_elements * N * N;
      wide_kernel<N><<<blocks_for(lines, kWideThreads), kWideThreads, 0, stream>>>(
          lines, a.g, a.derivative, d_local);
      kernels::cuda::check_launch("sem::poisson_local_diagonal (wide)");
      return;
    }
  }
  throw NotSupported("sem::poisson_local_diagonal: unknown variant");
}

}  // namespace

void poisson_local_diagonal(const Backend& backend, const PoissonView& a, DiagonalVariant variant,
                            Span<double> d_local) {
  const int n = a.n;
  if (n > kMaxTemplatedN) {
    if (variant == DiagonalVariant::natural || variant == DiagonalVariant::shared) {
      throw_block_too_large(variant == DiagonalVariant::natural ? "natural" : "shared", n);
    }
    if (variant == DiagonalVariant::wide) {
      throw NotSupported("sem::poisson_local_diagonal: the wide variant needs N <= 16, got N = " +
                         std::to_string(n));
    }
  }
  if (a.num_elements == 0) return;
  const cudaStream_t stream = backend.cuda_context()->stream;
  double* out = d_local.data();
  switch (n) {
    case 2:
      return launch<2>(stream, a, variant, out);
    case 3:
      return launch<3>(stream, a, variant, out);
    case 4:
      return launch<4>(stream, a, variant, out);
    case 5:
      return launch<5>(stream, a, variant, out);
    case 6:
      return launch<6>(stream, a, variant, out);
    case 7:
      return launch<7>(stream, a, variant, out);
    case 8:
      return launch<8>(stream, a, variant, out);
    case 9:
      return launch<9>(stream, a, variant, out);
    case 10:
      return launch<10>(stream, a, variant, out);
    case 11:
      return launch<11>(stream, a, variant, out);
    case 12:
      return launch<12>(stream, a, variant, out);
    case 13:
      return launch<13>(stream, a, variant, out);
    case 14:
      return launch<14>(stream, a, variant, out);
    case 15:
      return launch<15>(stream, a, variant, out);
    case 16:
      return launch<16>(stream, a, variant, out);
    default: {
      // Only extended reaches here (N > 16): N at run time.
      const std::int64_t points = a.num_elements * static_cast<std::int64_t>(n) * n * n;
      extended_kernel<0><<<blocks_for(points, kExtendedThreads), kExtendedThreads, 0, stream>>>(
          points, n, a.g, a.derivative, out);
      kernels::cuda::check_launch("sem::poisson_local_diagonal (extended)");
      return;
    }
  }
}

}  // namespace kryflow::kernels::sem::cuda
