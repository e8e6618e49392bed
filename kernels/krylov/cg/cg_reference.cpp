// Reference PCG kernels: sequential loops and sums, the oracle of the cpu and cuda kernels.
#include "kernels/krylov/cg/cg.hpp"

namespace kryflow::kernels::krylov::cg::reference {

void start(const Backend&, Span<const double> dinv, Span<const double> r, Span<const double> z,
           Span<double> p, const Scalars& s, double* rr) {
  double rz = 0.0;
  double rr_sum = 0.0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    p[i] = dinv.empty() ? z[i] : dinv[i] * r[i];
    rz += r[i] * p[i];
    rr_sum += r[i] * r[i];
  }
  *s.rz = rz;
  *s.rz0 = rz;
  *s.rz_previous = rz;
  *s.stop = 0.0;
  *rr = rr_sum;
}

void update(const Backend&, Span<const double> p, Span<const double> q, Span<const double> dinv,
            Span<double> x, Span<double> r, const Scalars& s, const double* pq, double* rr_out,
            double* rz_out) {
  if (*s.stop != 0.0) return;
  if (!definite(*pq, *s.rz0)) {
    *s.stop = 1.0;
    return;
  }
  const double alpha = *s.rz / *pq;
  double rz = 0.0;
  double rr = 0.0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    x[i] += alpha * p[i];
    r[i] -= alpha * q[i];
    if (!dinv.empty()) rz += r[i] * dinv[i] * r[i];
    rr += r[i] * r[i];
  }
  if (!dinv.empty()) {
    *s.rz_previous = *s.rz;
    *s.rz = rz;
    *rz_out = rz;
  }
  *rr_out = rr;
}

void residual_dot(const Backend&, Span<const double> r, Span<const double> z, const Scalars& s,
                  double* rz_out) {
  if (*s.stop != 0.0) return;
  double rz = 0.0;
  for (std::size_t i = 0; i < r.size(); ++i) rz += r[i] * z[i];
  *s.rz_previous = *s.rz;
  *s.rz = rz;
  *rz_out = rz;
}

void direction(const Backend&, Span<const double> dinv, Span<const double> r, Span<const double> z,
               Span<double> p, const Scalars& s) {
  if (*s.stop != 0.0) return;
  if (!definite(*s.rz, *s.rz0)) {
    *s.stop = 1.0;
    return;
  }
  const double beta = *s.rz / *s.rz_previous;
  for (std::size_t i = 0; i < p.size(); ++i) {
    p[i] = (dinv.empty() ? z[i] : dinv[i] * r[i]) + beta * p[i];
  }
}

}  // namespace kryflow::kernels::krylov::cg::reference
