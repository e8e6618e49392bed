// CUDA coloring kernels: greedy in one thread (the seed's sequential algorithm, on the data's
// device), Jones-Plassmann-Luby in rounds of a selection kernel and a coloring kernel, one
// thread per vertex, one wait per round for the count of uncolored vertices.
#include <cuda_runtime.h>

#include <string>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"
#include "kernels/backend/device_scratch.cuh"
#include "kernels/coloring/coloring.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::coloring::cuda {
namespace {

using kernels::cuda::blocks_for;
using kernels::cuda::check_launch;
using kernels::cuda::Context;
using kernels::cuda::DeviceScratch;
using kernels::cuda::read_integers;

constexpr int kBlock = 256;

Context& context_of(const Backend& backend) {
  return *backend.cuda_context();
}

/// The smallest color no neighbour of i has, searched in windows of 64 colors (a bit mask of
/// the neighbours' colors in the window; a vertex of degree d needs at most d / 64 + 1 windows).
__device__ index_t smallest_free_color(const PatternView& g, const PatternView& gt, index_t i,
                                       const index_t* colors) {
  for (index_t base = 0;; base += 64) {
    unsigned long long taken = 0;
    for (int t = 0; t < 2; ++t) {
      const PatternView& p = t == 0 ? g : gt;
      for (index_t k = p.row_ptr[i]; k < p.row_ptr[i + 1]; ++k) {
        const index_t j = p.col_idx[k];
        const index_t c = j != i ? colors[j] - base : -1;
        if (c >= 0 && c < 64) taken |= 1ull << c;
      }
    }
    if (taken != ~0ull) return base + __ffsll(static_cast<long long>(~taken)) - 1;
  }
}

__global__ void greedy_kernel(PatternView g, PatternView gt, index_t* colors,
                              unsigned long long* num_colors) {
  index_t most = 0;
  for (index_t i = 0; i < g.num_rows; ++i) colors[i] = -1;
  for (index_t i = 0; i < g.num_rows; ++i) {
    colors[i] = smallest_free_color(g, gt, i, colors);
    most = colors[i] + 1 > most ? colors[i] + 1 : most;
  }
  *num_colors = static_cast<unsigned long long>(most);
}

__global__ void uncolor_kernel(index_t n, index_t* colors) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) colors[i] = -1;
}

/// selected[i] = 1 for the uncolored vertices whose key beats every uncolored neighbour's.
__global__ void select_kernel(PatternView g, PatternView gt, std::uint64_t seed,
                              const index_t* colors, unsigned char* selected) {
  const long long row = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (row >= g.num_rows) return;
  const auto i = static_cast<index_t>(row);
  unsigned char pick = 0;
  if (colors[i] < 0) {
    pick = 1;
    const std::uint64_t key = jpl_key(seed, i);
    for (int t = 0; t < 2 && pick != 0; ++t) {
      const PatternView& p = t == 0 ? g : gt;
      for (index_t k = p.row_ptr[i]; k < p.row_ptr[i + 1]; ++k) {
        const index_t j = p.col_idx[k];
        if (j != i && colors[j] < 0 && jpl_key(seed, j) > key) {
          pick = 0;
          break;
        }
      }
    }
  }
  selected[i] = pick;
}

/// Colors the selected vertices (never neighbours of each other); counts those left and the
/// largest color + 1.
__global__ void color_kernel(PatternView g, PatternView gt, const unsigned char* selected,
                             index_t* colors, unsigned long long* counters) {
  const long long row = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (row >= g.num_rows) return;
  const auto i = static_cast<index_t>(row);
  if (selected[i] != 0) {
    const index_t c = smallest_free_color(g, gt, i, colors);
    colors[i] = c;
    atomicMax(&counters[1], static_cast<unsigned long long>(c) + 1);
  } else if (colors[i] < 0) {
    atomicAdd(&counters[0], 1ull);
  }
}

__global__ void iota_kernel(index_t n, index_t* v) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i <= n) v[i] = static_cast<index_t>(i);
}

}  // namespace

