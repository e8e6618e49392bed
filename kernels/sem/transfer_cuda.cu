// CUDA spectral-element transfers: one block per element for the interpolation (the weighted or
// owner-masked gather, then the three contractions through shared memory, each output entry's
// sum in the reference's order; the prolongation writes the owned points of the global vector
// directly), one thread per global point for the assembly.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"
#include "kernels/sem/transfer.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::sem::cuda {
namespace {

constexpr int kThreads = 128;
/// Points a thread gathers (or writes) per batch in the interpolation kernel.
constexpr int kBatch = 4;

/// The interpolation of element blockIdx.x; Prolongate: written to out's global points through
/// their owners (y = beta y + value), else to the element's out-side locals y_local.
template <bool Prolongate>
__global__ void __launch_bounds__(kThreads)
    interpolate_kernel(const TransferSideView in, const TransferSideView out, int no,
                       const double* __restrict__ J, const double* __restrict__ x, double beta,
                       double* __restrict__ y) {
  extern __shared__ double shared[];
  const int ni = in.n;
  const int ni3 = ni * ni * ni;
  double* j_s = shared;            // no x ni
  double* u = j_s + no * ni;       // ni^3
  double* t1 = u + ni3;            // ni x ni x no
  double* t2 = t1 + ni * ni * no;  // ni x no x no
  const std::int64_t e = blockIdx.x;
  for (int q = threadIdx.x; q < no * ni; q += kThreads) j_s[q] = J[q];
  // The gather in batches of kBatch points a thread: a batch's indices (and owners) first, then
  // its values, so a thread waits for two loads in a row per batch, not per point.
  for (int first = 0; first < ni3; first += kBatch * kThreads) {
    index_t g[kBatch];
    bool take[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int q = first + b * kThreads + static_cast<int>(threadIdx.x);
      const std::int64_t l = e * ni3 + q;
      g[b] = q < ni3 ? __ldg(in.local_to_global + l) : 0;
      take[b] = q < ni3 && (in.owner == nullptr || __ldg(in.owner + l) == 1);
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int q = first + b * kThreads + static_cast<int>(threadIdx.x);
      if (q >= ni3) continue;
      if (in.owner != nullptr) {
        u[q] = take[b] ? __ldg(x + g[b]) : 0.0;
      } else {
        u[q] = __dmul_rn(__ldg(in.weight + g[b]), __ldg(x + g[b]));
      }
    }
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
  auto output = [&](int q) {
    const int ab = q % (no * no);  // b * no + a
    const int c = q / (no * no);
    double sum = 0.0;
    for (int k = 0; k < ni; ++k) {
      sum = __dadd_rn(sum, __dmul_rn(j_s[c * ni + k], t2[k * no * no + ab]));
    }
    return sum;
  };
  if constexpr (!Prolongate) {
    for (int q = threadIdx.x; q < no3; q += kThreads) y[e * no3 + q] = output(q);
  } else {
    // In batches as the gather: a batch's owners and indices, then the old y (adding), then the
    // stores.
    for (int first = 0; first < no3; first += kBatch * kThreads) {
      index_t g[kBatch];
      std::uint8_t owner[kBatch];
      double old[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int q = first + b * kThreads + static_cast<int>(threadIdx.x);
        const std::int64_t l = e * no3 + q;
        owner[b] = q < no3 ? __ldg(out.owner + l) : std::uint8_t{0};
        g[b] = q < no3 ? __ldg(out.local_to_global + l) : 0;
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) old[b] = owner[b] != 0 && beta != 0.0 ? y[g[b]] : 0.0;
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int q = first + b * kThreads + static_cast<int>(threadIdx.x);
        if (owner[b] == 0) continue;
        const double value = owner[b] == 1 ? output(q) : 0.0;
        y[g[b]] = beta == 0.0 ? value : __dadd_rn(__dmul_rn(beta, old[b]), value);
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
  const std::size_t bytes =
      sizeof(double) *
      static_cast<std::size_t>(n_out * ni + ni * ni * ni + ni * ni * n_out + ni * n_out * n_out);
  if (bytes > 48 * 1024) {
    KRYFLOW_CUDA_CHECK(cudaFuncSetAttribute(interpolate_kernel<Prolongate>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(bytes)));
  }
  if (in.num_elements > 0x7fffffffLL) {
    throw NotSupported(std::string(who) + ": more than 2^31 - 1 elements");
  }
  interpolate_kernel<Prolongate>
      <<<static_cast<unsigned int>(in.num_elements), kThreads, bytes,
         backend.cuda_context()->stream>>>(in, out, n_out, matrix, x, beta, y);
  kernels::cuda::check_launch(who);
}

__global__ void __launch_bounds__(256)
    assemble_kernel(const TransferSideView out, const double* __restrict__ y_local, double beta,
                    double* __restrict__ y) {
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
  assemble_kernel<<<blocks, 256, 0, backend.cuda_context()->stream>>>(out, y_local.data(), beta,
                                                                      y.data());
  kernels::cuda::check_launch("sem::transfer_assemble");
}

}  // namespace kryflow::kernels::sem::cuda
