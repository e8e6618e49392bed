// CUDA spectral-element Schwarz local solves, register-tiled by lines. An element's two boxes,
// its eigenvectors, their transposes and its eigenvalues are in shared memory. Each of its
// threads owns two lines of the box in each contraction, t and t + N^2 / 2 (the element's
// threads rounded up to whole warps, so that all threads of a warp are of one element; blocks
// of 128 threads, several elements, where an element has 64 threads or fewer, else one
// element). A thread loads the N entries of each line along the contraction's direction from
// shared memory into registers, forms the line's N sums there (each from 0 in increasing index
// with fused multiply-adds; the directions in another order than the reference's, so the bits
// differ from it by rounding) and stores each sum once it is formed. The
// matrix entries (rows of S_d^T in the forward contractions, of S_d in the backward ones) are
// the same for the whole warp: read in order as broadcast 16-byte loads, each used for both
// lines. Per line and contraction through shared memory that is N shared loads, N shared stores
// and N^2 / 8 (float) or N^2 / 4 (double) broadcast loads for N^2 multiply-adds, against 2 N^2
// loads and N stores with one thread per sum.
//
// The lines' (u, w) in the contraction's two other directions and the boxes' strides make the
// line accesses free of bank conflicts: for the contraction that writes a box and the one that
// reads it, line c = u + N w starts at word = c (mod 32) plus a constant (strides = 1 and = N
// (mod 32) in u and w), so the threads of a warp touch 32 banks (restricted backward s and t,
// below, nearly so). With
// Q = N^2 + (N - N^2 mod 32) and Q1 = N^2 + (1 - N^2 mod 32), the stages (i, j, k the r, s, t
// indices; a box's strides of i, j, k):
//   gather, forward t  line (u, w) = (i, j), straight from r into registers (consecutive
//                      threads: consecutive i), S_t^T:  -> a (1, Q, N)
//   forward s          line (i, k), S_s^T:            a -> b (Q1, 1, N)
//   r                  line (j, k), S_r^T, times 1 / (lambda sum), then S_r, in registers:
//                                                     b -> a (1, Q1, N)
//   backward s         line (i, k), S_s:              a -> b (1, N, Q)
//   backward t         line (i, j), S_t:              b -> y (consecutive threads: consecutive i;
//                                                     y in the locals' type: float or double)
// Two of the six contractions thus keep their lines in registers on one side (the gather and
// the write) and the r contractions on both, so the boxes see 4 line stores and 4 line loads
// per point instead of 6 and 6, with 5 barriers instead of 6.
// Restricted, backward r forms only the sums that reach the element's own points (rows 1 to n
// of S_r), backward s only on the lines of inner i (rows 1 to n) and backward t only on those
// of inner i and j (n^2 lines, written with consecutive threads at consecutive addresses; warps
// without lines skip these stages). In float, 1 / (lambda sum) is the approximate reciprocal
// and one Newton step (CUDA's division's fast path, the same bits) where that is exact, and a
// division otherwise.
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"
#include "kernels/backend/dependent_launch.cuh"
#include "kernels/sem/points.hpp"
#include "kernels/sem/schwarz.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::sem::cuda {
namespace {

/// The distance of a thread's lines among Count lines, Lines a thread.
template <int Lines, int Count>
constexpr int kLineStep = (Count + Lines - 1) / Lines;

/// Thread t's lines among a contraction's Count lines: line c = t + h kLineStep (h < Lines) at
/// (u, w) = (U0 + c % Width, W0 + c / Width). Past the last line (a padding thread, or the last
/// thread's last lines) the last line again: computed, not stored (own false).
template <int Lines, int Count, int Width, int U0, int W0>
__device__ __forceinline__ void line_set(int t, bool live, int (&u)[Lines], int (&w)[Lines],
                                         bool (&own)[Lines]) {
  constexpr int kStep = kLineStep<Lines, Count>;
#pragma unroll
  for (int h = 0; h < Lines; ++h) {
    const int c = t + h * kStep;
    own[h] = live && t < kStep && c < Count;
    u[h] = U0 + (own[h] ? c : Count - 1) % Width;
    w[h] = W0 + (own[h] ? c : Count - 1) / Width;
  }
}

/// Whether thread t's warp has lines among Count lines.
template <int Lines, int Count>
__device__ __forceinline__ bool warp_has_lines(int t) {
  return t / 32 * 32 < kLineStep<Lines, Count>;
}

/// The threads of an element, Lines lines of its box a thread: rounded up to whole warps.
template <int N, int Lines>
constexpr int kElementThreads = (kLineStep<Lines, N * N> + 31) / 32 * 32;

/// How fdm_kernel<T, N> shares out the work: Lines lines of an element's box a thread, Elements
/// elements a block.
template <int N, int Lines, int Elements>
struct FdmShape {
  static constexpr int kLines = Lines;
  static constexpr int kElementThreads = cuda::kElementThreads<N, Lines>;
  static constexpr int kElements = Elements;
  static constexpr int kThreads = Elements * kElementThreads;
};

/// The entries of T one 16-byte shared-memory load reads.
template <typename T>
struct alignas(16) Chunk {
  static constexpr int kSize = 16 / static_cast<int>(sizeof(T));
  T value[kSize];
};

/// The shared memory of one element of fdm_kernel<T, N>, in entries of T from a 16-byte
/// boundary.
template <typename T, int N>
struct FdmLayout {
  static constexpr int kWidth = Chunk<T>::kSize;
  static constexpr int kN2 = N * N;
  // The boxes' plane strides: the least >= N^2 that are N and 1 (mod 32).
  static constexpr int kQ = kN2 + ((N - kN2) % 32 + 32) % 32;
  static constexpr int kQ1 = kN2 + ((1 - kN2) % 32 + 32) % 32;
  // S_r, S_s, S_t (S_d[i N + m] at i N + m), their transposes (at m N + i) and lambda_r,
  // lambda_s, lambda_t, each at a 16-byte boundary.
  static constexpr int kMatrix = (kN2 + kWidth - 1) / kWidth * kWidth;
  static constexpr int kLambda = (N + kWidth - 1) / kWidth * kWidth;
  static constexpr int kTransposes = 3 * kMatrix;
  static constexpr int kEigenvalues = 6 * kMatrix;
  // Each box holds N planes of the larger plane stride (the stages use both strides in both).
  static constexpr int kBox = N * (kQ > kQ1 ? kQ : kQ1);
  static constexpr int kA = kEigenvalues + 3 * kLambda;  // box a
  static constexpr int kB = kA + kBox;                   // box b
  static constexpr int kEntries = (kB + kBox + kWidth - 1) / kWidth * kWidth;
};

/// x[h][m] = p[h][m Stride], m < N.
template <typename T, int N, int Lines, int Stride>
__device__ __forceinline__ void load_lines(T* const (&p)[Lines], T (&x)[Lines][N]) {
#pragma unroll
  for (int h = 0; h < Lines; ++h) {
#pragma unroll
    for (int m = 0; m < N; ++m) x[h][m] = p[h][m * Stride];
  }
}

/// For each row i of the N x N matrix M with First <= i < Last: store(i, sums) with sums[h] =
/// sum_m M[i N + m] x[h][m], from 0 in increasing m. M's rows are read in order, 16 bytes (the
/// same for the whole warp) at a time, each entry used for all the lines.
template <typename T, int N, int Lines, int First = 0, int Last = N, typename Store>
__device__ __forceinline__ void contract_lines(const T* M, const T (&x)[Lines][N], Store&& store) {
  using C = Chunk<T>;
  constexpr int kBegin = First * N;
  constexpr int kEnd = Last * N;
  T sums[Lines];
#pragma unroll
  for (int c = kBegin / C::kSize; c < (kEnd + C::kSize - 1) / C::kSize; ++c) {
    const C s = reinterpret_cast<const C*>(M)[c];
#pragma unroll
    for (int q = 0; q < C::kSize; ++q) {
      const int f = c * C::kSize + q;
      if (f >= kBegin && f < kEnd) {
#pragma unroll
        for (int h = 0; h < Lines; ++h) {
          sums[h] = fma(s.value[q], x[h][f % N], f % N == 0 ? T(0) : sums[h]);
        }
        if (f % N == N - 1) store(f / N, sums);
      }
    }
  }
}

/// For positive x: 1 / x rounded to nearest where the result is positive (it is for 2^-126 <= x
/// < 2^126), else 0 or NaN. The approximate reciprocal and one Newton step with fused
/// multiply-adds: the fast path of CUDA's own division, without its test.
__device__ __forceinline__ float reciprocal_normal(float x) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return fmaf(r, -fmaf(x, r, -1.0f), r);
}

