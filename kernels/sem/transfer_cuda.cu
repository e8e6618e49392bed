// CUDA spectral-element transfers: one block per element for the interpolation (the weighted or
// owner-masked gather, then the three contractions through shared memory, a line per thread,
// each output entry's sum in the reference's order; the prolongation writes the owned points of
// the global vector directly), one thread per global point for the assembly.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"
#include "kernels/backend/dependent_launch.cuh"
#include "kernels/sem/points.hpp"
#include "kernels/sem/transfer.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::sem::cuda {
namespace {

constexpr int kThreads = 128;
/// Points a thread gathers (or writes) per batch in the interpolation kernel.
constexpr int kBatch = 4;

/// The odd stride >= n between the lines of a shared array: threads reading entry i of
/// consecutive lines touch distinct banks (doubles: two 4-byte banks each).
__host__ __device__ constexpr int line_stride(int n) {
  return n % 2 == 0 ? n + 1 : n;
}

/// sums[a] = sum_i M[a n + i] v[i] (i < n, from 0 in increasing i, products and sums rounded
/// as the reference's) for a < rows, stored by store(a, sum). M's entries are the same for the
/// whole warp (broadcast loads); v is in registers.
template <int NI, typename Store>
__device__ __forceinline__ void contract_line(const double* M, const double (&v)[NI], int rows,
                                              Store&& store) {
  for (int a = 0; a < rows; ++a) {
    double sum = 0.0;
#pragma unroll
    for (int i = 0; i < NI; ++i) sum = __dadd_rn(sum, __dmul_rn(M[a * NI + i], v[i]));
    store(a, sum);
  }
}

/// The interpolation of element blockIdx.x; Prolongate: written to out's global points through
/// their owners (y = beta y + value), else to the element's out-side locals y_local. Each
/// contraction is done a line per thread: the line's n_in entries are read once into registers
/// and give all n_out sums of the line (one shared load per entry instead of one per product);
/// the lines of each stage are laid out at an odd stride so that the threads of a warp read
/// distinct banks.
template <int NI, bool Prolongate>
__global__ void __launch_bounds__(kThreads)
    interpolate_kernel(const TransferSideView in, const TransferSideView out, int no,
                       const double* __restrict__ J, const double* __restrict__ x, double beta,
                       double* __restrict__ y) {
  kernels::cuda::dependent_launch_prologue();
  extern __shared__ double shared[];
  constexpr int ni = NI;
  constexpr int ni3 = ni * ni * ni;
  constexpr int S = line_stride(ni);
  double* j_s = shared;           // no x ni
  double* u = j_s + no * ni;      // line (j, k) at (k ni + j) S, entry i
  double* t1 = u + ni * ni * S;   // line (a, k) at (k no + a) S, entry j
  double* t2 = t1 + ni * no * S;  // line (a, b) at (b no + a) S, entry k
  const std::int64_t e = blockIdx.x;
  const int t = static_cast<int>(threadIdx.x);
  for (int q = t; q < no * ni; q += kThreads) j_s[q] = J[q];
  // The gather in batches of kBatch points a thread: a batch's indices (and owners) first, then
  // its values, so a thread waits for two loads in a row per batch, not per point.
  for (int first = 0; first < ni3; first += kBatch * kThreads) {
    index_t g[kBatch];
    bool take[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int q = first + b * kThreads + t;
      const std::int64_t l = e * ni3 + q;
      g[b] = q < ni3 ? __ldg(in.local_to_global + l) : 0;
      take[b] = q < ni3 && (in.owner == nullptr || __ldg(in.owner + l) == 1);
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int q = first + b * kThreads + t;
      if (q >= ni3) continue;
      double value;
      if (in.owner != nullptr) {
        value = take[b] ? __ldg(x + g[b]) : 0.0;
      } else {
        value = __dmul_rn(__ldg(in.weight + g[b]), __ldg(x + g[b]));
      }
      u[q / ni * S + q % ni] = value;
    }
  }
  __syncthreads();
  double v[NI];
  // r: line (j, k): t1[a, j, k] = sum_i J[a, i] u[i, j, k].
  for (int line = t; line < ni * ni; line += kThreads) {
#pragma unroll
    for (int i = 0; i < NI; ++i) v[i] = u[line * S + i];
    const int j = line % ni;
    const int k = line / ni;
    contract_line(j_s, v, no, [&](int a, double sum) { t1[(k * no + a) * S + j] = sum; });
  }
  __syncthreads();
  // s: line (a, k): t2[a, b, k] = sum_j J[b, j] t1[a, j, k].
  for (int line = t; line < no * ni; line += kThreads) {
#pragma unroll
    for (int j = 0; j < NI; ++j) v[j] = t1[line * S + j];
    const int a = line % no;
    const int k = line / no;
    contract_line(j_s, v, no, [&](int b, double sum) { t2[(b * no + a) * S + k] = sum; });
  }
  __syncthreads();
  // t: line (a, b): y[a, b, c] = sum_k J[c, k] t2[a, b, k], output q = c no^2 + (b no + a).
  const int no2 = no * no;
  const int no3 = no2 * no;
  for (int line = t; line < no2; line += kThreads) {
#pragma unroll
    for (int k = 0; k < NI; ++k) v[k] = t2[line * S + k];
    if constexpr (!Prolongate) {
      contract_line(j_s, v, no, [&](int c, double sum) { y[e * no3 + c * no2 + line] = sum; });
    } else {
      // In batches of kBatch outputs: their owners and indices, then the old y (adding), then
      // the sums and the stores.
      for (int c0 = 0; c0 < no; c0 += kBatch) {
        index_t g[kBatch];
        std::uint8_t owner[kBatch];
        double old[kBatch];
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
          const std::int64_t l = e * no3 + (c0 + b) * no2 + line;
          owner[b] = c0 + b < no ? __ldg(out.owner + l) : std::uint8_t{0};
          g[b] = c0 + b < no ? __ldg(out.local_to_global + l) : 0;
        }
#pragma unroll
        for (int b = 0; b < kBatch; ++b) old[b] = owner[b] != 0 && beta != 0.0 ? y[g[b]] : 0.0;
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
          if (owner[b] == 0) continue;
          double value = 0.0;
          if (owner[b] == 1) {
            const int c = c0 + b;
#pragma unroll
            for (int k = 0; k < NI; ++k) value = __dadd_rn(value, __dmul_rn(j_s[c * ni + k], v[k]));
          }
          y[g[b]] = beta == 0.0 ? value : __dadd_rn(__dmul_rn(beta, old[b]), value);
        }
      }
    }
  }
}

