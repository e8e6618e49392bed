// CUDA dense kernels: densify and the checks as plain kernels, the factorizations through
// cuSOLVER, the eigenvector product through cuBLAS, and apply as one warp per row.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cub/block/block_reduce.cuh>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"
#include "kernels/dense/dense.hpp"
#include "kryflow/core/array.hpp"

namespace kryflow::kernels::dense::cuda {
namespace {

using kernels::cuda::Context;
constexpr int kBlock = 256;
constexpr int kWarp = 32;

void check_cusolver(cusolverStatus_t status, const char* what) {
  if (status != CUSOLVER_STATUS_SUCCESS) {
    throw BackendError(std::string(what) + " failed with cuSOLVER status " +
                       std::to_string(static_cast<int>(status)));
  }
}

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw BackendError(std::string(what) + " failed with cuBLAS status " +
                       std::to_string(static_cast<int>(status)));
  }
}

unsigned int blocks_for(std::int64_t threads) {
  return static_cast<unsigned int>((threads + kBlock - 1) / kBlock);
}

/// Reads `count` values of T from the device (one wait).
template <class T>
std::vector<T> to_host(Context& context, const T* device, std::size_t count) {
  std::vector<T> host(count);
  if (count > 0) kernels::cuda::copy(context, host.data(), false, device, true, count * sizeof(T));
  return host;
}

// --------------------------------------------------------------------------------------------
// Kernels.

/// Row i adds its entries into column-major `dense` (zeroed before), duplicates in stored order:
/// a warp per row. In a row with non-decreasing columns the first entry of each run of equal
/// columns sums its run; another row is walked by one lane. One thread per row walked its
/// row's entries one dependent load at a time: 51 us for the 353 rows of a dense coarse level
/// on the H200.
__global__ void densify_kernel(index_t n, const index_t* row_ptr, const index_t* col_idx,
                               const double* values, double* dense) {
  const std::int64_t warp =
      (static_cast<std::int64_t>(blockIdx.x) * kBlock + static_cast<std::int64_t>(threadIdx.x)) /
      kWarp;
  if (warp >= n) return;
  const auto i = static_cast<index_t>(warp);
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const index_t begin = row_ptr[i], end = row_ptr[i + 1];
  bool sorted = true;
  for (index_t k = begin + 1 + lane; k < end; k += kWarp)
    sorted = sorted && col_idx[k - 1] <= col_idx[k];
  sorted = __all_sync(0xffffffffu, sorted);
  if (!sorted) {
    for (index_t k = begin; lane == 0 && k < end; ++k) {
      double& entry = dense[static_cast<std::int64_t>(col_idx[k]) * n + i];
      entry = entry + values[k];
    }
    return;
  }
  for (index_t k = begin + lane; k < end; k += kWarp) {
    const index_t j = col_idx[k];
    if (k > begin && col_idx[k - 1] == j) continue;  // summed by its run's first entry
    double& entry = dense[static_cast<std::int64_t>(j) * n + i];
    double sum = entry;
    for (index_t q = k; q < end && col_idx[q] == j; ++q) sum = sum + values[q];
    entry = sum;
  }
}

/// flags[0] |= 1 for a non-finite entry; flags[1] = max |a| over finite entries as the bits of
/// a non-negative double (ordered like the values).
__global__ void magnitude_kernel(std::int64_t count, const double* a, unsigned long long* flags) {
  using BlockReduce = cub::BlockReduce<unsigned long long, kBlock>;
  __shared__ typename BlockReduce::TempStorage storage;
  unsigned long long nonfinite = 0, largest = 0;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x; k < count;
       k += static_cast<std::int64_t>(gridDim.x) * kBlock) {
    const double v = a[k];
    if (!isfinite(v)) {
      nonfinite = 1;
    } else {
      const unsigned long long bits =
          static_cast<unsigned long long>(__double_as_longlong(fabs(v)));
      largest = bits > largest ? bits : largest;
    }
  }
  // One atomic per block: an atomicMax per thread on one word took 93 us for 353^2 entries.
  if (__syncthreads_or(nonfinite != 0) && threadIdx.x == 0) atomicOr(&flags[0], 1ull);
  largest = BlockReduce(storage).Reduce(
      largest, [](unsigned long long a, unsigned long long b) { return a > b ? a : b; });
  if (threadIdx.x == 0) atomicMax(&flags[1], largest);
}

