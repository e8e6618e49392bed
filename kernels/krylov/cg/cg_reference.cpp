// Reference PCG kernels: sequential loops and sums, the oracle of the cpu and cuda kernels.
#include "kernels/backend/reduction_emulation.hpp"
#include "kernels/krylov/cg/cg.hpp"

namespace kryflow::kernels::krylov::cg::reference {

void start(const Backend&, Span<const double> dinv, Span<const double> r, Span<const double> z,
           Span<double> p, const Scalars& s, double* rr) {
  double rz = 0.0;
  double rr_sum = 0.0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    p[i] = !dinv.empty() ? dinv[i] * r[i] : z.empty() ? 0.0 : z[i];
    rz += r[i] * p[i];
    rr_sum += r[i] * r[i];
  }
  *s.rz = rz;
  *s.rz0 = rz;
  *s.rz_previous = rz;
  *s.stop = 0.0;
  *s.beta = 0.0;
  *rr = rr_sum;
}

void update(const Backend&, Span<double> p, Span<const double> q, Span<const double> dinv,
            Span<const double> z, Span<double> x, Span<double> r, const Scalars& s,
            const DeviceSum& pq, double* pq_out, double* rr_out, double* rz_out,
            bool with_direction) {
  const double denominator =
      pq.count == 0 ? *pq.values : kernels::emulation::ordered_sum(pq.values, pq.count);
  *pq_out = denominator;
  if (*s.stop != 0.0) return;
  if (!definite(denominator, *s.rz0)) {
    *s.stop = 1.0;
    return;
  }
  const double alpha = *s.rz / denominator;
  const double beta = *s.beta;
  double rz = 0.0;
  double rr = 0.0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (with_direction) p[i] = (dinv.empty() ? z[i] : dinv[i] * r[i]) + beta * p[i];
    if (!x.empty()) x[i] += alpha * p[i];
    r[i] -= alpha * q[i];
    if (!dinv.empty()) rz += r[i] * dinv[i] * r[i];
    rr += r[i] * r[i];
  }
  if (!dinv.empty()) {
    new_residual_dot(s, rz);
    *rz_out = rz;
  }
  *rr_out = rr;
}

void residual_dot(const Backend&, Span<const double> r, Span<const double> z, Span<const double> q,
                  const double* pq, const Scalars& s, double* rz_out) {
  if (*s.stop != 0.0) return;
  double rz = 0.0;
  double zq = 0.0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    rz += r[i] * z[i];
    if (!q.empty()) zq += z[i] * q[i];
  }
  if (q.empty()) {
    new_residual_dot(s, rz);
    *rz_out = rz;
  } else {
    *rz_out = new_flexible_residual_dot(s, rz, zq, *pq);
  }
}

void direction(const Backend&, Span<const double> dinv, Span<const double> r, Span<const double> z,
               Span<double> p, const Scalars& s) {
  if (*s.stop != 0.0) return;
  const double beta = *s.beta;
  for (std::size_t i = 0; i < p.size(); ++i) {
    p[i] = (dinv.empty() ? z[i] : dinv[i] * r[i]) + beta * p[i];
  }
}

}  // namespace kryflow::kernels::krylov::cg::reference
