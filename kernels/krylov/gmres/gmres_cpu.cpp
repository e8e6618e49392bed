// OpenMP GMRES kernels: element-wise loops, sums in the order of the cuda kernels
// (kernels/backend/ordered_sum.hpp), scalar steps by the shared functions of gmres_scalars.hpp.
#include <algorithm>
#include <array>
#include <cstdint>

#include "kernels/backend/ordered_sum.hpp"
#include "kernels/backend/parallel.hpp"
#include "kernels/krylov/gmres/gmres.hpp"
#include "kernels/krylov/gmres/gmres_scalars.hpp"

namespace kryflow::kernels::krylov::gmres::cpu {
namespace {

using kernels::cpu::ordered_sum;
using size_type = std::int64_t;
static_assert(kGroup == 8, "project() switches over groups of 1 to 8 sums");

size_type ssize(Span<const double> x) {
  return static_cast<size_type>(x.size());
}

/// w_i minus the basis terms, in basis order.
double subtracted(Basis basis, const double* h, double wi, size_type i) {
  for (std::size_t k = 0; k < basis.size(); ++k) wi = wi - h[k] * basis[k][i];
  return wi;
}

/// The K sums of one projection group (K = group.count).
template <int K>
void project_group(const Backend& backend, const SumGroup& group, Span<const double> w) {
  const auto sums = ordered_sum<K>(backend, ssize(w), [&](size_type i) {
    std::array<double, K> terms;
    for (int k = 0; k < K; ++k) terms[k] = group.x[k][i] * w[i];
    return terms;
  });
  for (int k = 0; k < K; ++k) *group.out[k] = sums[k];
}

}  // namespace

void project(const Backend& backend, Basis basis, Span<const double> w, double* h, double* norm,
             const Scalars& s) {
  if (*s.stop != 0.0) return;
  for_each_projection_group(basis, w.data(), h, norm, [&](const SumGroup& group) {
    switch (group.count) {
      case 1:
        return project_group<1>(backend, group, w);
      case 2:
        return project_group<2>(backend, group, w);
      case 3:
        return project_group<3>(backend, group, w);
      case 4:
        return project_group<4>(backend, group, w);
      case 5:
        return project_group<5>(backend, group, w);
      case 6:
        return project_group<6>(backend, group, w);
      case 7:
        return project_group<7>(backend, group, w);
      default:
        return project_group<8>(backend, group, w);
    }
  });
}

void subtract(const Backend& backend, Basis basis, const double* h, Span<double> w, double* norm,
              const Scalars& s) {
  if (*s.stop != 0.0) return;
  const size_type n = ssize(w);
  if (norm != nullptr) {
    *norm = ordered_sum<1>(backend, n, [&](size_type i) {
      const double wi = subtracted(basis, h, w[i], i);
      w[i] = wi;
      return std::array<double, 1>{wi * wi};
    })[0];
  } else {
    parallel::for_each(backend, n, n, [&](size_type i) { w[i] = subtracted(basis, h, w[i], i); });
  }
}

void mgs_step(const Backend& backend, Span<const double> previous, const double* h_previous,
              Span<double> w, Span<const double> next, double* h_next, double* norm,
              const Scalars& s) {
  if (*s.stop != 0.0) return;
  const bool update = !previous.empty();
  const bool dot = !next.empty();
  const double h = update ? *h_previous : 0.0;
  const auto sums = ordered_sum<2>(backend, ssize(w), [&](size_type i) {
    double wi = w[i];
    if (update) {
      wi = wi - h * previous[i];
      w[i] = wi;
    }
    return std::array<double, 2>{dot ? next[i] * wi : 0.0, wi * wi};
  });
  if (dot) *h_next = sums[0];
  if (norm != nullptr) *norm = sums[1];
}

void normalize(const Backend& backend, Span<const double> w, const double* norm, Span<double> v,
               const Scalars& s) {
  if (*s.stop != 0.0) return;
  const double scale = 1.0 / sqrt(*norm);
  const size_type n = ssize(v);
  parallel::for_each(backend, n, n, [&](size_type i) { v[i] = scale * w[i]; });
}

void givens(const Backend&, const Scalars& s, int j, bool corrected, double* residual) {
  givens_step(s, j, corrected, residual);
}

void start_cycle(const Backend&, const Scalars& s) {
  start_cycle_step(s);
}

void solve_least_squares(const Backend&, const Scalars& s) {
  back_substitution(s);
}

void add_combination(const Backend& backend, Basis basis, const Scalars& s, Span<double> out,
                     bool accumulate) {
  const std::size_t count = std::min(basis.size(), static_cast<std::size_t>(*s.columns));
  const double* y = s.y;
  const size_type n = ssize(out);
  parallel::for_each(backend, n, n, [&](size_type i) {
    double sum = accumulate ? out[i] : 0.0;
    for (std::size_t k = 0; k < count; ++k) sum = sum + y[k] * basis[k][i];
    out[i] = sum;
  });
}

}  // namespace kryflow::kernels::krylov::gmres::cpu
