// OpenMP smoother kernels: l1 row norms row-parallel; Gauss-Seidel is the sequential sweep.
#include <cmath>
#include <cstdint>

#include "kernels/backend/parallel.hpp"
#include "kernels/smoothers/smoothers.hpp"

namespace kryflow::kernels::smoothers::cpu {

void l1_row_norms(const Backend& backend, const MatrixView& a, Span<double> d) {
  const std::int64_t n = a.pattern.num_rows;
  with_values(a, [&](const auto* values) {
    parallel::for_each(backend, a.pattern.row_ptr[n], n, [&](std::int64_t i) {
      double sum = 0.0;
      for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
        sum += std::abs(static_cast<double>(values[k]));
      }
      d[i] = sum;
    });
  });
}

void gauss_seidel(const Backend& backend, const MatrixView& a, Span<const double> inverse_diagonal,
                  Span<const double> b, Span<double> x, SweepDirection direction) {
  reference::gauss_seidel(backend, a, inverse_diagonal, b, x, direction);
}

}  // namespace kryflow::kernels::smoothers::cpu
