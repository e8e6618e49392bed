// Restarted GMRES(m) (Saad, Iterative Methods, 2nd ed., Algorithm 6.9) preconditioned on the
// right (Algorithm 9.5) or on the left (Algorithm 9.4), and flexible GMRES (Algorithm 9.6), with
// the Hessenberg matrix, its Givens rotations and the least-squares solution on the device
// (kernels/krylov/gmres/gmres.hpp).
//
// Per Arnoldi step j: one application of M and of A; then either classical Gram-Schmidt with one
// reorthogonalization (cgs2: two passes, each one fused multi-dot of the whole column followed
// by one update w -= V h; kernels of up to 8 sums or 8 basis vectors, so about 4 (j + 1) / 8
// launches) or modified Gram-Schmidt (mgs: j + 2 launches, each removing one component and
// taking the next dot); the Givens step (one thread); v_{j+1} = w / h_{j+1,j}. None of them
// waits for the host: the host reads the residual estimates of a window of check_every
// iterations at once (options()), tests them in order, and the launches of each window are
// recorded as a CUDA graph at its second visit and replayed in the later cycles (use_graphs);
// in the first cycle a preconditioner that prefers recording (a multigrid cycle) runs as one
// recorded product M^-1 then A (records_product). Whatever ends a
// cycle (convergence, the iteration limit, breakdown, NaN), x is first updated with the
// least-squares solution over the columns accepted so far: R y = g is solved on the device and
// x += Z y, x += M^-1 V y or x += V y (left).
//
// cgs2 does twice the arithmetic of mgs in fewer, independent reductions (one global
// synchronization per pass with distributed vectors, instead of j + 1): on the cpu backend a
// GMRES(100) iteration on ex19_cavity_33 takes 1.35 times as long as with mgs.
//
// Bits: with mgs every vector operation and sum is the one of the former host-driven GMRES
// (dots in dot()'s order, w - h v, v = (1 / ||w||) w); the Givens rotations now use
// gmres_scalars.hpp's hypotenuse instead of std::hypot (a few ulps apart), so that the device's
// one thread and the host give the same bits. Iteration counts with mgs are those of the former
// GMRES on the test problems, ex19_cavity_33 and fvens 2dcyl1; runs of dozens of restarts move by
// a few percent (1504 -> 1500, 776 -> 751), as they do between the reference and cpu backends.
// cgs2 is another algorithm (same counts on these problems, within 2% on the long runs). cpu
// and cuda agree bit for bit in both.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "kernels/backend/graph.hpp"
#include "kernels/krylov/gmres/gmres.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/reduction.hpp"
#include "kryflow/solvers/krylov_solver.hpp"
#include "workspace.hpp"

