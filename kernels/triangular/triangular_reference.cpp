// Reference sparse triangular solve: row by row in solve order, entries in stored order.
#include "kernels/triangular/triangular.hpp"

namespace kryflow::kernels::triangular::reference {

void solve(const Backend&, const FactorView& factor, bool lower, const double* inverse_diagonal,
           const double* b, double* x, unsigned int*) {
  for (index_t step = 0; step < factor.n; ++step) {
    const index_t i = lower ? step : factor.n - 1 - step;
    double sum = b[i];
    for (index_t k = factor.row_ptr[i]; k < factor.row_ptr[i + 1]; ++k) {
      sum -= factor.values[k] * x[factor.col_idx[k]];
    }
    x[i] = inverse_diagonal != nullptr ? sum * inverse_diagonal[i] : sum;
  }
}

}  // namespace kryflow::kernels::triangular::reference
