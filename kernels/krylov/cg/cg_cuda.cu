// CUDA PCG kernels: element-wise passes with the coefficients read from device memory, sums in
// the fixed order shared with the cpu backend (kernels/krylov/fused_cuda.cuh).
#include "kernels/krylov/cg/cg.hpp"
#include "kernels/krylov/fused_cuda.cuh"

#include <type_traits>

namespace kryflow::kernels::krylov::cg::cuda {
namespace {

using kernels::cuda::aligned16;
using kernels::cuda::load_input;
using kernels::cuda::load_output;
using kernels::cuda::Pair;
using kernels::cuda::store;
using krylov::cuda::context_of;
using krylov::cuda::definite_on_device;
using krylov::cuda::or_null;
using krylov::cuda::size_type;

/// p = dinv r (or z, or 0 when both are null); sums r·p and r·r.
struct Start {
  const double* dinv;  // null: p = z (0 when z is null too)
  const double* r;
  const double* z;
  double* p;
  Scalars s;
  double* rr;
  __device__ bool prepare(bool) { return true; }
  __device__ double element(double di, double ri, double zi) const {
    return dinv != nullptr ? di * ri : zi;
  }
  template <bool kAligned>
  __device__ void pair(size_type k, double (&sum)[2]) const {
    const Pair rk = load_input<kAligned>(r, k);
    const Pair dk = dinv != nullptr ? load_input<kAligned>(dinv, k) : Pair{};
    const Pair zk = dinv == nullptr && z != nullptr ? load_input<kAligned>(z, k) : Pair{};
    const Pair pk{element(dk.a, rk.a, zk.a), element(dk.b, rk.b, zk.b)};
    store<kAligned>(p, k, pk);
    sum[0] += rk.a * pk.a;
    sum[0] += rk.b * pk.b;
    sum[1] += rk.a * rk.a;
    sum[1] += rk.b * rk.b;
  }
  __device__ void single(size_type i, double (&sum)[2]) const {
    const double pi = element(dinv != nullptr ? dinv[i] : 0.0, r[i], z != nullptr ? z[i] : 0.0);
    p[i] = pi;
    sum[0] += r[i] * pi;
    sum[1] += r[i] * r[i];
  }
  __device__ void finish(const double (&total)[2]) const {
    *s.rz = total[0];
    *s.rz0 = total[0];
    *s.rz_previous = total[0];
    *s.stop = 0.0;
    *s.beta = 0.0;
    *rr = total[1];
  }
  bool aligned() const {
    return aligned16(r) && aligned16(p) &&
           (dinv != nullptr ? aligned16(dinv) : z == nullptr || aligned16(z));
  }
};

/// [kDirection: p = dinv r + beta p (or z + beta p), with the r before the update;]
/// x += alpha p; r -= alpha q; sums r·(dinv r) (Jacobi) and r·r.
template <bool kJacobi, bool kDirection>
struct Update {
  double* p;
  const double* q;
  const double* dinv;
  const double* z;
  double* x;
  double* r;
  Scalars s;
  DeviceSum pq;
  double* pq_out;
  double* rr_out;
  double* rz_out;
  double alpha = 0.0;
  double beta = 0.0;
  static constexpr int K = kJacobi ? 2 : 1;
  /// With the direction, six streams in flight per pair need about 56 registers: 4 resident
  /// blocks (8, i.e. 32 registers, spills).
  static constexpr int kMinBlocksPerSm = kDirection ? 4 : 8;

