// The scalar recurrences of pipelined CG, shared by every backend's kernels (host and device).
#pragma once

#include "kernels/krylov/pipecg/pipecg.hpp"

#ifdef __CUDACC__
#define KRYFLOW_HOST_DEVICE __host__ __device__
#else
#define KRYFLOW_HOST_DEVICE
#endif

namespace kryflow::kernels::krylov::pipecg {

/// alpha, beta and the denominator of one update, read from the scalars.
struct Coefficients {
  double alpha = 0.0;
  double beta = 0.0;
  double denominator = 0.0;
  bool valid = false;
};

KRYFLOW_HOST_DEVICE inline bool definite_value(double value, double reference) {
  const double sign = reference < 0.0 ? -1.0 : 1.0;
  return value - value == 0.0 && sign * value > 0.0;
}

KRYFLOW_HOST_DEVICE inline Coefficients coefficients(const Scalars& s) {
  Coefficients c;
  const double gamma = *s.gamma;
  const double delta = *s.delta;
  if (*s.first != 0.0) {
    c.beta = 0.0;
    c.denominator = delta;
  } else {
    c.beta = gamma / *s.gamma_previous;
    c.denominator = delta + c.beta * (*s.us + *s.pw) + (c.beta * c.beta) * *s.ps;
  }
  c.valid = definite_value(gamma, *s.gamma0) && definite_value(c.denominator, *s.gamma0);
  c.alpha = gamma / c.denominator;
  return c;
}

}  // namespace kryflow::kernels::krylov::pipecg
