// CUDA SEM Poisson operator: one element per thread block, sum factorization templated on the
// number of GLL points N, and the assembly of the element results into the global vector.
//
// Element kernels (Deville, Fischer and Mund 2002, sec. 4.4; the layered design is that of
// nekRS's ellipticAxHex3D kernels, Fischer et al., "Scalability of high-performance PDE
// solvers", IJHPCA 34(5), 2020):
//   shared   N^3 threads, the element's x_L and the three fluxes w_r, w_s, w_t in shared
//            memory (N <= 10).
//   layered  N^2 threads (i, j), each walking the t-direction: layer k of x_L and of w_r, w_s
//            goes through shared memory, the t-line of x_L and the t-sums stay in registers;
//            the metric terms of layer k + 1 are loaded while layer k is computed.
//   staged   layered, with all 6 N^3 metric terms of the element copied into shared memory by
//            asynchronous 16-byte copies (cp.async) issued before the gather of x, so a block
//            has its whole element's data in flight at once.
//   pipelined  layered, with the metric terms of the next 4 layers in flight: each thread
//            copies the 6 terms of its own point of a layer into a ring of shared-memory slots
//            (cp.async), so the shared memory per block does not grow with N^3.
//   vertex   layered, with the metric terms computed from the element's 8 corners instead of
//            read (24 doubles per element instead of 6 per point; Kronbichler and Kormann's
//            and arXiv 2504.07042's trade of flops for bytes): along a thread's t-line the
//            Jacobian of the trilinear map is affine in t for dx/dr and dx/ds and constant for
//            dx/dt, so each layer costs 6 fused multiply-adds for J, then the cofactors, |J|
//            and G = w |J| J^-1 J^-T = (w / |J|) cof^T cof in fused multiply-adds (not
//            geometric_factors' bits: the sorted assembly then agrees with the reference to
//            rounding, not bit for bit). The double atomic vertex kernel at p = 7 reads the
//            warp-uniform entries of D from constant memory.
//   vertex_lines  vertex's operations register-tiled by lines (N <= 10): each thread owns a
//            t-line, then an r-line and an s-line, forms a contraction's N sums in registers
//            with D's warp-uniform entries from constant memory, and passes each line once
//            through shared memory (see vertex_lines_kernel).
// The atomic layered kernels (vertex among them) keep no r + s array and read the point codes
// again for the stores (N registers fewer each, more blocks per SM).
// With sorted assembly they perform the reference's operations in its order
// (kernels/sem/poisson.hpp; rounded products and sums, no fused multiply-adds), so an element's
// y_L has the reference's bits; with atomic assembly, whose sums are in no fixed order anyway,
// they use fused multiply-adds (fewer instructions).
// Float arithmetic (PoissonView::float_arithmetic): the element kernels are instantiated with
// float shared arrays, registers and sums (Real = float); x, D and the stored metric terms are
// rounded to float when read, y_L is widened to double before it is stored or added. Half the
// shared-memory bytes and registers of the double kernels, and float's instruction throughput.
// shared, layered, vertex and vertex_lines have float instantiations; staged and pipelined run
// as the float
// layered kernel (the same operations in the same order). The vertex kernel forms its line
// coefficients (sums of corners) in double and rounds them, then J, G and the fluxes in float.
// With sorted assembly the float shared and layered kernels give the reference's float bits.
//
// Assembly: each local point carries a 32-bit code, its global index g (bits 0-29), whether
// it is the only local point of g (bit 31) and whether g is a Dirichlet point (bit 30). A
// unique point writes y[g] itself (the reference's sum of one term is that term). Shared points:
//   sorted   y_L stored; then one thread per shared global point sums its locals in increasing
//            local index (the reference's order: cuda equals reference bit for bit).
//   atomic   y zeroed first, then y_L added with atomicAdd (one pass, order not fixed).
// Dirichlet points get y[g] = x[g] (unique ones in the element kernel, shared ones in the
// sorted pass or a fix-up pass over the Dirichlet list).
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <string>
#include <type_traits>
#include <vector>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/dependent_launch.cuh"
#include "kernels/sem/poisson.hpp"