/// Launches interpolate_kernel<Prolongate> for in's elements, n_out points per direction out.
template <bool Prolongate>
void launch_interpolate(const Backend& backend, const TransferSideView& in,
                        const TransferSideView& out, int n_out, const double* matrix,
                        const double* x, double beta, double* y, const char* who) {
  const int ni = in.n;
  const int S = line_stride(ni);
  const std::size_t bytes =
      sizeof(double) *
      static_cast<std::size_t>(n_out * ni + ni * ni * S + ni * n_out * S + n_out * n_out * S);
  if (in.num_elements > 0x7fffffffLL) {
    throw NotSupported(std::string(who) + ": more than 2^31 - 1 elements");
  }
  // The input's points per direction as a template argument (registers and unrolled sums).
  auto launch = [&](auto points) {
    constexpr int NI = decltype(points)::value;
    auto* kernel = interpolate_kernel<NI, Prolongate>;
    if (bytes > 48 * 1024) {
      KRYFLOW_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(bytes)));
    }
    kernels::cuda::launch_dependent(kernel, static_cast<unsigned int>(in.num_elements), kThreads,
                                    bytes, backend.cuda_context()->stream, in, out, n_out, matrix,
                                    x, beta, y);
  };
  if (!with_points<2, 17>(ni, launch)) {
    throw NotSupported(std::string(who) + ": " + std::to_string(ni) +
                       " points per direction (2 to 17 supported)");
  }
  kernels::cuda::check_launch(who);
}

__global__ void __launch_bounds__(256)
    assemble_kernel(const TransferSideView out, const double* __restrict__ y_local, double beta,
                    double* __restrict__ y) {
  kernels::cuda::dependent_launch_prologue();
  const std::int64_t g = static_cast<std::int64_t>(blockIdx.x) * 256 + threadIdx.x;
  if (g >= out.num_global) return;
  // The independent loads first (as the Schwarz sums).
  const std::int64_t begin = __ldg(out.global_offsets + g);
  const std::int64_t end = __ldg(out.global_offsets + g + 1);
  const double w = __ldg(out.weight + g);
  const double old = beta != 0.0 ? y[g] : 0.0;
  double sum = 0.0;
#pragma unroll 2
  for (std::int64_t q = begin; q < end; ++q) {
    sum = __dadd_rn(sum, __ldg(y_local + __ldg(out.global_locals + q)));
  }
  const double value = __dmul_rn(w, sum);
  y[g] = beta == 0.0 ? value : __dadd_rn(__dmul_rn(beta, old), value);
}

}  // namespace

void transfer_interpolate(const Backend& backend, const TransferSideView& in, int n_out,
                          const double* matrix, Span<const double> x, Span<double> y_local) {
  if (in.num_elements == 0) return;
  launch_interpolate<false>(backend, in, TransferSideView{}, n_out, matrix, x.data(), 0.0,
                            y_local.data(), "sem::transfer_interpolate");
}

void transfer_prolongate(const Backend& backend, const TransferSideView& in,
                         const TransferSideView& out, const double* matrix, Span<const double> x,
                         double beta, Span<double> y) {
  if (in.num_elements == 0) return;
  launch_interpolate<true>(backend, in, out, out.n, matrix, x.data(), beta, y.data(),
                           "sem::transfer_prolongate");
}

void transfer_assemble(const Backend& backend, const TransferSideView& out,
                       Span<const double> y_local, double beta, Span<double> y) {
  if (out.num_global == 0) return;
  const auto blocks = static_cast<unsigned int>((out.num_global + 255) / 256);
  kernels::cuda::launch_dependent(assemble_kernel, blocks, 256, 0, backend.cuda_context()->stream,
                                  out, y_local.data(), beta, y.data());
  kernels::cuda::check_launch("sem::transfer_assemble");
}

}  // namespace kryflow::kernels::sem::cuda
