// Pipelined preconditioned CG (Ghysels and Vanroose 2014, Algorithm 4) with device-resident
// scalars and residual replacement (kernels/krylov/pipecg/pipecg.hpp).
//
// One iteration: n = A m (m = M^-1 w), then one fused pass that updates z, q, s, p, x, r, u, w
// (and m = D^-1 w with point Jacobi) and reduces gamma = r·u, delta = w·u and r·r for the next
// iteration. Memory traffic per iteration with Jacobi: the product (matrix, m gathered, n
// written) and the update (reads n m w u r x z q s p d, writes z q s p x r u w m): 22 vector
// sweeps besides the matrix.
#include <cmath>
#include <string>
#include <vector>

#include "kernels/krylov/pipecg/pipecg.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "window_loop.hpp"
#include "workspace.hpp"

namespace kryflow {
namespace {

/// Scalar slots: the nine of kernels::krylov::pipecg::Scalars, the initial r·r, then per
/// iteration j of a window the denominator of alpha, r·r and gamma = r·u.
struct PipeSlots {
  std::size_t window;
  static constexpr std::size_t kFixed = 10;
  static constexpr std::size_t kInitialRr = 9;
  std::size_t denominator(std::size_t j) const { return kFixed + j; }
  std::size_t rr(std::size_t j) const { return kFixed + window + j; }
  std::size_t gamma(std::size_t j) const { return kFixed + 2 * window + j; }
  std::size_t count() const { return kFixed + 3 * window; }
};

enum VectorIndex { kR, kU, kW, kM, kN, kZ, kQ, kS, kP, kVectorCount };

}  // namespace

PipelinedCg::PipelinedCg(StopCriteria criteria, int replacement_interval)
    : KrylovSolver(criteria), replacement_interval_(replacement_interval) {
  if (replacement_interval_ < 0) throw ConfigError("replacement_interval", "must be >= 0");
}

void PipelinedCg::iterate(const LinearOperator& A, const Preconditioner& M, const Vector& b,
                          Vector& x, SolveReport& report) const {
  const Backend& backend = A.backend();
  const std::size_t n = b.size();
  const Vector* d = M.inverse_diagonal();
  const PipeSlots slots{static_cast<std::size_t>(options().check_every)};
  Workspace& ws = workspace(backend, n, kVectorCount, slots.count());
  auto v = [&](VectorIndex i) -> Vector& { return ws.vector(i); };
  DeviceScalars& s = ws.scalars();
  auto at = [&](std::size_t i) { return s.slot(i).address; };
  const kernels::krylov::pipecg::Scalars scalars{at(0), at(1), at(2), at(3), at(4),
                                                 at(5), at(6), at(7), at(8)};
  const Span<const double> dinv = d != nullptr ? d->span() : Span<const double>();
  const kernels::krylov::pipecg::Vectors vectors{
      dinv,     v(kN).span(), v(kM).span(), v(kW).span(), v(kU).span(), v(kR).span(),
      x.span(), v(kZ).span(), v(kQ).span(), v(kS).span(), v(kP).span()};

  // r = b - A x, u = M^-1 r, w = A u, m = M^-1 w, and the first gamma, delta and ||r||.
  auto initialize = [&](bool reset) {
    A.residual(b, x, v(kR));
    M.apply(v(kR), v(kU));
    A.apply(v(kU), v(kW));
    kernels::krylov::pipecg::start(backend, dinv, v(kR).span(), v(kU).span(), v(kW).span(),
                                   v(kS).span(), v(kP).span(), v(kM).span(), scalars,
                                   at(PipeSlots::kInitialRr), reset);
    if (d == nullptr) M.apply(v(kW), v(kM));
  };
  for (VectorIndex i : {kZ, kQ, kS, kP}) fill(v(i), 0.0);  // beta_0 = 0 multiplies them
  initialize(true);
  std::vector<double> host(slots.count());
  s.read(0, host);
  if (check(0, std::sqrt(host[PipeSlots::kInitialRr]), report)) return;
  const double gamma0 = host[6];
  const double sign = gamma0 < 0.0 ? -1.0 : 1.0;
  auto gamma_fails = [&](double gamma) {
    return definite_fails(gamma, sign, "r·M^-1 r", kPreconditionerNotDefinite, report);
  };
  if (gamma_fails(gamma0)) return;

  auto enqueue = [&](std::size_t j) {
    A.apply(v(kM), v(kN));  // n = A m
    kernels::krylov::pipecg::update(backend, vectors, scalars, at(slots.denominator(j)),
                                    at(slots.rr(j)), at(slots.gamma(j)));
    if (d == nullptr) M.apply(v(kW), v(kM));  // m = M^-1 w
  };
  // Residual replacement (file comment of the class): the recurrences from x and p.
  auto replace_residuals = [&] {
    A.residual(b, x, v(kR));
    M.apply(v(kR), v(kU));
    A.apply(v(kU), v(kW));
    A.apply(v(kP), v(kS));
    M.apply(v(kS), v(kQ));
    A.apply(v(kQ), v(kZ));
    kernels::krylov::pipecg::start(backend, dinv, v(kR).span(), v(kU).span(), v(kW).span(),
                                   v(kS).span(), v(kP).span(), v(kM).span(), scalars,
                                   at(PipeSlots::kInitialRr), false);
    if (d == nullptr) M.apply(v(kW), v(kM));
  };
  int last_replacement = 0;
  WindowLoop loop(backend, ws, options(), criteria().max_iterations, use_graphs(A, M), enqueue);
  if (replacement_interval_ > 0) {
    loop.limit = [&](int done) { return replacement_interval_ - (done - last_replacement); };
    loop.between = [&](int done) {
      if (done - last_replacement >= replacement_interval_) {
        replace_residuals();
        last_replacement = done;
      }
    };
  }
  loop.likely_done = [&](int queued) { return likely_converged_by(queued, report); };
  loop.inspect = [&](int done, std::size_t window, const double* values) {
    for (std::size_t j = 0; j < window; ++j) {
      if (definite_fails(values[slots.denominator(j)], sign, "p·Ap", kOperatorNotDefinite,
                         report)) {
        return true;
      }
      if (check(done + static_cast<int>(j) + 1, std::sqrt(values[slots.rr(j)]), report)) {
        return true;
      }
      if (gamma_fails(values[slots.gamma(j)])) return true;
    }
    return false;
  };
  run_windows(loop);
}

}  // namespace kryflow
