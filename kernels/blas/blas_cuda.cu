// CUDA vector kernels: grid-stride maps over element pairs and deterministic fixed-grid sums.
//
// Every kernel walks the vectors in pairs of consecutive elements (16-byte loads and stores when
// all its pointers are 16-byte aligned, two 8-byte accesses otherwise; the pairing, and hence
// the summation order, is the same either way), plus the last element when the length is odd.
// Reductions run on min(ceil(n / 1024), kMaxReductionBlocks) blocks of 256 threads: a fixed
// function of n, so a sum has the same bits on every run (see kernels/backend/reduction.cuh).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/backend/cuda_context.cuh"
#include "kernels/backend/cuda_runtime.hpp"
#include "kernels/backend/reduction.cuh"
#include "kernels/backend/reduction_order.hpp"
#include "kernels/backend/vector_access.cuh"
#include "kernels/blas/blas.hpp"

namespace kryflow::kernels::blas::cuda {
namespace {

using kernels::cuda::check_launch;
using kernels::cuda::Context;
using kernels::cuda::kMaxReductionBlocks;
using size_type = long long;

constexpr int kBlock = kernels::kReductionThreads;
/// 8 resident blocks of 256 threads fill an sm_90 SM (at most 32 registers per thread).
constexpr int kMinBlocksPerSm = 8;
/// Elements each thread of a reduction handles at least (sets the grid size for small n).
constexpr size_type kReductionElementsPerThread = kernels::kReductionElementsPerThread;
/// Grid cap of the maps; larger vectors are covered by the grid-stride loop.
constexpr size_type kMaxMapBlocks = size_type{1} << 20;

using kernels::cuda::aligned16;
using kernels::cuda::load_input;
using kernels::cuda::load_output;
using kernels::cuda::Pair;
using kernels::cuda::store;

cudaStream_t stream_of(const Backend& backend) {
  return backend.cuda_context()->stream;
}

// ---------------------------------------------------------------------------------------------
// Maps: out_i = f(in0_i, in1_i, out_i), with kInputs inputs read and out_i read only when
// kReadsOutput (so a NaN already in `out` never leaks when its coefficient is zero).

struct Fill {
  double value;
  __device__ double operator()(double, double, double) const { return value; }
};
struct Scale {  // y = alpha x
  double alpha;
  __device__ double operator()(double x, double, double) const { return alpha * x; }
};
struct Axpby {  // y = alpha x + beta y
  double alpha, beta;
  __device__ double operator()(double x, double, double y) const { return alpha * x + beta * y; }
};
struct Axpy2 {  // z = alpha x + beta y
  double alpha, beta;
  __device__ double operator()(double x, double y, double) const { return alpha * x + beta * y; }
};
struct Axpbypcz {  // z = alpha x + beta y + gamma z
  double alpha, beta, gamma;
  __device__ double operator()(double x, double y, double z) const {
    const double v = alpha * x + beta * y;
    return v + gamma * z;
  }
};
struct Multiply {  // y = d x
  __device__ double operator()(double d, double x, double) const { return d * x; }
};

template <int kInputs, bool kReadsOutput, bool kAligned, class F>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
    map_kernel(size_type n, F f, const double* in0, const double* in1, double* out) {
  const size_type num_pairs = n / 2;
  const size_type stride = static_cast<size_type>(gridDim.x) * kBlock;
  for (size_type p = static_cast<size_type>(blockIdx.x) * kBlock + threadIdx.x; p < num_pairs;
       p += stride) {
    Pair a;
    Pair b;
    Pair o;
    if constexpr (kInputs >= 1) a = load_input<kAligned>(in0, p);
    if constexpr (kInputs >= 2) b = load_input<kAligned>(in1, p);
    if constexpr (kReadsOutput) o = load_output<kAligned>(out, p);
    store<kAligned>(out, p, {f(a.a, b.a, o.a), f(a.b, b.b, o.b)});
  }
  if (n % 2 == 1 && blockIdx.x == 0 && threadIdx.x == 0) {
    const size_type i = n - 1;
    const double a = kInputs >= 1 ? in0[i] : 0.0;
    const double b = kInputs >= 2 ? in1[i] : 0.0;
    const double o = kReadsOutput ? out[i] : 0.0;
    out[i] = f(a, b, o);
  }
}

__global__ void __launch_bounds__(kBlock)
    pseudo_random_kernel(size_type n, std::uint64_t seed, const double* balance, double* x) {
  const size_type stride = static_cast<size_type>(gridDim.x) * kBlock;
  for (size_type i = static_cast<size_type>(blockIdx.x) * kBlock + threadIdx.x; i < n;
       i += stride) {
    x[i] = balanced_uniform(seed, static_cast<std::uint64_t>(i), balance);
  }
}

/// d = alpha (dinv ∘ r) + beta d (kReadsD), out = d + x (kReadsX) or d. r may be out
/// (chebyshev_step_update) and x may be out (chebyshev_update): each entry is read before it is
/// written, by the same thread.
template <bool kReadsD, bool kReadsX>
__global__ void __launch_bounds__(kBlock)
    chebyshev_kernel(size_type n, const double* __restrict__ dinv, const double* r, double alpha,
                     double beta, double* __restrict__ d, const double* x, double* out) {
  const size_type stride = static_cast<size_type>(gridDim.x) * kBlock;
  for (size_type i = static_cast<size_type>(blockIdx.x) * kBlock + threadIdx.x; i < n;
       i += stride) {
    const double z = __dmul_rn(dinv[i], r[i]);
    const double di =
        kReadsD ? __dadd_rn(__dmul_rn(alpha, z), __dmul_rn(beta, d[i])) : __dmul_rn(alpha, z);
    d[i] = di;
    out[i] = kReadsX ? __dadd_rn(di, x[i]) : di;
  }
}

/// Launches chebyshev_kernel over n entries (nothing for n == 0).
void launch_chebyshev(const Backend& backend, size_type n, const double* dinv, const double* r,
                      double alpha, double beta, double* d, const double* x, double* out,
                      bool reads_x, const char* name) {
  if (n == 0) return;
  const auto blocks =
      static_cast<unsigned int>(std::min<size_type>((n + kBlock - 1) / kBlock, kMaxMapBlocks));
  auto run = [&](auto kernel) {
    kernel<<<blocks, kBlock, 0, stream_of(backend)>>>(n, dinv, r, alpha, beta, d, x, out);
  };
  if (beta != 0.0) {
    reads_x ? run(chebyshev_kernel<true, true>) : run(chebyshev_kernel<true, false>);
  } else {
    reads_x ? run(chebyshev_kernel<false, true>) : run(chebyshev_kernel<false, false>);
  }
  check_launch(name);
}

template <int kInputs, bool kReadsOutput, class F>
void launch_map(const Backend& backend, std::size_t size, F f, const double* in0, const double* in1,
                double* out, const char* name) {
  const auto n = static_cast<size_type>(size);
  if (n == 0) return;
  const size_type num_pairs = std::max<size_type>(n / 2, 1);
  const auto blocks =
      static_cast<unsigned int>(std::min((num_pairs + kBlock - 1) / kBlock, kMaxMapBlocks));
  const bool aligned =
      aligned16(out) && (kInputs < 1 || aligned16(in0)) && (kInputs < 2 || aligned16(in1));
  if (aligned) {
    map_kernel<kInputs, kReadsOutput, true>
        <<<blocks, kBlock, 0, stream_of(backend)>>>(n, f, in0, in1, out);
  } else {
    map_kernel<kInputs, kReadsOutput, false>
        <<<blocks, kBlock, 0, stream_of(backend)>>>(n, f, in0, in1, out);
  }
  check_launch(name);
}

// ---------------------------------------------------------------------------------------------
// Reductions: each Term adds the contribution of one pair (or one element) to K sums.

struct DotTerm {
  const double* x;
  const double* y;
  template <bool kAligned>
  __device__ void pair(size_type p, double (&sum)[1]) const {
    const Pair xp = load_input<kAligned>(x, p);
    const Pair yp = load_input<kAligned>(y, p);
    sum[0] += xp.a * yp.a;
    sum[0] += xp.b * yp.b;
  }
  __device__ void single(size_type i, double (&sum)[1]) const { sum[0] += x[i] * y[i]; }
  bool aligned() const { return aligned16(x) && aligned16(y); }
};

struct SquareTerm {
  const double* x;
  template <bool kAligned>
  __device__ void pair(size_type p, double (&sum)[1]) const {
    const Pair xp = load_input<kAligned>(x, p);
    sum[0] += xp.a * xp.a;
    sum[0] += xp.b * xp.b;
  }
  __device__ void single(size_type i, double (&sum)[1]) const { sum[0] += x[i] * x[i]; }
  bool aligned() const { return aligned16(x); }
};

template <int K>
struct MultiDotTerm {
  DotList dots;
  template <bool kAligned>
  __device__ void pair(size_type p, double (&sum)[K]) const {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const Pair xp = load_input<kAligned>(dots.x[k], p);
      const Pair yp = load_input<kAligned>(dots.y[k], p);
      sum[k] += xp.a * yp.a;
      sum[k] += xp.b * yp.b;
    }
  }
  __device__ void single(size_type i, double (&sum)[K]) const {
#pragma unroll
    for (int k = 0; k < K; ++k) sum[k] += dots.x[k][i] * dots.y[k][i];
  }
  bool aligned() const {
    for (int k = 0; k < K; ++k) {
      if (!aligned16(dots.x[k]) || !aligned16(dots.y[k])) return false;
    }
    return true;
  }
};

template <int K, bool kAligned, class Term>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
    reduce_kernel(size_type n, Term term, double* partials, unsigned int* counter, double* result) {
  double sum[K];
  for (int k = 0; k < K; ++k) sum[k] = 0.0;
  const size_type num_pairs = n / 2;
  const size_type stride = static_cast<size_type>(gridDim.x) * kBlock;
  for (size_type p = static_cast<size_type>(blockIdx.x) * kBlock + threadIdx.x; p < num_pairs;
       p += stride) {
    term.template pair<kAligned>(p, sum);
  }
  if (n % 2 == 1 && blockIdx.x == 0 && threadIdx.x == 0) term.single(n - 1, sum);
  kernels::cuda::grid_sum<kBlock, K>(sum, partials, counter, result);
}

/// Runs a reduction of K sums over n elements and waits for its result.
template <int K, class Term>
void launch_reduction(const Backend& backend, std::size_t size, const Term& term, double* out,
                      const char* name) {
  const auto n = static_cast<size_type>(size);
  if (n == 0) {
    for (int k = 0; k < K; ++k) out[k] = 0.0;
    return;
  }
  Context& context = *backend.cuda_context();
  const size_type per_block = kBlock * kReductionElementsPerThread;
  const auto blocks = static_cast<unsigned int>(
      std::min<size_type>((n + per_block - 1) / per_block, kMaxReductionBlocks));
  if (term.aligned()) {
    reduce_kernel<K, true><<<blocks, kBlock, 0, context.stream>>>(
        n, term, context.reduction_partials, context.reduction_counter,
        context.host_results_on_device);
  } else {
    reduce_kernel<K, false><<<blocks, kBlock, 0, context.stream>>>(
        n, term, context.reduction_partials, context.reduction_counter,
        context.host_results_on_device);
  }
  check_launch(name);
  kernels::cuda::wait_for_stream(context);
  for (int k = 0; k < K; ++k) out[k] = context.host_results[k];
}

/// Launches a reduction of K sums over n elements into `results` (an address on the device);
/// nothing waits.
template <int K, class Term>
void launch_reduction_to(const Backend& backend, std::size_t size, const Term& term,
                         double* results, const char* name) {
  const auto n = static_cast<size_type>(size);
  Context& context = *backend.cuda_context();
  if (n == 0) {
    KRYFLOW_CUDA_CHECK(cudaMemsetAsync(results, 0, sizeof(double) * K, context.stream));
    return;
  }
  const size_type per_block = kBlock * kReductionElementsPerThread;
  const auto blocks = static_cast<unsigned int>(
      std::min<size_type>((n + per_block - 1) / per_block, kMaxReductionBlocks));
  if (term.aligned()) {
    reduce_kernel<K, true><<<blocks, kBlock, 0, context.stream>>>(
        n, term, context.reduction_partials, context.reduction_counter, results);
  } else {
    reduce_kernel<K, false><<<blocks, kBlock, 0, context.stream>>>(
        n, term, context.reduction_partials, context.reduction_counter, results);
  }
  check_launch(name);
}

template <int K>
void multi_dot_k(const Backend& backend, std::size_t n, const DotList& dots, double* results) {
  launch_reduction_to<K>(backend, n, MultiDotTerm<K>{dots}, results, "blas::multi_dot");
}

// ---------------------------------------------------------------------------------------------

__device__ __forceinline__ double invert_entry(double d, size_type i, unsigned int* first_bad) {
  if (d == 0.0 || !isfinite(d)) {
    atomicMin(first_bad, static_cast<unsigned int>(i));
    return 0.0;
  }
  return 1.0 / d;
}

template <bool kAligned>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
    invert_diagonal_kernel(size_type n, const double* d, double* dinv, unsigned int* first_bad) {
  const size_type num_pairs = n / 2;
  const size_type stride = static_cast<size_type>(gridDim.x) * kBlock;
  for (size_type p = static_cast<size_type>(blockIdx.x) * kBlock + threadIdx.x; p < num_pairs;
       p += stride) {
    const Pair dp = load_input<kAligned>(d, p);
    store<kAligned>(
        dinv, p, {invert_entry(dp.a, 2 * p, first_bad), invert_entry(dp.b, 2 * p + 1, first_bad)});
  }
  if (n % 2 == 1 && blockIdx.x == 0 && threadIdx.x == 0) {
    dinv[n - 1] = invert_entry(d[n - 1], n - 1, first_bad);
  }
}

/// y_i = x_i rounded to float; the first overflowing i into *first_overflow (atomicMin).
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
    round_to_float_kernel(size_type n, const double* x, float* y, unsigned int* first_overflow) {
  const size_type stride = static_cast<size_type>(gridDim.x) * kBlock;
  for (size_type i = static_cast<size_type>(blockIdx.x) * kBlock + threadIdx.x; i < n;
       i += stride) {
    bool overflow = false;
    y[i] = round_to_float_entry(x[i], &overflow);
    if (overflow) atomicMin(first_overflow, static_cast<unsigned int>(i));
  }
}

__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
    widen_to_double_kernel(size_type n, const float* x, double* y) {
  const size_type stride = static_cast<size_type>(gridDim.x) * kBlock;
  for (size_type i = static_cast<size_type>(blockIdx.x) * kBlock + threadIdx.x; i < n;
       i += stride) {
    y[i] = static_cast<double>(x[i]);
  }
}

/// Owns one event; destroys it on scope exit.
struct Event {
  cudaEvent_t event = nullptr;
  Event() { KRYFLOW_CUDA_CHECK(cudaEventCreate(&event)); }
  ~Event() { cudaEventDestroy(event); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

}  // namespace

void fill(const Backend& backend, Span<double> x, double value) {
  launch_map<0, false>(backend, x.size(), Fill{value}, nullptr, nullptr, x.data(), "blas::fill");
}

void fill_pseudo_random(const Backend& backend, Span<double> x, std::uint64_t seed,
                        Span<const double> balance) {
  const auto n = static_cast<size_type>(x.size());
  if (n == 0) return;
  const auto blocks =
      static_cast<unsigned int>(std::min<size_type>((n + kBlock - 1) / kBlock, kMaxMapBlocks));
  pseudo_random_kernel<<<blocks, kBlock, 0, stream_of(backend)>>>(
      n, seed, balance.empty() ? nullptr : balance.data(), x.data());
  check_launch("blas::fill_pseudo_random");
}

void chebyshev_update(const Backend& backend, Span<const double> dinv, Span<const double> r,
                      double alpha, double beta, Span<double> d, Span<double> x, bool x_is_zero) {
  launch_chebyshev(backend, static_cast<size_type>(x.size()), dinv.data(), r.data(), alpha, beta,
                   d.data(), x.data(), x.data(), !x_is_zero, "blas::chebyshev_update");
}

void chebyshev_step_update(const Backend& backend, Span<const double> dinv, Span<const double> x,
                           double alpha, double beta, Span<double> d, Span<double> y) {
  launch_chebyshev(backend, static_cast<size_type>(y.size()), dinv.data(), y.data(), alpha, beta,
                   d.data(), x.data(), y.data(), true, "blas::chebyshev_step_update");
}

void copy(const Backend& backend, Span<const double> x, Span<double> y) {
  if (x.empty() || x.data() == y.data()) return;
  KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(y.data(), x.data(), x.size_bytes(), cudaMemcpyDeviceToDevice,
                                     stream_of(backend)));
}

void axpby(const Backend& backend, double alpha, Span<const double> x, double beta,
           Span<double> y) {
  if (beta == 0.0) {
    launch_map<1, false>(backend, x.size(), Scale{alpha}, x.data(), nullptr, y.data(),
                         "blas::axpby");
  } else {
    launch_map<1, true>(backend, x.size(), Axpby{alpha, beta}, x.data(), nullptr, y.data(),
                        "blas::axpby");
  }
}

void axpbypcz(const Backend& backend, double alpha, Span<const double> x, double beta,
              Span<const double> y, double gamma, Span<double> z) {
  if (gamma == 0.0) {
    launch_map<2, false>(backend, x.size(), Axpy2{alpha, beta}, x.data(), y.data(), z.data(),
                         "blas::axpbypcz");
  } else {
    launch_map<2, true>(backend, x.size(), Axpbypcz{alpha, beta, gamma}, x.data(), y.data(),
                        z.data(), "blas::axpbypcz");
  }
}

void pointwise_multiply(const Backend& backend, Span<const double> d, Span<const double> x,
                        Span<double> y) {
  launch_map<2, false>(backend, x.size(), Multiply{}, d.data(), x.data(), y.data(),
                       "blas::pointwise_multiply");
}

double dot(const Backend& backend, Span<const double> x, Span<const double> y) {
  double result = 0.0;
  launch_reduction<1>(backend, x.size(), DotTerm{x.data(), y.data()}, &result, "blas::dot");
  return result;
}

double norm2(const Backend& backend, Span<const double> x) {
  double result = 0.0;
  launch_reduction<1>(backend, x.size(), SquareTerm{x.data()}, &result, "blas::norm2");
  return std::sqrt(result);
}

void multi_dot(const Backend& backend, std::size_t n, const DotList& dots, double* results) {
  switch (dots.count) {
    case 1:
      return multi_dot_k<1>(backend, n, dots, results);
    case 2:
      return multi_dot_k<2>(backend, n, dots, results);
    case 3:
      return multi_dot_k<3>(backend, n, dots, results);
    case 4:
      return multi_dot_k<4>(backend, n, dots, results);
    case 5:
      return multi_dot_k<5>(backend, n, dots, results);
    case 6:
      return multi_dot_k<6>(backend, n, dots, results);
    case 7:
      return multi_dot_k<7>(backend, n, dots, results);
    case 8:
      return multi_dot_k<8>(backend, n, dots, results);
    default:
      throw InvalidInput("blas::multi_dot: 1 to 8 pairs");
  }
}

namespace {

/// The index the kernels left in context.first_index (0xffffffff: none, then -1), read after
/// the work queued on the stream: one counted wait.
index_t read_first_index(Context& context) {
  auto* staged = reinterpret_cast<unsigned char*>(context.host_results) +
                 sizeof(double) * kernels::cuda::kMaxReductionValues;
  KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(staged, context.first_index, sizeof(unsigned int),
                                     cudaMemcpyDeviceToHost, context.stream));
  kernels::cuda::wait_for_stream(context);
  unsigned int first = 0;
  std::memcpy(&first, staged, sizeof first);
  return first == 0xffffffffu ? index_t{-1} : static_cast<index_t>(first);
}

}  // namespace

