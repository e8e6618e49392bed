// CUDA smoother kernels: l1 row norms and the hybrid diagonal with one thread per row (double or
// float values) (the row's sum in the reference's order, hence the same bits). Gauss-Seidel is
// sequential by definition and has no cuda kernel: it throws NotSupported naming the parallel
// smoothers. Hybrid Gauss-Seidel copies x to x_start on the stream, then sweeps with one thread
// per block of rows, each walking its block's rows in order (kernels/smoothers/hybrid_rows.hpp):
// correct and deterministic, not tuned (a thread's rows are not coalesced with its neighbours').
#include <cuda_runtime.h>

#include <math.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/backend/cooperative.cuh"
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

constexpr int kLanczosBlock = 1024;
constexpr int kWarpSize = 32;

/// Systems per cg_lanczos launch (the table travels as a kernel parameter).
constexpr int kLanczosSystems = 8;

/// The systems of one cg_lanczos launch: system s runs on blocks block_begin[s] ..
/// block_begin[s + 1] - 1.
struct LanczosTable {
  int count = 0;
  PatternView a[kLanczosSystems];
  const double* values[kLanczosSystems] = {};
  const float* values_f32[kLanczosSystems] = {};
  const double* dinv[kLanczosSystems] = {};
  double* r[kLanczosSystems] = {};
  double* p[kLanczosSystems] = {};
  double* p_next[kLanczosSystems] = {};
  double* q[kLanczosSystems] = {};
  double* scalars[kLanczosSystems] = {};
  int lanes[kLanczosSystems] = {};
  unsigned int block_begin[kLanczosSystems + 1] = {};
};

