// CUDA incomplete factorizations in color order (block_relaxation.hpp: factor_color): one
// thread per block row of the color runs block_rows.hpp's ilu0_row or dilu_row (the reference's
// code and bits); the smallest failing block row is an atomicMin.
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <type_traits>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/device_scratch.cuh"
#include "kernels/block_relaxation/block_relaxation.hpp"
#include "kernels/block_relaxation/block_rows.hpp"

namespace kryflow::kernels::block_relaxation::cuda {
namespace {

using kernels::cuda::blocks_for;
using kernels::cuda::check_launch;
using kernels::cuda::Context;
using size_type = long long;

template <int kB, class V, class W>
__global__ void factor_color_kernel(Factorization kind, BsrView<V> lower, BsrView<V> upper,
                                    V* diagonal, W* inverse, ColorRange color, index_t* first_bad) {
  const size_type slot = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x;
  if (slot >= color.count) return;
  const index_t I = color.first + static_cast<index_t>(slot);
  const bool ok = kind == Factorization::ilu0 ? ilu0_row<kB>(lower, upper, diagonal, inverse, I)
                                              : dilu_row<kB>(lower, upper, diagonal, inverse, I);
  if (!ok) atomicMin(first_bad, I);
}

}  // namespace

template <class V, class W>
void factor_color(const Backend& backend, Factorization kind, const BsrView<V>& lower,
                  const BsrView<V>& upper, V* diagonal, W* inverse, ColorRange color,
                  index_t* first_bad) {
  if (color.count == 0) return;
  Context& context = *backend.cuda_context();
  with_block_size(lower.block_size, "block_relaxation::factor_color", [&](auto bs) {
    constexpr int kB = decltype(bs)::value;
    factor_color_kernel<kB><<<blocks_for(color.count, 64, LLONG_MAX), 64, 0, context.stream>>>(
        kind, lower, upper, diagonal, inverse, color, first_bad);
  });
  check_launch("block_relaxation::factor_color");
}

KRYFLOW_BLOCK_RELAXATION_FACTOR_INSTANTIATIONS

}  // namespace kryflow::kernels::block_relaxation::cuda