/// 1 / total for total > 0 (in float the approximate reciprocal and a Newton step where that
/// is exact, the same bits as a division).
template <typename T>
__device__ __forceinline__ T positive_inverse(T total) {
  if constexpr (std::is_same_v<T, float>) {
    const float inverse = reciprocal_normal(total);
    return inverse > 0.0f ? inverse : 1.0f / total;
  } else {
    return T(1) / total;
  }
}

/// The local solves of the block's elements, Lines lines a thread (see the file's comment),
/// written to locals of Y.
template <typename T, int N, int Lines, int Elements, typename Y>
__device__ __forceinline__ void fdm_block(const SchwarzView& v, const T* __restrict__ eigenvectors,
                                          const T* __restrict__ eigenvalues,
                                          const double* __restrict__ r, Y* __restrict__ y_local) {
  using L = FdmLayout<T, N>;
  constexpr int kThreads = FdmShape<N, Lines, Elements>::kElementThreads;
  constexpr int n = N - 2;
  constexpr int N2 = N * N;
  constexpr int N3 = N2 * N;
  constexpr int Q = L::kQ;
  constexpr int Q1 = L::kQ1;
  extern __shared__ float4 shared_storage[];
  const int slot = threadIdx.x / kThreads;
  const int t = threadIdx.x % kThreads;
  const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * Elements + slot;
  const bool live = e < v.num_elements;
  T* const shared = reinterpret_cast<T*>(shared_storage) + slot * L::kEntries;
  T* const S = shared;
  T* const ST = shared + L::kTransposes;
  T* const lambda = shared + L::kEigenvalues;
  T* const a = shared + L::kA;
  T* const b = shared + L::kB;
  int u[Lines];
  int w[Lines];
  bool own[Lines];
  // The lines' starts su u + sw w in box.
  auto starts = [&](T* box, int su, int sw) {
    struct {
      T* p[Lines];
    } result;
#pragma unroll
    for (int h = 0; h < Lines; ++h) result.p[h] = box + su * u[h] + sw * w[h];
    return result;
  };
  T x[Lines][N];
  // The gather, straight into registers: line (i, j) = (u, w) along k (consecutive threads at
  // consecutive i), the lines' indices first, then their values, which are in flight while the
  // eigenvectors and eigenvalues are copied.
  line_set<Lines, N2, N, 0, 0>(t, live, u, w, own);
  if (live) {
    const index_t* map = v.box_to_global + e * N3;
    index_t g[Lines][N];
#pragma unroll
    for (int h = 0; h < Lines; ++h) {
#pragma unroll
      for (int k = 0; k < N; ++k) g[h][k] = __ldg(map + k * N2 + w[h] * N + u[h]);
    }
#pragma unroll
    for (int h = 0; h < Lines; ++h) {
#pragma unroll
      for (int k = 0; k < N; ++k)
        x[h][k] = g[h][k] >= 0 ? static_cast<T>(__ldg(r + g[h][k])) : T(0);
    }
    // Row i of S_d (and column i of its transpose) by thread d N + i.
    for (int row = t; row < 3 * N; row += kThreads) {
      const T* source = eigenvectors + e * 3 * N2 + row * N;
      T* const rows = S + row / N * L::kMatrix + row % N * N;
      T* const columns = ST + row / N * L::kMatrix + row % N;
#pragma unroll
      for (int m = 0; m < N; ++m) {
        const T value = __ldg(source + m);
        rows[m] = value;
        columns[m * N] = value;
      }
    }
    for (int q = t; q < 3 * N; q += kThreads) {
      lambda[q / N * L::kLambda + q % N] = __ldg(eigenvalues + e * 3 * N + q);
    }
  } else {
#pragma unroll
    for (int h = 0; h < Lines; ++h) {
#pragma unroll
      for (int k = 0; k < N; ++k) x[h][k] = T(0);
    }
  }
  __syncthreads();
  // Forward t in registers, line (i, j): a[i, j, o] = sum_k S_t[k, o] x[k] at (1, Q, N).
  {
    const auto out = starts(a, 1, Q);
    contract_lines<T, N, Lines>(ST + 2 * L::kMatrix, x, [&](int o, const T(&sums)[Lines]) {
#pragma unroll
      for (int h = 0; h < Lines; ++h) {
        if (own[h]) out.p[h][N * o] = sums[h];
      }
    });
  }
  __syncthreads();
  // Forward s, line (i, o): b[i, l, o] = sum_j S_s[j, l] a[i, j, o] at (Q1, 1, N).
  load_lines<T, N, Lines, Q>(starts(a, 1, N).p, x);
  {
    const auto out = starts(b, Q1, N);
    contract_lines<T, N, Lines>(ST + L::kMatrix, x, [&](int l, const T(&sums)[Lines]) {
#pragma unroll
      for (int h = 0; h < Lines; ++h) {
        if (own[h]) out.p[h][l] = sums[h];
      }
    });
  }
  __syncthreads();
  // r in registers, line (l, o): forward f[m] = sum_i S_r[i, m] b[i, l, o], f[m] / (lambda_r[m]
  // + lambda_s[l] + lambda_t[o]), backward a[i, l, o] = sum_m S_r[i, m] f[m] at (1, Q1, N);
  // restricted, only inner i.
  constexpr int First = 1;
  constexpr int Last = N - 1;
  load_lines<T, N, Lines, Q1>(starts(b, 1, N).p, x);
  {
    T f[Lines][N];
    T partial[Lines];
#pragma unroll
    for (int h = 0; h < Lines; ++h)
      partial[h] = lambda[L::kLambda + u[h]] + lambda[2 * L::kLambda + w[h]];
    contract_lines<T, N, Lines>(ST, x, [&](int m, const T(&sums)[Lines]) {
      const T lambda_r = lambda[m];
#pragma unroll
      for (int h = 0; h < Lines; ++h) {
        const T total = partial[h] + lambda_r;
        f[h][m] = total > T(0) ? sums[h] * positive_inverse(total) : T(0);
      }
    });
    const auto out = starts(a, Q1, N);
    auto store = [&](int i, const T(&sums)[Lines]) {
#pragma unroll
      for (int h = 0; h < Lines; ++h) {
        if (own[h]) out.p[h][i] = sums[h];
      }
    };
    if (v.restricted) {
      contract_lines<T, N, Lines, First, Last>(S, f, store);
    } else {
      contract_lines<T, N, Lines>(S, f, store);
    }
  }
  __syncthreads();
  // Backward s and t; restricted, only the sums and lines that reach the element's own points:
  // s on the lines of inner i, t on those of inner i and j (warps without lines skip them).
  auto backward = [&](auto restricted) {
    constexpr bool Restricted = decltype(restricted)::value;
    constexpr int F = Restricted ? First : 0;
    constexpr int G = Restricted ? Last : N;
    // s, line (i, o): b[i, j, o] = sum_l S_s[j, l] a[i, l, o] at (1, N, Q).
    constexpr int kSLines = Restricted ? n * N : N2;
    if (warp_has_lines<Lines, kSLines>(t)) {
      if constexpr (Restricted) line_set<Lines, n * N, n, 1, 0>(t, live, u, w, own);
      load_lines<T, N, Lines, Q1>(starts(a, 1, N).p, x);
      const auto out = starts(b, 1, Q);
      contract_lines<T, N, Lines, F, G>(S + L::kMatrix, x, [&](int j, const T(&sums)[Lines]) {
#pragma unroll
        for (int h = 0; h < Lines; ++h) {
          if (own[h]) out.p[h][N * j] = sums[h];
        }
      });
    }
    __syncthreads();
    // t and the write, line (i, j): y[i, j, k] = sum_o S_t[k, o] b[i, j, o].
    constexpr int kTLines = Restricted ? n * n : N2;
    if (warp_has_lines<Lines, kTLines>(t)) {
      if constexpr (Restricted) {
        line_set<Lines, n * n, n, 1, 1>(t, live, u, w, own);
      } else {
        line_set<Lines, N2, N, 0, 0>(t, live, u, w, own);
      }
      load_lines<T, N, Lines, Q>(starts(b, 1, N).p, x);
      Y* out[Lines];
#pragma unroll
      for (int h = 0; h < Lines; ++h) {
        out[h] = Restricted ? y_local + ((e * n - 1) * n + w[h] - 1) * n + u[h] - 1
                            : y_local + e * N3 + N * w[h] + u[h];
      }
      contract_lines<T, N, Lines, F, G>(S + 2 * L::kMatrix, x, [&](int k, const T(&sums)[Lines]) {
#pragma unroll
        for (int h = 0; h < Lines; ++h) {
          if (own[h]) out[h][k * (Restricted ? n * n : N2)] = static_cast<Y>(sums[h]);
        }
      });
    }
  };
  if (v.restricted) {
    backward(std::true_type{});
  } else {
    backward(std::false_type{});
  }
}

