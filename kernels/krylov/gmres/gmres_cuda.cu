// CUDA GMRES kernels: passes over w with up to kGroup basis vectors each, coefficients read from
// device memory, sums in the fixed order shared with the cpu backend
// (kernels/krylov/fused_cuda.cuh), and the scalar steps of gmres_scalars.hpp run by one thread.
#include <algorithm>

#include "kernels/krylov/fused_cuda.cuh"
#include "kernels/krylov/gmres/gmres.hpp"
#include "kernels/krylov/gmres/gmres_scalars.hpp"

namespace kryflow::kernels::krylov::gmres::cuda {
namespace {

using kernels::cuda::aligned16;
using kernels::cuda::check_launch;
using kernels::cuda::load_input;
using kernels::cuda::load_output;
using kernels::cuda::Pair;
using kernels::cuda::store;
using krylov::cuda::context_of;
using krylov::cuda::or_null;
using krylov::cuda::size_type;
constexpr int kGroupSize = static_cast<int>(kGroup);

/// K sums x[k]·w of one projection group.
template <int K>
struct Project {
  SumGroup group;
  const double* w;
  const double* stop;
  __device__ bool prepare(bool) { return *stop == 0.0; }
  template <bool kAligned>
  __device__ void pair(size_type p, double (&sum)[K]) const {
    const Pair wp = load_input<kAligned>(w, p);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const Pair xp = load_input<kAligned>(group.x[k], p);
      sum[k] += xp.a * wp.a;
      sum[k] += xp.b * wp.b;
    }
  }
  __device__ void single(size_type i, double (&sum)[K]) const {
#pragma unroll
    for (int k = 0; k < K; ++k) sum[k] += group.x[k][i] * w[i];
  }
  __device__ void finish(const double (&total)[K]) const {
#pragma unroll
    for (int k = 0; k < K; ++k) *group.out[k] = total[k];
  }
  bool aligned() const {
    if (!aligned16(w)) return false;
    for (int k = 0; k < K; ++k) {
      if (!aligned16(group.x[k])) return false;
    }
    return true;
  }
};

/// w -= sum_k h[k] v[k] over one group of basis vectors; the norm of the new w when reducing.
struct Subtract {
  const double* v[kGroupSize] = {};
  int count = 0;
  const double* h = nullptr;
  double* w = nullptr;
  double* norm = nullptr;
  const double* stop = nullptr;
  double c[kGroupSize] = {};

  __device__ bool prepare(bool) {
    if (*stop != 0.0) return false;
#pragma unroll
    for (int k = 0; k < kGroupSize; ++k) c[k] = k < count ? h[k] : 0.0;
    return true;
  }
  template <bool kAligned>
  __device__ Pair updated(size_type p) const {
    Pair wp = load_output<kAligned>(w, p);
#pragma unroll
    for (int k = 0; k < kGroupSize; ++k) {
      if (k < count) {
        const Pair vp = load_input<kAligned>(v[k], p);
        wp.a = wp.a - c[k] * vp.a;
        wp.b = wp.b - c[k] * vp.b;
      }
    }
    store<kAligned>(w, p, wp);
    return wp;
  }
  __device__ double updated_single(size_type i) const {
    double wi = w[i];
#pragma unroll
    for (int k = 0; k < kGroupSize; ++k) {
      if (k < count) wi = wi - c[k] * v[k][i];
    }
    w[i] = wi;
    return wi;
  }
  template <bool kAligned>
  __device__ void pair(size_type p) const {
    updated<kAligned>(p);
  }
  template <bool kAligned>
  __device__ void pair(size_type p, double (&sum)[1]) const {
    const Pair wp = updated<kAligned>(p);
    sum[0] += wp.a * wp.a;
    sum[0] += wp.b * wp.b;
  }
  __device__ void single(size_type i) const {
    updated_single(i);
  }
  __device__ void single(size_type i, double (&sum)[1]) const {
    const double wi = updated_single(i);
    sum[0] += wi * wi;
  }
  __device__ void finish(const double (&total)[1]) const {
    *norm = total[0];
  }
  bool aligned() const {
    if (!aligned16(w)) return false;
    for (int k = 0; k < count; ++k) {
      if (!aligned16(v[k])) return false;
    }
    return true;
  }
};

/// w -= h_previous previous; sums next·w and w·w of the new w.
struct MgsStep {
  const double* previous;  // null: no update
  const double* h_previous;
  double* w;
  const double* next;  // null: no dot
  double* h_next;
  double* norm;
  const double* stop;
  double h = 0.0;

