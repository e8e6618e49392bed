// The CG-Lanczos steps of smoothers::cg_lanczos on the host (reference and cpu): the vectors
// are walked in chunks of kLanczosChunk rows, each chunk's partial sum in row order and the
// partials added in chunk order, so the bits do not depend on the threads that run the chunks.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/smoothers/smoothers.hpp"

namespace kryflow::kernels::smoothers::lanczos {

constexpr std::int64_t kLanczosChunk = 4096;

/// The steps of cg_lanczos (smoothers.hpp) on a matrix with values of type Value. `for_chunks`
/// calls its argument with every chunk index in [0, chunks), in any order and on any thread.
template <class Value, class ForChunks>
void steps(const MatrixView& a, const Value* values, Span<const double> dinv, int count,
           Span<double> r, Span<double> p, Span<double> p_next, Span<double> q, double* scalars,
           ForChunks&& for_chunks) {
  const std::int64_t n = a.pattern.num_rows;
  const std::int64_t chunks = (n + kLanczosChunk - 1) / kLanczosChunk;
  std::vector<double> partial(static_cast<std::size_t>(chunks));
  const auto total = [&] {
    double sum = 0.0;
    for (const double v : partial) sum += v;
    return sum;
  };
  const auto rows_of = [&](std::int64_t c, auto&& row) {
    double sum = 0.0;
    const std::int64_t end = std::min(n, (c + 1) * kLanczosChunk);
    for (std::int64_t i = c * kLanczosChunk; i < end; ++i) sum += row(static_cast<index_t>(i));
    partial[static_cast<std::size_t>(c)] = sum;
  };
  for_chunks(chunks, [&](std::int64_t c) {
    rows_of(c, [&](index_t i) {
      const double z = dinv[i] * r[i];
      p[i] = z;
      return r[i] * z;
    });
  });
  double rz = total();
  scalars[2] = rz;
  const std::int64_t m = count;
  double beta = 0.0;
  Span<double> from = p, to = p_next;
  for (std::int64_t j = 0; j < m && rz != 0.0 && std::isfinite(rz); ++j) {
    // p_j = z_j + beta_(j-1) p_(j-1) (p_0 = z_0), formed where A p_j reads it.
    const auto direction = [&](index_t k) {
      return j == 0 ? from[k] : dinv[k] * r[k] + beta * from[k];
    };
    for_chunks(chunks, [&](std::int64_t c) {
      rows_of(c, [&](index_t i) {
        double sum = 0.0;
        for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
          sum += static_cast<double>(values[k]) * direction(a.pattern.col_idx[k]);
        }
        q[i] = sum;
        const double p_i = direction(i);
        to[i] = p_i;
        return p_i * sum;
      });
    });
    const double pq = total();
    scalars[6 + j] = pq;
    if (!(pq != 0.0) || !std::isfinite(pq)) return;
    const double alpha = rz / pq;
    for_chunks(chunks, [&](std::int64_t c) {
      rows_of(c, [&](index_t i) {
        r[i] -= alpha * q[i];
        return r[i] * (dinv[i] * r[i]);
      });
    });
    const double rz_next = total();
    scalars[6 + m + j] = rz_next;
    beta = rz_next / rz;
    rz = rz_next;
    std::swap(from, to);
  }
}

}  // namespace kryflow::kernels::smoothers::lanczos