/// The shape of fdm_kernel<T, N>: two lines a thread, and blocks of 128 threads where an
/// element's threads are 64 or fewer.
template <int N>
using FdmKernelShape =
    FdmShape<N, 2, kElementThreads<N, 2> <= 64 ? 128 / kElementThreads<N, 2> : 1>;

/// The local solves in T written to locals of Y (T, or double for float patches).
template <typename T, int N, typename Y>
__global__ void __launch_bounds__(FdmKernelShape<N>::kThreads)
    fdm_kernel(const SchwarzView v, const T* __restrict__ eigenvectors,
               const T* __restrict__ eigenvalues, const double* __restrict__ r,
               Y* __restrict__ y_local) {
  kernels::cuda::dependent_launch_prologue();
  using Shape = FdmKernelShape<N>;
  fdm_block<T, N, Shape::kLines, Shape::kElements>(v, eigenvectors, eigenvalues, r, y_local);
}

/// The sum in double, in list order, of the locals y_local[locals[q]], begin <= q < end.
template <typename Y>
__device__ __forceinline__ double list_sum(const Y* __restrict__ y_local,
                                           const index_t* __restrict__ locals, std::int64_t begin,
                                           std::int64_t end) {
  double sum = 0.0;
#pragma unroll 2
  for (std::int64_t q = begin; q < end; ++q) {
    sum = __dadd_rn(sum, static_cast<double>(__ldg(y_local + __ldg(locals + q))));
  }
  return sum;
}

