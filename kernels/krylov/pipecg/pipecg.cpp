// Dispatch of the fused pipelined CG kernels to the backend that owns the data.
#include "kernels/krylov/pipecg/pipecg.hpp"

#include "kernels/krylov/dispatch.hpp"

namespace kryflow::kernels::krylov::pipecg {

void start(const Backend& backend, Span<const double> dinv, Span<const double> r,
           Span<const double> u, Span<const double> w, Span<const double> sv, Span<const double> p,
           Span<double> m, const Scalars& s, double* rr, bool reset) {
  KRYFLOW_KRYLOV_DISPATCH(start, backend, dinv, r, u, w, sv, p, m, s, rr, reset);
}

void update(const Backend& backend, const Vectors& v, const Scalars& s, double* denominator_out,
            double* rr_out, double* gamma_out) {
  KRYFLOW_KRYLOV_DISPATCH(update, backend, v, s, denominator_out, rr_out, gamma_out);
}

}  // namespace kryflow::kernels::krylov::pipecg
