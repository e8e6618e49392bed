// Dispatch of the GMRES kernels to the backend that owns the data.
#include "kernels/krylov/gmres/gmres.hpp"

#include "kernels/krylov/dispatch.hpp"

namespace kryflow::kernels::krylov::gmres {

void project(const Backend& backend, Basis basis, Span<const double> w, double* h, double* norm,
             const Scalars& s) {
  KRYFLOW_KRYLOV_DISPATCH(project, backend, basis, w, h, norm, s);
}

void subtract(const Backend& backend, Basis basis, const double* h, Span<double> w, double* norm,
              const Scalars& s) {
  KRYFLOW_KRYLOV_DISPATCH(subtract, backend, basis, h, w, norm, s);
}

void mgs_step(const Backend& backend, Span<const double> previous, const double* h_previous,
              Span<double> w, Span<const double> next, double* h_next, double* norm,
              const Scalars& s) {
  KRYFLOW_KRYLOV_DISPATCH(mgs_step, backend, previous, h_previous, w, next, h_next, norm, s);
}

void normalize(const Backend& backend, Span<const double> w, const double* norm, Span<double> v,
               const Scalars& s) {
  KRYFLOW_KRYLOV_DISPATCH(normalize, backend, w, norm, v, s);
}

void givens(const Backend& backend, const Scalars& s, int j, bool corrected, double* residual) {
  KRYFLOW_KRYLOV_DISPATCH(givens, backend, s, j, corrected, residual);
}

void start_cycle(const Backend& backend, const Scalars& s) {
  KRYFLOW_KRYLOV_DISPATCH(start_cycle, backend, s);
}

void solve_least_squares(const Backend& backend, const Scalars& s) {
  KRYFLOW_KRYLOV_DISPATCH(solve_least_squares, backend, s);
}

void add_combination(const Backend& backend, Basis basis, const Scalars& s, Span<double> out,
                     bool accumulate) {
  KRYFLOW_KRYLOV_DISPATCH(add_combination, backend, basis, s, out, accumulate);
}

}  // namespace kryflow::kernels::krylov::gmres