/// A sums kernel's result at point g: z[g] = value, or with u.x the fused Chebyshev step
/// axpby(alpha, value, beta, d) into z = d, then axpby(1, d, 1, x), rounded alike (d_old and
/// x_old: z[g] and u.x[g] as loaded before the sum).
__device__ __forceinline__ void store_sum(const SchwarzUpdate& u, double value, double d_old,
                                          double x_old, std::int64_t g, double* __restrict__ z) {
  if (u.x == nullptr) {
    z[g] = value;
    return;
  }
  const double d = u.beta == 0.0 ? __dmul_rn(u.alpha, value)
                                 : __dadd_rn(__dmul_rn(u.alpha, value), __dmul_rn(u.beta, d_old));
  z[g] = d;
  u.x[g] = u.x_is_zero ? d : __dadd_rn(d, x_old);
}

/// The sums of locals of Y, in double. Every load that does not depend on another (the weight,
/// the list's bounds, and the old d and x of the fused update) is issued first, so a thread
/// waits for three loads in a row (bounds, local index, local value) instead of six: the kernel
/// is bound by that latency (about ten waves of threads on 2.8M points).
template <typename Y>
__global__ void __launch_bounds__(256)
    assemble_kernel(const TransferSideView out, const Y* __restrict__ y_local,
                    const double* __restrict__ r, const SchwarzUpdate u, double* __restrict__ z) {
  kernels::cuda::dependent_launch_prologue();
  const std::int64_t g = static_cast<std::int64_t>(blockIdx.x) * 256 + threadIdx.x;
  if (g >= out.num_global) return;
  const double w = __ldg(out.weight + g);
  const std::int64_t begin = __ldg(out.global_offsets + g);
  const std::int64_t end = __ldg(out.global_offsets + g + 1);
  const bool update = u.x != nullptr;
  const double d_old = update && u.beta != 0.0 ? z[g] : 0.0;
  const double x_old = update && !u.x_is_zero ? u.x[g] : 0.0;
  double value;
  if (w == 0.0) {
    value = __ldg(r + g);
  } else {
    value = __dmul_rn(w, list_sum(y_local, out.global_locals, begin, end));
  }
  store_sum(u, value, d_old, x_old, g, z);
}

