// Vector access of the CUDA element-wise and reduction kernels: pairs of consecutive elements,
// loaded and stored 16 bytes at a time when every pointer of a kernel is 16-byte aligned.
//
// A kernel walks its vectors in pairs (2p, 2p + 1) plus the last element when the length is
// odd; the pairing, and hence any summation order built on it, is the same aligned or not.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kryflow::kernels::cuda {

using size_type = long long;

struct Pair {
  double a = 0.0;
  double b = 0.0;
};

/// Elements 2p and 2p+1 of a vector the kernel only reads (read-only data path).
template <bool kAligned>
__device__ __forceinline__ Pair load_input(const double* p, size_type pair) {
  if constexpr (kAligned) {
    const double2 v = __ldg(reinterpret_cast<const double2*>(p) + pair);
    return {v.x, v.y};
  } else {
    return {__ldg(p + 2 * pair), __ldg(p + 2 * pair + 1)};
  }
}

/// Elements 2p and 2p+1 of a vector the kernel also writes.
template <bool kAligned>
__device__ __forceinline__ Pair load_output(const double* p, size_type pair) {
  if constexpr (kAligned) {
    const double2 v = reinterpret_cast<const double2*>(p)[pair];
    return {v.x, v.y};
  } else {
    return {p[2 * pair], p[2 * pair + 1]};
  }
}

template <bool kAligned>
__device__ __forceinline__ void store(double* p, size_type pair, Pair v) {
  if constexpr (kAligned) {
    reinterpret_cast<double2*>(p)[pair] = make_double2(v.a, v.b);
  } else {
    p[2 * pair] = v.a;
    p[2 * pair + 1] = v.b;
  }
}

inline bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

}  // namespace kryflow::kernels::cuda