index_t greedy_coloring(const Backend& backend, const PatternView& g, const PatternView& gt,
                        Span<index_t> colors) {
  if (g.num_rows == 0) return 0;
  Context& context = context_of(backend);
  DeviceScratch result(context, sizeof(unsigned long long));
  greedy_kernel<<<1, 1, 0, context.stream>>>(g, gt, colors.data(), result.as<unsigned long long>());
  check_launch("coloring::greedy_coloring");
  long long num_colors = 0;
  read_integers(context, reinterpret_cast<const long long*>(result.as<unsigned long long>()), 1,
                &num_colors);
  return static_cast<index_t>(num_colors);
}

index_t jpl_coloring(const Backend& backend, const PatternView& g, const PatternView& gt,
                     std::uint64_t seed, Span<index_t> colors) {
  const index_t n = g.num_rows;
  if (n == 0) return 0;
  Context& context = context_of(backend);
  const unsigned int blocks = blocks_for(n, kBlock);
  DeviceScratch selected(context, static_cast<std::size_t>(n));
  DeviceScratch counters(context, 2 * sizeof(unsigned long long));
  KRYFLOW_CUDA_CHECK(
      cudaMemsetAsync(counters.as<unsigned long long>(), 0, 2 * sizeof(long long), context.stream));
  uncolor_kernel<<<blocks, kBlock, 0, context.stream>>>(n, colors.data());
  check_launch("coloring::jpl_coloring (start)");
  // Each round colors at least the uncolored vertex of largest key: at most n rounds.
  for (index_t round = 0; round <= n; ++round) {
    KRYFLOW_CUDA_CHECK(cudaMemsetAsync(counters.as<unsigned long long>(), 0,
                                       sizeof(unsigned long long), context.stream));
    select_kernel<<<blocks, kBlock, 0, context.stream>>>(g, gt, seed, colors.data(),
                                                         selected.as<unsigned char>());
    check_launch("coloring::jpl_coloring (select)");
    color_kernel<<<blocks, kBlock, 0, context.stream>>>(
        g, gt, selected.as<unsigned char>(), colors.data(), counters.as<unsigned long long>());
    check_launch("coloring::jpl_coloring (color)");
    long long counts[2] = {0, 0};
    read_integers(context, reinterpret_cast<const long long*>(counters.as<unsigned long long>()), 2,
                  counts);
    if (counts[0] == 0) return static_cast<index_t>(counts[1]);
  }
  throw BackendError("coloring::jpl_coloring: vertices left uncolored after " +
                     std::to_string(n + 1) + " rounds");
}

void group_by_color(const Backend& backend, Span<const index_t> colors, index_t num_colors,
                    Span<index_t> offsets, Span<index_t> rows) {
  const auto n = static_cast<index_t>(colors.size());
  Context& context = context_of(backend);
  if (n == 0) {
    KRYFLOW_CUDA_CHECK(
        cudaMemsetAsync(offsets.data(), 0, offsets.size() * sizeof(index_t), context.stream));
    return;
  }
  // The n x num_colors pattern with entry (i, colors[i]) per row; its transpose's rows list the
  // vertices of each color in increasing order.
  DeviceScratch row_ptr(context, (static_cast<std::size_t>(n) + 1) * sizeof(index_t));
  DeviceScratch counts(context, static_cast<std::size_t>(num_colors) * sizeof(index_t));
  DeviceScratch source(context, static_cast<std::size_t>(n) * sizeof(index_t));
  iota_kernel<<<blocks_for(static_cast<long long>(n) + 1, kBlock), kBlock, 0, context.stream>>>(
      n, row_ptr.as<index_t>());
  check_launch("coloring::group_by_color");
  const sparse_setup::PatternView pattern{n, num_colors, row_ptr.as<index_t>(), colors.data()};
  const Span<index_t> count_span(counts.as<index_t>(), static_cast<std::size_t>(num_colors));
  sparse_setup::cuda::transpose_count(backend, pattern, count_span);
  sparse_setup::cuda::exclusive_scan(backend, Span<const index_t>(count_span), offsets);
  sparse_setup::cuda::transpose_fill(backend, pattern, offsets.data(), rows.data(),
                                     source.as<index_t>());
}

}  // namespace kryflow::kernels::coloring::cuda
