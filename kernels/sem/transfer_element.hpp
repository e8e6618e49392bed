// The host loops of the spectral-element transfers (kernels/sem/transfer.hpp), shared by the
// reference and cpu backends: one element's interpolation and one global point's sum.
#pragma once

#include <cstdint>

#include "kernels/sem/transfer.hpp"

namespace kryflow::kernels::sem::host {

/// Element e of transfer_interpolate; `scratch` holds interpolate_scratch(in.n, n_out) doubles.
inline void interpolate_element(const TransferSideView& in, int n_out, const double* J,
                                const double* x, double* y_local, std::int64_t e, double* scratch) {
  const int ni = in.n;
  const int no = n_out;
  const std::int64_t ni3 = static_cast<std::int64_t>(ni) * ni * ni;
  const std::int64_t no3 = static_cast<std::int64_t>(no) * no * no;
  double* u = scratch;
  double* t1 = u + ni3;                                       // no x ni x ni
  double* t2 = t1 + static_cast<std::int64_t>(no) * ni * ni;  // no x no x ni
  for (std::int64_t q = 0; q < ni3; ++q) {
    const index_t g = in.local_to_global[e * ni3 + q];
    u[q] = in.weight[g] * x[g];
  }
  for (int k = 0; k < ni; ++k) {
    for (int j = 0; j < ni; ++j) {
      for (int a = 0; a < no; ++a) {
        double sum = 0.0;
        for (int i = 0; i < ni; ++i) sum = sum + J[a * ni + i] * u[(k * ni + j) * ni + i];
        t1[(k * ni + j) * no + a] = sum;
      }
    }
  }
  for (int k = 0; k < ni; ++k) {
    for (int b = 0; b < no; ++b) {
      for (int a = 0; a < no; ++a) {
        double sum = 0.0;
        for (int j = 0; j < ni; ++j) sum = sum + J[b * ni + j] * t1[(k * ni + j) * no + a];
        t2[(k * no + b) * no + a] = sum;
      }
    }
  }
  double* y = y_local + e * no3;
  for (int c = 0; c < no; ++c) {
    for (int b = 0; b < no; ++b) {
      for (int a = 0; a < no; ++a) {
        double sum = 0.0;
        for (int k = 0; k < ni; ++k) sum = sum + J[c * ni + k] * t2[(k * no + b) * no + a];
        y[(c * no + b) * no + a] = sum;
      }
    }
  }
}

/// Scratch doubles interpolate_element needs.
inline std::int64_t interpolate_scratch(int n_in, int n_out) {
  return static_cast<std::int64_t>(n_in) * n_in * n_in +
         static_cast<std::int64_t>(n_out) * n_in * n_in +
         static_cast<std::int64_t>(n_out) * n_out * n_in;
}

/// Global point g of transfer_assemble.
inline void assemble_point(const TransferSideView& out, const double* y_local, double beta,
                           double* y, std::int64_t g) {
  double sum = 0.0;
  for (std::int64_t q = out.global_offsets[g]; q < out.global_offsets[g + 1]; ++q) {
    sum = sum + y_local[out.global_locals[q]];
  }
  const double value = out.weight[g] * sum;
  y[g] = beta == 0.0 ? value : beta * y[g] + value;
}

}  // namespace kryflow::kernels::sem::host