/// assemble_kernel for restricted additive Schwarz from the shared points' 32-bit lists
/// (TransferSideView::shared_offsets): a point of one element reads its one local at once
/// (a load in a row fewer), the weight is 1 / (the list's length) and the mask marks the
/// Dirichlet points, so neither the 64-bit offsets nor the weight are read; the same
/// operations as assemble_kernel with the stored weight, so the same bits.
template <typename Y>
__global__ void __launch_bounds__(256)
    restricted_assemble_kernel(const TransferSideView out, const Y* __restrict__ y_local,
                               const double* __restrict__ r, const SchwarzUpdate u,
                               double* __restrict__ z) {
  kernels::cuda::dependent_launch_prologue();
  const std::int64_t g = static_cast<std::int64_t>(blockIdx.x) * 256 + threadIdx.x;
  if (g >= out.num_global) return;
  const bool dirichlet = out.mask != nullptr && __ldg(out.mask + g) != 0;
  const bool shared = g < out.num_shared;
  const std::int64_t begin =
      shared ? __ldg(out.shared_offsets + g)
             : __ldg(out.shared_offsets + out.num_shared) + (g - out.num_shared);
  const std::int64_t end = shared ? __ldg(out.shared_offsets + g + 1) : begin + 1;
  const bool update = u.x != nullptr;
  const double d_old = update && u.beta != 0.0 ? z[g] : 0.0;
  const double x_old = update && !u.x_is_zero ? u.x[g] : 0.0;
  double value;
  if (dirichlet) {
    value = __ldg(r + g);
  } else {
    value = __dmul_rn(1.0 / static_cast<double>(end - begin),
                      list_sum(y_local, out.global_locals, begin, end));
  }
  store_sum(u, value, d_old, x_old, g, z);
}

/// x[g] += omega patch_scale[e] y at every box point with a global point g (no point twice).
template <typename Y>
__global__ void __launch_bounds__(256)
    scatter_add_kernel(const index_t* __restrict__ box_to_global, const Y* __restrict__ y_local,
                       std::int64_t count, std::int64_t box_points, double omega,
                       const double* __restrict__ patch_scale, double* __restrict__ x) {
  const std::int64_t q = static_cast<std::int64_t>(blockIdx.x) * 256 + threadIdx.x;
  if (q >= count) return;
  const index_t g = __ldg(box_to_global + q);
  if (g < 0) return;
  const double w =
      patch_scale != nullptr ? __dmul_rn(omega, __ldg(patch_scale + q / box_points)) : omega;
  x[g] = __dadd_rn(x[g], __dmul_rn(w, static_cast<double>(__ldg(y_local + q))));
}