  __device__ bool prepare(bool writer) {
    // Every scalar read before any test: one memory round trip (see bicgstab_scalars.hpp).
    const double stop = *s.stop;
    const double rz0 = *s.rz0;
    const double rz = *s.rz;
    if constexpr (kDirection) beta = *s.beta;
    // p·q complete, or the product's block sums added here (every block, the same order)
    const double denominator =
        pq.count == 0
            ? *pq.values
            : kernels::cuda::ordered_sum_to_all<krylov::cuda::kBlock, 4>(pq.values, pq.count);
    if (writer) *pq_out = denominator;
    if (stop != 0.0) return false;
    if (!definite_on_device(denominator, rz0)) {
      if (writer) *s.stop = 1.0;
      return false;
    }
    alpha = rz / denominator;
    return true;
  }
  __device__ void element(double& pi, double qi, double di, double zi, double& xi, double& ri,
                          double (&sum)[K]) const {
    if constexpr (kDirection) pi = (kJacobi ? di * ri : zi) + beta * pi;
    xi += alpha * pi;
    ri -= alpha * qi;
    if constexpr (kJacobi) {
      sum[0] += ri * di * ri;
      sum[1] += ri * ri;
    } else {
      sum[0] += ri * ri;
    }
  }
  template <bool kAligned>
  __device__ void pair(size_type k, double (&sum)[K]) const {
    Pair pk = load_output<kAligned>(p, k);
    const Pair qk = load_input<kAligned>(q, k);
    const Pair dk = kJacobi ? load_input<kAligned>(dinv, k) : Pair{};
    const Pair zk = !kJacobi && kDirection ? load_input<kAligned>(z, k) : Pair{};
    Pair xk = x != nullptr ? load_output<kAligned>(x, k) : Pair{};
    Pair rk = load_output<kAligned>(r, k);
    element(pk.a, qk.a, dk.a, zk.a, xk.a, rk.a, sum);
    element(pk.b, qk.b, dk.b, zk.b, xk.b, rk.b, sum);
    if constexpr (kDirection) store<kAligned>(p, k, pk);
    if (x != nullptr) store<kAligned>(x, k, xk);
    store<kAligned>(r, k, rk);
  }
  __device__ void single(size_type i, double (&sum)[K]) const {
    double unused = 0.0;
    element(p[i], q[i], kJacobi ? dinv[i] : 0.0, !kJacobi && kDirection ? z[i] : 0.0,
            x != nullptr ? x[i] : unused, r[i], sum);
  }
  __device__ void finish(const double (&total)[K]) const {
    if constexpr (kJacobi) {
      new_residual_dot(s, total[0]);
      *rz_out = total[0];
      *rr_out = total[1];
    } else {
      *rr_out = total[0];
    }
  }
  bool aligned() const {
    return aligned16(p) && aligned16(q) && (x == nullptr || aligned16(x)) && aligned16(r) &&
           (!kJacobi || aligned16(dinv)) && (kJacobi || !kDirection || aligned16(z));
  }
};

/// rz = r·z with the previous one kept, then beta (or stop).
struct ResidualDot {
  const double* r;
  const double* z;
  Scalars s;
  double* rz_out;
  __device__ bool prepare(bool) { return *s.stop == 0.0; }
  template <bool kAligned>
  __device__ void pair(size_type k, double (&sum)[1]) const {
    const Pair rk = load_input<kAligned>(r, k);
    const Pair zk = load_input<kAligned>(z, k);
    sum[0] += rk.a * zk.a;
    sum[0] += rk.b * zk.b;
  }
  __device__ void single(size_type i, double (&sum)[1]) const { sum[0] += r[i] * z[i]; }
  __device__ void finish(const double (&total)[1]) const {
    new_residual_dot(s, total[0]);
    *rz_out = total[0];
  }
  bool aligned() const { return aligned16(r) && aligned16(z); }
};

/// Flexible: rz = r·z and z·q in one pass, then beta = -(z·q) / pq (or stop).
struct FlexibleResidualDot {
  const double* r;
  const double* z;
  const double* q;
  const double* pq;
  Scalars s;
  double* rz_out;
  __device__ bool prepare(bool) { return *s.stop == 0.0; }
  template <bool kAligned>
  __device__ void pair(size_type k, double (&sum)[2]) const {
    const Pair rk = load_input<kAligned>(r, k);
    const Pair zk = load_input<kAligned>(z, k);
    const Pair qk = load_input<kAligned>(q, k);
    sum[0] += rk.a * zk.a;
    sum[1] += zk.a * qk.a;
    sum[0] += rk.b * zk.b;
    sum[1] += zk.b * qk.b;
  }
  __device__ void single(size_type i, double (&sum)[2]) const {
    sum[0] += r[i] * z[i];
    sum[1] += z[i] * q[i];
  }
  __device__ void finish(const double (&total)[2]) const {
    *rz_out = new_flexible_residual_dot(s, total[0], total[1], *pq);
  }
  bool aligned() const { return aligned16(r) && aligned16(z) && aligned16(q); }
};

/// p = dinv r + beta p (or z + beta p), beta from the device.
struct Direction {
  const double* dinv;  // null: p = z + beta p
  const double* r;
  const double* z;
  double* p;
  Scalars s;
  double beta = 0.0;
  __device__ bool prepare(bool) {
    const double stop = *s.stop;
    beta = *s.beta;
    return stop == 0.0;
  }
  __device__ double element(double di, double ri, double zi, double pi) const {
    return dinv != nullptr ? di * ri + beta * pi : zi + beta * pi;
  }
  template <bool kAligned>
  __device__ void pair(size_type k) const {
    Pair pk = load_output<kAligned>(p, k);
    if (dinv != nullptr) {
      const Pair dk = load_input<kAligned>(dinv, k);
      const Pair rk = load_input<kAligned>(r, k);
      pk = {element(dk.a, rk.a, 0.0, pk.a), element(dk.b, rk.b, 0.0, pk.b)};
    } else {
      const Pair zk = load_input<kAligned>(z, k);
      pk = {element(0.0, 0.0, zk.a, pk.a), element(0.0, 0.0, zk.b, pk.b)};
    }
    store<kAligned>(p, k, pk);
  }
  __device__ void single(size_type i) const {
    p[i] = dinv != nullptr ? element(dinv[i], r[i], 0.0, p[i]) : element(0.0, 0.0, z[i], p[i]);
  }
  bool aligned() const {
    return aligned16(p) && (dinv != nullptr ? aligned16(dinv) && aligned16(r) : aligned16(z));
  }
};

}  // namespace

void start(const Backend& backend, Span<const double> dinv, Span<const double> r,
           Span<const double> z, Span<double> p, const Scalars& s, double* rr) {
  krylov::cuda::launch_reduce<2>(context_of(backend), r.size(),
                                 Start{or_null(dinv), r.data(), or_null(z), p.data(), s, rr},
                                 "krylov::cg::start");
}

void update(const Backend& backend, Span<double> p, Span<const double> q, Span<const double> dinv,
            Span<const double> z, Span<double> x, Span<double> r, const Scalars& s,
            const DeviceSum& pq, double* pq_out, double* rr_out, double* rz_out,
            bool with_direction) {
  auto run = [&](auto jacobi, auto direction) {
    constexpr bool kJacobi = decltype(jacobi)::value;
    constexpr bool kDirection = decltype(direction)::value;
    krylov::cuda::launch_reduce<kJacobi ? 2 : 1>(
        context_of(backend), r.size(),
        Update<kJacobi, kDirection>{p.data(), q.data(), or_null(dinv), or_null(z),
                                    x.empty() ? nullptr : x.data(), r.data(), s, pq, pq_out, rr_out,
                                    rz_out},
        "krylov::cg::update");
  };
  using Yes = std::true_type;
  using No = std::false_type;
  if (!dinv.empty()) {
    with_direction ? run(Yes{}, Yes{}) : run(Yes{}, No{});
  } else {
    with_direction ? run(No{}, Yes{}) : run(No{}, No{});
  }
}

void residual_dot(const Backend& backend, Span<const double> r, Span<const double> z,
                  Span<const double> q, const double* pq, const Scalars& s, double* rz_out) {
  if (!q.empty()) {
    krylov::cuda::launch_reduce<2>(context_of(backend), r.size(),
                                   FlexibleResidualDot{r.data(), z.data(), q.data(), pq, s, rz_out},
                                   "krylov::cg::residual_dot (flexible)");
    return;
  }
  krylov::cuda::launch_reduce<1>(context_of(backend), r.size(),
                                 ResidualDot{r.data(), z.data(), s, rz_out},
                                 "krylov::cg::residual_dot");
}

void direction(const Backend& backend, Span<const double> dinv, Span<const double> r,
               Span<const double> z, Span<double> p, const Scalars& s) {
  krylov::cuda::launch_map(context_of(backend), p.size(),
                           Direction{or_null(dinv), r.data(), or_null(z), p.data(), s},
                           "krylov::cg::direction");
}

}  // namespace kryflow::kernels::krylov::cg::cuda