/// flags[2] = 1 when some |a_ij - a_ji| > 1e-12 largest (largest from flags[1]).
__global__ void symmetry_kernel(index_t n, const double* a, unsigned long long* flags) {
  const double bound = 1e-12 * __longlong_as_double(static_cast<long long>(flags[1]));
  const std::int64_t count = static_cast<std::int64_t>(n) * n;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x; k < count;
       k += static_cast<std::int64_t>(gridDim.x) * kBlock) {
    const std::int64_t j = k / n, i = k % n;
    if (i > j && fabs(a[j * n + i] - a[i * n + j]) > bound) {
      flags[2] = 1;
      return;
    }
  }
}

__global__ void identity_kernel(index_t n, double* a) {
  const std::int64_t count = static_cast<std::int64_t>(n) * n;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x; k < count;
       k += static_cast<std::int64_t>(gridDim.x) * kBlock) {
    a[k] = k / n == k % n ? 1.0 : 0.0;
  }
}

__global__ void diagonal_kernel(index_t n, const double* a, double* d) {
  const index_t i = static_cast<index_t>(blockIdx.x) * kBlock + static_cast<index_t>(threadIdx.x);
  if (i < n) d[i] = a[static_cast<std::int64_t>(i) * n + i];
}

/// Column k of the column-major n x n `v` times scale[k].
__global__ void scale_columns_kernel(index_t n, const double* scale, double* v) {
  const std::int64_t count = static_cast<std::int64_t>(n) * n;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x; k < count;
       k += static_cast<std::int64_t>(gridDim.x) * kBlock) {
    v[k] = v[k] * scale[k / n];
  }
}

/// z_i = sum_j m_ij r_j, m row-major: warp w of the grid takes row w; lane l sums the entries
/// j = l, l + 32, ... in order; the 32 partial sums are combined by a fixed shuffle tree.
__global__ void apply_kernel(index_t n, const double* m, const double* r, double* z) {
  const std::int64_t row = (static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  if (row >= n) return;  // whole warps leave together: kBlock is a multiple of kWarp
  const double* m_row = m + row * n;
  double sum = 0.0;
  for (index_t j = lane; j < n; j += kWarp) sum = sum + m_row[j] * r[j];
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    sum = sum + __shfl_down_sync(0xffffffffu, sum, offset);
  }
  if (lane == 0) z[row] = sum;
}

/// Grid for a grid-stride loop over `count` elements: at most 4096 blocks.
unsigned int stride_blocks(std::int64_t count) {
  const std::int64_t blocks = (count + kBlock - 1) / kBlock;
  return static_cast<unsigned int>(blocks < 1 ? 1 : (blocks > 4096 ? 4096 : blocks));
}

/// a = scale * a for the n x n array a.
__global__ void scale_kernel(index_t n, double scale, double* a) {
  const std::int64_t count = static_cast<std::int64_t>(n) * n;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x; k < count;
       k += static_cast<std::int64_t>(gridDim.x) * kBlock) {
    a[k] = scale * a[k];
  }
}

void scale_all(Context& context, index_t n, double scale, double* a) {
  scale_kernel<<<stride_blocks(std::int64_t(n) * n), kBlock, 0, context.stream>>>(n, scale, a);
  kernels::cuda::check_launch("dense scale");
}

void fill_identity(Context& context, index_t n, double* a) {
  identity_kernel<<<stride_blocks(std::int64_t(n) * n), kBlock, 0, context.stream>>>(n, a);
  kernels::cuda::check_launch("dense identity");
}