index_t invert_diagonal(const Backend& backend, Span<const double> d, Span<double> dinv,
                        unsigned int* first_bad) {
  const auto n = static_cast<size_type>(d.size());
  Context& context = *backend.cuda_context();
  unsigned int* slot = first_bad != nullptr ? first_bad : context.first_index;
  // kNoIndex: nothing found yet.
  KRYFLOW_CUDA_CHECK(cudaMemsetAsync(slot, 0xff, sizeof(unsigned int), context.stream));
  if (n > 0) {
    const size_type num_pairs = std::max<size_type>(n / 2, 1);
    const auto blocks =
        static_cast<unsigned int>(std::min((num_pairs + kBlock - 1) / kBlock, kMaxMapBlocks));
    if (aligned16(d.data()) && aligned16(dinv.data())) {
      invert_diagonal_kernel<true>
          <<<blocks, kBlock, 0, context.stream>>>(n, d.data(), dinv.data(), slot);
    } else {
      invert_diagonal_kernel<false>
          <<<blocks, kBlock, 0, context.stream>>>(n, d.data(), dinv.data(), slot);
    }
    check_launch("blas::invert_diagonal");
  }
  if (first_bad != nullptr) return -1;
  return n == 0 ? -1 : read_first_index(context);
}

index_t round_to_float(const Backend& backend, Span<const double> x, Span<float> y,
                       unsigned int* first_overflow) {
  const auto n = static_cast<size_type>(x.size());
  Context& context = *backend.cuda_context();
  unsigned int* slot = first_overflow != nullptr ? first_overflow : context.first_index;
  KRYFLOW_CUDA_CHECK(cudaMemsetAsync(slot, 0xff, sizeof(unsigned int), context.stream));
  if (n > 0) {
    const auto blocks =
        static_cast<unsigned int>(std::min((n + kBlock - 1) / kBlock, kMaxMapBlocks));
    round_to_float_kernel<<<blocks, kBlock, 0, context.stream>>>(n, x.data(), y.data(), slot);
    check_launch("blas::round_to_float");
  }
  if (first_overflow != nullptr) return -1;
  return n == 0 ? -1 : read_first_index(context);
}