/// norms[e] = sum of v[g]^2 over patch e's box points: one warp a patch, each lane a strided
/// partial sum (fused multiply-adds), then the lanes' sums in a fixed tree, so the bits differ
/// from the host's (which sum in increasing box index) only by rounding.
__global__ void __launch_bounds__(256)
    patch_norms_kernel(const index_t* __restrict__ box_to_global, std::int64_t patches,
                       std::int64_t box_points, const double* __restrict__ v,
                       double* __restrict__ norms) {
  const std::int64_t e = (static_cast<std::int64_t>(blockIdx.x) * 256 + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (e >= patches) return;
  const index_t* map = box_to_global + e * box_points;
  double sum = 0.0;
  for (std::int64_t q = lane; q < box_points; q += 32) {
    const index_t g = __ldg(map + q);
    if (g >= 0) {
      const double value = __ldg(v + g);
      sum = __fma_rn(value, value, sum);
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) norms[e] = sum;
}

/// The fused vertex-patch step (kernels/sem/schwarz.hpp, vertex_patch_fused_step): one block per
/// patch, its box's x and A x in shared memory; the 8 elements' Laplacians one after the other
/// (a thread per element point, as the host's element_laplacian in Real, with fused
/// multiply-adds); the residual and the six FDM contractions in T over the box (loops over the
/// box's points, the eigenvectors read from global memory), then x += w y at the patch's
/// unknowns. Patches of one color share no unknown and no patch reads another's unknowns, so
/// the blocks of a launch do not race.
constexpr int kFusedThreads = 256;
constexpr int kFusedMaxBox = 17;  // p <= 8, as the other Schwarz kernels

/// Dynamic shared memory of the fused kernel: the box's x and A x (2 M^3 doubles), and per
/// element x_e, three fluxes (4 N^3) and D (N^2), counted in doubles.
std::size_t fused_shared_bytes(int M, int N) {
  const std::size_t M3 = static_cast<std::size_t>(M) * M * M;
  const std::size_t n3 = static_cast<std::size_t>(N) * N * N;
  return (2 * M3 + 4 * n3 + static_cast<std::size_t>(N) * N) * sizeof(double);
}

/// At element point l = (i, j, k): r = sum_m D'[i, m] a[m, j, k], s = sum_m D'[j, m] b[i, m, k],
/// t = sum_m D'[k, m] c[i, j, m] with D' = D (the gradient) or D^T (Transposed: its transpose).
template <bool Transposed, class Real>
__device__ __forceinline__ void element_sums(const Real* D, const Real* a, const Real* b,
                                             const Real* c, int N, int l, Real& r, Real& s,
                                             Real& t) {
  const int i = l % N;
  const int j = (l / N) % N;
  const int k = l / (N * N);
  r = 0;
  s = 0;
  t = 0;
  for (int m = 0; m < N; ++m) {
    r = fma(Transposed ? D[m * N + i] : D[i * N + m], a[(k * N + j) * N + m], r);
    s = fma(Transposed ? D[m * N + j] : D[j * N + m], b[(k * N + m) * N + i], s);
    t = fma(Transposed ? D[m * N + k] : D[k * N + m], c[(m * N + j) * N + i], t);
  }
}

template <class Real, class T>
__global__ void __launch_bounds__(kFusedThreads)
    fused_patch_kernel(const SchwarzView v, const FusedPatchView f, const PoissonView a,
                       const T* __restrict__ eigenvectors, const T* __restrict__ eigenvalues,
                       const double* __restrict__ b, double omega,
                       const double* __restrict__ patch_scale, double* __restrict__ x) {
  extern __shared__ double fused_shared[];
  const int M = v.n + 2;
  const int M3 = M * M * M;
  const int N = a.n;
  const int n3 = N * N * N;
  const int tid = threadIdx.x;
  const std::int64_t P = blockIdx.x;
  double* xb = fused_shared;
  double* axb = xb + M3;
  Real* u = reinterpret_cast<Real*>(axb + M3);  // each Real array given n3 doubles of room
  Real* fr = reinterpret_cast<Real*>(axb + M3 + n3);
  Real* fs = reinterpret_cast<Real*>(axb + M3 + 2 * n3);
  Real* ft = reinterpret_cast<Real*>(axb + M3 + 3 * n3);
  Real* D = reinterpret_cast<Real*>(axb + M3 + 4 * n3);
  const index_t* full = f.box_full + P * M3;
  for (int q = tid; q < M3; q += kFusedThreads) {
    const index_t g = full[q];
    xb[q] = a.mask != nullptr && a.mask[g] != 0 ? 0.0 : x[g];
    axb[q] = 0.0;
  }
  for (int q = tid; q < N * N; q += kFusedThreads) D[q] = static_cast<Real>(a.derivative[q]);
  __syncthreads();
  for (int slot = 0; slot < 8; ++slot) {
    const std::int64_t e = f.elements[P * 8 + slot];
    const std::int32_t* pl = f.placements + (P * 8 + slot) * 9;
    const int perm0 = pl[0], perm1 = pl[1], perm2 = pl[2];
    const int sign0 = pl[3], sign1 = pl[4], sign2 = pl[5];
    const int base0 = pl[6], base1 = pl[7], base2 = pl[8];
    auto box_of = [&](int l) {
      const int i = l % N;
      const int j = (l / N) % N;
      const int k = l / (N * N);
      const int local[3] = {i, j, k};
      const int I = base0 + sign0 * local[perm0];
      const int J = base1 + sign1 * local[perm1];
      const int K = base2 + sign2 * local[perm2];
      return (K * M + J) * M + I;
    };
    for (int l = tid; l < n3; l += kFusedThreads) u[l] = static_cast<Real>(xb[box_of(l)]);
    __syncthreads();
    const double* G = a.g + e * 6 * n3;
    for (int l = tid; l < n3; l += kFusedThreads) {
      Real r, s, t;
      element_sums<false>(D, u, u, u, N, l, r, s, t);
      const auto g11 = static_cast<Real>(G[l]);
      const auto g12 = static_cast<Real>(G[n3 + l]);
      const auto g13 = static_cast<Real>(G[2 * n3 + l]);
      const auto g22 = static_cast<Real>(G[3 * n3 + l]);
      const auto g23 = static_cast<Real>(G[4 * n3 + l]);
      const auto g33 = static_cast<Real>(G[5 * n3 + l]);
      fr[l] = fma(g13, t, fma(g12, s, g11 * r));
      fs[l] = fma(g23, t, fma(g22, s, g12 * r));
      ft[l] = fma(g33, t, fma(g23, s, g13 * r));
    }
    __syncthreads();
    for (int l = tid; l < n3; l += kFusedThreads) {
      Real r, s, t;
      element_sums<true>(D, fr, fs, ft, N, l, r, s, t);
      // One element's points fall on distinct box points: no two threads add to one.
      const int q = box_of(l);
      axb[q] = axb[q] + static_cast<double>(r + s + t);
    }
    __syncthreads();
  }
  // r_P at the patch's unknowns (in T, over the box's x, which is no longer needed); then the
  // FDM contractions alternate between that array and the A x array.
  const index_t* map = v.box_to_global + P * M3;
  T* ta = reinterpret_cast<T*>(xb);
  for (int q = tid; q < M3; q += kFusedThreads) {
    ta[q] = map[q] >= 0 ? static_cast<T>(b[map[q]] - axb[q]) : T(0);
  }
  __syncthreads();
  T* tb = reinterpret_cast<T*>(axb);
  const T* Sr = eigenvectors + P * 3 * M * M;
  const T* Ss = Sr + M * M;
  const T* St = Ss + M * M;
  const T* lr = eigenvalues + P * 3 * M;
  const T* ls = lr + M;
  const T* lt = ls + M;
  // pass 0..5: out[point] = sum over the pass's axis of S (transposed in 0..2) times in[...].
  for (int pass = 0; pass < 6; ++pass) {
    const T* in = pass % 2 == 0 ? ta : tb;
    T* out = pass % 2 == 0 ? tb : ta;
    const int axis = pass % 3;
    const T* S = axis == 0 ? Sr : axis == 1 ? Ss : St;
    const bool transposed = pass < 3;
    for (int q = tid; q < M3; q += kFusedThreads) {
      const int c[3] = {q % M, (q / M) % M, q / (M * M)};
      const int stride = axis == 0 ? 1 : axis == 1 ? M : M * M;
      const int start = q - c[axis] * stride;
      T sum = 0;
      for (int m = 0; m < M; ++m) {
        const T s_value = transposed ? S[m * M + c[axis]] : S[c[axis] * M + m];
        sum = fma(s_value, in[start + m * stride], sum);
      }
      if (pass == 2) {
        const T lambda = lr[c[0]] + ls[c[1]] + lt[c[2]];
        sum = lambda > T(0) ? sum * (T(1) / lambda) : T(0);
      }
      out[q] = sum;
    }
    __syncthreads();
  }
  // After six passes the result is back in ta.
  const double w = patch_scale != nullptr ? omega * patch_scale[P] : omega;
  for (int q = tid; q < M3; q += kFusedThreads) {
    if (map[q] >= 0) x[map[q]] = x[map[q]] + w * static_cast<double>(ta[q]);
  }
}

}  // namespace

void schwarz_fdm_solve(const Backend& backend, const SchwarzView& view, Span<const double> r,
                       const SchwarzLocals& y_local) {
  if (view.num_elements == 0) return;
  if (view.num_elements > 0x7fffffffLL) {
    throw NotSupported("sem::schwarz_fdm_solve: more than 2^31 - 1 elements");
  }
  auto launch = [&](auto kernel, int threads, int elements, std::size_t bytes,
                    const auto* eigenvectors, const auto* eigenvalues, auto* locals) {
    if (bytes > 48 * 1024) {
      KRYFLOW_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(bytes)));
    }
    const auto blocks = static_cast<unsigned int>((view.num_elements + elements - 1) / elements);
    kernels::cuda::launch_dependent(kernel, blocks, threads, bytes, backend.cuda_context()->stream,
                                    view, eigenvectors, eigenvalues, r.data(), locals);
  };
  // The box size as a template argument: constant index arithmetic and unrolled sums.
  auto with_size = [&](auto size) {
    constexpr int M = decltype(size)::value;
    using Shape = FdmKernelShape<M>;
    constexpr std::size_t kBytes32 =
        sizeof(float) * Shape::kElements * FdmLayout<float, M>::kEntries;
    if (view.eigenvectors32 == nullptr) {
      launch(fdm_kernel<double, M, double>, Shape::kThreads, Shape::kElements,
             sizeof(double) * Shape::kElements * FdmLayout<double, M>::kEntries, view.eigenvectors,
             view.eigenvalues, y_local.values);
    } else if (y_local.values32 != nullptr) {
      launch(fdm_kernel<float, M, float>, Shape::kThreads, Shape::kElements, kBytes32,
             view.eigenvectors32, view.eigenvalues32, y_local.values32);
    } else {
      launch(fdm_kernel<float, M, double>, Shape::kThreads, Shape::kElements, kBytes32,
             view.eigenvectors32, view.eigenvalues32, y_local.values);
    }
  };
  if (!with_points<3, 17>(view.n + 2, with_size)) {
    throw NotSupported("sem::schwarz_fdm_solve: boxes of " + std::to_string(view.n + 2) +
                       " points per direction (supported: 3 to 17; element patches up to "
                       "p = 14, vertex patches up to p = 8)");
  }
  kernels::cuda::check_launch("sem::schwarz_fdm_solve");
}

