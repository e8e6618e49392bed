// Dispatch of the fused PCG kernels to the backend that owns the data.
#include "kernels/krylov/cg/cg.hpp"

#include "kernels/krylov/dispatch.hpp"

namespace kryflow::kernels::krylov::cg {

void start(const Backend& backend, Span<const double> dinv, Span<const double> r,
           Span<const double> z, Span<double> p, const Scalars& s, double* rr) {
  KRYFLOW_KRYLOV_DISPATCH(start, backend, dinv, r, z, p, s, rr);
}

void update(const Backend& backend, Span<double> p, Span<const double> q, Span<const double> dinv,
            Span<const double> z, Span<double> x, Span<double> r, const Scalars& s,
            const DeviceSum& pq, double* pq_out, double* rr_out, double* rz_out,
            bool with_direction) {
  KRYFLOW_KRYLOV_DISPATCH(update, backend, p, q, dinv, z, x, r, s, pq, pq_out, rr_out, rz_out,
                          with_direction);
}

void residual_dot(const Backend& backend, Span<const double> r, Span<const double> z,
                  Span<const double> q, const double* pq, const Scalars& s, double* rz_out) {
  KRYFLOW_KRYLOV_DISPATCH(residual_dot, backend, r, z, q, pq, s, rz_out);
}

void direction(const Backend& backend, Span<const double> dinv, Span<const double> r,
               Span<const double> z, Span<double> p, const Scalars& s) {
  KRYFLOW_KRYLOV_DISPATCH(direction, backend, dinv, r, z, p, s);
}

}  // namespace kryflow::kernels::krylov::cg
