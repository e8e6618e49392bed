// The host kernels' shared pieces of the SEM Poisson operator (kernels/sem/poisson.hpp): one
// element's Laplacian by sum factorization, and the gather and assembly of one point.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/sem/poisson.hpp"

namespace kryflow::kernels::sem::detail {

/// Scratch values of Real that element_laplacian needs for N points per direction: the three
/// fluxes (3 N^3), and in float x_L and D rounded to float (N^3 + N^2).
template <class Real>
constexpr std::int64_t element_work_size(int N) {
  const std::int64_t n3 = static_cast<std::int64_t>(N) * N * N;
  return std::is_same_v<Real, double> ? 3 * n3 : 4 * n3 + static_cast<std::int64_t>(N) * N;
}

/// y_L = A_e x_L for element e (order of operations as in poisson.hpp) in the arithmetic of
/// Real (double, or float with PoissonView::float_arithmetic: x_L, D and G rounded to float
/// when read, y_L widened to double when stored); `work` holds element_work_size<Real>(N).
/// The same on an element's x_L and y_L given apart from a's local arrays (N^3 each).
template <class Real>
inline void element_laplacian_of(const PoissonView& a, std::int64_t e, const double* x_L, double* y,
                                 Real* work) {
  const int N = a.n;
  const std::int64_t n3 = static_cast<std::int64_t>(N) * N * N;
  const Real* D = nullptr;
  const Real* x = nullptr;
  if constexpr (std::is_same_v<Real, double>) {
    D = a.derivative;
    x = x_L;
  } else {
    Real* x_rounded = work + 3 * n3;
    Real* D_rounded = work + 4 * n3;
    for (std::int64_t q = 0; q < n3; ++q) x_rounded[q] = static_cast<Real>(x_L[q]);
    for (int q = 0; q < N * N; ++q) D_rounded[q] = static_cast<Real>(a.derivative[q]);
    D = D_rounded;
    x = x_rounded;
  }
  const double* G = a.g + e * 6 * n3;
  Real* ur = work;
  Real* us = work + n3;
  Real* ut = work + 2 * n3;
  for (int k = 0; k < N; ++k) {
    for (int j = 0; j < N; ++j) {
      for (int i = 0; i < N; ++i) {
        Real r = 0;
        Real s = 0;
        Real t = 0;
        for (int m = 0; m < N; ++m) {
          r = r + D[i * N + m] * x[(k * N + j) * N + m];
          s = s + D[j * N + m] * x[(k * N + m) * N + i];
          t = t + D[k * N + m] * x[(m * N + j) * N + i];
        }
        const std::int64_t q = (static_cast<std::int64_t>(k) * N + j) * N + i;
        const auto g11 = static_cast<Real>(G[q]);
        const auto g12 = static_cast<Real>(G[n3 + q]);
        const auto g13 = static_cast<Real>(G[2 * n3 + q]);
        const auto g22 = static_cast<Real>(G[3 * n3 + q]);
        const auto g23 = static_cast<Real>(G[4 * n3 + q]);
        const auto g33 = static_cast<Real>(G[5 * n3 + q]);
        ur[q] = g11 * r + g12 * s + g13 * t;
        us[q] = g12 * r + g22 * s + g23 * t;
        ut[q] = g13 * r + g23 * s + g33 * t;
      }
    }
  }
  for (int k = 0; k < N; ++k) {
    for (int j = 0; j < N; ++j) {
      for (int i = 0; i < N; ++i) {
        Real r = 0;
        Real s = 0;
        Real t = 0;
        for (int m = 0; m < N; ++m) {
          r = r + D[m * N + i] * ur[(k * N + j) * N + m];
          s = s + D[m * N + j] * us[(k * N + m) * N + i];
          t = t + D[m * N + k] * ut[(m * N + j) * N + i];
        }
        y[(k * N + j) * N + i] = static_cast<double>(r + s + t);
      }
    }
  }
}

template <class Real>
inline void element_laplacian(const PoissonView& a, std::int64_t e, Real* work) {
  const std::int64_t n3 = static_cast<std::int64_t>(a.n) * a.n * a.n;
  element_laplacian_of<Real>(a, e, a.local_x + e * n3, a.local_y + e * n3, work);
}

/// x_L of local point l.
inline void gather_point(const PoissonView& a, const double* x, std::int64_t l) {
  const index_t g = a.local_to_global[l];
  a.local_x[l] = a.mask != nullptr && a.mask[g] != 0 ? 0.0 : x[g];
}

/// y of global point g.
inline void assemble_point(const PoissonView& a, const double* x, double* y, std::int64_t g) {
  double value = x[g];
  if (a.mask == nullptr || a.mask[g] == 0) {
    value = 0.0;
    for (std::int64_t q = a.global_offsets[g]; q < a.global_offsets[g + 1]; ++q) {
      value = value + a.local_y[a.global_locals[q]];
    }
  }
  y[g] = a.accumulate ? a.alpha * value + (a.base != nullptr ? a.base[g] : y[g]) : value;
}

/// y of global point g from a local diagonal.
inline void assemble_diagonal_point(const PoissonView& a, const double* d_local,
                                    double masked_value, double* y, std::int64_t g) {
  if (a.mask != nullptr && a.mask[g] != 0) {
    y[g] = masked_value;
    return;
  }
  double sum = 0.0;
  for (std::int64_t q = a.global_offsets[g]; q < a.global_offsets[g + 1]; ++q) {
    sum = sum + d_local[a.global_locals[q]];
  }
  y[g] = sum;
}

}  // namespace kryflow::kernels::sem::detail