  __device__ bool prepare(bool) {
    if (*stop != 0.0) return false;
    h = previous != nullptr ? *h_previous : 0.0;
    return true;
  }
  template <bool kAligned>
  __device__ void pair(size_type p, double (&sum)[2]) const {
    Pair wp = load_output<kAligned>(w, p);
    if (previous != nullptr) {
      const Pair vp = load_input<kAligned>(previous, p);
      wp.a = wp.a - h * vp.a;
      wp.b = wp.b - h * vp.b;
      store<kAligned>(w, p, wp);
    }
    if (next != nullptr) {
      const Pair np = load_input<kAligned>(next, p);
      sum[0] += np.a * wp.a;
      sum[0] += np.b * wp.b;
    }
    sum[1] += wp.a * wp.a;
    sum[1] += wp.b * wp.b;
  }
  __device__ void single(size_type i, double (&sum)[2]) const {
    double wi = w[i];
    if (previous != nullptr) {
      wi = wi - h * previous[i];
      w[i] = wi;
    }
    if (next != nullptr) sum[0] += next[i] * wi;
    sum[1] += wi * wi;
  }
  __device__ void finish(const double (&total)[2]) const {
    if (next != nullptr) *h_next = total[0];
    if (norm != nullptr) *norm = total[1];
  }
  bool aligned() const {
    return aligned16(w) && (previous == nullptr || aligned16(previous)) &&
           (next == nullptr || aligned16(next));
  }
};

/// v = w / sqrt(*norm).
struct Normalize {
  const double* w;
  const double* norm;
  double* v;
  const double* stop;
  double scale = 0.0;

  __device__ bool prepare(bool) {
    if (*stop != 0.0) return false;
    scale = 1.0 / sqrt(*norm);
    return true;
  }
  template <bool kAligned>
  __device__ void pair(size_type p) const {
    const Pair wp = load_output<kAligned>(w, p);  // w may be v: not the read-only path
    store<kAligned>(v, p, {scale * wp.a, scale * wp.b});
  }
  __device__ void single(size_type i) const { v[i] = scale * w[i]; }
  bool aligned() const { return aligned16(w) && aligned16(v); }
};

/// out = [out] + sum_k y[offset + k] v[k] over the accepted columns of one group.
struct AddCombination {
  const double* v[kGroupSize] = {};
  int count = 0;
  int offset = 0;
  const double* y = nullptr;
  const double* columns = nullptr;
  double* out = nullptr;
  bool accumulate = false;
  int active = 0;
  double c[kGroupSize] = {};

  __device__ bool prepare(bool) {
    active = min(count, static_cast<int>(*columns) - offset);
    if (active <= 0) {
      active = 0;
      if (accumulate) return false;
    }
#pragma unroll
    for (int k = 0; k < kGroupSize; ++k) c[k] = k < active ? y[offset + k] : 0.0;
    return true;
  }
  template <bool kAligned>
  __device__ void pair(size_type p) const {
    Pair o = accumulate ? load_output<kAligned>(out, p) : Pair{};
#pragma unroll
    for (int k = 0; k < kGroupSize; ++k) {
      if (k < active) {
        const Pair vp = load_input<kAligned>(v[k], p);
        o.a = o.a + c[k] * vp.a;
        o.b = o.b + c[k] * vp.b;
      }
    }
    store<kAligned>(out, p, o);
  }
  __device__ void single(size_type i) const {
    double sum = accumulate ? out[i] : 0.0;
#pragma unroll
    for (int k = 0; k < kGroupSize; ++k) {
      if (k < active) sum = sum + c[k] * v[k][i];
    }
    out[i] = sum;
  }
  bool aligned() const {
    if (!aligned16(out)) return false;
    for (int k = 0; k < count; ++k) {
      if (!aligned16(v[k])) return false;
    }
    return true;
  }
};

__global__ void givens_kernel(Scalars s, int j, bool corrected, double* residual) {
  givens_step(s, j, corrected, residual);
}

__global__ void start_cycle_kernel(Scalars s) {
  start_cycle_step(s);
}

__global__ void back_substitution_kernel(Scalars s) {
  back_substitution(s);
}

/// Basis vectors [first, first + kGroup) (fewer at the end) of one pass.
template <class Op>
int take_group(Basis basis, std::size_t first, Op& op) {
  const std::size_t count = std::min(kGroup, basis.size() - first);
  for (std::size_t k = 0; k < count; ++k) op.v[k] = basis[first + k];
  op.count = static_cast<int>(count);
  return op.count;
}

std::size_t group_count(std::size_t vectors) {
  return (vectors + kGroup - 1) / kGroup;
}

}  // namespace

