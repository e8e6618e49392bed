// Dispatch of the dense kernels to the backend that owns the data.
#include "kernels/dense/dense.hpp"

#include "kernels/backend/dispatch.hpp"

namespace kryflow::kernels::dense {

void densify(const Backend& backend, const MatrixView& a, Span<double> dense) {
  KRYFLOW_DISPATCH(dense, densify, backend, a, dense);
}

Properties properties(const Backend& backend, index_t n, Span<const double> dense) {
  KRYFLOW_DISPATCH(dense, properties, backend, n, dense);
}

Inverse invert(const Backend& backend, index_t n, const Properties& properties,
               Span<double> dense) {
  KRYFLOW_DISPATCH(dense, invert, backend, n, properties, dense);
}

void apply(const Backend& backend, index_t n, Span<const double> inverse, Span<const double> r,
           Span<double> z) {
  KRYFLOW_DISPATCH(dense, apply, backend, n, inverse, r, z);
}

}  // namespace kryflow::kernels::dense