namespace kryflow::kernels::sem::cuda {
namespace {

constexpr std::uint32_t kUniqueBit = 1u << 31;
constexpr std::uint32_t kMaskedBit = 1u << 30;
constexpr std::uint32_t kGlobalBits = kMaskedBit - 1;

/// Row pitch of the shared-memory arrays: N padded to an odd number of doubles, so that the
/// rows a warp reads at once fall into different banks.
template <int N>
constexpr int kPitch = N % 2 == 0 ? N + 1 : N;

/// a b rounded, in the arithmetic of Real (double, or float: PoissonView::float_arithmetic).
template <class Real>
__device__ __forceinline__ Real mul_rn(Real a, Real b) {
  if constexpr (std::is_same_v<Real, double>) {
    return __dmul_rn(a, b);
  } else {
    return __fmul_rn(a, b);
  }
}

/// acc + a b: one fused multiply-add in the atomic kernels (their sums are not the reference's
/// anyway), a rounded product and sum in the sorted ones (the reference's bits).
template <bool Fused, class Real>
__device__ __forceinline__ Real madd(Real acc, Real a, Real b) {
  if constexpr (std::is_same_v<Real, double>) {
    if constexpr (Fused) {
      return __fma_rn(a, b, acc);
    } else {
      return __dadd_rn(acc, __dmul_rn(a, b));
    }
  } else {
    if constexpr (Fused) {
      return __fmaf_rn(a, b, acc);
    } else {
      return __fadd_rn(acc, __fmul_rn(a, b));
    }
  }
}

/// g1 r + g2 s + g3 t, left to right.
template <bool Fused, class Real>
__device__ __forceinline__ Real flux(Real g1, Real g2, Real g3, Real r, Real s, Real t) {
  return madd<Fused>(madd<Fused>(mul_rn(g1, r), g2, s), g3, t);
}

/// What the element kernels do with y_L of one point. A point with the unique bit is written
/// once: a point of one element (g >= num_shared), or, with the atomic assembly and the mask
/// applied, the first local point of a shared Dirichlet point, which writes its identity row
/// (the other copies of that point skip it), so no fix-up pass is needed.
template <bool Atomic>
__device__ __forceinline__ void store_point(const PoissonView& a, const double* __restrict__ x,
                                            double* __restrict__ y, std::int64_t l,
                                            std::uint32_t code, bool masked, double value) {
  const std::uint32_t g = code & kGlobalBits;
  if ((code & kUniqueBit) != 0 && (static_cast<index_t>(g) >= a.num_shared || (Atomic && masked))) {
    const double product = masked ? x[g] : value;
    y[g] = a.accumulate
               ? __dadd_rn(__dmul_rn(a.alpha, product), a.base != nullptr ? a.base[g] : y[g])
               : product;
  } else if constexpr (Atomic) {
    if (!masked) atomicAdd(y + g, a.accumulate ? a.alpha * value : value);
  } else {
    a.local_y[l] = value;
  }
}

template <int N, bool Atomic, class Real>
__global__ void __launch_bounds__(N* N* N)
    shared_element_kernel(const PoissonView a, const std::uint32_t* __restrict__ code,
                          bool use_mask, const double* __restrict__ x, double* __restrict__ y) {
  kernels::cuda::dependent_launch_prologue();
  constexpr int n3 = N * N * N;
  constexpr int P = kPitch<N>;
  __shared__ Real s_d[N * P];
  __shared__ Real s_x[N * N * P];
  __shared__ Real s_wr[N * N * P];
  __shared__ Real s_ws[N * N * P];
  __shared__ Real s_wt[N * N * P];
  const int i = threadIdx.x;
  const int j = threadIdx.y;
  const int k = threadIdx.z;
  const int q = (k * N + j) * N + i;
  const int qp = (k * N + j) * P + i;  // the point in the padded shared arrays
  const std::int64_t e = blockIdx.x;
  const std::int64_t l = e * n3 + q;
  if (q < N * N) s_d[(q / N) * P + q % N] = static_cast<Real>(a.derivative[q]);
  const std::uint32_t c = __ldg(code + l);
  // The metric terms are loaded before the first barrier, so their loads overlap the gather.
  const double* G = a.g + e * 6 * n3 + q;
  const auto g11 = static_cast<Real>(__ldg(G));
  const auto g12 = static_cast<Real>(__ldg(G + n3));
  const auto g13 = static_cast<Real>(__ldg(G + 2 * n3));
  const auto g22 = static_cast<Real>(__ldg(G + 3 * n3));
  const auto g23 = static_cast<Real>(__ldg(G + 4 * n3));
  const auto g33 = static_cast<Real>(__ldg(G + 5 * n3));
  const bool masked = use_mask && (c & kMaskedBit) != 0;
  s_x[qp] = masked ? Real(0) : static_cast<Real>(__ldg(x + (c & kGlobalBits)));
  __syncthreads();
  Real r = 0;
  Real s = 0;
  Real t = 0;
#pragma unroll
  for (int m = 0; m < N; ++m) {
    r = madd<Atomic>(r, s_d[i * P + m], s_x[(k * N + j) * P + m]);
    s = madd<Atomic>(s, s_d[j * P + m], s_x[(k * N + m) * P + i]);
    t = madd<Atomic>(t, s_d[k * P + m], s_x[(m * N + j) * P + i]);
  }
  s_wr[qp] = flux<Atomic>(g11, g12, g13, r, s, t);
  s_ws[qp] = flux<Atomic>(g12, g22, g23, r, s, t);
  s_wt[qp] = flux<Atomic>(g13, g23, g33, r, s, t);
  __syncthreads();
  r = 0;
  s = 0;
  t = 0;
#pragma unroll
  for (int m = 0; m < N; ++m) {
    r = madd<Atomic>(r, s_d[m * P + i], s_wr[(k * N + j) * P + m]);
    s = madd<Atomic>(s, s_d[m * P + j], s_ws[(k * N + m) * P + i]);
    t = madd<Atomic>(t, s_d[m * P + k], s_wt[(m * N + j) * P + i]);
  }
  store_point<Atomic>(a, x, y, l, c, masked, static_cast<double>(r + s + t));
}

/// How the layered kernel obtains the metric terms of a layer.
enum class MetricSource {
  prefetch,   ///< registers, the next layer loaded while this one is computed
  staged,     ///< the whole element copied to shared memory up front
  pipelined,  ///< a ring of kRingLayers layers in shared memory, each thread copying its own
  vertex,     ///< computed from the element's corners (PoissonView::vertices)
};

/// 1 / x, correctly rounded, in the arithmetic of Real.
template <class Real>
__device__ __forceinline__ Real reciprocal(Real x) {
  if constexpr (std::is_same_v<Real, double>) {
    return __drcp_rn(x);
  } else {
    return __frcp_rn(x);
  }
}

/// a b - c d with one rounded product and one fused multiply-add.
template <class Real>
__device__ __forceinline__ Real difference_of_products(Real a, Real b, Real c, Real d) {
  return madd<true>(-(c * d), a, b);
}

/// The metric terms of the vertex kernel along the t-line of one thread (r, s fixed): the
/// Jacobian J[c][d] = dx_c / dr_d of the trilinear map x = sum_v N_v(r) X_v at (r, s, t) is
/// affine in t in its first two columns, J[c][0] = jr0[c] + t jr1[c] and J[c][1] = js0[c] +
/// t js1[c], and constant in its third, J[c][2] = jt[c].
/// Real is the arithmetic of metric (float: PoissonView::float_arithmetic); the coefficients are
/// always summed in double from the double corners and then rounded, so nearby corners of an
/// element far from the origin do not lose their difference to float rounding.
template <class Real>
struct TrilinearLine {
  Real jr0[3], jr1[3], js0[3], js1[3], jt[3];
  Real wrs;  ///< w_r w_s