namespace kryflow {
namespace {

namespace kg = kernels::krylov::gmres;

/// Scalar slots: the fixed ones and the residual estimates |g_{j+1}| of a window of check_every
/// iterations (together the one read of a window), then the Hessenberg matrix, the
/// reorthogonalization coefficients, the rotations, g and y.
struct GmresSlots {
  enum Fixed : std::size_t {
    kStop,
    kStopColumn,
    kColumns,
    kHNorm,
    kAz,
    kWn,
    kRjj,
    kBeta,  ///< ||v||^2 of the vector v_0 = v / ||v|| a cycle starts from
    kTrue,  ///< left preconditioning: ||r||^2 of the residual r = b - A x, v = M^-1 r
    kFixed
  };
  std::size_t m;
  std::size_t window;
  std::size_t residual(std::size_t p) const { return kFixed + p; }
  std::size_t hessenberg() const { return kFixed + window; }
  std::size_t correction() const { return hessenberg() + (m + 1) * m; }
  std::size_t cs() const { return correction() + m + 1; }
  std::size_t sn() const { return cs() + m; }
  std::size_t g() const { return sn() + m; }
  std::size_t y() const { return g() + m + 1; }
  std::size_t count() const { return y() + m; }
};

/// The device side of one solve: the workspace's vectors and scalars, and the launches of the
/// Arnoldi steps, of the end of a cycle and of the residual. Workspace vectors: v_0 .. v_m, w,
/// then z = M^-1 v_j (right) or A v_j (left), or z_0 .. z_{m-1} (flexible).
class Arnoldi {
 public:
  Arnoldi(const LinearOperator& A, const Preconditioner& M, const Vector& b, Vector& x,
          KrylovSolver::Workspace& ws, const GmresSlots& slots, bool flexible, bool left, bool cgs2)
      : A_(A),
        M_(M),
        b_(b),
        x_(x),
        ws_(ws),
        slots_(slots),
        flexible_(flexible),
        left_(left),
        cgs2_(cgs2) {
    DeviceScalars& s = ws.scalars();
    auto at = [&](std::size_t i) { return s.slot(i).address; };
    scalars_ = {at(GmresSlots::kStop),
                at(GmresSlots::kStopColumn),
                at(GmresSlots::kColumns),
                at(GmresSlots::kHNorm),
                at(GmresSlots::kAz),
                at(GmresSlots::kWn),
                at(GmresSlots::kRjj),
                at(GmresSlots::kBeta),
                at(slots.hessenberg()),
                at(slots.correction()),
                at(slots.cs()),
                at(slots.sn()),
                at(slots.g()),
                at(slots.y()),
                static_cast<int>(slots.m)};
    for (std::size_t i = 0; i <= slots.m; ++i) v_.push_back(v(i).span().data());
    if (flexible_) {
      for (std::size_t i = 0; i < slots.m; ++i)
        z_.push_back(ws.vector(slots.m + 2 + i).span().data());
    }
  }

  /// The vector the next cycle starts from in v_0: r = b - A x (right), or M^-1 r (left); its
  /// squared norm in kBeta (and ||r||^2 in kTrue on the left), in one reduction.
  void residual() {
    if (left_) {
      A_.residual(b_, x_, aux());
      M_.apply(aux(), v(0));
      const DotPair pairs[] = {{&v(0), &v(0)}, {&aux(), &aux()}};
      start_dots(pairs, ws_.scalars(), GmresSlots::kBeta).complete();
    } else {
      A_.residual(b_, x_, v(0));
      const DotPair pair{&v(0), &v(0)};
      start_dots(std::span<const DotPair>(&pair, 1), ws_.scalars(), GmresSlots::kBeta).complete();
    }
  }

  /// g = ||r|| e_1 and v_0 = r / ||r||.
  void start_cycle() {
    kg::start_cycle(backend(), scalars_);
    kg::normalize(backend(), v(0).span(), scalars_.beta, v(0).span(), scalars_);
  }

  /// Right preconditioning: record z = M^-1 v, w = A z once on the workspace's vectors
  /// `in` and `out` and replay it in every step whose window is not itself recorded.
  void use_recorded_product(std::size_t in, std::size_t out) {
    if (left_) return;
    product_in_ = &ws_.vector(in);
    product_out_ = &ws_.vector(out);
    record_product_ = true;
  }
  /// A window is being recorded: its steps launch M and A themselves (no replay inside).
  void set_capturing(bool capturing) noexcept { capturing_ = capturing; }