void widen_to_double(const Backend& backend, Span<const float> x, Span<double> y) {
  const auto n = static_cast<size_type>(x.size());
  if (n == 0) return;
  Context& context = *backend.cuda_context();
  const auto blocks = static_cast<unsigned int>(std::min((n + kBlock - 1) / kBlock, kMaxMapBlocks));
  widen_to_double_kernel<<<blocks, kBlock, 0, context.stream>>>(n, x.data(), y.data());
  check_launch("blas::widen_to_double");
}

double copy_bandwidth(const Backend& backend, std::size_t bytes) {
  if (bytes == 0) throw InvalidInput("copy_bandwidth: bytes must be positive");
  Context& context = *backend.cuda_context();
  Array<unsigned char> source(backend, bytes);
  Array<unsigned char> target(backend, bytes);
  KRYFLOW_CUDA_CHECK(cudaMemsetAsync(source.data(), 1, bytes, context.stream));
  KRYFLOW_CUDA_CHECK(cudaMemsetAsync(target.data(), 0, bytes, context.stream));
  auto copy_once = [&] {
    KRYFLOW_CUDA_CHECK(cudaMemcpyAsync(target.data(), source.data(), bytes,
                                       cudaMemcpyDeviceToDevice, context.stream));
  };
  copy_once();  // warm-up
  copy_once();
  Event start;
  Event stop;
  std::vector<double> seconds;
  for (int repeat = 0; repeat < 11; ++repeat) {
    KRYFLOW_CUDA_CHECK(cudaEventRecord(start.event, context.stream));
    copy_once();
    KRYFLOW_CUDA_CHECK(cudaEventRecord(stop.event, context.stream));
    KRYFLOW_CUDA_CHECK(cudaEventSynchronize(stop.event));
    float milliseconds = 0.0f;
    KRYFLOW_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start.event, stop.event));
    seconds.push_back(1e-3 * milliseconds);
  }
  std::nth_element(seconds.begin(), seconds.begin() + 5, seconds.end());
  return 2.0 * static_cast<double>(bytes) / seconds[5];
}

void read_scalars(const Backend& backend, const double* source, std::size_t count, double* host) {
  if (count == 0) return;
  kernels::cuda::read_to_host(*backend.cuda_context(), host, source, count);
}

}  // namespace kryflow::kernels::blas::cuda
