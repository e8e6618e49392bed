// The scalar steps of GMRES, shared by every backend's kernels (host and device): the Givens
// rotation of a new Hessenberg column with its stop tests, the start of a cycle and the back
// substitution R y = g. One thread runs them; they use only +, -, *, / and sqrt, each correctly
// rounded on the host and on the device, so the host and a single device thread give the same
// bits (fused multiply-add is off on both sides).
#pragma once

#include <math.h>

#include "kernels/krylov/gmres/gmres.hpp"

#ifdef __CUDACC__
#define KRYFLOW_GMRES_HOST_DEVICE __host__ __device__
#else
#define KRYFLOW_GMRES_HOST_DEVICE
#endif

namespace kryflow::kernels::krylov::gmres {

/// DBL_EPSILON.
inline constexpr double kEpsilon = 2.220446049250313080847e-16;
/// Happy breakdown: h_{j+1,j} <= kHappyBreakdownFactor (j + 1) eps ||w before Gram-Schmidt||.
inline constexpr double kHappyBreakdownFactor = 10.0;

KRYFLOW_GMRES_HOST_DEVICE inline bool is_finite(double value) {
  return value - value == 0.0;
}

KRYFLOW_GMRES_HOST_DEVICE inline double magnitude(double value) {
  return value < 0.0 ? -value : value;
}

/// sqrt(a^2 + b^2) without overflow or underflow of the squares (the larger magnitude times
/// sqrt(1 + ratio^2)); not finite when a or b is not. Within a few ulps of std::hypot, and the
/// same bits on host and device, which std::hypot and CUDA's hypot do not promise.
KRYFLOW_GMRES_HOST_DEVICE inline double hypotenuse(double a, double b) {
  a = magnitude(a);
  b = magnitude(b);
  if (!is_finite(a) || !is_finite(b)) return a + b;  // NaN or +inf
  const double big = a > b ? a : b;
  const double small = a > b ? b : a;
  if (big == 0.0) return 0.0;
  const double ratio = small / big;
  return big * sqrt(1.0 + ratio * ratio);
}

/// H(i, j) of the (m + 1) x m column-major Hessenberg matrix.
KRYFLOW_GMRES_HOST_DEVICE inline double& hessenberg_entry(const Scalars& s, long long i,
                                                          long long j) {
  return s.hessenberg[j * (s.m + 1LL) + i];
}

KRYFLOW_GMRES_HOST_DEVICE inline void stop_at(const Scalars& s, StopCode code, int j) {
  *s.stop = static_cast<double>(code);
  *s.stop_column = static_cast<double>(j);
}

/// Column j of the Hessenberg matrix (h_ij = column + correction, h_{j+1,j} = sqrt(*wn)): the
/// previous rotations, the new rotation that zeroes h_{j+1,j}, and g. Stops (StopCode) on a
/// non-finite ||w|| before Gram-Schmidt, a non-finite column, |R(j,j)| <= eps ||H||_F (column j
/// is then not accepted) and, after accepting column j, on a happy breakdown. *residual =
/// |g_{j+1}|, the residual norm of the least-squares solution over columns 0 .. j.
KRYFLOW_GMRES_HOST_DEVICE inline void givens_step(const Scalars& s, int j, bool corrected,
                                                  double* residual) {
  if (*s.stop != 0.0) return;
  const double az = *s.az;
  if (!is_finite(az)) {
    stop_at(s, kNonFiniteProduct, j);
    return;
  }
  double* h = &hessenberg_entry(s, 0, j);
  if (corrected) {
    for (int i = 0; i <= j; ++i) h[i] = h[i] + s.correction[i];
  }
  const double w_norm = sqrt(*s.wn);
  h[j + 1] = w_norm;
  double h_norm = *s.h_norm;
  for (int i = 0; i <= j + 1; ++i) h_norm = hypotenuse(h_norm, h[i]);
  *s.h_norm = h_norm;
  for (int i = 0; i < j; ++i) {  // the previous rotations
    const double t = s.cs[i] * h[i] + s.sn[i] * h[i + 1];
    h[i + 1] = -s.sn[i] * h[i] + s.cs[i] * h[i + 1];
    h[i] = t;
  }
  const double r_jj = hypotenuse(h[j], h[j + 1]);  // R(j,j) after the new rotation
  *s.r_jj = r_jj;
  if (!is_finite(r_jj) || !is_finite(h_norm)) {
    stop_at(s, kNonFiniteColumn, j);
    return;
  }
  if (r_jj <= kEpsilon * h_norm) {
    stop_at(s, kSingular, j);
    return;
  }
  s.cs[j] = h[j] / r_jj;
  s.sn[j] = h[j + 1] / r_jj;
  h[j] = r_jj;
  h[j + 1] = 0.0;
  s.g[j + 1] = -s.sn[j] * s.g[j];
  s.g[j] = s.cs[j] * s.g[j];
  *s.columns = static_cast<double>(j + 1);
  *residual = magnitude(s.g[j + 1]);
  if (w_norm <= kHappyBreakdownFactor * static_cast<double>(j + 1) * kEpsilon * sqrt(az)) {
    stop_at(s, kHappyBreakdown, j);
  }
}

/// g = sqrt(*beta) e_1, no columns, ||H||_F = 0, stop cleared.
KRYFLOW_GMRES_HOST_DEVICE inline void start_cycle_step(const Scalars& s) {
  *s.stop = 0.0;
  *s.stop_column = 0.0;
  *s.columns = 0.0;
  *s.h_norm = 0.0;
  *s.r_jj = 0.0;
  s.g[0] = sqrt(*s.beta);
  for (int i = 1; i <= s.m; ++i) s.g[i] = 0.0;
}

/// y = R^-1 g over the accepted columns, by back substitution (R: the rotated Hessenberg
/// matrix's upper triangle).
KRYFLOW_GMRES_HOST_DEVICE inline void back_substitution(const Scalars& s) {
  const int columns = static_cast<int>(*s.columns);
  for (int i = columns - 1; i >= 0; --i) {
    double sum = s.g[i];
    for (int k = i + 1; k < columns; ++k) sum -= hessenberg_entry(s, i, k) * s.y[k];
    s.y[i] = sum / hessenberg_entry(s, i, i);
  }
}

}  // namespace kryflow::kernels::krylov::gmres