void schwarz_assemble(const Backend& backend, const TransferSideView& out,
                      const SchwarzLocals& y_local, Span<const double> r,
                      const SchwarzUpdate& update, Span<double> z) {
  if (out.num_global == 0) return;
  const auto blocks = static_cast<unsigned int>((out.num_global + 255) / 256);
  cudaStream_t stream = backend.cuda_context()->stream;
  const bool restricted = out.shared_offsets != nullptr;
  if (y_local.values32 != nullptr) {
    kernels::cuda::launch_dependent(
        restricted ? restricted_assemble_kernel<float> : assemble_kernel<float>, blocks, 256, 0,
        stream, out, y_local.values32, r.data(), update, z.data());
  } else {
    kernels::cuda::launch_dependent(
        restricted ? restricted_assemble_kernel<double> : assemble_kernel<double>, blocks, 256, 0,
        stream, out, y_local.values, r.data(), update, z.data());
  }
  kernels::cuda::check_launch("sem::schwarz_assemble");
}

void schwarz_scatter_add(const Backend& backend, const SchwarzView& view,
                         const SchwarzLocals& y_local, double omega, const double* patch_scale,
                         Span<double> x) {
  const std::int64_t N = view.n + 2;
  const std::int64_t count = view.num_elements * N * N * N;
  if (count == 0) return;
  const auto blocks = static_cast<unsigned int>((count + 255) / 256);
  cudaStream_t stream = backend.cuda_context()->stream;
  if (y_local.values32 != nullptr) {
    scatter_add_kernel<<<blocks, 256, 0, stream>>>(view.box_to_global, y_local.values32, count,
                                                   N * N * N, omega, patch_scale, x.data());
  } else {
    scatter_add_kernel<<<blocks, 256, 0, stream>>>(view.box_to_global, y_local.values, count,
                                                   N * N * N, omega, patch_scale, x.data());
  }
  kernels::cuda::check_launch("sem::schwarz_scatter_add");
}

