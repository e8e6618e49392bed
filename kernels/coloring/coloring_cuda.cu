// CUDA coloring kernels: greedy (the seed's sequential algorithm) in rounds of one kernel, each
// coloring the vertices whose smaller neighbours are colored, a wait per batch of rounds;
// Jones-Plassmann-Luby in rounds of a
// selection kernel and a coloring kernel, one thread per vertex, one wait per round for the count
// of uncolored vertices.
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cub/cub.cuh>
#include <string>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"
#include "kernels/backend/device_scratch.cuh"
#include "kernels/coloring/coloring.hpp"
#include "kernels/coloring/coloring_rows.hpp"
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
/// Uncolored neighbours (-1) are skipped. kSmallerOnly (the greedy rule in row order): only the
/// neighbours j < i count, and -1 is returned while one of them is not colored yet. Colors are
/// read as volatile: other threads of the same launch may be writing them.
template <bool kSmallerOnly>
__device__ index_t smallest_free_color(const PatternView& g, const PatternView& gt, index_t i,
                                       const index_t* colors) {
  const volatile index_t* seen = colors;
  for (index_t base = 0;; base += 64) {
    unsigned long long taken = 0;
    for (int t = 0; t < 2; ++t) {
      const PatternView& p = t == 0 ? g : gt;
      for (index_t k = p.row_ptr[i]; k < p.row_ptr[i + 1]; ++k) {
        const index_t j = p.col_idx[k];
        if (kSmallerOnly ? j >= i : j == i) continue;
        const index_t c = seen[j];
        if (kSmallerOnly && c < 0) return -1;
        if (c - base >= 0 && c - base < 64) taken |= 1ull << (c - base);
      }
    }
    if (taken != ~0ull) return base + __ffsll(static_cast<long long>(~taken)) - 1;
  }
}

/// One round of the greedy coloring in row order without waiting: every uncolored vertex whose
/// smaller neighbours all have their colors takes the smallest color they leave free (greedy
/// colors i from exactly those). A color, once written, is the greedy one, so the result does
/// not depend on which round colors a vertex, nor on whether a thread sees a color written in
/// the same round; rounds repeat until every vertex is colored, at most the longest chain of
/// increasing indices through the graph (about nx + ny + nz on a structured grid). Counts the
/// vertices colored and the largest color + 1.
__global__ void greedy_round_kernel(PatternView g, PatternView gt, index_t* colors,
                                    unsigned long long* counters) {
  const long long row = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (row >= g.num_rows) return;
  const auto i = static_cast<index_t>(row);
  volatile index_t* shared_colors = colors;
  if (shared_colors[i] >= 0) return;
  const index_t c = smallest_free_color<true>(g, gt, i, colors);
  if (c < 0) return;  // a smaller neighbour is not colored yet: a later round
  shared_colors[i] = c;
  atomicAdd(&counters[0], 1ull);
  atomicMax(&counters[1], static_cast<unsigned long long>(c) + 1);
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
    const index_t c = smallest_free_color<false>(g, gt, i, colors);
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

/// offsets[c] = the first position r of the sorted colors with color >= c (c = 0 ..
/// num_colors), from the color changes between r - 1 and r: no atomics (a count per color
/// contends on a few addresses when millions of vertices share a handful of colors).
__global__ void color_offsets_kernel(const unsigned int* sorted_colors, index_t n,
                                     index_t num_colors, index_t* offsets) {
  const long long r = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (r > n) return;
  const index_t before = r == 0 ? -1 : static_cast<index_t>(sorted_colors[r - 1]);
  const index_t here = r == n ? num_colors : static_cast<index_t>(sorted_colors[r]);
  for (index_t c = before + 1; c <= here; ++c) offsets[c] = static_cast<index_t>(r);
}

/// A thread per vertex: closed_neighbourhood_phase.
__global__ void closed_neighbourhood_kernel(PatternView g, PatternView gt, const index_t* row_ptr,
                                            index_t* out) {
  const long long row = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (row >= g.num_rows) return;
  closed_neighbourhood_phase(g, gt, static_cast<index_t>(row), row_ptr, out);
}

}  // namespace

