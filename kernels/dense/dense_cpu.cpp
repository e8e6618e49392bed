// OpenMP dense kernels: densify and apply with rows in parallel (each row in the reference's
// order, so the same bits); the checks and the factorization are the reference's (LAPACK).
#include <algorithm>
#include <cstdint>

#include "kernels/backend/parallel.hpp"
#include "kernels/dense/dense.hpp"

namespace kryflow::kernels::dense::cpu {

void densify(const Backend& backend, const MatrixView& a, Span<double> dense) {
  const std::int64_t n = a.pattern.num_rows;
  // Row i writes only entries (i, j): rows are independent.
  parallel::for_each(backend, n * n, n, [&](std::int64_t i) {
    for (std::int64_t j = 0; j < n; ++j) dense[static_cast<std::size_t>(j * n + i)] = 0.0;
    for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
      double& entry = dense[static_cast<std::size_t>(a.pattern.col_idx[k] * n + i)];
      entry = entry + a.values[k];
    }
  });
}

Properties properties(const Backend& backend, index_t n, Span<const double> dense) {
  return reference::properties(backend, n, dense);
}

Inverse invert(const Backend& backend, index_t n, const Properties& properties,
               Span<double> dense) {
  return reference::invert(backend, n, properties, dense);
}

void apply(const Backend& backend, index_t n, Span<const double> inverse, Span<const double> r,
           Span<double> z) {
  const auto m = static_cast<std::int64_t>(n);
  parallel::for_each(backend, m * m, m, [&](std::int64_t i) {
    const double* row = inverse.data() + i * m;
    double sum = 0.0;
    for (std::int64_t j = 0; j < m; ++j) sum = sum + row[j] * r[static_cast<std::size_t>(j)];
    z[static_cast<std::size_t>(i)] = sum;
  });
}

}  // namespace kryflow::kernels::dense::cpu
