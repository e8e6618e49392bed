// CUDA pipelined CG kernels: the whole vector update in one pass with its three sums
// (kernels/krylov/fused_cuda.cuh).
#include "kernels/krylov/fused_cuda.cuh"
#include "kernels/krylov/pipecg/pipecg.hpp"
#include "kernels/krylov/pipecg/pipecg_scalars.hpp"

namespace kryflow::kernels::krylov::pipecg::cuda {
namespace {

using kernels::cuda::aligned16;
using kernels::cuda::load_input;
using kernels::cuda::load_output;
using kernels::cuda::Pair;
using kernels::cuda::store;
using krylov::cuda::context_of;
using krylov::cuda::size_type;

struct Start {
  const double* dinv;
  const double* r;
  const double* u;
  const double* w;
  const double* sv;
  const double* p;
  double* m;
  Scalars s;
  double* rr;
  bool reset;
  static constexpr int kMinBlocksPerSm = 4;
  __device__ bool prepare(bool) { return reset || *s.stop == 0.0; }
  __device__ static void add(double ri, double ui, double wi, double si, double pi,
                             double (&sum)[6]) {
    sum[0] += ri * ui;
    sum[1] += wi * ui;
    sum[2] += ri * ri;
    sum[3] += ui * si;
    sum[4] += pi * wi;
    sum[5] += pi * si;
  }
  template <bool kAligned>
  __device__ void pair(size_type k, double (&sum)[6]) const {
    const Pair rk = load_input<kAligned>(r, k);
    const Pair uk = load_input<kAligned>(u, k);
    const Pair wk = load_input<kAligned>(w, k);
    const Pair sk = load_input<kAligned>(sv, k);
    const Pair pk = load_input<kAligned>(p, k);
    if (dinv != nullptr) {
      const Pair dk = load_input<kAligned>(dinv, k);
      store<kAligned>(m, k, {dk.a * wk.a, dk.b * wk.b});
    }
    add(rk.a, uk.a, wk.a, sk.a, pk.a, sum);
    add(rk.b, uk.b, wk.b, sk.b, pk.b, sum);
  }
  __device__ void single(size_type i, double (&sum)[6]) const {
    if (dinv != nullptr) m[i] = dinv[i] * w[i];
    add(r[i], u[i], w[i], sv[i], p[i], sum);
  }
  __device__ void finish(const double (&total)[6]) const {
    if (reset) {
      *s.gamma0 = total[0];
      *s.gamma_previous = total[0];
      *s.first = 1.0;
      *s.stop = 0.0;
    }
    *s.gamma = total[0];
    *s.delta = total[1];
    *rr = total[2];
    *s.us = total[3];
    *s.pw = total[4];
    *s.ps = total[5];
  }
  bool aligned() const {
    return aligned16(r) && aligned16(u) && aligned16(w) && aligned16(sv) && aligned16(p) &&
           (dinv == nullptr || (aligned16(dinv) && aligned16(m)));
  }
};

template <bool kJacobi>
struct Update {
  const double* dinv;
  const double* n;
  double* m;
  double* w;
  double* u;
  double* r;
  double* x;
  double* z;
  double* q;
  double* sv;
  double* p;
  Scalars s;
  double* denominator_out;
  double* rr_out;
  double* gamma_out;
  Coefficients c;
  /// 11 input streams and 6 sums: 2 resident blocks (128 registers per thread), no spills.
  static constexpr int kMinBlocksPerSm = 2;

