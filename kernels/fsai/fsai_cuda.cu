// CUDA FSAI setup kernels. The pattern kernels run one thread per row. factor_values runs one warp
// per row: the packed lower triangle of A[J_i, J_i] and the right-hand side in the warp's share of
// shared memory, the lanes over the triangle's rows. Each step of the Cholesky factorization and
// of the back substitution performs the host row function's operations (fsai_rows.hpp) in the
// same order, entry by entry, so the results are the host's bits (the build contracts no fma).
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"
#include "kernels/backend/device_scratch.cuh"
#include "kernels/fsai/fsai.hpp"
#include "kernels/fsai/fsai_rows.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::kernels::fsai::cuda {
namespace {

using kernels::cuda::blocks_for;
using kernels::cuda::check_launch;
using kernels::cuda::Context;
using kernels::cuda::DeviceScratch;
using kernels::cuda::read_integers;
using size_type = long long;

constexpr int kBlock = 256;
constexpr unsigned kFullMask = 0xffffffffu;

/// Shared memory a block of the factorizations may take (of 227 KB per block on sm_90): one warp
/// of the longest rows fits.
constexpr std::size_t kSharedBudget = 200 * 1024;
static_assert(sizeof(double) * rows::full_work_size(kMaxRowEntries) <= kSharedBudget &&
              sizeof(double) * rows::work_size(kMaxRowEntries) <= kSharedBudget);
/// Shared memory above which the occupancy of short rows would suffer: below it a block holds
/// up to kMaxWarps warps.
constexpr std::size_t kSharedPerBlock = 96 * 1024;
constexpr int kMaxWarps = 8;

Context& context_of(const Backend& backend) {
  return *backend.cuda_context();
}

/// *longest = max(*longest, the largest `local` of the warp).
__device__ void warp_max_into(index_t local, int* longest) {
  for (int offset = 16; offset > 0; offset /= 2) {
    local = max(local, __shfl_xor_sync(kFullMask, local, offset));
  }
  if ((threadIdx.x & 31) == 0 && local > 0) atomicMax(longest, local);
}

__global__ void count_kernel(PatternView s, index_t max_row_entries, index_t* counts,
                             int* longest) {
  index_t local = 0;
  for (size_type i = blockIdx.x * size_type{kBlock} + threadIdx.x; i < s.num_rows;
       i += size_type{gridDim.x} * kBlock) {
    const index_t c = rows::lower_count(s, static_cast<index_t>(i), max_row_entries);
    counts[i] = c;
    local = max(local, c);
  }
  warp_max_into(local, longest);
}

__global__ void fill_kernel(PatternView s, const index_t* g_row_ptr, index_t* g_col_idx) {
  for (size_type i = blockIdx.x * size_type{kBlock} + threadIdx.x; i < s.num_rows;
       i += size_type{gridDim.x} * kBlock) {
    rows::lower_fill(s, static_cast<index_t>(i), g_row_ptr[i + 1] - g_row_ptr[i],
                     g_col_idx + g_row_ptr[i]);
  }
}

__global__ void filter_count_kernel(PatternView g, const double* g_values,
                                    const double* other_values, const double* diagonal,
                                    double tolerance, index_t* counts, int* longest) {
  index_t local = 0;
  for (size_type i = blockIdx.x * size_type{kBlock} + threadIdx.x; i < g.num_rows;
       i += size_type{gridDim.x} * kBlock) {
    counts[i] = rows::filter_row(g, g_values, other_values, diagonal, tolerance,
                                 static_cast<index_t>(i), nullptr);
    local = max(local, counts[i]);
  }
  warp_max_into(local, longest);
}

__global__ void filter_fill_kernel(PatternView g, const double* g_values,
                                   const double* other_values, const double* diagonal,
                                   double tolerance, const index_t* f_row_ptr, index_t* f_col_idx) {
  for (size_type i = blockIdx.x * size_type{kBlock} + threadIdx.x; i < g.num_rows;
       i += size_type{gridDim.x} * kBlock) {
    rows::filter_row(g, g_values, other_values, diagonal, tolerance, static_cast<index_t>(i),
                     f_col_idx + f_row_ptr[i]);
  }
}

/// The loop of the factorization kernels: one warp per row i of g, `stride` doubles of shared
/// memory per warp; body(i, begin, m, J, work, lane) factors row i (columns J[0..m), values at
/// `begin`) and returns false on a failed pivot, the same in every lane. A row whose last column
/// is not i, or that fails, lowers *first_failure.
template <class Body>
__device__ void factor_rows(const PatternView& g, index_t stride, int* first_failure, Body body) {
  extern __shared__ double shared[];
  const int warps = blockDim.x / 32;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  double* work = shared + static_cast<size_type>(warp) * stride;
  for (size_type row = blockIdx.x * size_type{warps} + warp; row < g.num_rows;
       row += size_type{gridDim.x} * warps) {
    const index_t i = static_cast<index_t>(row);
    const index_t begin = g.row_ptr[i];
    const index_t m = g.row_ptr[i + 1] - begin;
    const index_t* J = g.col_idx + begin;
    const bool ok = m > 0 && J[m - 1] == i && body(i, begin, m, J, work, lane);
    if (!ok && lane == 0) atomicMin(first_failure, i);
    __syncwarp();  // the work space is the next row's
  }
}

/// The symmetric form (rows::factor_row's operations in its order); stride = work_size(longest).
__global__ void factor_kernel(MatrixView a, double sign, double* g_values, PatternView g,
                              index_t stride, int* first_failure) {
  factor_rows(g, stride, first_failure,
              [&](index_t, index_t begin, index_t m, const index_t* J, double* work, int lane) {
                for (index_t r = lane; r < m; r += 32) rows::gather_row(a, sign, J, r, work);
                __syncwarp();
                for (index_t k = 0; k < m; ++k) {
                  const double pivot = work[rows::packed(k, k)];
                  if (!rows::pivot_ok(pivot)) return false;  // every lane read the same pivot
                  const double d = sqrt(pivot);
                  for (index_t r = k + 1 + lane; r < m; r += 32) work[rows::packed(r, k)] /= d;
                  __syncwarp();
                  if (lane == 0) work[rows::packed(k, k)] = d;
                  for (index_t r = k + 1 + lane; r < m; r += 32) {
                    const double lrk = work[rows::packed(r, k)];
                    double* target = work + rows::packed(r, 0);
                    for (index_t c = k + 1; c <= r; ++c) {
                      target[c] -= lrk * work[rows::packed(c, k)];
                    }
                  }
                  __syncwarp();
                }
                double* y = work + rows::packed(m, 0);
                for (index_t r = lane; r < m; r += 32) y[r] = r == m - 1 ? 1.0 : 0.0;
                __syncwarp();
                for (index_t k = m - 1; k >= 0; --k) {
                  const double gk = y[k] / work[rows::packed(k, k)];
                  __syncwarp();
                  if (lane == 0) y[k] = gk;
                  for (index_t c = lane; c < k; c += 32) y[c] -= work[rows::packed(k, c)] * gk;
                  __syncwarp();
                }
                for (index_t r = lane; r < m; r += 32) g_values[begin + r] = y[r];
                return true;
              });
}

/// The nonsymmetric form (rows::factor_row_nonsymmetric's operations in its order); stride =
/// full_work_size(longest).
__global__ void factor_nonsymmetric_kernel(MatrixView a, double* w_values, double* z_values,
                                           PatternView g, index_t stride, int* first_failure) {
  factor_rows(g, stride, first_failure,
              [&](index_t, index_t begin, index_t m, const index_t* J, double* work, int lane) {
                const index_t p = rows::full_pitch(m);
                for (index_t r = lane; r < m; r += 32) {
                  rows::gather_full_row(a, J, m, p, r, work);
                }
                __syncwarp();
                for (index_t k = 0; k < m; ++k) {
                  const double pivot = work[k * p + k];
                  if (!rows::lu_pivot_ok(pivot)) return false;  // the same in every lane
                  for (index_t r = k + 1 + lane; r < m; r += 32) work[r * p + k] /= pivot;
                  __syncwarp();
                  for (index_t r = k + 1 + lane; r < m; r += 32) {
                    const double lrk = work[r * p + k];
                    double* target = work + r * p;
                    for (index_t c = k + 1; c < m; ++c) target[c] -= lrk * work[k * p + c];
                  }
                  __syncwarp();
                }
                double* y = work + p * m;  // Z's column
                double* v = y + m;         // W's row
                for (index_t r = lane; r < m; r += 32) y[r] = v[r] = r == m - 1 ? 1.0 : 0.0;
                __syncwarp();
                for (index_t k = m - 1; k >= 0; --k) {
                  const double zk = y[k] / work[k * p + k];
                  const double wk = v[k];
                  __syncwarp();
                  if (lane == 0) y[k] = zk;
                  for (index_t c = lane; c < k; c += 32) {
                    y[c] -= work[c * p + k] * zk;
                    v[c] -= work[k * p + c] * wk;
                  }
                  __syncwarp();
                }
                for (index_t r = lane; r < m; r += 32) {
                  z_values[begin + r] = y[r];
                  w_values[begin + r] = v[r];
                }
                return true;
              });
}

}  // namespace