index_t greedy_coloring(const Backend& backend, const PatternView& g, const PatternView& gt,
                        Span<index_t> colors) {
  const index_t n = g.num_rows;
  if (n == 0) return 0;
  Context& context = context_of(backend);
  // counters[0]: vertices colored; counters[1]: the number of colors.
  DeviceScratch counters(context, 2 * sizeof(unsigned long long));
  KRYFLOW_CUDA_CHECK(
      cudaMemsetAsync(counters.as<unsigned long long>(), 0, 2 * sizeof(long long), context.stream));
  const unsigned int blocks = blocks_for(n, kBlock);
  uncolor_kernel<<<blocks, kBlock, 0, context.stream>>>(n, colors.data());
  check_launch("coloring::greedy_coloring (start)");
  // Rounds in batches queued without a wait, the batch doubling up to 256 rounds: a wait per
  // batch. Rounds after the last vertex is colored return at their first load.
  long long rounds = 0;
  for (long long batch = 16;; batch = std::min(2 * batch, 256LL)) {
    for (long long r = 0; r < batch; ++r) {
      greedy_round_kernel<<<blocks, kBlock, 0, context.stream>>>(g, gt, colors.data(),
                                                                 counters.as<unsigned long long>());
    }
    check_launch("coloring::greedy_coloring (round)");
    rounds += batch;
    long long counts[2] = {0, 0};
    read_integers(context, reinterpret_cast<const long long*>(counters.as<unsigned long long>()), 2,
                  counts);
    if (counts[0] >= n) return static_cast<index_t>(counts[1]);
    // Each round colors at least the smallest uncolored vertex.
    if (rounds > n) {
      throw BackendError("coloring::greedy_coloring: vertices left uncolored after " +
                         std::to_string(rounds) + " rounds");
    }
  }
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
  // A stable radix sort of (color, vertex) pairs: each color's vertices keep their increasing
  // order. The colors are >= 0, so their bits sort as unsigned keys.
  DeviceScratch vertices(context, (static_cast<std::size_t>(n) + 1) * sizeof(index_t));
  DeviceScratch sorted_colors(context, static_cast<std::size_t>(n) * sizeof(unsigned int));
  iota_kernel<<<blocks_for(static_cast<long long>(n) + 1, kBlock), kBlock, 0, context.stream>>>(
      n, vertices.as<index_t>());
  check_launch("coloring::group_by_color");
  const auto* keys = reinterpret_cast<const unsigned int*>(colors.data());
  const int end_bit =
      std::max(1, static_cast<int>(std::bit_width(static_cast<std::uint32_t>(num_colors - 1))));
  std::size_t temp_bytes = 0;
  KRYFLOW_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, temp_bytes, keys, sorted_colors.as<unsigned int>(), vertices.as<index_t>(),
      rows.data(), static_cast<std::int64_t>(n), 0, end_bit, context.stream));
  DeviceScratch temp(context, temp_bytes);
  KRYFLOW_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      temp.as<void>(), temp_bytes, keys, sorted_colors.as<unsigned int>(), vertices.as<index_t>(),
      rows.data(), static_cast<std::int64_t>(n), 0, end_bit, context.stream));
  color_offsets_kernel<<<blocks_for(static_cast<long long>(n) + 1, kBlock), kBlock, 0,
                         context.stream>>>(sorted_colors.as<unsigned int>(), n, num_colors,
                                           offsets.data());
  check_launch("coloring::group_by_color (offsets)");
}

void closed_neighbourhood_count(const Backend& backend, const PatternView& g, const PatternView& gt,
                                Span<index_t> counts) {
  if (g.num_rows == 0) return;
  Context& context = context_of(backend);
  closed_neighbourhood_kernel<<<blocks_for(g.num_rows, kBlock), kBlock, 0, context.stream>>>(
      g, gt, nullptr, counts.data());
  check_launch("coloring::closed_neighbourhood_count");
}

void closed_neighbourhood_fill(const Backend& backend, const PatternView& g, const PatternView& gt,
                               const index_t* row_ptr, index_t* col_idx) {
  if (g.num_rows == 0) return;
  Context& context = context_of(backend);
  closed_neighbourhood_kernel<<<blocks_for(g.num_rows, kBlock), kBlock, 0, context.stream>>>(
      g, gt, row_ptr, col_idx);
  check_launch("coloring::closed_neighbourhood_fill");
}

}  // namespace kryflow::kernels::coloring::cuda