  /// Arnoldi step j, its residual estimate in window slot p.
  void step(std::size_t j, std::size_t p) {
    if (left_) {
      A_.apply(v(j), aux());
      M_.apply(aux(), w());
    } else {
      Vector& z = flexible_ ? ws_.vector(slots_.m + 2 + j) : aux();
      if (!record_product_ || capturing_ || !replay_product(v(j))) {
        M_.apply(v(j), z);
        A_.apply(z, w());
      } else if (flexible_) {
        copy(*product_out_, z);  // Z y updates x at the end of the cycle
      }
    }
    double* column = scalars_.hessenberg + j * (slots_.m + 1);
    const kg::Basis basis(v_.data(), j + 1);
    const Span<double> w_span = w().span();
    if (cgs2_) {
      kg::project(backend(), basis, w_span, column, scalars_.az, scalars_);
      kg::subtract(backend(), basis, column, w_span, nullptr, scalars_);
      kg::project(backend(), basis, w_span, scalars_.correction, nullptr, scalars_);
      kg::subtract(backend(), basis, scalars_.correction, w_span, scalars_.wn, scalars_);
    } else {
      for (std::size_t i = 0; i <= j + 1; ++i) {  // remove v_{i-1}, take the dot with v_i
        const bool update = i > 0;
        const bool dot = i <= j;
        double* norm = i == 0 ? scalars_.az : (i == j + 1 ? scalars_.wn : nullptr);
        kg::mgs_step(backend(), update ? Span<const double>(v(i - 1).span()) : Span<const double>(),
                     update ? column + i - 1 : nullptr, w_span,
                     dot ? Span<const double>(v(i).span()) : Span<const double>(),
                     dot ? column + i : nullptr, norm, scalars_);
      }
    }
    kg::givens(backend(), scalars_, static_cast<int>(j), cgs2_,
               ws_.scalars().slot(slots_.residual(p)).address);
    kg::normalize(backend(), w_span, scalars_.wn, v(j + 1).span(), scalars_);
  }

  /// The end of a cycle whose columns are among the first `bound`: y = R^-1 g and x += Z y,
  /// M^-1 V y or V y; then the next residual when `with_residual`.
  void finish(std::size_t bound, bool with_residual) {
    kg::solve_least_squares(backend(), scalars_);
    if (left_) {
      kg::add_combination(backend(), kg::Basis(v_.data(), bound), scalars_, x_.span(), true);
    } else if (flexible_) {
      kg::add_combination(backend(), kg::Basis(z_.data(), bound), scalars_, x_.span(), true);
    } else {
      kg::add_combination(backend(), kg::Basis(v_.data(), bound), scalars_, w().span(), false);
      M_.apply(w(), aux());
      axpby(1.0, aux(), 1.0, x_);
    }
    if (with_residual) residual();
  }

  /// The fixed scalars and the residual estimates of a window of `window` iterations: the one
  /// wait for the device.
  void read(std::size_t window, std::vector<double>& host) const {
    ws_.scalars().read(0, std::span<double>(host.data(), slots_.residual(window)));
  }

 private:
  const Backend& backend() const { return A_.backend(); }
  /// w = A M^-1 v through the recorded product (recorded at the first call); false when it
  /// cannot be recorded (then never tried again).
  bool replay_product(const Vector& v_j) {
    if (product_.empty()) {
      try {
        product_ = kernels::LaunchGraph::record(backend(), [this] {
          M_.apply(*product_in_, *product_out_);
          A_.apply(*product_out_, w());
        });
      } catch (const BackendError&) {
        record_product_ = false;
        return false;
      }
    }
    copy(v_j, *product_in_);
    product_.replay();
    return true;
  }
  Vector& v(std::size_t i) { return ws_.vector(i); }
  Vector& w() { return ws_.vector(slots_.m + 1); }
  Vector& aux() { return ws_.vector(slots_.m + 2); }