  __device__ bool prepare(bool writer) {
    const double stop = *s.stop;  // read with the coefficients' scalars: one round trip
    c = coefficients(s);
    if (stop != 0.0) return false;
    if (writer) {
      *denominator_out = c.denominator;
      if (!c.valid) *s.stop = 1.0;
    }
    return c.valid;
  }
  struct Element {
    double n, m, w, u, r, x, z, q, s, p, d;
  };
  __device__ void element(Element& e, double (&sum)[6]) const {
    e.z = e.n + c.beta * e.z;
    e.q = e.m + c.beta * e.q;
    e.s = e.w + c.beta * e.s;
    e.p = e.u + c.beta * e.p;
    e.x += c.alpha * e.p;
    e.r = e.r - c.alpha * e.s;
    e.u = e.u - c.alpha * e.q;
    e.w = e.w - c.alpha * e.z;
    if constexpr (kJacobi) e.m = e.d * e.w;
    sum[0] += e.r * e.u;
    sum[1] += e.w * e.u;
    sum[2] += e.r * e.r;
    sum[3] += e.u * e.s;
    sum[4] += e.p * e.w;
    sum[5] += e.p * e.s;
  }
  template <bool kAligned>
  __device__ void pair(size_type k, double (&sum)[6]) const {
    const Pair nk = load_input<kAligned>(n, k);
    const Pair mk = load_output<kAligned>(m, k);
    const Pair wk = load_output<kAligned>(w, k);
    const Pair uk = load_output<kAligned>(u, k);
    const Pair rk = load_output<kAligned>(r, k);
    const Pair xk = load_output<kAligned>(x, k);
    const Pair zk = load_output<kAligned>(z, k);
    const Pair qk = load_output<kAligned>(q, k);
    const Pair sk = load_output<kAligned>(sv, k);
    const Pair pk = load_output<kAligned>(p, k);
    const Pair dk = kJacobi ? load_input<kAligned>(dinv, k) : Pair{};
    Element a{nk.a, mk.a, wk.a, uk.a, rk.a, xk.a, zk.a, qk.a, sk.a, pk.a, dk.a};
    Element b{nk.b, mk.b, wk.b, uk.b, rk.b, xk.b, zk.b, qk.b, sk.b, pk.b, dk.b};
    element(a, sum);
    element(b, sum);
    store<kAligned>(z, k, {a.z, b.z});
    store<kAligned>(q, k, {a.q, b.q});
    store<kAligned>(sv, k, {a.s, b.s});
    store<kAligned>(p, k, {a.p, b.p});
    store<kAligned>(x, k, {a.x, b.x});
    store<kAligned>(r, k, {a.r, b.r});
    store<kAligned>(u, k, {a.u, b.u});
    store<kAligned>(w, k, {a.w, b.w});
    if constexpr (kJacobi) store<kAligned>(m, k, {a.m, b.m});
  }
  __device__ void single(size_type i, double (&sum)[6]) const {
    Element e{n[i], m[i], w[i], u[i], r[i], x[i], z[i], q[i], sv[i], p[i], kJacobi ? dinv[i] : 0.0};
    element(e, sum);
    z[i] = e.z;
    q[i] = e.q;
    sv[i] = e.s;
    p[i] = e.p;
    x[i] = e.x;
    r[i] = e.r;
    u[i] = e.u;
    w[i] = e.w;
    if constexpr (kJacobi) m[i] = e.m;
  }
  __device__ void finish(const double (&total)[6]) const {
    *s.gamma_previous = *s.gamma;
    *s.gamma = total[0];
    *s.delta = total[1];
    *s.us = total[3];
    *s.pw = total[4];
    *s.ps = total[5];
    *s.first = 0.0;
    *gamma_out = total[0];
    *rr_out = total[2];
  }
  bool aligned() const {
    return aligned16(n) && aligned16(m) && aligned16(w) && aligned16(u) && aligned16(r) &&
           aligned16(x) && aligned16(z) && aligned16(q) && aligned16(sv) && aligned16(p) &&
           (!kJacobi || aligned16(dinv));
  }
};

}  // namespace

void start(const Backend& backend, Span<const double> dinv, Span<const double> r,
           Span<const double> u, Span<const double> w, Span<const double> sv, Span<const double> p,
           Span<double> m, const Scalars& s, double* rr, bool reset) {
  krylov::cuda::launch_reduce<6>(context_of(backend), r.size(),
                                 Start{dinv.empty() ? nullptr : dinv.data(), r.data(), u.data(),
                                       w.data(), sv.data(), p.data(), m.data(), s, rr, reset},
                                 "krylov::pipecg::start");
}

void update(const Backend& backend, const Vectors& v, const Scalars& s, double* denominator_out,
            double* rr_out, double* gamma_out) {
  auto launch = [&]<bool kJacobi>() {
    krylov::cuda::launch_reduce<6>(context_of(backend), v.r.size(),
                                   Update<kJacobi>{kJacobi ? v.dinv.data() : nullptr,
                                                   v.n.data(),
                                                   v.m.data(),
                                                   v.w.data(),
                                                   v.u.data(),
                                                   v.r.data(),
                                                   v.x.data(),
                                                   v.z.data(),
                                                   v.q.data(),
                                                   v.s.data(),
                                                   v.p.data(),
                                                   s,
                                                   denominator_out,
                                                   rr_out,
                                                   gamma_out,
                                                   {}},
                                   "krylov::pipecg::update");
  };
  if (v.dinv.empty()) {
    launch.template operator()<false>();
  } else {
    launch.template operator()<true>();
  }
}

}  // namespace kryflow::kernels::krylov::pipecg::cuda
