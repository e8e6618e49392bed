// The host loops of the spectral-element transfers (kernels/sem/transfer.hpp), shared by the
// reference and cpu backends: one element's interpolation and one global point's sum.
#pragma once

#include <cstdint>

#include "kernels/sem/transfer.hpp"

namespace kryflow::kernels::sem::host {

/// Scratch doubles interpolate_values needs.
inline std::int64_t interpolate_scratch(int n_in, int n_out) {
  return static_cast<std::int64_t>(n_in) * n_in * n_in +
         static_cast<std::int64_t>(n_out) * n_in * n_in +
         static_cast<std::int64_t>(n_out) * n_out * n_in;
}

/// Element e's interpolation (kernels/sem/transfer.hpp, transfer_interpolate) written to y
/// (n_out^3 entries); `scratch` holds interpolate_scratch(in.n, n_out) doubles.
inline void interpolate_values(const TransferSideView& in, int n_out, const double* J,
                               const double* x, std::int64_t e, double* scratch, double* y) {
  const int ni = in.n;
  const int no = n_out;
  const std::int64_t ni3 = static_cast<std::int64_t>(ni) * ni * ni;
  double* u = scratch;
  double* t1 = u + ni3;                                       // no x ni x ni
  double* t2 = t1 + static_cast<std::int64_t>(no) * ni * ni;  // no x no x ni
  for (std::int64_t q = 0; q < ni3; ++q) {
    const index_t g = in.local_to_global[e * ni3 + q];
    u[q] = in.owner != nullptr ? (in.owner[e * ni3 + q] == 1 ? x[g] : 0.0) : in.weight[g] * x[g];
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

/// Element e of transfer_interpolate.
inline void interpolate_element(const TransferSideView& in, int n_out, const double* J,
                                const double* x, double* y_local, std::int64_t e, double* scratch) {
  const std::int64_t no3 = static_cast<std::int64_t>(n_out) * n_out * n_out;
  interpolate_values(in, n_out, J, x, e, scratch, y_local + e * no3);
}

/// Element e of transfer_prolongate; `scratch` holds interpolate_scratch(in.n, out.n) + out.n^3
/// doubles. Each global point has one owner, so elements may run in parallel.
inline void prolongate_element(const TransferSideView& in, const TransferSideView& out,
                               const double* J, const double* x, double beta, double* y,
                               std::int64_t e, double* scratch) {
  const std::int64_t no3 = static_cast<std::int64_t>(out.n) * out.n * out.n;
  double* values = scratch + interpolate_scratch(in.n, out.n);
  interpolate_values(in, out.n, J, x, e, scratch, values);
  for (std::int64_t q = 0; q < no3; ++q) {
    const std::uint8_t owner = out.owner[e * no3 + q];
    if (owner == 0) continue;
    const index_t g = out.local_to_global[e * no3 + q];
    const double value = owner == 1 ? values[q] : 0.0;
    y[g] = beta == 0.0 ? value : beta * y[g] + value;
  }
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