/// The devInfo of a cuSOLVER call, read on the host (one wait).
int read_info(Context& context, const Array<int>& info) {
  return to_host(context, info.span().data(), 1)[0];
}

/// Cholesky of the symmetric sign * A in `dense` (sign = 1 or -1); on success dense = A^-1 (=
/// sign (sign A)^-1) and true, else false (dense unchanged). With sign A = L L^T, A^-1 =
/// sign V^T V for V = L^-1: cuSOLVER's potrf, then cuBLAS's trsm solves L V = I and one gemm
/// forms sign V^T V in a separate array, copied into dense once potrf's status is read (the one
/// wait). H200, n = 353: potrs on the columns of I took two triangular solves (twelve trsm
/// kernels, 300 us); trsm then gemm takes one solve and a product.
bool invert_cholesky(const Backend& backend, index_t n, double* dense, double sign) {
  Context& context = *backend.cuda_context();
  cusolverDnHandle_t handle = kernels::cuda::cusolver_handle(context);
  const std::size_t size = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  Array<double> factor(backend, size);
  KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(factor.span().data(), dense, size * sizeof(double),
                                     cudaMemcpyDeviceToDevice, context.stream));
  if (sign != 1.0) scale_all(context, n, sign, factor.span().data());
  int lwork = 0;
  check_cusolver(cusolverDnDpotrf_bufferSize(handle, CUBLAS_FILL_MODE_LOWER, n,
                                             factor.span().data(), n, &lwork),
                 "cusolverDnDpotrf_bufferSize");
  Array<double> work(backend, static_cast<std::size_t>(lwork > 0 ? lwork : 1));
  Array<int> info(backend, 1);
  check_cusolver(cusolverDnDpotrf(handle, CUBLAS_FILL_MODE_LOWER, n, factor.span().data(), n,
                                  work.span().data(), lwork, info.span().data()),
                 "cusolverDnDpotrf");
  // V = L^-1 (trsm reads only L's lower triangle), then sign V^T V: queued before the status is
  // read; after a failed potrf they compute garbage that is never copied.
  Array<double> v(backend, size);
  fill_identity(context, n, v.span().data());
  cublasHandle_t blas = kernels::cuda::cublas_handle(context);
  check_cublas(cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
  const double one = 1.0, zero = 0.0;
  check_cublas(
      cublasDtrsm(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT,
                  n, n, &one, factor.span().data(), n, v.span().data(), n),
      "cublasDtrsm");
  Array<double> inverse(backend, size);
  check_cublas(cublasDgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &sign, v.span().data(), n,
                           v.span().data(), n, &zero, inverse.span().data(), n),
               "cublasDgemm");
  const int potrf_info = read_info(context, info);
  if (potrf_info < 0) throw BackendError("cusolverDnDpotrf: invalid argument");
  if (potrf_info > 0) return false;
  KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(dense, inverse.span().data(), size * sizeof(double),
                                     cudaMemcpyDeviceToDevice, context.stream));
  return true;
}