  /// From the corners X (8 x 3) and the thread's reference point (r, s).
  __device__ void setup(const double* X, double r, double s, double w_r_s) {
    if constexpr (std::is_same_v<Real, double>) {
      wrs = w_r_s;
      // dN_v/dr = (sr / 2) hs ht and dN_v/ds = hr (ss / 2) ht with ht = (1 -+ t) / 2: the parts
      // of the lower (t = -1) and upper (t = +1) corners, a0, a1 and b0, b1.
      double a0[3] = {0.0, 0.0, 0.0};
      double a1[3] = {0.0, 0.0, 0.0};
      double b0[3] = {0.0, 0.0, 0.0};
      double b1[3] = {0.0, 0.0, 0.0};
      for (int c = 0; c < 3; ++c) jt[c] = 0.0;
#pragma unroll
      for (int v = 0; v < 8; ++v) {
        const double sr = (v & 1) != 0 ? 1.0 : -1.0;
        const double ss = (v & 2) != 0 ? 1.0 : -1.0;
        const bool upper = (v & 4) != 0;
        const double hr = 0.5 * (1.0 + sr * r);
        const double hs = 0.5 * (1.0 + ss * s);
        const double dr = 0.5 * sr * hs;
        const double ds = 0.5 * ss * hr;
        const double dt = (upper ? 0.5 : -0.5) * hr * hs;  // dN_v/dt = hr hs (+-1/2)
#pragma unroll
        for (int c = 0; c < 3; ++c) {
          const double x = X[v * 3 + c];
          if (upper) {
            a1[c] += dr * x;
            b1[c] += ds * x;
          } else {
            a0[c] += dr * x;
            b0[c] += ds * x;
          }
          jt[c] += dt * x;
        }
      }
      // (1 - t)/2 a0 + (1 + t)/2 a1 = (a0 + a1)/2 + t (a1 - a0)/2.
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        jr0[c] = 0.5 * (a0[c] + a1[c]);
        jr1[c] = 0.5 * (a1[c] - a0[c]);
        js0[c] = 0.5 * (b0[c] + b1[c]);
        js1[c] = 0.5 * (b1[c] - b0[c]);
      }
    } else {
      TrilinearLine<double> line;
      line.setup(X, r, s, w_r_s);
      wrs = static_cast<Real>(line.wrs);
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        jr0[c] = static_cast<Real>(line.jr0[c]);
        jr1[c] = static_cast<Real>(line.jr1[c]);
        js0[c] = static_cast<Real>(line.js0[c]);
        js1[c] = static_cast<Real>(line.js1[c]);
        jt[c] = static_cast<Real>(line.jt[c]);
      }
    }
  }

  /// G11, G12, G13, G22, G23, G33 at t with weight w_t: G = w |J| J^-1 J^-T, and with J^-1 =
  /// cof^T / |J| (cof the cofactor matrix), G_ab = (w / |J|) sum_c cof[c][a] cof[c][b]. Fused
  /// multiply-adds throughout (about 60 operations a point, against 90 with the inverse formed
  /// and every product rounded).
  __device__ void metric(Real t, Real w_t, Real g[6]) const {
    Real J[3][3];
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      J[c][0] = madd<true>(jr0[c], t, jr1[c]);
      J[c][1] = madd<true>(js0[c], t, js1[c]);
      J[c][2] = jt[c];
    }
    Real cof[3][3];
    cof[0][0] = difference_of_products(J[1][1], J[2][2], J[1][2], J[2][1]);
    cof[1][0] = difference_of_products(J[0][2], J[2][1], J[0][1], J[2][2]);
    cof[2][0] = difference_of_products(J[0][1], J[1][2], J[0][2], J[1][1]);
    cof[0][1] = difference_of_products(J[1][2], J[2][0], J[1][0], J[2][2]);
    cof[1][1] = difference_of_products(J[0][0], J[2][2], J[0][2], J[2][0]);
    cof[2][1] = difference_of_products(J[0][2], J[1][0], J[0][0], J[1][2]);
    cof[0][2] = difference_of_products(J[1][0], J[2][1], J[1][1], J[2][0]);
    cof[1][2] = difference_of_products(J[0][1], J[2][0], J[0][0], J[2][1]);
    cof[2][2] = difference_of_products(J[0][0], J[1][1], J[0][1], J[1][0]);
    const Real det =
        madd<true>(madd<true>(J[0][2] * cof[0][2], J[0][1], cof[0][1]), J[0][0], cof[0][0]);
    const Real w = (wrs * w_t) * reciprocal(det);
    constexpr int pairs[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
#pragma unroll
    for (int c = 0; c < 6; ++c) {
      const int p = pairs[c][0];
      const int q = pairs[c][1];
      g[c] = w * madd<true>(madd<true>(cof[2][p] * cof[2][q], cof[1][p], cof[1][q]), cof[0][p],
                            cof[0][q]);
    }
  }
};
/// Offset of the N x N derivative matrix in c_derivative: the matrices of N = 2, 3, ... in turn.
constexpr int derivative_offset(int n) {
  int offset = 0;
  for (int q = 2; q < n; ++q) offset += q * q;
  return offset;
}
template <int N>
constexpr int kDerivativeOffset = derivative_offset(N);

/// Room for the derivative matrix D of every N = 2..16 (row-major, D[i * N + m]) in constant
/// memory, for the warp-uniform reads D[k][m] of the vertex kernel (k the layer, m the sum
/// index: both fixed at compile time in the unrolled loops, so they become constant-bank
/// operands of the multiply-adds and leave the shared-memory pipe) and of the vertex_lines
/// kernel. poisson_prepare fills the operator's N at its setup (each N has its own range, and
/// every operator of N points has the same D).
__constant__ double c_derivative[kDerivativeOffset<17>];
/// The same matrices rounded to float, for the float-arithmetic kernels.
__constant__ float c_derivative32[kDerivativeOffset<17>];

/// Entry q of D of N points from constant memory, in Real.
template <class Real>
__device__ __forceinline__ Real constant_derivative(int q) {
  if constexpr (std::is_same_v<Real, float>) {
    return c_derivative32[q];
  } else {
    return c_derivative[q];
  }
}

/// Layers in flight in the pipelined kernel.
constexpr int kRingLayers = 4;

template <int N, bool Atomic, MetricSource Source, class Real, int MinBlocks = 0,
          bool ConstantD = false>
