// Reference GMRES kernels: sequential loops and sums, the oracle of the cpu and cuda kernels.
#include <algorithm>

#include "kernels/krylov/gmres/gmres.hpp"
#include "kernels/krylov/gmres/gmres_scalars.hpp"

namespace kryflow::kernels::krylov::gmres::reference {
namespace {

double sum_of_products(const double* x, const double* y, std::size_t n) {
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += x[i] * y[i];
  return sum;
}

}  // namespace

void project(const Backend&, Basis basis, Span<const double> w, double* h, double* norm,
             const Scalars& s) {
  if (*s.stop != 0.0) return;
  if (norm != nullptr) *norm = sum_of_products(w.data(), w.data(), w.size());
  for (std::size_t k = 0; k < basis.size(); ++k) {
    h[k] = sum_of_products(basis[k], w.data(), w.size());
  }
}

void subtract(const Backend&, Basis basis, const double* h, Span<double> w, double* norm,
              const Scalars& s) {
  if (*s.stop != 0.0) return;
  for (std::size_t i = 0; i < w.size(); ++i) {
    double wi = w[i];
    for (std::size_t k = 0; k < basis.size(); ++k) wi = wi - h[k] * basis[k][i];
    w[i] = wi;
  }
  if (norm != nullptr) *norm = sum_of_products(w.data(), w.data(), w.size());
}

void mgs_step(const Backend&, Span<const double> previous, const double* h_previous, Span<double> w,
              Span<const double> next, double* h_next, double* norm, const Scalars& s) {
  if (*s.stop != 0.0) return;
  if (!previous.empty()) {
    const double h = *h_previous;
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = w[i] - h * previous[i];
  }
  if (!next.empty()) *h_next = sum_of_products(next.data(), w.data(), w.size());
  if (norm != nullptr) *norm = sum_of_products(w.data(), w.data(), w.size());
}

void normalize(const Backend&, Span<const double> w, const double* norm, Span<double> v,
               const Scalars& s) {
  if (*s.stop != 0.0) return;
  const double scale = 1.0 / sqrt(*norm);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = scale * w[i];
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

void add_combination(const Backend&, Basis basis, const Scalars& s, Span<double> out,
                     bool accumulate) {
  const std::size_t count = std::min(basis.size(), static_cast<std::size_t>(*s.columns));
  for (std::size_t i = 0; i < out.size(); ++i) {
    double sum = accumulate ? out[i] : 0.0;
    for (std::size_t k = 0; k < count; ++k) sum = sum + s.y[k] * basis[k][i];
    out[i] = sum;
  }
}

}  // namespace kryflow::kernels::krylov::gmres::reference