/// cg_lanczos in one cooperative launch, each system on its group of blocks, grid-stride over
/// the group: per step the product q = A p_j by groups of `lanes` threads per row (p_j = z_j +
/// beta p_(j-1) formed for the row and its columns as they are read, into the other p buffer)
/// with p_j.q, then r -= alpha q with r.z by a thread per row, each followed by a grid barrier
/// and the sum of the group's blocks' partials. Every block takes every barrier (a system that
/// stopped skips only its work), so systems of several levels share one launch: a small level's
/// steps are barriers, not work, and the levels of an AMG hierarchy take them together. The
/// launches of the unfused steps (a product, an update and a direction kernel each) bound the
/// setup of small levels. A thread per row took 25 us per step on a Galerkin level of long rows
/// (5 blocks; H200). Blocks of 1,024 threads: a grid barrier's cost grows with the blocks (the
/// finest OpenFOAM level, 23,325 rows: 88 us for ten steps in 365 blocks of 256 threads).
__global__ void __launch_bounds__(kLanczosBlock)
    cg_lanczos_kernel(LanczosTable table, int steps, double* partials) {
  using GridSum = kernels::cuda::GridSum<kLanczosBlock>;
  __shared__ typename GridSum::Storage storage;
  GridSum grid_sum(storage, partials);
  int s = 0;
  while (s + 1 < table.count && blockIdx.x >= table.block_begin[s + 1]) ++s;
  const unsigned int group_first = table.block_begin[s];
  const unsigned int group_blocks = table.block_begin[s + 1] - group_first;
  const PatternView a = table.a[s];
  const double* values = table.values[s];
  const float* values_f32 = table.values_f32[s];
  const double* dinv = table.dinv[s];
  double* r = table.r[s];
  double* p = table.p[s];
  double* p_next = table.p_next[s];
  double* q = table.q[s];
  double* scalars = table.scalars[s];
  const int lanes = table.lanes[s];
  const auto sum = [&](double local) { return grid_sum(local, group_first, group_blocks); };
  const long long n = a.num_rows;
  const long long first = static_cast<long long>(blockIdx.x - group_first) * kLanczosBlock +
                          static_cast<long long>(threadIdx.x);
  const long long stride = static_cast<long long>(group_blocks) * kLanczosBlock;
  // The row's group: `lanes` consecutive threads (a power of two, at most a warp).
  const int lane = static_cast<int>(threadIdx.x) % lanes;
  const int warp_lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const unsigned int group_mask =
      lanes == kWarpSize ? 0xffffffffu : ((1u << lanes) - 1u) << (warp_lane / lanes * lanes);
  double local = 0.0;
  for (long long i = first; i < n; i += stride) {
    const double z = dinv[i] * r[i];
    p[i] = z;
    local += r[i] * z;
  }
  double rz = sum(local);
  const bool writer = blockIdx.x == group_first && threadIdx.x == 0;
  if (writer) scalars[2] = rz;
  double beta = 0.0;
  bool active = true;
  for (int j = 0; j < steps; ++j) {
    active = active && rz != 0.0 && isfinite(rz);
    const bool first_step = j == 0;
    const auto direction = [&](index_t k) {
      return first_step ? p[k] : dinv[k] * r[k] + beta * p[k];
    };
    local = 0.0;
    for (long long i = first / lanes; active && i < n; i += stride / lanes) {
      double row = 0.0;
      for (index_t k = a.row_ptr[i] + lane; k < a.row_ptr[i + 1]; k += lanes) {
        const double v = values_f32 != nullptr ? static_cast<double>(values_f32[k]) : values[k];
        row += v * direction(a.col_idx[k]);
      }
      for (int offset = lanes / 2; offset > 0; offset /= 2) {
        row += __shfl_xor_sync(group_mask, row, offset, lanes);
      }
      if (lane == 0) {
        q[i] = row;
        const double p_i = direction(static_cast<index_t>(i));
        p_next[i] = p_i;
        local += p_i * row;
      }
    }
    const double pq = sum(local);
    if (active && writer) scalars[6 + j] = pq;
    active = active && pq != 0.0 && isfinite(pq);
    const double alpha = active ? rz / pq : 0.0;
    local = 0.0;
    for (long long i = first; active && i < n; i += stride) {
      const double r_i = r[i] - alpha * q[i];
      r[i] = r_i;
      local += r_i * (dinv[i] * r_i);
    }
    const double rz_next = sum(local);
    if (active && writer) scalars[6 + steps + j] = rz_next;
    if (active) {
      beta = rz_next / rz;
      rz = rz_next;
      double* swap = p;
      p = p_next;
      p_next = swap;
    }
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

void cg_lanczos(const Backend& backend, const std::vector<LanczosSystem>& systems, int steps) {
  kernels::cuda::Context& context = *backend.cuda_context();
  const long long resident =
      kernels::cuda::cooperative_resident_blocks(context, cg_lanczos_kernel, kLanczosBlock);
  for (std::size_t begin = 0; begin < systems.size(); begin += kLanczosSystems) {
    LanczosTable table;
    std::vector<long long> wanted;
    long long total = 0;
    for (std::size_t k = begin; k < systems.size() && table.count < kLanczosSystems; ++k) {
      const LanczosSystem& system = systems[k];
      const index_t n = system.a.pattern.num_rows;
      if (n == 0) continue;
      const int m = table.count++;
      table.a[m] = system.a.pattern;
      table.values[m] = system.a.values;
      table.values_f32[m] = system.a.values_f32;
      table.dinv[m] = system.dinv.data();
      table.r[m] = system.r.data();
      table.p[m] = system.p.data();
      table.p_next[m] = system.p_next.data();
      table.q[m] = system.q.data();
      table.scalars[m] = system.scalars;
      // Lanes per row: the smallest power of two of at least half the row's mean entries, at
      // most a warp.
      int lanes = 1;
      while (lanes < kWarpSize && 2 * lanes * static_cast<std::int64_t>(n) < system.entries) {
        lanes *= 2;
      }
      table.lanes[m] = lanes;
      wanted.push_back(std::max<long long>(
          1, (static_cast<long long>(n) * lanes + kLanczosBlock - 1) / kLanczosBlock));
      total += wanted.back();
    }
    if (table.count == 0) continue;
    // Each system its wanted blocks when they all fit at once, else a share of the resident
    // blocks by its wanted ones (at least one each).
    const long long available = std::max<long long>(resident, table.count);
    for (int m = 0; m < table.count; ++m) {
      long long blocks = wanted[m];
      if (total > available) {
        blocks = std::max<long long>(1, wanted[m] * (available - table.count) / total);
      }
      table.block_begin[m + 1] = table.block_begin[m] + static_cast<unsigned int>(blocks);
    }
    const unsigned int blocks = table.block_begin[table.count];
    kernels::cuda::DeviceScratch partials(context, 2 * sizeof(double) * blocks);
    kernels::cuda::launch_cooperative(context, cg_lanczos_kernel, blocks, kLanczosBlock,
                                      "smoothers::cg_lanczos", table, steps, partials.as<double>());
  }
}

}  // namespace kryflow::kernels::smoothers::cuda