__global__ void __launch_bounds__(N* N, MinBlocks)
    layered_element_kernel(const PoissonView a, const std::uint32_t* __restrict__ code,
                           bool use_mask, const double* __restrict__ x, double* __restrict__ y) {
  kernels::cuda::dependent_launch_prologue();
  constexpr int n2 = N * N;
  constexpr int n3 = N * N * N;
  constexpr int P = kPitch<N>;
  __shared__ Real s_d[N * P];
  __shared__ Real s_u[N * P];
  __shared__ Real s_wr[N * P];
  __shared__ Real s_ws[N * P];
  // staged: the element's 6 N^3 metric terms; pipelined: kRingLayers x 6 N^2.
  extern __shared__ double2 s_staged[];
  const int i = threadIdx.x;
  const int j = threadIdx.y;
  const int ij = j * N + i;
  const std::int64_t e = blockIdx.x;
  const double* G = a.g + e * 6 * n3 + ij;
  constexpr int ring = kRingLayers < N ? kRingLayers : N;
  double* s_ring = reinterpret_cast<double*>(s_staged) + ij;  // pipelined: this thread's slots
  if constexpr (Source == MetricSource::pipelined) {
    // Layers 0 .. ring-1, one batch each; a thread copies the 6 terms it will read itself.
#pragma unroll
    for (int k = 0; k < ring; ++k) {
#pragma unroll
      for (int c6 = 0; c6 < 6; ++c6) {
        __pipeline_memcpy_async(s_ring + (k * 6 + c6) * n2, G + c6 * n3 + k * n2, sizeof(double));
      }
      __pipeline_commit();
    }
  }
  if constexpr (Source == MetricSource::staged) {
    // 6 N^3 doubles from a 16-byte aligned offset (6 N^3 is even): 3 N^3 16-byte copies.
    const auto* source = reinterpret_cast<const double2*>(a.g + e * 6 * n3);
    for (int q = ij; q < 3 * n3; q += n2) {
      __pipeline_memcpy_async(s_staged + q, source + q, sizeof(double2));
    }
    __pipeline_commit();
  }
  const int ijp = j * P + i;  // (i, j) in the padded shared arrays
  s_d[ijp] = static_cast<Real>(a.derivative[ij]);
  // ConstantD: the warp-uniform D[k][m] and D[k][kk] from c_derivative, the rest from s_d.
  constexpr int d0 = kDerivativeOffset<N>;
  static_assert(N <= 16, "c_derivative holds N = 2..16");
  TrilinearLine<Real> line;
  if constexpr (Source == MetricSource::vertex) {
    // The element's 24 corner coordinates through shared memory.
    __shared__ double s_corners[24];
    for (int q = ij; q < 24; q += n2) s_corners[q] = __ldg(a.vertices + e * 24 + q);
    __syncthreads();
    line.setup(s_corners, __ldg(a.nodes + i), __ldg(a.nodes + j),
               __ldg(a.weights + i) * __ldg(a.weights + j));
  }
  // The t-line of x_L in registers; codes kept for the stores in the sorted kernels (the atomic
  // ones read them again at the end: N registers fewer, the codes are still in cache).
  Real u[N];
  std::uint32_t c[N];
#pragma unroll
  for (int k = 0; k < N; ++k) {
    c[k] = __ldg(code + e * n3 + k * n2 + ij);
    const bool masked = use_mask && (c[k] & kMaskedBit) != 0;
    u[k] = masked ? Real(0) : static_cast<Real>(__ldg(x + (c[k] & kGlobalBits)));
  }
  Real rs[N];  // r + s parts of y_L per layer (sorted kernels only)
  Real tt[N];  // t sums, accumulated over the layers m in increasing order
#pragma unroll
  for (int k = 0; k < N; ++k) tt[k] = 0;
  // prefetch: the metric terms of layer k + 1 are loaded while layer k is computed.
  Real gn[6];
  if constexpr (Source == MetricSource::staged) {
    __pipeline_wait_prior(0);  // this thread's copies; the barrier below publishes them all
  } else if constexpr (Source == MetricSource::prefetch) {
#pragma unroll
    for (int c6 = 0; c6 < 6; ++c6) gn[c6] = static_cast<Real>(__ldg(G + c6 * n3));
  }
  const double* s_g = reinterpret_cast<const double*>(s_staged) + ij;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    s_u[ijp] = u[k];
    __syncthreads();
    Real g11, g12, g13, g22, g23, g33;
    if constexpr (Source == MetricSource::vertex) {
      // Read as prefetch's below.
      line.metric(static_cast<Real>(__ldg(a.nodes + k)), static_cast<Real>(__ldg(a.weights + k)),
                  gn);
    }
    if constexpr (Source == MetricSource::pipelined) {
      // Batches committed after layer k's: ring - 1 (one per layer, empty ones at the end).
      __pipeline_wait_prior(ring - 1);
      double* slot = s_ring + (k % ring) * 6 * n2;
      g11 = static_cast<Real>(slot[0]);
      g12 = static_cast<Real>(slot[n2]);
      g13 = static_cast<Real>(slot[2 * n2]);
      g22 = static_cast<Real>(slot[3 * n2]);
      g23 = static_cast<Real>(slot[4 * n2]);
      g33 = static_cast<Real>(slot[5 * n2]);
    } else if constexpr (Source == MetricSource::staged) {
      g11 = static_cast<Real>(s_g[k * n2]);
      g12 = static_cast<Real>(s_g[n3 + k * n2]);
      g13 = static_cast<Real>(s_g[2 * n3 + k * n2]);
      g22 = static_cast<Real>(s_g[3 * n3 + k * n2]);
      g23 = static_cast<Real>(s_g[4 * n3 + k * n2]);
      g33 = static_cast<Real>(s_g[5 * n3 + k * n2]);
    } else {
      g11 = gn[0];
      g12 = gn[1];
      g13 = gn[2];
      g22 = gn[3];
      g23 = gn[4];
      g33 = gn[5];
      if (Source == MetricSource::prefetch && k + 1 < N) {
#pragma unroll
        for (int c6 = 0; c6 < 6; ++c6) {
          gn[c6] = static_cast<Real>(__ldg(G + c6 * n3 + (k + 1) * n2));
        }
      }
    }
    Real r = 0;
    Real s = 0;
    Real t = 0;
#pragma unroll
    for (int m = 0; m < N; ++m) {
      Real dkm;
      if constexpr (ConstantD) {
        dkm = constant_derivative<Real>(d0 + k * N + m);
      } else {
        dkm = s_d[k * P + m];
      }
      r = madd<Atomic>(r, s_d[i * P + m], s_u[j * P + m]);
      s = madd<Atomic>(s, s_d[j * P + m], s_u[m * P + i]);
      t = madd<Atomic>(t, dkm, u[m]);
    }
    s_wr[ijp] = flux<Atomic>(g11, g12, g13, r, s, t);
    s_ws[ijp] = flux<Atomic>(g12, g22, g23, r, s, t);
    const Real wt = flux<Atomic>(g13, g23, g33, r, s, t);
    if constexpr (Source == MetricSource::pipelined) {
      // The slot's terms are consumed (wt depends on them): refill it with layer k + ring.
      double* slot = s_ring + (k % ring) * 6 * n2;
      if (k + ring < N) {
#pragma unroll
        for (int c6 = 0; c6 < 6; ++c6) {
          __pipeline_memcpy_async(slot + c6 * n2, G + c6 * n3 + (k + ring) * n2, sizeof(double));
        }
      }
      __pipeline_commit();
    }
    __syncthreads();
    r = 0;
    s = 0;
#pragma unroll
    for (int m = 0; m < N; ++m) {
      r = madd<Atomic>(r, s_d[m * P + i], s_wr[j * P + m]);
      s = madd<Atomic>(s, s_d[m * P + j], s_ws[m * P + i]);
    }
    if constexpr (Atomic) {
      tt[k] += r + s;  // y_L = r + s + t in no fixed order: no array of r + s parts kept
    } else {
      rs[k] = r + s;
    }
    // Layer k is the m = k term of every t-sum of this line.
#pragma unroll
    for (int kk = 0; kk < N; ++kk) {
      if constexpr (ConstantD) {
        tt[kk] = madd<Atomic>(tt[kk], constant_derivative<Real>(d0 + k * N + kk), wt);
      } else {
        tt[kk] = madd<Atomic>(tt[kk], s_d[k * P + kk], wt);
      }
    }
  }
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const std::int64_t l = e * n3 + k * n2 + ij;
    const std::uint32_t ck = Atomic ? __ldg(code + l) : c[k];
    const bool masked = use_mask && (ck & kMaskedBit) != 0;
    store_point<Atomic>(a, x, y, l, ck, masked,
                        static_cast<double>(Atomic ? tt[k] : rs[k] + tt[k]));
  }
}