namespace {

/// Launches `kernel` (a thread per row, `num_rows` rows; the largest count raised into its last
/// argument from 0) and reads that largest count back: one wait.
template <class Kernel, class... Args>
index_t launch_counting(const Backend& backend, const char* name, index_t num_rows, Kernel kernel,
                        Args... args) {
  if (num_rows == 0) return 0;
  Context& context = context_of(backend);
  DeviceScratch longest(context, sizeof(long long));
  KRYFLOW_CUDA_CHECK(
      cudaMemsetAsync(longest.as<long long>(), 0, sizeof(long long), context.stream));
  kernel<<<blocks_for(num_rows, kBlock, 4096), kBlock, 0, context.stream>>>(
      args..., reinterpret_cast<int*>(longest.as<long long>()));
  check_launch(name);
  long long host = 0;
  read_integers(context, longest.as<long long>(), 1, &host);
  return static_cast<index_t>(host & 0xffffffffLL);
}

}  // namespace

index_t pattern_count(const Backend& backend, const PatternView& s, index_t max_row_entries,
                      Span<index_t> counts) {
  return launch_counting(backend, "fsai::pattern_count", s.num_rows, count_kernel, s,
                         max_row_entries, counts.data());
}

void pattern_fill(const Backend& backend, const PatternView& s, const index_t* g_row_ptr,
                  index_t* g_col_idx) {
  if (s.num_rows == 0) return;
  Context& context = context_of(backend);
  fill_kernel<<<blocks_for(s.num_rows, kBlock, 4096), kBlock, 0, context.stream>>>(s, g_row_ptr,
                                                                                   g_col_idx);
  check_launch("fsai::pattern_fill");
}

