// The host loop of one element's Schwarz local solve (kernels/sem/schwarz.hpp), shared by the
// reference and cpu backends.
#pragma once

#include <cstdint>

#include "kernels/sem/poisson_element.hpp"
#include "kernels/sem/schwarz.hpp"

namespace kryflow::kernels::sem::host {

/// Doubles of scratch fdm_solve_element needs: two N^3 boxes (of doubles, or floats).
inline std::int64_t fdm_scratch(int n) {
  const std::int64_t N = n + 2;
  return 2 * N * N * N;
}

/// The local solve of one box of N^3 points (N = n + 2) in T: a holds the box's right-hand side
/// (0 at the points outside the patch) and receives the solution; b is N^3 of scratch;
/// eigenvectors and eigenvalues are the box's (3 N^2 and 3 N).
template <typename T>
inline void fdm_solve_box(int N, const T* eigenvectors, const T* eigenvalues, T* a, T* b) {
  const T* Sr = eigenvectors;
  const T* Ss = Sr + N * N;
  const T* St = Ss + N * N;
  const T* lr = eigenvalues;
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
  fdm_solve_box<T>(N, eigenvectors + e * 3 * N * N, eigenvalues + e * 3 * N, a, b);
  auto at = [N](int i, int j, int k) { return (static_cast<std::int64_t>(k) * N + j) * N + i; };
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

/// Doubles of scratch fused_patch_step needs: the box's x, A x and local solve (3 M^3, M = n + 2)
/// and the FDM scratch, an element's x_e and y_e (2 N^3) and element_laplacian's work (at most
/// 4 N^3 + N^2 floats or 3 N^3 doubles: 4 N^3 + N^2 doubles).
inline std::int64_t fused_scratch(int n, int N) {
  const std::int64_t M = n + 2;
  const std::int64_t n3 = static_cast<std::int64_t>(N) * N * N;
  return 3 * M * M * M + fdm_scratch(n) + 2 * n3 + 4 * n3 + static_cast<std::int64_t>(N) * N;
}

/// Patch P of vertex_patch_fused_step: element arithmetic Real (the operator's), local solves
/// in T (the patches').
template <class Real, typename T>
inline void fused_patch_step_in(const SchwarzView& v, const T* eigenvectors, const T* eigenvalues,
                                const FusedPatchView& f, const PoissonView& a, const double* b,
                                double omega, const double* patch_scale, double* x, std::int64_t P,
                                double* scratch) {
  const int M = v.n + 2;
  const std::int64_t M3 = static_cast<std::int64_t>(M) * M * M;
  const int N = a.n;
  const std::int64_t n3 = static_cast<std::int64_t>(N) * N * N;
  double* xb = scratch;
  double* axb = xb + M3;
  T* box = reinterpret_cast<T*>(axb + M3);  // the local solve's right-hand side and result
  T* fdm = reinterpret_cast<T*>(axb + 2 * M3);
  double* xe = axb + 2 * M3 + fdm_scratch(v.n);
  double* ye = xe + n3;
  Real* work = reinterpret_cast<Real*>(ye + n3);
  const index_t* full = f.box_full + P * M3;
  for (std::int64_t q = 0; q < M3; ++q) {
    const index_t g = full[q];
    xb[q] = a.mask != nullptr && a.mask[g] != 0 ? 0.0 : x[g];
    axb[q] = 0.0;
  }
  // The box point of each of an element's points, in the element's local order.
  auto for_each_point = [&](const std::int32_t* placement, auto&& visit) {
    const std::int32_t* perm = placement;
    const std::int32_t* sign = placement + 3;
    const std::int32_t* base = placement + 6;
    for (int k = 0; k < N; ++k)
      for (int j = 0; j < N; ++j)
        for (int i = 0; i < N; ++i) {
          const int local[3] = {i, j, k};
          const std::int64_t I = base[0] + sign[0] * local[perm[0]];
          const std::int64_t J = base[1] + sign[1] * local[perm[1]];
          const std::int64_t K = base[2] + sign[2] * local[perm[2]];
          visit((static_cast<std::int64_t>(k) * N + j) * N + i, (K * M + J) * M + I);
        }
  };
  for (int slot = 0; slot < 8; ++slot) {
    const std::int64_t e = f.elements[P * 8 + slot];
    const std::int32_t* placement = f.placements + (P * 8 + slot) * 9;
    for_each_point(placement, [&](std::int64_t l, std::int64_t q) { xe[l] = xb[q]; });
    detail::element_laplacian_of<Real>(a, e, xe, ye, work);
    for_each_point(placement, [&](std::int64_t l, std::int64_t q) { axb[q] = axb[q] + ye[l]; });
  }
  const index_t* map = v.box_to_global + P * M3;
  for (std::int64_t q = 0; q < M3; ++q) {
    box[q] = map[q] >= 0 ? static_cast<T>(b[map[q]] - axb[q]) : T(0);
  }
  fdm_solve_box<T>(M, eigenvectors + P * 3 * M * M, eigenvalues + P * 3 * M, box, fdm);
  const double w = patch_scale != nullptr ? omega * patch_scale[P] : omega;
  for (std::int64_t q = 0; q < M3; ++q) {
    if (map[q] >= 0) x[map[q]] = x[map[q]] + w * static_cast<double>(box[q]);
  }
}

/// Patch P of vertex_patch_fused_step; scratch: fused_scratch(v.n, a.n) doubles.
inline void fused_patch_step(const SchwarzView& v, const FusedPatchView& f, const PoissonView& a,
                             const double* b, double omega, const double* patch_scale, double* x,
                             std::int64_t P, double* scratch) {
  auto run = [&](auto real) {
    using Real = decltype(real);
    if (v.eigenvectors32 != nullptr) {
      fused_patch_step_in<Real, float>(v, v.eigenvectors32, v.eigenvalues32, f, a, b, omega,
                                       patch_scale, x, P, scratch);
    } else {
      fused_patch_step_in<Real, double>(v, v.eigenvectors, v.eigenvalues, f, a, b, omega,
                                        patch_scale, x, P, scratch);
    }
  };
  if (a.float_arithmetic) {
    run(float{});
  } else {
    run(double{});
  }
}

}  // namespace kryflow::kernels::sem::host