/// Word of point (i, j, k) in the vertex_lines kernel's element arrays, where three line
/// owners meet: a t-line thread (i, j) over k, an r-line thread (j, k) over i and an s-line
/// thread (i, k) over j, the first index running fastest among a warp's threads. N = 8: rows of
/// 8 words, layers 72 words apart and i swizzled by (2 k + j / 4) mod 8, so each of the three
/// touches 32 banks per float warp access; other N: rows padded to an odd pitch (some line
/// accesses have 2- or 3-way bank conflicts).
template <int N>
__device__ __forceinline__ int line_word(int i, int j, int k) {
  if constexpr (N == 8) {
    return 72 * k + 8 * j + (i ^ ((2 * k + j / 4) & 7));
  } else {
    return (k * N + j) * kPitch<N> + i;
  }
}
template <int N>
constexpr int kLineWords = N == 8 ? 8 * 72 : N* N* kPitch<N>;

/// D[row][column] of N points in Real: from constant memory (c_derivative, filled by
/// poisson_prepare), indices known at compile time in the unrolled loops.
template <int N, class Real>
__device__ __forceinline__ Real line_d(int row, int column) {
  return constant_derivative<Real>(kDerivativeOffset<N> + row * N + column);
}

/// Line (u, w) of N points of an element array to registers: in[m] = s[word of point m]
/// along the line.
template <int N, class Real, class Word>
__device__ __forceinline__ void load_line(const Real* s, Word word, Real (&in)[N]) {
#pragma unroll
  for (int m = 0; m < N; ++m) in[m] = s[word(m)];
}

/// out[o] = sum_m D[o][m] in[m] (Transpose: D[m][o]), each sum from 0 in increasing m.
template <int N, bool Fused, bool Transpose, class Real>
__device__ __forceinline__ Real line_sum(int o, const Real (&in)[N]) {
  Real sum = 0;
#pragma unroll
  for (int m = 0; m < N; ++m) {
    sum = madd<Fused>(sum, Transpose ? line_d<N, Real>(m, o) : line_d<N, Real>(o, m), in[m]);
  }
  return sum;
}

/// The vertex kernel register-tiled by lines (the scheme of the Schwarz local solves,
/// kernels/sem/schwarz_cuda.cu): N^2 threads an element, each owning whole lines in turn, so
/// every contraction's sums are formed in registers with D's entries warp-uniform (constant
/// memory) and each line goes once through shared memory instead of once per sum:
///   gather     t-line (i, j): x_L into registers and s_u; u_t = D_t x_L into s_t.
///   forward    r-line (j, k): u_r = D_r x_L from s_u into s_r; s-line (i, k): u_s into s_s.
///   fluxes     t-line: G from the corners (TrilinearLine); w_r, w_s, w_t in place of u_r,
///              u_s, u_t.
///   backward   r-line: D_r^T w_r in place in s_r; s-line: D_s^T w_s in place in s_s; t-line:
///              D_t^T w_t into registers.
///   store      t-line: y_L = (r + s) + t, stored or added (store_point).
/// 19 shared-memory accesses a point and 4 barriers an element against about 8 N accesses a
/// point and 2 N + 1 barriers in the layered vertex kernel, and no N-arrays live across the
/// barriers but the last (the registers bound the blocks per SM). The vertex kernel's
/// operations in its order, so with sorted assembly it has its bits (every sum formed from 0 in
/// increasing m). N <= 10, the range measured (static shared memory: 4 N^2 kPitch<N> values of
/// Real).
template <int N, bool Atomic, class Real, int MinBlocks = 0>
__global__ void __launch_bounds__(N* N, MinBlocks)
    vertex_lines_kernel(const PoissonView a, const std::uint32_t* __restrict__ code, bool use_mask,
                        const double* __restrict__ x, double* __restrict__ y) {
  kernels::cuda::dependent_launch_prologue();
  constexpr int n2 = N * N;
  constexpr int n3 = N * N * N;
  __shared__ Real s_u[kLineWords<N>];
  __shared__ Real s_r[kLineWords<N>];
  __shared__ Real s_s[kLineWords<N>];
  __shared__ Real s_t[kLineWords<N>];
  __shared__ double s_corners[24];
  const int tid = threadIdx.x;
  const int p = tid % N;  // i of the t-line, j of the r-line, i of the s-line
  const int q = tid / N;  // j of the t-line, k of the r- and s-lines
  const std::int64_t e = blockIdx.x;
  const auto t_word = [p, q](int k) { return line_word<N>(p, q, k); };
  const auto r_word = [p, q](int i) { return line_word<N>(i, p, q); };
  const auto s_word = [p, q](int j) { return line_word<N>(p, j, q); };
  for (int c = tid; c < 24; c += n2) s_corners[c] = __ldg(a.vertices + e * 24 + c);
  {
    Real u[N];
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const std::uint32_t c = __ldg(code + e * n3 + k * n2 + tid);
      const bool masked = use_mask && (c & kMaskedBit) != 0;
      u[k] = masked ? Real(0) : static_cast<Real>(__ldg(x + (c & kGlobalBits)));
      s_u[t_word(k)] = u[k];
    }
#pragma unroll
    for (int k = 0; k < N; ++k) s_t[t_word(k)] = line_sum<N, Atomic, false>(k, u);
  }
  __syncthreads();
  {
    Real in[N];
    load_line<N>(s_u, r_word, in);
#pragma unroll
    for (int i = 0; i < N; ++i) s_r[r_word(i)] = line_sum<N, Atomic, false>(i, in);
    load_line<N>(s_u, s_word, in);
#pragma unroll
    for (int j = 0; j < N; ++j) s_s[s_word(j)] = line_sum<N, Atomic, false>(j, in);
  }
  TrilinearLine<Real> line;
  line.setup(s_corners, __ldg(a.nodes + p), __ldg(a.nodes + q),
             __ldg(a.weights + p) * __ldg(a.weights + q));
  __syncthreads();