  const LinearOperator& A_;
  const Preconditioner& M_;
  const Vector& b_;
  Vector& x_;
  KrylovSolver::Workspace& ws_;
  GmresSlots slots_;
  bool flexible_;
  bool left_;
  bool cgs2_;
  kg::Scalars scalars_;
  std::vector<const double*> v_;  // device addresses of v_0 .. v_m
  std::vector<const double*> z_;  // and of z_0 .. z_{m-1} (flexible)
  bool record_product_ = false;
  bool capturing_ = false;
  Vector* product_in_ = nullptr;  // workspace vectors of the recorded product
  Vector* product_out_ = nullptr;
  kernels::LaunchGraph product_;
};

/// How the iterations of a window end their cycle.
enum class WindowEnd { more, stop, happy_breakdown };

}  // namespace

Gmres::Side Gmres::parse_side(const std::string& name) {
  if (name == "right") return Side::right;
  if (name == "left") return Side::left;
  throw ConfigError("side", "'" + name + "' is not one of right, left");
}

Gmres::Orthogonalization Gmres::parse_orthogonalization(const std::string& name) {
  if (name == "cgs2") return Orthogonalization::cgs2;
  if (name == "mgs") return Orthogonalization::mgs;
  throw ConfigError("orthogonalization", "'" + name + "' is not one of cgs2, mgs");
}

const char* Gmres::to_string(Side side) {
  return side == Side::left ? "left" : "right";
}

const char* Gmres::to_string(Orthogonalization orthogonalization) {
  return orthogonalization == Orthogonalization::mgs ? "mgs" : "cgs2";
}

Gmres::Gmres(StopCriteria criteria, int restart, bool flexible, Side side,
             Orthogonalization orthogonalization)
    : KrylovSolver(criteria),
      restart_(restart),
      flexible_(flexible),
      side_(side),
      orthogonalization_(orthogonalization) {
  if (restart_ < 1) throw ConfigError("restart", "must be >= 1");
  if (flexible_ && side_ == Side::left) {
    throw ConfigError("side", "flexible GMRES is preconditioned on the right only");
  }
}

/// The host side of one solve: the stopping tests of each window, the end of each cycle and
/// the restart (a member of Gmres, so it reports through KrylovSolver's check()).
class Gmres::Run {
 public:
  Run(const Gmres& solver, const LinearOperator& A, const Preconditioner& M, const Vector& b,
      Vector& x, SolveReport& report);
  void solve();

 private:
  bool cycle();
  bool restart(bool stop);
  WindowEnd test_window(std::size_t j, std::size_t len);
  void report_stop(int code, std::size_t column);
  void run_window(std::size_t j, std::size_t len);
  void read_residual();
  bool singular_preconditioner();
  const Backend& backend() const { return A_.backend(); }

