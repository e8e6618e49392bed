// Dispatch of the sparse triangular solve to the backend that owns the data.
#include "kernels/triangular/triangular.hpp"

#include "kernels/backend/dispatch.hpp"

namespace kryflow::kernels::triangular {

void solve(const Backend& backend, const FactorView& factor, bool lower,
           const double* inverse_diagonal, const double* b, double* x, unsigned int* ready) {
  KRYFLOW_DISPATCH(triangular, solve, backend, factor, lower, inverse_diagonal, b, x, ready);
}

}  // namespace kryflow::kernels::triangular