namespace {

/// Launches `kernel` (one warp per row of g, `stride` doubles of shared memory per warp, the
/// first failing row lowered into its last argument) and reads that row back: -1 for none.
template <class Kernel, class... Args>
index_t launch_rows(const Backend& backend, const char* name, Kernel kernel, const PatternView& g,
                    index_t longest, index_t stride, Args... args) {
  if (g.num_rows == 0) return -1;
  if (longest == 0) return 0;  // every row is empty: the first fails, as on the host
  if (longest < 0 || longest > kMaxRowEntries) {
    throw InvalidInput(std::string(name) + ": rows of " + std::to_string(longest) +
                       " entries (1.." + std::to_string(kMaxRowEntries) + " are taken)");
  }
  Context& context = context_of(backend);
  const std::size_t per_warp = sizeof(double) * static_cast<std::size_t>(stride);
  const int warps = static_cast<int>(
      std::clamp<std::size_t>(kSharedPerBlock / per_warp, 1, static_cast<std::size_t>(kMaxWarps)));
  const std::size_t shared = per_warp * static_cast<std::size_t>(warps);  // <= kSharedBudget
  if (shared > 48 * 1024) {
    KRYFLOW_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(shared)));
  }
  DeviceScratch first(context, sizeof(long long));
  const long long none = INT_MAX;
  // One long long slot: its low 32 bits (little endian) are the int the kernel lowers.
  KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(first.as<long long>(), &none, sizeof(long long),
                                     cudaMemcpyHostToDevice, context.stream));
  const long long blocks = (static_cast<long long>(g.num_rows) + warps - 1) / warps;
  kernel<<<static_cast<unsigned int>(std::min(blocks, 1LL << 20)), 32 * warps, shared,
           context.stream>>>(args..., g, stride, reinterpret_cast<int*>(first.as<long long>()));
  check_launch(name);
  long long host = 0;
  read_integers(context, first.as<long long>(), 1, &host);
  const auto row = static_cast<int>(host & 0xffffffffLL);
  return row == INT_MAX ? -1 : static_cast<index_t>(row);
}

}  // namespace

index_t factor_values(const Backend& backend, const MatrixView& a, double sign,
                      const PatternView& g, index_t longest, double* g_values) {
  return launch_rows(backend, "fsai::factor_values", factor_kernel, g, longest,
                     rows::work_size(longest), a, sign, g_values);
}

index_t factor_values_nonsymmetric(const Backend& backend, const MatrixView& a,
                                   const PatternView& g, index_t longest, double* w_values,
                                   double* z_values) {
  return launch_rows(backend, "fsai::factor_values_nonsymmetric", factor_nonsymmetric_kernel, g,
                     longest, rows::full_work_size(longest), a, w_values, z_values);
}

index_t filter_count(const Backend& backend, const PatternView& g, const double* g_values,
                     const double* other_values, const double* diagonal, double tolerance,
                     Span<index_t> counts) {
  return launch_counting(backend, "fsai::filter_count", g.num_rows, filter_count_kernel, g,
                         g_values, other_values, diagonal, tolerance, counts.data());
}

void filter_fill(const Backend& backend, const PatternView& g, const double* g_values,
                 const double* other_values, const double* diagonal, double tolerance,
                 const index_t* f_row_ptr, index_t* f_col_idx) {
  if (g.num_rows == 0) return;
  Context& context = context_of(backend);
  filter_fill_kernel<<<blocks_for(g.num_rows, kBlock, 4096), kBlock, 0, context.stream>>>(
      g, g_values, other_values, diagonal, tolerance, f_row_ptr, f_col_idx);
  check_launch("fsai::filter_fill");
}

}  // namespace kryflow::kernels::fsai::cuda