  const Gmres& solver_;
  const LinearOperator& A_;
  SolveReport& report_;
  std::size_t m_;
  GmresSlots slots_;
  bool left_;
  bool records_product_;
  Arnoldi arnoldi_;
  std::vector<double> host_;  // the fixed scalars and the window's residual estimates
  double goal_;
  double beta_ = 0.0;   // ||b - A x|| at the start of the cycle
  double scale_ = 1.0;  // turns the cycle's recursive residual norms into estimates of it
  int iteration_ = 0;
  bool graphs_;
  std::vector<kernels::LaunchGraph> window_graphs_;  // by the window's first column
  std::vector<char> window_seen_;  // the window was launched once (recorded at the next visit)
};

namespace {

/// Whether the first cycle's steps replay one recorded product M^-1 then A: the windows of the
/// first cycle are each met once (run_window), so they are not recorded; a multigrid cycle (or
/// an operator) that prefers recording is a fixed sequence of many launches whose gaps a replay
/// removes, worth copying v_j in and z_j out. Right preconditioning only.
bool records_product(const KrylovSolver& solver, const LinearOperator& A, const Preconditioner& M) {
  return solver.use_graphs(A, M) && (M.prefers_recording() || A.prefers_recording());
}

/// The Krylov space of an n x n operator is invariant after at most n steps: a larger basis is
/// never used, and restart may be anything up to INT_MAX.
std::size_t basis_size(int restart, std::size_t n) {
  return std::max<std::size_t>(1, std::min(static_cast<std::size_t>(restart), n));
}

}  // namespace

Gmres::Run::Run(const Gmres& solver, const LinearOperator& A, const Preconditioner& M,
                const Vector& b, Vector& x, SolveReport& report)
    : solver_(solver),
      A_(A),
      report_(report),
      m_(basis_size(solver.restart_, b.size())),
      slots_{m_, static_cast<std::size_t>(solver.options().check_every)},
      left_(solver.side_ == Side::left),
      records_product_(!left_ && records_product(solver, A, M)),
      arnoldi_(A, M, b, x,
               solver.workspace(A.backend(), b.size(),
                                m_ + 2 + (solver.flexible_ ? m_ : 1) + (records_product_ ? 2 : 0),
                                slots_.count()),
               slots_, solver.flexible_, left_,
               solver.orthogonalization_ == Orthogonalization::cgs2),
      host_(slots_.residual(slots_.window)),
      goal_(solver.target(report)),
      graphs_(solver.use_graphs(A, M)),
      window_graphs_(m_),
      window_seen_(m_, 0) {
  if (records_product_) {
    const std::size_t first = m_ + 2 + (solver.flexible_ ? m_ : 1);
    arnoldi_.use_recorded_product(first, first + 1);
  }
}

void Gmres::Run::solve() {
  arnoldi_.residual();  // r0 = b - A x0 (and M^-1 r0 on the left)
  arnoldi_.read(0, host_);
  read_residual();
  if (solver_.check(0, beta_, report_)) return;
  if (singular_preconditioner()) return;
  while (!cycle()) {
  }
}

/// ||b - A x|| of the residual r a cycle starts from, and the factor that turns the cycle's
/// recursive residual norms into estimates of ||b - A x_k||: 1 on the right, ||r|| / ||M^-1 r||
/// on the left (GMRES then minimizes ||M^-1 (b - A x_k)||; the class comment).
void Gmres::Run::read_residual() {
  beta_ = std::sqrt(host_[left_ ? GmresSlots::kTrue : GmresSlots::kBeta]);
  scale_ = left_ ? beta_ / std::sqrt(host_[GmresSlots::kBeta]) : 1.0;
}

/// Left: M^-1 r = 0 while r is not (a singular M) leaves nothing to minimize.
bool Gmres::Run::singular_preconditioner() {
  if (!left_ || host_[GmresSlots::kBeta] != 0.0) return false;
  breakdown(report_,
            "M^-1 r = 0 while ||r|| = " + number(beta_) + ": the preconditioner is singular");
  return true;
}

/// One cycle: windows of Arnoldi steps, each followed by the host's tests, then the update of x
/// and the restart. Returns true when the solve ends.
bool Gmres::Run::cycle() {
  arnoldi_.start_cycle();
  std::size_t j = 0;
  WindowEnd end = WindowEnd::more;
  bool residual_ready = false;  // the cycle's last window queued the end of the cycle
  while (end == WindowEnd::more && j < m_) {
    const auto len = std::min<std::size_t>(
        {slots_.window, m_ - j,
         static_cast<std::size_t>(solver_.criteria().max_iterations - iteration_)});
    run_window(j, len);
    residual_ready = j + len == m_;
    if (residual_ready) arnoldi_.finish(m_, true);  // read with the window's scalars
    arnoldi_.read(len, host_);                      // the convergence check
    end = test_window(j, len);
    j += len;
  }
  const bool stop = end == WindowEnd::stop;
  if (!residual_ready) {
    const bool with_residual = !stop || report_.status == SolveStatus::converged;
    arnoldi_.finish(j, with_residual);
    if (with_residual) arnoldi_.read(0, host_);
  }
  return restart(stop);
}

/// The Arnoldi steps of the window of columns [j, j + len): when use_graphs() says so, recorded
/// at the second visit of its first column (the second cycle) and replayed from then on. A
/// window's launches differ with its first column (j + 1 dots and updates per step), so a
/// solve that converges within its first cycle never meets a window twice, and recording it
/// there would only add the capture's cost: on the H200, FGMRES with the p-multigrid cycle
/// (120 launches per step) on the Kershaw mesh took 96 ms with a capture per window against
/// 61 ms launching every kernel (bench/results/h200_pmg/NOTES.md).
void Gmres::Run::run_window(std::size_t j, std::size_t len) {
  Arnoldi& arnoldi = arnoldi_;
  auto enqueue = [&arnoldi, j, len] {
    for (std::size_t p = 0; p < len; ++p) arnoldi.step(j + p, p);
  };
  if (graphs_ && len == std::min(slots_.window, m_ - j)) {
    kernels::LaunchGraph& graph = window_graphs_[j];
    if (graph.empty() && !window_seen_[j]) {
      window_seen_[j] = 1;
      enqueue();
      return;
    }
    if (graph.empty()) {
      arnoldi_.set_capturing(true);
      try {
        graph = kernels::LaunchGraph::record(backend(), enqueue);
      } catch (const BackendError&) {
        graphs_ = false;  // an operator that cannot be recorded: launch every kernel
      }
      arnoldi_.set_capturing(false);
    }
    if (!graph.empty()) {
      graph.replay();
      return;
    }
  }
  enqueue();
}

/// The iterations of the window of columns [j, j + len), in order.
WindowEnd Gmres::Run::test_window(std::size_t j, std::size_t len) {
  const auto code = static_cast<int>(host_[GmresSlots::kStop]);
  const auto stop_column = static_cast<std::size_t>(host_[GmresSlots::kStopColumn]);
  for (std::size_t p = 0; p < len; ++p) {
    const bool stopped_here = code != kg::kRunning && j + p == stop_column;
    if (stopped_here && code != kg::kHappyBreakdown) {
      report_stop(code, j + p);
      return WindowEnd::stop;
    }
    ++iteration_;
    if (solver_.check(iteration_, host_[slots_.residual(p)] * scale_, report_)) {
      return WindowEnd::stop;
    }
    if (stopped_here) return WindowEnd::happy_breakdown;
  }
  return WindowEnd::more;
}

/// A column that stopped the cycle (not a happy breakdown): its status and reason.
void Gmres::Run::report_stop(int code, std::size_t column) {
  if (code == kg::kNonFiniteProduct) {
    nan_detected(report_, std::string(left_ ? "||M^-1 A v_j|| = " : "||A M^-1 v_j|| = ") +
                              number(std::sqrt(host_[GmresSlots::kAz])));
  } else if (code == kg::kNonFiniteColumn) {
    nan_detected(report_, "the Hessenberg column " + std::to_string(column) + " is not finite");
  } else {
    breakdown(report_,
              "the Hessenberg matrix is singular (|R(j,j)| = " + number(host_[GmresSlots::kRjj]) +
                  " <= eps ||H||_F with ||H||_F = " + number(host_[GmresSlots::kHNorm]) +
                  ", j = " + std::to_string(column) + "): " + (left_ ? "M^-1 A" : "A M^-1") +
                  " is singular on the Krylov space; x holds the least-squares "
                  "solution over the columns before it");
  }
}

/// After a cycle whose end queued the update of x (and, unless it stopped on a failure, the
/// next residual): the restart tests. Returns true when the solve ends.
bool Gmres::Run::restart(bool stop) {
  if (stop && report_.status != SolveStatus::converged) return true;
  // Restart from the recomputed residual; a converged estimate must be confirmed by it.
  read_residual();
  if (stop && beta_ <= goal_) return true;
  if (!std::isfinite(beta_)) {
    nan_detected(report_, "the true residual at the restart is " + number(beta_));
    return true;
  }
  if (beta_ <= goal_) {  // a happy breakdown reached the solution
    report_.status = SolveStatus::converged;
    report_.residual_norm = beta_;
    report_.reason = "the Krylov space contains the solution: true residual " + number(beta_) +
                     " <= target " + number(goal_);
    return true;
  }
  const int limit = solver_.criteria().max_iterations;
  if (iteration_ >= limit) {
    report_.status = SolveStatus::max_iterations;
    report_.reason = "reached max_iterations = " + std::to_string(limit);
    return true;
  }
  if (singular_preconditioner()) return true;
  report_.residual_norm = beta_;  // estimate replaced by the recomputed residual at restart
  report_.status = SolveStatus::max_iterations;
  // The stagnation test measures progress from the last low of the estimates; a recomputed
  // residual above it shows that low was not real (left preconditioning: the first cycles may
  // lower ||M^-1 r|| while ||r|| grows). Progress then counts from the measured value.
  report_.progress.anchor = std::max(report_.progress.anchor, beta_);
  return false;
}

void Gmres::iterate(const LinearOperator& A, const Preconditioner& M, const Vector& b, Vector& x,
                    SolveReport& report) const {
  Run(*this, A, M, b, x, report).solve();
}

}  // namespace kryflow
