// Contract of the vector kernels (the axpby family, reductions, fused Krylov updates).
//
// Every function exists in namespaces reference (the oracle), cpu (OpenMP) and cuda, with the
// same signature and the backend as first argument; the unqualified functions dispatch on
// `backend.kind()`. All spans live on that backend and have equal lengths (checked by callers).
//
// Reductions have a fixed order: for the same input they return the same bits, run after run,
// whatever the thread count. reference sums sequentially; cuda uses the fixed grid and trees of
// kernels/backend/reduction_order.hpp and cpu emulates exactly that order, so cpu and cuda give
// bit-identical results (fused multiply-add is disabled on both sides).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/backend/host_device.hpp"

#include <cstddef>

#include "kryflow/core/array.hpp"

namespace kryflow::kernels::blas {

inline constexpr std::size_t kReductionBlock = 8192;

/// Most inner products one multi_dot computes.
inline constexpr int kMaxDots = 8;

/// The pairs (x[k], y[k]), k < count, of a fused multi-dot; all vectors have one length.
struct DotList {
  int count = 0;
  const double* x[kMaxDots] = {};
  const double* y[kMaxDots] = {};
};

/// A uniform number in [-1, 1) from a splitmix64 hash of seed and i (Steele, Lea, Flood,
/// "Fast splittable pseudorandom number generators", OOPSLA 2014): every frequency present in
/// a vector of them, for eigenvalue estimates and test data. Exact in double.
KRYFLOW_HOST_DEVICE inline double pseudo_uniform(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t h = seed + 0x9E3779B97F4A7C15ull * (i + 1);
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  h ^= h >> 31;
  return static_cast<double>(h >> 11) * 0x1.0p-52 - 1.0;
}

/// Element i of fill_pseudo_random: pseudo_uniform(seed, i) / sqrt(|balance_i|), or without the
/// division when there is no balance (null).
KRYFLOW_HOST_DEVICE inline double balanced_uniform(std::uint64_t seed, std::uint64_t i,
                                                   const double* balance) {
  const double u = pseudo_uniform(seed, i);
  if (balance == nullptr) return u;
  const double b = balance[i];
  return u / sqrt(b < 0.0 ? -b : b);
}

/// The smallest double magnitude that rounds to infinity in float: FLT_MAX plus half its ulp (a
/// tie there rounds up, to the even infinity).
inline constexpr double kFloatOverflow = 0x1.ffffffp127;

/// x rounded to the nearest float; a finite x of magnitude >= kFloatOverflow gives an infinity
/// of its sign (and sets *overflow), Inf and NaN stay. The same bits on host and device.
KRYFLOW_HOST_DEVICE inline float round_to_float_entry(double x, bool* overflow) {
  if (x >= kFloatOverflow || x <= -kFloatOverflow) {
    *overflow = x == x && x - x == 0.0;  // finite (Inf - Inf is NaN)
    return x > 0.0 ? std::numeric_limits<float>::infinity()
                   : -std::numeric_limits<float>::infinity();
  }
  *overflow = false;
  return static_cast<float>(x);  // to nearest, in range: defined
}

/// The "no index" value of a first-index slot on a backend (indices are below 2^31).
inline constexpr unsigned int kNoIndex = 0xffffffffu;

/// A host backend's first index (or -1) delivered as the kernels' contract says: returned when
/// `slot` is null, else written to *slot (kNoIndex for -1) and -1 returned.
inline index_t deliver_first_index(index_t first, unsigned int* slot) {
  if (slot == nullptr) return first;
  *slot = first < 0 ? kNoIndex : static_cast<unsigned int>(first);
  return -1;
}

/// The index a first-index slot holds once read on the host: -1 for kNoIndex.
inline index_t first_index_of(unsigned int slot) {
  return slot == kNoIndex ? index_t{-1} : static_cast<index_t>(slot);
}

#define KRYFLOW_BLAS_DECLARATIONS                                                               \
  /** x_i = value */                                                                            \
  void fill(const Backend& backend, Span<double> x, double value);                              \
  /** x_i = pseudo_uniform(seed, i), divided by sqrt(|balance_i|) when balance is not empty     \
      (same size as x): the same bits on every backend */                                       \
  void fill_pseudo_random(const Backend& backend, Span<double> x, std::uint64_t seed,           \
                          Span<const double> balance);                                          \
  /** y_i = x_i */                                                                              \
  void copy(const Backend& backend, Span<const double> x, Span<double> y);                      \
  /** y = alpha x + beta y; y is not read when beta == 0 */                                     \
  void axpby(const Backend& backend, double alpha, Span<const double> x, double beta,           \
             Span<double> y);                                                                   \
  /** z = alpha x + beta y + gamma z; z is not read when gamma == 0 */                          \
  void axpbypcz(const Backend& backend, double alpha, Span<const double> x, double beta,        \
                Span<const double> y, double gamma, Span<double> z);                            \
  /** One step of Chebyshev iteration with the Jacobi preconditioner (Saad, Iterative           \
      Methods, 2nd ed., Algorithm 12.1): d_i = alpha (dinv_i r_i) + beta d_i (d not read when   \
      beta == 0), then x_i = d_i + x_i (x_i = d_i when x_is_zero: x not read) */                \
  void chebyshev_update(const Backend& backend, Span<const double> dinv, Span<const double> r,  \
                        double alpha, double beta, Span<double> d, Span<double> x,              \
                        bool x_is_zero);                                                        \
  /** chebyshev_update with the residual in y and the new iterate written over it: r_i = y_i,   \
      d_i = alpha (dinv_i r_i) + beta d_i (d not read when beta == 0), y_i = d_i + x_i; x       \
      distinct from y. The unfused second half of LinearOperator::chebyshev_step. */            \
  void chebyshev_step_update(const Backend& backend, Span<const double> dinv,                   \
                             Span<const double> x, double alpha, double beta, Span<double> d,   \
                             Span<double> y);                                                   \
  /** y_i = d_i x_i */                                                                          \
  void pointwise_multiply(const Backend& backend, Span<const double> d, Span<const double> x,   \
                          Span<double> y);                                                      \
  /** sum_i x_i y_i in the fixed order described above */                                       \
  double dot(const Backend& backend, Span<const double> x, Span<const double> y);               \
  /** sqrt(sum_i x_i^2) */                                                                      \
  double norm2(const Backend& backend, Span<const double> x);                                   \
  /** results[k] = x_k·y_k for k < dots.count (1..kMaxDots), each in dot's order, in one       \
      kernel; `results` is an address on the backend and nothing waits for the device */        \
  void multi_dot(const Backend& backend, std::size_t n, const DotList& dots, double* results);  \
  /** host[0..count) = source[0..count) (source on the backend), after the work queued on the   \
      backend has finished: on cuda one transfer through pinned memory and one counted wait */  \
  void read_scalars(const Backend& backend, const double* source, std::size_t count,            \
                    double* host);                                                              \
  /** dinv_i = 1 / d_i (0 where d_i is zero or not finite). The first (0-based) such i, or -1:  \
      returned when first_bad is null (on cuda one wait, the index is read back); otherwise     \
      written to *first_bad, an address on the backend (0xffffffff: none), with no wait, and -1 \
      returned, so that a setup reads many checks at once */                                    \
  index_t invert_diagonal(const Backend& backend, Span<const double> d, Span<double> dinv,      \
                          unsigned int* first_bad = nullptr);                                   \
  /** y_i = x_i rounded to the nearest float (round_to_float_entry; Inf and NaN kept); y has    \
      x.size() entries. Returns the first (0-based) i whose finite x_i overflows float (y_i is  \
      then an infinity), or -1. On cuda one wait for the device (the index is read back).       \
      With first_overflow (an address on the backend) the index goes there instead              \
      (0xffffffff: none), nothing waits and -1 is returned. */                                  \
  index_t round_to_float(const Backend& backend, Span<const double> x, Span<float> y,           \
                         unsigned int* first_overflow = nullptr);                               \
  /** y_i = x_i, exact (float to double); y has x.size() entries */                             \
  void widen_to_double(const Backend& backend, Span<const float> x, Span<double> y);            \
  /** Measured copy bandwidth of the backend's memory in bytes/s, counting bytes read plus      \
      bytes written (2 * bytes per copy): the roofline of the memory-bound kernels. Copies      \
      `bytes` (> 0; use well above the caches, e.g. 1 GiB) between two fresh buffers after a    \
      warm-up and returns the median of 11 timed repeats. cuda: cudaMemcpyAsync device to       \
      device timed with events; cpu: an OpenMP parallel copy loop (buffers first touched by     \
      the same static schedule); reference: single-threaded std::memcpy. Takes seconds for      \
      large sizes; for benchmarks, not solvers. Throws InvalidInput when bytes is 0 and         \
      OutOfMemory when the two buffers do not fit. */                                           \
  double copy_bandwidth(const Backend& backend, std::size_t bytes);

KRYFLOW_BLAS_DECLARATIONS

namespace reference {
KRYFLOW_BLAS_DECLARATIONS
}
namespace cpu {
KRYFLOW_BLAS_DECLARATIONS
}
namespace cuda {
KRYFLOW_BLAS_DECLARATIONS
}

#undef KRYFLOW_BLAS_DECLARATIONS

}  // namespace kryflow::kernels::blas
