// Reference smoother kernels (the oracle), one template on the stored value type.
#include <cmath>

#include "kernels/smoothers/smoothers.hpp"

namespace kryflow::kernels::smoothers::reference {
namespace {

template <class Value>
void l1_row_norms_of(const MatrixView& a, const Value* values, Span<double> d) {
  for (index_t i = 0; i < a.pattern.num_rows; ++i) {
    double sum = 0.0;
    for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
      sum += std::abs(static_cast<double>(values[k]));
    }
    d[i] = sum;
  }
}

template <class Value>
void gauss_seidel_of(const MatrixView& a, const Value* values, Span<const double> inverse_diagonal,
                     Span<const double> b, Span<double> x, SweepDirection direction) {
  const index_t n = a.pattern.num_rows;
  for (index_t step = 0; step < n; ++step) {
    const index_t i = direction == SweepDirection::forward ? step : n - 1 - step;
    double sum = b[i];
    for (index_t k = a.pattern.row_ptr[i]; k < a.pattern.row_ptr[i + 1]; ++k) {
      const index_t j = a.pattern.col_idx[k];
      if (j != i) sum -= static_cast<double>(values[k]) * x[j];
    }
    x[i] = sum * inverse_diagonal[i];
  }
}

}  // namespace

void l1_row_norms(const Backend&, const MatrixView& a, Span<double> d) {
  with_values(a, [&](const auto* values) { l1_row_norms_of(a, values, d); });
}

void gauss_seidel(const Backend&, const MatrixView& a, Span<const double> inverse_diagonal,
                  Span<const double> b, Span<double> x, SweepDirection direction) {
  with_values(a, [&](const auto* values) {
    gauss_seidel_of(a, values, inverse_diagonal, b, x, direction);
  });
}

}  // namespace kryflow::kernels::smoothers::reference