void schwarz_patch_norms(const Backend& backend, const SchwarzView& view, Span<const double> v,
                         Span<double> norms) {
  if (view.num_elements == 0) return;
  const std::int64_t N = view.n + 2;
  const auto blocks = static_cast<unsigned int>((view.num_elements * 32 + 255) / 256);
  patch_norms_kernel<<<blocks, 256, 0, backend.cuda_context()->stream>>>(
      view.box_to_global, view.num_elements, N * N * N, v.data(), norms.data());
  kernels::cuda::check_launch("sem::schwarz_patch_norms");
}

void vertex_patch_fused_step(const Backend& backend, const SchwarzView& view,
                             const FusedPatchView& fused, const PoissonView& a,
                             Span<const double> b, double omega, const double* patch_scale,
                             Span<double> x) {
  if (view.num_elements == 0) return;
  const int M = view.n + 2;
  if (M > kFusedMaxBox) {
    throw NotSupported("sem::vertex_patch_fused_step: boxes of " + std::to_string(M) +
                       " points per direction (supported: up to " + std::to_string(kFusedMaxBox) +
                       ", p <= 8)");
  }
  if (view.num_elements > 0x7fffffffLL) {
    throw NotSupported("sem::vertex_patch_fused_step: more than 2^31 - 1 patches");
  }
  const std::size_t bytes = fused_shared_bytes(M, a.n);
  const auto blocks = static_cast<unsigned int>(view.num_elements);
  cudaStream_t stream = backend.cuda_context()->stream;
  auto launch = [&](auto kernel, const auto* eigenvectors, const auto* eigenvalues) {
    // More than the default 48 KB of dynamic shared memory from p = 6 on: raised per launch, on
    // the current device, to what this launch takes.
    if (bytes > 48 * 1024) {
      kernels::cuda::check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(bytes)),
                           "cudaFuncSetAttribute (fused vertex-patch step)");
    }
    kernel<<<blocks, kFusedThreads, bytes, stream>>>(view, fused, a, eigenvectors, eigenvalues,
                                                     b.data(), omega, patch_scale, x.data());
  };
  if (view.eigenvectors32 != nullptr) {
    if (a.float_arithmetic) {
      launch(fused_patch_kernel<float, float>, view.eigenvectors32, view.eigenvalues32);
    } else {
      launch(fused_patch_kernel<double, float>, view.eigenvectors32, view.eigenvalues32);
    }
  } else {
    if (a.float_arithmetic) {
      launch(fused_patch_kernel<float, double>, view.eigenvectors, view.eigenvalues);
    } else {
      launch(fused_patch_kernel<double, double>, view.eigenvectors, view.eigenvalues);
    }
  }
  kernels::cuda::check_launch("sem::vertex_patch_fused_step");
}

}  // namespace kryflow::kernels::sem::cuda