#pragma unroll 1
  for (int k = 0; k < N; ++k) {
    Real g[6];
    line.metric(static_cast<Real>(__ldg(a.nodes + k)), static_cast<Real>(__ldg(a.weights + k)), g);
    const int w = t_word(k);
    const Real r = s_r[w];
    const Real s = s_s[w];
    const Real t = s_t[w];
    s_r[w] = flux<Atomic>(g[0], g[1], g[2], r, s, t);
    s_s[w] = flux<Atomic>(g[1], g[3], g[4], r, s, t);
    s_t[w] = flux<Atomic>(g[2], g[4], g[5], r, s, t);
  }
  __syncthreads();
  Real yt[N];
  {
    Real in[N];
    load_line<N>(s_r, r_word, in);
#pragma unroll
    for (int i = 0; i < N; ++i) s_r[r_word(i)] = line_sum<N, Atomic, true>(i, in);
    load_line<N>(s_s, s_word, in);
#pragma unroll
    for (int j = 0; j < N; ++j) s_s[s_word(j)] = line_sum<N, Atomic, true>(j, in);
    load_line<N>(s_t, t_word, in);
#pragma unroll
    for (int k = 0; k < N; ++k) yt[k] = line_sum<N, Atomic, true>(k, in);
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const int w = t_word(k);
    const std::int64_t l = e * n3 + k * n2 + tid;
    const std::uint32_t c = __ldg(code + l);
    const bool masked = use_mask && (c & kMaskedBit) != 0;
    store_point<Atomic>(a, x, y, l, c, masked, static_cast<double>((s_r[w] + s_s[w]) + yt[k]));
  }
}

constexpr int kThreads = 256;

/// y[g] of shared global points: the sum of their stored y_L in increasing local index.
__global__ void __launch_bounds__(kThreads)
    sorted_assembly_kernel(const PoissonView a, const index_t* __restrict__ shared_offsets,
                           const index_t* __restrict__ shared_locals, index_t num_shared,
                           bool use_mask, const double* __restrict__ x, double* __restrict__ y) {
  const index_t g = static_cast<index_t>(blockIdx.x) * kThreads + static_cast<index_t>(threadIdx.x);
  if (g >= num_shared) return;
  const index_t s = g;
  double sum = x[g];
  if (!use_mask || a.mask[g] == 0) {
    sum = 0.0;
    const index_t end = __ldg(shared_offsets + s + 1);
    for (index_t q = __ldg(shared_offsets + s); q < end; ++q) {
      sum = sum + a.local_y[__ldg(shared_locals + q)];
    }
  }
  y[g] =
      a.accumulate ? __dadd_rn(__dmul_rn(a.alpha, sum), a.base != nullptr ? a.base[g] : y[g]) : sum;
}

__global__ void __launch_bounds__(kThreads)
    assemble_diagonal_kernel(const PoissonView a, const double* __restrict__ d_local,
                             double masked_value, double* __restrict__ y) {
  const std::int64_t g = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (g >= a.num_global) return;
  if (a.mask != nullptr && a.mask[g] != 0) {
    y[g] = masked_value;
    return;
  }
  double sum = 0.0;
  for (std::int64_t q = a.global_offsets[g]; q < a.global_offsets[g + 1]; ++q) {
    sum = sum + d_local[a.global_locals[q]];
  }
  y[g] = sum;
}

unsigned int blocks_for(std::int64_t count) {
  return static_cast<unsigned int>((count + kThreads - 1) / kThreads);
}

/// Launches an element kernel with `bytes` of dynamic shared memory, raising the kernel's limit
/// once (static and dynamic shared memory together may exceed the default 48 KB).
template <auto Kernel>
void launch_with_dynamic_shared(unsigned int blocks, dim3 threads, std::size_t bytes,
                                cudaStream_t stream, const PoissonView& a, bool use_mask,
                                const double* x, double* y) {
  static const bool configured = [bytes] {
    kernels::cuda::check(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(bytes)),
                         "cudaFuncSetAttribute (element kernel shared memory)");
    return true;
  }();
  (void)configured;
  kernels::cuda::launch_dependent(Kernel, blocks, threads, bytes, stream, a, a.local_code, use_mask,
                                  x, y);
}