/// The pseudo-inverse V diag(1/lambda or 0) V^T of the symmetric A in `dense`.
bool invert_eigen(const Backend& backend, index_t n, double* dense, index_t& null_space_dimension) {
  Context& context = *backend.cuda_context();
  cusolverDnHandle_t handle = kernels::cuda::cusolver_handle(context);
  const std::size_t size = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  Array<double> v(backend, size);
  KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(v.span().data(), dense, size * sizeof(double),
                                     cudaMemcpyDeviceToDevice, context.stream));
  Array<double> lambda(backend, static_cast<std::size_t>(n));
  int lwork = 0;
  check_cusolver(
      cusolverDnDsyevd_bufferSize(handle, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n,
                                  v.span().data(), n, lambda.span().data(), &lwork),
      "cusolverDnDsyevd_bufferSize");
  Array<double> work(backend, static_cast<std::size_t>(lwork > 0 ? lwork : 1));
  Array<int> info(backend, 1);
  check_cusolver(
      cusolverDnDsyevd(handle, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, v.span().data(),
                       n, lambda.span().data(), work.span().data(), lwork, info.span().data()),
      "cusolverDnDsyevd");
  const int syevd_info = read_info(context, info);
  if (syevd_info < 0) throw BackendError("cusolverDnDsyevd: invalid argument");
  if (syevd_info > 0) return false;
  // The threshold and the count on the host, exactly as the reference: n doubles each way.
  std::vector<double> scale = to_host(context, lambda.span().data(), static_cast<std::size_t>(n));
  double largest = 0.0;
  for (const double l : scale) largest = std::fmax(largest, std::fabs(l));
  const double tiny = 1e3 * n * std::numeric_limits<double>::epsilon() * largest;
  null_space_dimension = 0;
  for (double& l : scale) {
    const bool zero = std::fabs(l) <= tiny;
    null_space_dimension += zero ? 1 : 0;
    l = zero ? 0.0 : 1.0 / l;
  }
  const Array<double> scale_on_device = Array<double>::from_host(backend, scale);
  Array<double> w(backend, size);
  KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(w.span().data(), v.span().data(), size * sizeof(double),
                                     cudaMemcpyDeviceToDevice, context.stream));
  scale_columns_kernel<<<stride_blocks(std::int64_t(size)), kBlock, 0, context.stream>>>(
      n, scale_on_device.span().data(), w.span().data());
  kernels::cuda::check_launch("dense scale_columns");
  cublasHandle_t blas = kernels::cuda::cublas_handle(context);
  check_cublas(cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
  const double one = 1.0, zero = 0.0;
  check_cublas(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, w.span().data(), n,
                           v.span().data(), n, &zero, dense, n),
               "cublasDgemm");
  return true;
}

/// LU of the nonsymmetric A in `dense`; dense = A^-1 row-major (A^-T solved for, column-major)
/// and 0, or the first pivot at rounding level (1-based).
index_t invert_lu(const Backend& backend, index_t n, double largest, double* dense) {
  Context& context = *backend.cuda_context();
  cusolverDnHandle_t handle = kernels::cuda::cusolver_handle(context);
  const std::size_t size = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  Array<double> lu(backend, size);
  KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(lu.span().data(), dense, size * sizeof(double),
                                     cudaMemcpyDeviceToDevice, context.stream));
  int lwork = 0;
  check_cusolver(cusolverDnDgetrf_bufferSize(handle, n, n, lu.span().data(), n, &lwork),
                 "cusolverDnDgetrf_bufferSize");
  Array<double> work(backend, static_cast<std::size_t>(lwork > 0 ? lwork : 1));
  Array<int> pivots(backend, static_cast<std::size_t>(n));
  Array<int> info(backend, 1);
  check_cusolver(cusolverDnDgetrf(handle, n, n, lu.span().data(), n, work.span().data(),
                                  pivots.span().data(), info.span().data()),
                 "cusolverDnDgetrf");
  Array<double> diagonal(backend, static_cast<std::size_t>(n));
  diagonal_kernel<<<blocks_for(n), kBlock, 0, context.stream>>>(n, lu.span().data(),
                                                                diagonal.span().data());
  kernels::cuda::check_launch("dense diagonal");
  const int getrf_info = read_info(context, info);
  if (getrf_info < 0) throw BackendError("cusolverDnDgetrf: invalid argument");
  const std::vector<double> u =
      to_host(context, diagonal.span().data(), static_cast<std::size_t>(n));
  const double tiny = 1e3 * n * std::numeric_limits<double>::epsilon() * largest;
  for (index_t k = 0; k < n; ++k) {
    if (std::fabs(u[static_cast<std::size_t>(k)]) <= tiny) return k + 1;
  }
  if (getrf_info > 0) return getrf_info;
  fill_identity(context, n, dense);
  check_cusolver(cusolverDnDgetrs(handle, CUBLAS_OP_T, n, n, lu.span().data(), n,
                                  pivots.span().data(), dense, n, info.span().data()),
                 "cusolverDnDgetrs");
  if (read_info(context, info) != 0) throw BackendError("cusolverDnDgetrs: invalid argument");
  return 0;
}

}  // namespace