void project(const Backend& backend, Basis basis, Span<const double> w, double* h, double* norm,
             const Scalars& s) {
  kernels::cuda::Context& context = context_of(backend);
  const char* name = "krylov::gmres::project";
  for_each_projection_group(basis, w.data(), h, norm, [&](const SumGroup& group) {
    switch (group.count) {
      case 1:
        return krylov::cuda::launch_reduce<1>(context, w.size(),
                                              Project<1>{group, w.data(), s.stop}, name);
      case 2:
        return krylov::cuda::launch_reduce<2>(context, w.size(),
                                              Project<2>{group, w.data(), s.stop}, name);
      case 3:
        return krylov::cuda::launch_reduce<3>(context, w.size(),
                                              Project<3>{group, w.data(), s.stop}, name);
      case 4:
        return krylov::cuda::launch_reduce<4>(context, w.size(),
                                              Project<4>{group, w.data(), s.stop}, name);
      case 5:
        return krylov::cuda::launch_reduce<5>(context, w.size(),
                                              Project<5>{group, w.data(), s.stop}, name);
      case 6:
        return krylov::cuda::launch_reduce<6>(context, w.size(),
                                              Project<6>{group, w.data(), s.stop}, name);
      case 7:
        return krylov::cuda::launch_reduce<7>(context, w.size(),
                                              Project<7>{group, w.data(), s.stop}, name);
      default:
        return krylov::cuda::launch_reduce<8>(context, w.size(),
                                              Project<8>{group, w.data(), s.stop}, name);
    }
  });
}

void subtract(const Backend& backend, Basis basis, const double* h, Span<double> w, double* norm,
              const Scalars& s) {
  kernels::cuda::Context& context = context_of(backend);
  // At least one pass when the norm is wanted (an empty basis leaves w as it is).
  const std::size_t groups = std::max<std::size_t>(group_count(basis.size()), norm ? 1 : 0);
  for (std::size_t group = 0; group < groups; ++group) {
    Subtract op;
    take_group(basis, group * kGroup, op);
    op.h = h + group * kGroup;
    op.w = w.data();
    op.norm = norm;
    op.stop = s.stop;
    if (norm != nullptr && group + 1 == groups) {
      krylov::cuda::launch_reduce<1>(context, w.size(), op, "krylov::gmres::subtract");
    } else {
      krylov::cuda::launch_map(context, w.size(), op, "krylov::gmres::subtract");
    }
  }
}

void mgs_step(const Backend& backend, Span<const double> previous, const double* h_previous,
              Span<double> w, Span<const double> next, double* h_next, double* norm,
              const Scalars& s) {
  const MgsStep op{previous.empty() ? nullptr : previous.data(),
                   h_previous,
                   w.data(),
                   next.empty() ? nullptr : next.data(),
                   h_next,
                   norm,
                   s.stop};
  krylov::cuda::launch_reduce<2>(context_of(backend), w.size(), op, "krylov::gmres::mgs_step");
}

void normalize(const Backend& backend, Span<const double> w, const double* norm, Span<double> v,
               const Scalars& s) {
  krylov::cuda::launch_map(context_of(backend), v.size(),
                           Normalize{w.data(), norm, v.data(), s.stop}, "krylov::gmres::normalize");
}

void givens(const Backend& backend, const Scalars& s, int j, bool corrected, double* residual) {
  givens_kernel<<<1, 1, 0, context_of(backend).stream>>>(s, j, corrected, residual);
  check_launch("krylov::gmres::givens");
}

void start_cycle(const Backend& backend, const Scalars& s) {
  start_cycle_kernel<<<1, 1, 0, context_of(backend).stream>>>(s);
  check_launch("krylov::gmres::start_cycle");
}

void solve_least_squares(const Backend& backend, const Scalars& s) {
  back_substitution_kernel<<<1, 1, 0, context_of(backend).stream>>>(s);
  check_launch("krylov::gmres::solve_least_squares");
}

void add_combination(const Backend& backend, Basis basis, const Scalars& s, Span<double> out,
                     bool accumulate) {
  kernels::cuda::Context& context = context_of(backend);
  // At least one pass when out is overwritten (with no column, out = 0).
  const std::size_t groups = std::max<std::size_t>(group_count(basis.size()), accumulate ? 0 : 1);
  for (std::size_t group = 0; group < groups; ++group) {
    AddCombination op;
    take_group(basis, group * kGroup, op);
    op.offset = static_cast<int>(group * kGroup);
    op.y = s.y;
    op.columns = s.columns;
    op.out = out.data();
    op.accumulate = accumulate || group > 0;
    krylov::cuda::launch_map(context, out.size(), op, "krylov::gmres::add_combination");
  }
}

}  // namespace kryflow::kernels::krylov::gmres::cuda