/// The shared kernel (N <= 10) or, for every other choice that reaches it, the layered kernel
/// that reads the stored metric terms, in Real arithmetic.
template <int N, bool Atomic, typename Real>
void launch_shared_or_prefetch(const PoissonView& a, bool use_mask, const double* x, double* y,
                               cudaStream_t stream) {
  const auto blocks = static_cast<unsigned int>(a.num_elements);
  if constexpr (N <= 10) {
    if (a.element_kernel == ElementKernel::shared) {
      kernels::cuda::launch_dependent(shared_element_kernel<N, Atomic, Real>, blocks, dim3(N, N, N),
                                      0, stream, a, a.local_code, use_mask, x, y);
      return;
    }
  } else {
    if (a.element_kernel == ElementKernel::shared) {
      throw NotSupported("sem::poisson_apply: the shared element kernel needs N <= 10, got N = " +
                         std::to_string(N));
    }
  }
  kernels::cuda::launch_dependent(layered_element_kernel<N, Atomic, MetricSource::prefetch, Real>,
                                  blocks, dim3(N, N), 0, stream, a, a.local_code, use_mask, x, y);
}

/// The blocks per SM the atomic vertex kernel is compiled for (the second argument of its
/// __launch_bounds__, which caps its registers). Measured on the H200 at p = 7 (40^3 box and
/// Kershaw mesh, before D came from constant memory): 8 blocks (126 registers, no spills) in
/// double, 662 against 682 us on the box; 12 blocks (80 registers, no spills) in float, 491 against
/// 527 us. 10 and 12 blocks in double spill and are slower. The sorted kernels keep their r + s and
/// code arrays and the other orders are not measured: they keep the compiler's choice (0, no second
/// argument; an explicit 1 lets ptxas take up to 255 registers, and the p = 3..11 kernels were then
/// 5-50 % slower).
template <int N, bool Atomic, class Real>
constexpr int kVertexMinBlocks = (N == 8 && Atomic) ? (std::is_same_v<Real, double> ? 8 : 12) : 0;

/// Whether the vertex kernel reads the warp-uniform entries of D from constant memory: measured
/// on the H200 for the double atomic kernel at p = 7, where shared-memory loads bound it (box
/// 40^3: 614 against 665 us, Kershaw 89 against 96; keeping D's row and column of the thread in
/// registers as well gained nothing more). The float atomic kernel at p = 7 (86 % L1/TEX
/// throughput on Kershaw) reads them from the float copy c_derivative32 (measured only together
/// with two other changes: Kershaw's p = 7 smoothing 1-2 % faster, bench/results/h200_pmg,
/// ae43076). Other orders are not measured.
template <int N, bool Atomic, class Real>
constexpr bool kVertexConstantD = N == 8 && Atomic;

/// The blocks per SM the atomic vertex_lines kernel is compiled for at p = 7, measured on the
/// H200 (kryflow_bench_sem, 40^3 box and Kershaw 20^3, bench/results/h200_pmg/
/// c3fdb9c_vertex_lines_caps): float 16 (64 registers, 28 bytes spilled): 345 and 54.3 us
/// against 356 and 55.1 with the compiler's 72 registers and 374 and 57.0 with 80; double 12
/// (80 registers; its 18.6 KB of shared memory lets 11 blocks reside): 456 and 67.4 us against
/// 466 and 68.5 with the compiler's 90 and 520 and 75.9 with 64 (spills). Other orders and the
/// sorted kernels keep the compiler's choice (not measured).
template <int N, bool Atomic, class Real>
constexpr int kVertexLinesMinBlocks = (N == 8 && Atomic) ? (std::is_same_v<Real, float> ? 16 : 12)
                                                         : 0;

template <int N, bool Atomic, class Real>
void launch_vertex_lines(const PoissonView& a, bool use_mask, const double* x, double* y,
                         cudaStream_t stream) {
  if constexpr (N <= 10) {
    kernels::cuda::launch_dependent(
        vertex_lines_kernel<N, Atomic, Real, kVertexLinesMinBlocks<N, Atomic, Real>>,
        static_cast<unsigned int>(a.num_elements), dim3(N * N), 0, stream, a, a.local_code,
        use_mask, x, y);
  } else {
    throw NotSupported(
        "sem::poisson_apply: the vertex_lines element kernel needs N <= 10, got N = " +
        std::to_string(N));
  }
}

template <int N, bool Atomic, class Real>
void launch_vertex(const PoissonView& a, bool use_mask, const double* x, double* y,
                   cudaStream_t stream) {
  constexpr bool constant_d = kVertexConstantD<N, Atomic, Real>;
  kernels::cuda::launch_dependent(
      layered_element_kernel<N, Atomic, MetricSource::vertex, Real,
                             kVertexMinBlocks<N, Atomic, Real>, constant_d>,
      static_cast<unsigned int>(a.num_elements), dim3(N, N), 0, stream, a, a.local_code, use_mask,
      x, y);
}

/// The float-arithmetic element kernels (PoissonView::float_arithmetic): vertex, vertex_lines,
/// shared and layered have their own instantiations; staged and pipelined, whose point is the
/// double metric terms' bytes in flight, run as the float layered kernel (the same operations in
/// the same order, so the same results).
template <int N, bool Atomic>
void launch_float_element(const PoissonView& a, bool use_mask, const double* x, double* y,
                          cudaStream_t stream) {
  if (a.element_kernel == ElementKernel::vertex) {
    launch_vertex<N, Atomic, float>(a, use_mask, x, y, stream);
    return;
  }
  if (a.element_kernel == ElementKernel::vertex_lines) {
    launch_vertex_lines<N, Atomic, float>(a, use_mask, x, y, stream);
    return;
  }
  launch_shared_or_prefetch<N, Atomic, float>(a, use_mask, x, y, stream);
}

