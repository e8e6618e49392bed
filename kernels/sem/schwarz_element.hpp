// The host loop of one element's Schwarz local solve (kernels/sem/schwarz.hpp), shared by the
// reference and cpu backends.
#pragma once

#include <cstdint>

#include "kernels/sem/schwarz.hpp"

namespace kryflow::kernels::sem::host {

/// Doubles of scratch fdm_solve_element needs: two N^3 boxes (of doubles, or floats).
inline std::int64_t fdm_scratch(int n) {
  const std::int64_t N = n + 2;
  return 2 * N * N * N;
}

/// Element e of schwarz_fdm_solve in T (double, or float for float32 patches), written to locals
/// of Y (T, or double for float ones).
template <typename T, typename Y>
inline void fdm_solve_element_in(const SchwarzView& v, const T* eigenvectors, const T* eigenvalues,
                                 const double* r, Y* y_local, std::int64_t e, T* scratch) {
  const int n = v.n;
  const int N = n + 2;
  const std::int64_t N3 = static_cast<std::int64_t>(N) * N * N;
  T* a = scratch;
  T* b = scratch + N3;
  const index_t* map = v.box_to_global + e * N3;
  for (std::int64_t q = 0; q < N3; ++q) a[q] = map[q] >= 0 ? static_cast<T>(r[map[q]]) : T(0);
  const T* Sr = eigenvectors + e * 3 * N * N;
  const T* Ss = Sr + N * N;
  const T* St = Ss + N * N;
  const T* lr = eigenvalues + e * 3 * N;
  const T* ls = lr + N;
  const T* lt = ls + N;
  auto at = [N](int i, int j, int k) { return (static_cast<std::int64_t>(k) * N + j) * N + i; };
  // Forward: b = S_r^T along r, a = S_s^T along s, b = S_t^T along t.
  for (int k = 0; k < N; ++k)
    for (int j = 0; j < N; ++j)
      for (int m = 0; m < N; ++m) {
        T sum = 0;
        for (int i = 0; i < N; ++i) sum = sum + Sr[i * N + m] * a[at(i, j, k)];
        b[at(m, j, k)] = sum;
      }
  for (int k = 0; k < N; ++k)
    for (int l = 0; l < N; ++l)
      for (int m = 0; m < N; ++m) {
        T sum = 0;
        for (int j = 0; j < N; ++j) sum = sum + Ss[j * N + l] * b[at(m, j, k)];
        a[at(m, l, k)] = sum;
      }
  for (int o = 0; o < N; ++o)
    for (int l = 0; l < N; ++l)
      for (int m = 0; m < N; ++m) {
        T sum = 0;
        for (int k = 0; k < N; ++k) sum = sum + St[k * N + o] * a[at(m, l, k)];
        const T lambda = lr[m] + ls[l] + lt[o];
        b[at(m, l, o)] = lambda > T(0) ? sum * (T(1) / lambda) : T(0);
      }
  // Backward: a = S_r along r, b = S_s along s, a = S_t along t.
  for (int o = 0; o < N; ++o)
    for (int l = 0; l < N; ++l)
      for (int i = 0; i < N; ++i) {
        T sum = 0;
        for (int m = 0; m < N; ++m) sum = sum + Sr[i * N + m] * b[at(m, l, o)];
        a[at(i, l, o)] = sum;
      }
  for (int o = 0; o < N; ++o)
    for (int j = 0; j < N; ++j)
      for (int i = 0; i < N; ++i) {
        T sum = 0;
        for (int l = 0; l < N; ++l) sum = sum + Ss[j * N + l] * a[at(i, l, o)];
        b[at(i, j, o)] = sum;
      }
  for (int k = 0; k < N; ++k)
    for (int j = 0; j < N; ++j)
      for (int i = 0; i < N; ++i) {
        T sum = 0;
        for (int o = 0; o < N; ++o) sum = sum + St[k * N + o] * b[at(i, j, o)];
        a[at(i, j, k)] = sum;
      }
  if (v.restricted) {
    const std::int64_t n3 = static_cast<std::int64_t>(n) * n * n;
    Y* y = y_local + e * n3;
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
          y[(k * n + j) * n + i] = static_cast<Y>(a[at(i + 1, j + 1, k + 1)]);
  } else {
    Y* y = y_local + e * N3;
    for (std::int64_t q = 0; q < N3; ++q) y[q] = static_cast<Y>(a[q]);
  }
}

/// Element e of schwarz_fdm_solve (the locals' type checked by the dispatch); scratch:
/// fdm_scratch(v.n) doubles.
inline void fdm_solve_element(const SchwarzView& v, const double* r, const SchwarzLocals& y_local,
                              std::int64_t e, double* scratch) {
  if (v.eigenvectors32 == nullptr) {
    fdm_solve_element_in<double>(v, v.eigenvectors, v.eigenvalues, r, y_local.values, e, scratch);
  } else if (y_local.values32 != nullptr) {
    fdm_solve_element_in<float>(v, v.eigenvectors32, v.eigenvalues32, r, y_local.values32, e,
                                reinterpret_cast<float*>(scratch));
  } else {
    fdm_solve_element_in<float>(v, v.eigenvectors32, v.eigenvalues32, r, y_local.values, e,
                                reinterpret_cast<float*>(scratch));
  }
}

/// Global point g of schwarz_assemble, the locals in Y (double or float): summed in double.
template <typename Y>
inline void schwarz_assemble_point(const TransferSideView& out, const Y* y_local, const double* r,
                                   const SchwarzUpdate& update, double* z, std::int64_t g) {
  double value = r[g];
  if (out.weight[g] != 0.0) {
    double sum = 0.0;
    for (std::int64_t q = out.global_offsets[g]; q < out.global_offsets[g + 1]; ++q) {
      sum = sum + static_cast<double>(y_local[out.global_locals[q]]);
    }
    value = out.weight[g] * sum;
  }
  if (update.x == nullptr) {
    z[g] = value;
    return;
  }
  const double d =
      update.beta == 0.0 ? update.alpha * value : update.alpha * value + update.beta * z[g];
  z[g] = d;
  update.x[g] = update.x_is_zero ? d : d + update.x[g];
}

/// Patch e of schwarz_scatter_add.
template <typename Y>
inline void scatter_add_patch(const SchwarzView& v, const Y* y_local, double omega,
                              const double* patch_scale, double* x, std::int64_t e) {
  const std::int64_t N = v.n + 2;
  const std::int64_t N3 = N * N * N;
  const index_t* map = v.box_to_global + e * N3;
  const Y* y = y_local + e * N3;
  const double w = patch_scale != nullptr ? omega * patch_scale[e] : omega;
  for (std::int64_t q = 0; q < N3; ++q) {
    if (map[q] >= 0) x[map[q]] = x[map[q]] + w * static_cast<double>(y[q]);
  }
}

/// Patch e of schwarz_patch_norms.
inline double patch_norm(const SchwarzView& v, const double* values, std::int64_t e) {
  const std::int64_t N = v.n + 2;
  const std::int64_t N3 = N * N * N;
  const index_t* map = v.box_to_global + e * N3;
  double sum = 0.0;
  for (std::int64_t q = 0; q < N3; ++q) {
    if (map[q] >= 0) sum = sum + values[map[q]] * values[map[q]];
  }
  return sum;
}

}  // namespace kryflow::kernels::sem::host
