// CUDA BiCGStab kernels: element-wise passes with their sums, coefficients from device memory
// (kernels/krylov/fused_cuda.cuh).
#include "kernels/krylov/bicgstab/bicgstab.hpp"
#include "kernels/krylov/bicgstab/bicgstab_scalars.hpp"
#include "kernels/krylov/fused_cuda.cuh"

namespace kryflow::kernels::krylov::bicgstab::cuda {
namespace {

using kernels::cuda::aligned16;
using kernels::cuda::load_input;
using kernels::cuda::load_output;
using kernels::cuda::Pair;
using kernels::cuda::store;
using krylov::cuda::context_of;
using krylov::cuda::or_null;
using krylov::cuda::size_type;

struct Start {
  const double* r;
  double* r_hat;
  Scalars s;
  double* rr;
  __device__ bool prepare(bool) { return true; }
  template <bool kAligned>
  __device__ void pair(size_type k, double (&sum)[1]) const {
    const Pair rk = load_input<kAligned>(r, k);
    store<kAligned>(r_hat, k, rk);
    sum[0] += rk.a * rk.a;
    sum[0] += rk.b * rk.b;
  }
  __device__ void single(size_type i, double (&sum)[1]) const {
    r_hat[i] = r[i];
    sum[0] += r[i] * r[i];
  }
  __device__ void finish(const double (&total)[1]) const {
    *s.rho = total[0];
    *s.rho_previous = total[0];
    *s.alpha = 1.0;
    *s.omega = 1.0;
    *s.first = 1.0;
    *s.stop = 0.0;
    *rr = total[0];
  }
  bool aligned() const { return aligned16(r) && aligned16(r_hat); }
};

struct Direction {
  const double* dinv;
  const double* r;
  const double* v;
  double* p;
  double* p_hat;
  Scalars s;
  DirectionCoefficients c;
  __device__ bool prepare(bool writer) {
    c = direction_coefficients(s, writer);
    return c.run;
  }
  __device__ double element(double ri, double vi, double pi) const {
    return c.first ? ri : (ri + c.beta_omega * vi) + c.beta * pi;
  }
  template <bool kAligned>
  __device__ void pair(size_type k) const {
    const Pair rk = load_input<kAligned>(r, k);
    Pair pk;
    if (c.first) {
      pk = rk;
    } else {
      const Pair vk = load_input<kAligned>(v, k);
      const Pair old = load_output<kAligned>(p, k);
      pk = {element(rk.a, vk.a, old.a), element(rk.b, vk.b, old.b)};
    }
    store<kAligned>(p, k, pk);
    if (dinv != nullptr) {
      const Pair dk = load_input<kAligned>(dinv, k);
      store<kAligned>(p_hat, k, {dk.a * pk.a, dk.b * pk.b});
    }
  }
  __device__ void single(size_type i) const {
    const double pi = c.first ? r[i] : element(r[i], v[i], p[i]);
    p[i] = pi;
    if (dinv != nullptr) p_hat[i] = dinv[i] * pi;
  }
  bool aligned() const {
    return aligned16(r) && aligned16(v) && aligned16(p) &&
           (dinv == nullptr || (aligned16(dinv) && aligned16(p_hat)));
  }
};

struct HalfStep {
  const double* dinv;
  const double* r;
  const double* v;
  double* sv;
  double* s_hat;
  Scalars s;
  const double* shadow_v;
  double* ss;
  double alpha = 0.0;
  __device__ bool prepare(bool writer) { return half_step_alpha(s, shadow_v, writer, alpha); }
  template <bool kAligned>
  __device__ void pair(size_type k, double (&sum)[1]) const {
    const Pair rk = load_input<kAligned>(r, k);
    const Pair vk = load_input<kAligned>(v, k);
    const Pair sk{rk.a + -alpha * vk.a, rk.b + -alpha * vk.b};
    store<kAligned>(sv, k, sk);
    if (dinv != nullptr) {
      const Pair dk = load_input<kAligned>(dinv, k);
      store<kAligned>(s_hat, k, {dk.a * sk.a, dk.b * sk.b});
    }
    sum[0] += sk.a * sk.a;
    sum[0] += sk.b * sk.b;
  }
  __device__ void single(size_type i, double (&sum)[1]) const {
    const double si = r[i] + -alpha * v[i];
    sv[i] = si;
    if (dinv != nullptr) s_hat[i] = dinv[i] * si;
    sum[0] += si * si;
  }
  __device__ void finish(const double (&total)[1]) const { *ss = total[0]; }
  bool aligned() const {
    return aligned16(r) && aligned16(v) && aligned16(sv) &&
           (dinv == nullptr || (aligned16(dinv) && aligned16(s_hat)));
  }
};

struct FinishStep {
  const double* p_hat;
  const double* s_hat;
  const double* sv;
  const double* t;
  const double* r_hat;
  double* x;
  double* r;
  Scalars s;
  double* ss;
  double* tt;
  DeviceSum sums;
  IterationSlots out;
  FinishCoefficients c;
  __device__ bool prepare(bool writer) {
    const FinishInputs in = finish_inputs(s, out);  // loads issued before the sums' loads
    double total[3];
    if (sums.count == 0) {
      total[0] = *ss;
      total[1] = tt[0];
      total[2] = tt[1];
    } else {  // the product's row-block sums, added in every block in the same order
#pragma unroll
      for (int k = 0; k < 3; ++k) {
        total[k] = kernels::cuda::ordered_sum_to_all<krylov::cuda::kBlock, 4>(
            sums.values + k * sums.count, sums.count);
      }
      if (writer) {
        *ss = total[0];
        tt[0] = total[1];
        tt[1] = total[2];
      }
    }
    c = finish_coefficients(in, total[0], total[1], total[2], s, out, writer);
    return c.run;
  }
  template <bool kAligned>
  __device__ void pair(size_type k, double (&sum)[2]) const {
    const Pair pk = load_input<kAligned>(p_hat, k);
    Pair xk = load_output<kAligned>(x, k);
    if (c.half) {
      store<kAligned>(x, k, {c.alpha * pk.a + xk.a, c.alpha * pk.b + xk.b});
      return;
    }
    const Pair shk = load_input<kAligned>(s_hat, k);
    const Pair sk = load_input<kAligned>(sv, k);
    const Pair tk = load_input<kAligned>(t, k);
    const Pair hk = load_input<kAligned>(r_hat, k);
    xk = {(c.alpha * pk.a + c.omega * shk.a) + xk.a, (c.alpha * pk.b + c.omega * shk.b) + xk.b};
    const Pair rk{sk.a + -c.omega * tk.a, sk.b + -c.omega * tk.b};
    store<kAligned>(x, k, xk);
    store<kAligned>(r, k, rk);
    sum[0] += rk.a * rk.a;
    sum[0] += rk.b * rk.b;
    sum[1] += hk.a * rk.a;
    sum[1] += hk.b * rk.b;
  }
  __device__ void single(size_type i, double (&sum)[2]) const {
    if (c.half) {
      x[i] = c.alpha * p_hat[i] + x[i];
      return;
    }
    x[i] = (c.alpha * p_hat[i] + c.omega * s_hat[i]) + x[i];
    const double ri = sv[i] + -c.omega * t[i];
    r[i] = ri;
    sum[0] += ri * ri;
    sum[1] += r_hat[i] * ri;
  }
  __device__ void finish(const double (&total)[2]) const {
    if (c.half) {
      *s.stop = 2.0;
      return;
    }
    *s.rho_previous = *s.rho;
    *s.rho = total[1];
    *s.first = 0.0;
    *out.rr = total[0];
    *out.rho = total[1];
  }
  bool aligned() const {
    return aligned16(p_hat) && aligned16(s_hat) && aligned16(sv) && aligned16(t) &&
           aligned16(r_hat) && aligned16(x) && aligned16(r);
  }
};

}  // namespace

void start(const Backend& backend, Span<const double> r, Span<double> r_hat, const Scalars& s,
           double* rr) {
  krylov::cuda::launch_reduce<1>(context_of(backend), r.size(),
                                 Start{r.data(), r_hat.data(), s, rr}, "krylov::bicgstab::start");
}

void direction(const Backend& backend, Span<const double> dinv, Span<const double> r,
               Span<const double> v, Span<double> p, Span<double> p_hat, const Scalars& s) {
  krylov::cuda::launch_map(
      context_of(backend), r.size(),
      Direction{or_null(dinv), r.data(), v.data(), p.data(), p_hat.data(), s, {}},
      "krylov::bicgstab::direction");
}

void half_step(const Backend& backend, Span<const double> dinv, Span<const double> r,
               Span<const double> v, Span<double> sv, Span<double> s_hat, const Scalars& s,
               const double* shadow_v, double* ss) {
  krylov::cuda::launch_reduce<1>(
      context_of(backend), r.size(),
      HalfStep{or_null(dinv), r.data(), v.data(), sv.data(), s_hat.data(), s, shadow_v, ss},
      "krylov::bicgstab::half_step");
}

void finish_step(const Backend& backend, Span<const double> p_hat, Span<const double> s_hat,
                 Span<const double> sv, Span<const double> t, Span<const double> r_hat,
                 Span<double> x, Span<double> r, const Scalars& s, double* ss, double* tt,
                 const DeviceSum& sums, const IterationSlots& out) {
  krylov::cuda::launch_reduce<2>(context_of(backend), x.size(),
                                 FinishStep{p_hat.data(),
                                            s_hat.data(),
                                            sv.data(),
                                            t.data(),
                                            r_hat.data(),
                                            x.data(),
                                            r.data(),
                                            s,
                                            ss,
                                            tt,
                                            sums,
                                            out,
                                            {}},
                                 "krylov::bicgstab::finish_step");
}

}  // namespace kryflow::kernels::krylov::bicgstab::cuda