void densify(const Backend& backend, const MatrixView& a, Span<double> dense) {
  Context& context = *backend.cuda_context();
  const index_t n = a.pattern.num_rows;
  if (n == 0) return;
  KRYFLOW_CUDA_CHECK(
      cudaMemsetAsync(dense.data(), 0, dense.size() * sizeof(double), context.stream));
  densify_kernel<<<blocks_for(std::int64_t{n} * kWarp), kBlock, 0, context.stream>>>(
      n, a.pattern.row_ptr, a.pattern.col_idx, a.values, dense.data());
  kernels::cuda::check_launch("dense densify");
}

Properties properties(const Backend& backend, index_t n, Span<const double> dense) {
  Properties p;
  if (n == 0) {
    p.symmetric = true;
    return p;
  }
  Context& context = *backend.cuda_context();
  Array<unsigned long long> flags(backend, 4);
  KRYFLOW_CUDA_CHECK(
      cudaMemsetAsync(flags.span().data(), 0, 3 * sizeof(unsigned long long), context.stream));
  // flags[3] = the bits of a_11, read with the others.
  KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(flags.span().data() + 3, dense.data(), sizeof(double),
                                     cudaMemcpyDeviceToDevice, context.stream));
  const std::int64_t count = std::int64_t(n) * n;
  magnitude_kernel<<<stride_blocks(count), kBlock, 0, context.stream>>>(count, dense.data(),
                                                                        flags.span().data());
  kernels::cuda::check_launch("dense magnitude");
  symmetry_kernel<<<stride_blocks(count), kBlock, 0, context.stream>>>(n, dense.data(),
                                                                       flags.span().data());
  kernels::cuda::check_launch("dense symmetry");
  const std::vector<unsigned long long> host = to_host(context, flags.span().data(), 4);
  p.finite = host[0] == 0;
  long long bits = static_cast<long long>(host[1]);
  std::memcpy(&p.largest, &bits, sizeof(double));
  p.symmetric = p.finite && host[2] == 0;
  std::memcpy(&p.first_diagonal, &host[3], sizeof(double));
  return p;
}

Inverse invert(const Backend& backend, index_t n, const Properties& properties,
               Span<double> dense) {
  Inverse result;
  if (n == 0) return result;
  if (properties.symmetric) {
    // A may be negative definite (a_11 < 0): Cholesky of -A, A^-1 = -(-A)^-1. The sign of a_11
    // picks the one factorization that can succeed (a negative definite coarse level of 1,225
    // rows on the H200: 3.5 -> 3.0 ms once the failed factorization of A was dropped).
    if (properties.first_diagonal >= 0.0 && invert_cholesky(backend, n, dense.data(), 1.0)) {
      return result;
    }
    if (properties.first_diagonal < 0.0 && invert_cholesky(backend, n, dense.data(), -1.0)) {
      result.method = Method::cholesky_of_negated;
      return result;
    }
    result.method = Method::eigen;
    result.converged = invert_eigen(backend, n, dense.data(), result.null_space_dimension);
    return result;
  }
  result.method = Method::lu;
  result.zero_pivot = invert_lu(backend, n, properties.largest, dense.data());
  return result;
}

void apply(const Backend& backend, index_t n, Span<const double> inverse, Span<const double> r,
           Span<double> z) {
  if (n == 0) return;
  const std::int64_t threads = std::int64_t(n) * kWarp;
  apply_kernel<<<blocks_for(threads), kBlock, 0, backend.cuda_context()->stream>>>(
      n, inverse.data(), r.data(), z.data());
  kernels::cuda::check_launch("dense apply");
}

}  // namespace kryflow::kernels::dense::cuda