template <int N, bool Atomic>
void launch_element(const PoissonView& a, bool use_mask, const double* x, double* y,
                    cudaStream_t stream) {
  if (a.float_arithmetic) {
    launch_float_element<N, Atomic>(a, use_mask, x, y, stream);
    return;
  }
  const auto blocks = static_cast<unsigned int>(a.num_elements);
  if (a.element_kernel == ElementKernel::pipelined) {
    constexpr int ring = kRingLayers < N ? kRingLayers : N;
    constexpr std::size_t bytes = std::size_t{6} * ring * N * N * sizeof(double);
    launch_with_dynamic_shared<layered_element_kernel<N, Atomic, MetricSource::pipelined, double>>(
        blocks, dim3(N, N), bytes, stream, a, use_mask, x, y);
    return;
  }
  if (a.element_kernel == ElementKernel::vertex) {
    launch_vertex<N, Atomic, double>(a, use_mask, x, y, stream);
    return;
  }
  if (a.element_kernel == ElementKernel::vertex_lines) {
    launch_vertex_lines<N, Atomic, double>(a, use_mask, x, y, stream);
    return;
  }
  if (a.element_kernel == ElementKernel::staged) {
    constexpr std::size_t bytes = std::size_t{6} * N * N * N * sizeof(double);
    launch_with_dynamic_shared<layered_element_kernel<N, Atomic, MetricSource::staged, double>>(
        blocks, dim3(N, N), bytes, stream, a, use_mask, x, y);
    return;
  }
  launch_shared_or_prefetch<N, Atomic, double>(a, use_mask, x, y, stream);
}

template <bool Atomic>
void launch_element_for(const PoissonView& a, bool use_mask, const double* x, double* y,
                        cudaStream_t stream) {
  switch (a.n) {
    case 2:
      return launch_element<2, Atomic>(a, use_mask, x, y, stream);
    case 3:
      return launch_element<3, Atomic>(a, use_mask, x, y, stream);
    case 4:
      return launch_element<4, Atomic>(a, use_mask, x, y, stream);
    case 5:
      return launch_element<5, Atomic>(a, use_mask, x, y, stream);
    case 6:
      return launch_element<6, Atomic>(a, use_mask, x, y, stream);
    case 7:
      return launch_element<7, Atomic>(a, use_mask, x, y, stream);
    case 8:
      return launch_element<8, Atomic>(a, use_mask, x, y, stream);
    case 9:
      return launch_element<9, Atomic>(a, use_mask, x, y, stream);
    case 10:
      return launch_element<10, Atomic>(a, use_mask, x, y, stream);
    case 11:
      return launch_element<11, Atomic>(a, use_mask, x, y, stream);
    case 12:
      return launch_element<12, Atomic>(a, use_mask, x, y, stream);
    case 13:
      return launch_element<13, Atomic>(a, use_mask, x, y, stream);
    case 14:
      return launch_element<14, Atomic>(a, use_mask, x, y, stream);
    case 15:
      return launch_element<15, Atomic>(a, use_mask, x, y, stream);
    case 16:
      return launch_element<16, Atomic>(a, use_mask, x, y, stream);
    default:
      throw NotSupported("sem::poisson_apply: N = " + std::to_string(a.n) +
                         " points per direction (supported: 2..16)");
  }
}

}  // namespace

void poisson_prepare(const Backend& backend, const PoissonView& a) {
  // D of N points into c_derivative on the backend's device, for the kernels that read it from
  // there (vertex_lines, and vertex at N = 8: kVertexConstantD); every operator of N points has
  // the same D.
  if (a.n < 2 || a.n > 16 || a.derivative == nullptr) return;
  const auto* context = backend.cuda_context();
  KRYFLOW_CUDA_CHECK(cudaSetDevice(context->device));
  const auto count = static_cast<std::size_t>(a.n) * a.n;
  const auto offset = static_cast<std::size_t>(derivative_offset(a.n));
  KRYFLOW_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_derivative, a.derivative, count * sizeof(double),
                                             offset * sizeof(double), cudaMemcpyDeviceToDevice,
                                             context->stream));
  // The float copy rounded on the host (N^2 entries once per operator).
  std::vector<double> d(count);
  KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(d.data(), a.derivative, count * sizeof(double),
                                     cudaMemcpyDeviceToHost, context->stream));
  KRYFLOW_CUDA_CHECK(cudaStreamSynchronize(context->stream));
  const std::vector<float> d32(d.begin(), d.end());
  KRYFLOW_CUDA_CHECK(cudaMemcpyToSymbol(c_derivative32, d32.data(), count * sizeof(float),
                                        offset * sizeof(float), cudaMemcpyHostToDevice));
}

void poisson_apply(const Backend& backend, const PoissonView& a, Span<const double> x,
                   Span<double> y) {
  if (a.num_elements == 0) return;
  cudaStream_t stream = backend.cuda_context()->stream;
  const bool use_mask = a.mask != nullptr;
  if (a.assembly == Assembly::atomic) {
    // Only the shared points, 0 .. num_shared - 1, are added to; the others are written once.
    // Accumulating, they are added to y as it is.
    if (!a.accumulate) {
      KRYFLOW_CUDA_CHECK(cudaMemsetAsync(
          y.data(), 0, static_cast<std::size_t>(a.num_shared) * sizeof(double), stream));
    } else if (a.base != nullptr && a.base != y.data()) {
      // The shared points start from the base (the unique ones read it as they are written).
      KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(y.data(), a.base,
                                         static_cast<std::size_t>(a.num_shared) * sizeof(double),
                                         cudaMemcpyDeviceToDevice, stream));
    }
    // The shared Dirichlet points are written by their first local point (store_point).
    launch_element_for<true>(a, use_mask, x.data(), y.data(), stream);
    kernels::cuda::check_launch("sem::poisson_apply (element, atomic)");
    return;
  }
  launch_element_for<false>(a, use_mask, x.data(), y.data(), stream);
  kernels::cuda::check_launch("sem::poisson_apply (element, sorted)");
  if (a.num_shared > 0) {
    sorted_assembly_kernel<<<blocks_for(a.num_shared), kThreads, 0, stream>>>(
        a, a.shared_offsets, a.shared_locals, a.num_shared, use_mask, x.data(), y.data());
    kernels::cuda::check_launch("sem::poisson_apply (sorted assembly)");
  }
}

void poisson_assemble_diagonal(const Backend& backend, const PoissonView& a,
                               Span<const double> d_local, double masked_value, Span<double> y) {
  if (a.num_global == 0) return;
  assemble_diagonal_kernel<<<blocks_for(a.num_global), kThreads, 0,
                             backend.cuda_context()->stream>>>(a, d_local.data(), masked_value,
                                                               y.data());
  kernels::cuda::check_launch("sem::poisson_assemble_diagonal");
}

}  // namespace kryflow::kernels::sem::cuda
