// Base class of the Krylov solvers: stopping rules, monitoring and the final true residual.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "kryflow/linalg/linear_operator.hpp"
#include "kryflow/linalg/scalars.hpp"
#include "kryflow/preconditioners/preconditioner.hpp"
#include "kryflow/solvers/stop_criteria.hpp"

namespace kryflow {

/// Called once per iteration with (iteration, recursive residual norm, ||b||). Solvers never
/// print; the CLI's progress line is a monitor.
using IterationMonitor = std::function<void(int iteration, double residual_norm, double rhs_norm)>;

/// Whether a solver records the launches of its iterations once and replays them (a CUDA graph
/// on cuda, kernels/backend/graph.hpp) instead of launching every kernel every time.
enum class GraphMode {
  automatic,  ///< replay where it was measured faster: when A or M prefers recording
              ///< (LinearOperator::prefers_recording: a multigrid cycle), or when windows
              ///< hold several iterations (check_every > 1) of a product bound by latency
              ///< (LinearOperator::fuses_combination or fuses_shifted_product); otherwise
              ///< launch every kernel, as dependent launches are as fast (docs/decisions/005)
  always,     ///< replay whenever A and M support recording
  never,      ///< launch every kernel
};
/// "automatic", "always" or "never"; throws ConfigError (path "cuda_graphs") otherwise.
GraphMode parse_graph_mode(const std::string& name);
const char* to_string(GraphMode mode);

/// How the iterations run; the numbers do not depend on it.
struct IterationOptions {
  /// The host reads the residual norm (and the scalars it tests) every check_every iterations
  /// (>= 1): the only wait for the device inside the iteration. The report still names the
  /// first iteration whose residual met the target; x then holds up to check_every - 1 further
  /// iterations (each lowers the error of CG).
  int check_every = 1;
  GraphMode graphs = GraphMode::automatic;
  /// Throws ConfigError naming the field when check_every < 1.
  void validate() const;
};

/// Base of the Krylov solvers. A solver object holds its parameters (StopCriteria,
/// IterationOptions and, for GMRES, the restart length) and a workspace: its work vectors and
/// device-resident scalars are allocated by the first solve and reused by the next solves of
/// the same size on the same backend (no allocation per solve, so a solver may run thousands of
/// times inside a preconditioner). A solver object therefore runs one solve at a time: use one
/// object per thread.
///
/// Recursive residual drift: after the iteration, solve() recomputes the true residual
/// ||b - A x||. A `converged` status whose true residual exceeds
/// SolveReport::true_residual_slack (10) x max(relative_tolerance ||b||, absolute_tolerance) is
/// downgraded to `stagnated` with a reason quoting the recursive and the true residual; a
/// non-finite true residual makes it `nan_detected`.
class KrylovSolver {
 public:
  /// Throws ConfigError when `criteria` is out of range (StopCriteria::validate).
  explicit KrylovSolver(StopCriteria criteria);
  virtual ~KrylovSolver();
  KrylovSolver(const KrylovSolver&) = delete;
  KrylovSolver& operator=(const KrylovSolver&) = delete;

  /// Solves A x = b, improving x in place (x holds the initial guess x_0) and returns what
  /// happened.
  ///
  /// Shapes: A is n x n; M (set up for A) n x n; b and x have n entries. A, M, b and x live on
  /// one backend; the method runs there through Vector/LinearOperator and moves no data to the
  /// host besides scalars.
  /// b = 0: x is set to 0 (the exact solution, whatever x_0) and the report says `converged`,
  /// 0 iterations, residual 0, without running the method.
  /// max_iterations = 0: only r_0 = b - A x_0 is computed; x is unchanged.
  ///
  /// Throws DimensionMismatch (an InvalidInput) when A is not square or b, x or M do not have n
  /// entries (M.num_rows() != n usually means setup(A) was not called); InvalidInput when the
  /// operands live on different backends; OutOfMemory when the work vectors (a few n-vectors,
  /// m + 1 of them for GMRES(m)) do not fit on the device; BackendError when a kernel fails.
  /// Numerical outcomes (breakdown, divergence, stagnation, NaN, iteration limit) are reported
  /// in SolveReport::status with a reason, never thrown; x then holds the last iterate (for
  /// GMRES, the least-squares solution over the basis built so far).
  SolveReport solve(const LinearOperator& A, const Preconditioner& M, const Vector& b,
                    Vector& x) const;
  /// The solver's setup for A and M (M set up for A), optional: allocates what solve() needs
  /// for them (work vectors, device scalars and their host copies, the true residual's vector)
  /// and runs one window of check_every iterations on a scratch system (b = 1, x_0 = 0; the
  /// monitor is not called), so that each kernel of a full window has been launched once. The
  /// solves after it, with any b and x of A's size, then pay no one-time cost: allocation, and
  /// on cuda the loading of each kernel's module at its first launch (each solve still records
  /// its own window, while the device runs its first one). Without it the first solve pays them
  /// (on an H200, about 3 ms for the 2.8M-unknown Kershaw solve of kryflow sem). With
  /// max_iterations below check_every the solves run no full window, and the scratch solve's
  /// kernels are those of a full one.
  ///
  /// Throws what solve() throws for A and M (DimensionMismatch, InvalidInput, OutOfMemory,
  /// BackendError); the scratch solve's numerical outcome is not reported.
  void setup(const LinearOperator& A, const Preconditioner& M);
  virtual std::string name() const = 0;

  void set_monitor(IterationMonitor monitor) { monitor_ = std::move(monitor); }
  const StopCriteria& criteria() const noexcept { return criteria_; }
  /// Throws ConfigError when `options` is out of range (IterationOptions::validate).
  void set_options(IterationOptions options);
  const IterationOptions& options() const noexcept { return options_; }
  /// Whether solve records a window of iterations of A and M once and replays it:
  /// options().graphs (automatic: see GraphMode::automatic), and never when A or M does not
  /// support recording (LinearOperator::supports_recording, prefers_recording).
  bool use_graphs(const LinearOperator& A, const Preconditioner& M) const;

  /// The reusable work vectors and scalars of a solver (src/solvers/workspace.hpp).
  class Workspace;

 protected:
  /// The method itself: fills status, reason, iterations, residual_norm and residual_history.
  virtual void iterate(const LinearOperator& A, const Preconditioner& M, const Vector& b, Vector& x,
                       SolveReport& report) const = 0;

  /// Records ||r_k|| for iteration k, calls the monitor and decides whether to stop.
  /// Returns true (and sets report.status / reason) when the iteration must end.
  bool check(int iteration, double residual_norm, SolveReport& report) const;
  /// Marks a breakdown (a zero denominator) with its reason, followed by
  /// " at iteration <report.iterations>".
  static void breakdown(SolveReport& report, const std::string& reason);
  /// Marks a non-finite scalar or vector (status nan_detected) with its reason, followed by
  /// " at iteration <report.iterations>".
  static void nan_detected(SolveReport& report, const std::string& reason);
  /// The convergence target max(relative_tolerance * ||b||, absolute_tolerance).
  double target(const SolveReport& report) const;
  /// Whether the residual estimates checked so far predict convergence by iteration
  /// `iteration` (> report.iterations): the last estimate times the mean rate of the last (up
  /// to 3) checked iterations, per iteration still unchecked, is at most target(report). False
  /// before two estimates or when they do not fall. The windowed iteration queues no window
  /// ahead of the host's check when this holds (WindowLoop::likely_done).
  bool likely_converged_by(int iteration, const SolveReport& report) const;
  /// `value` in %.3e, for reasons.
  static std::string number(double value);
  /// The test of a conjugate-gradient scalar that must be finite and of `sign` (A and M both
  /// positive or both negative definite): marks nan_detected ("<name> = v") or breakdown
  /// ("<name> = v <wrong_sign>") and returns true when it is not.
  static bool definite_fails(double value, double sign, const char* name, const char* wrong_sign,
                             SolveReport& report);
  /// The wrong_sign texts of definite_fails for r·z (M not definite) and p·Ap (A not definite).
  static constexpr const char* kPreconditionerNotDefinite =
      "changed sign or vanished: the preconditioner is not definite";
  static constexpr const char* kOperatorNotDefinite =
      "has the wrong sign: A is not positive (or negative) definite";
  /// The solver's workspace: `vectors` work vectors of n entries and `scalars` device scalars
  /// on `backend`, allocated when the previous solve used another size, count or backend and
  /// reused otherwise (their contents are then unspecified).
  Workspace& workspace(const Backend& backend, std::size_t n, std::size_t vectors,
                       std::size_t scalars) const;

 private:
  StopCriteria criteria_;
  IterationOptions options_;
  IterationMonitor monitor_;
  mutable std::unique_ptr<Workspace> workspace_;
  mutable Vector true_residual_;
};

/// Preconditioned conjugate gradients (Saad, Iterative Methods for Sparse Linear Systems, 2nd ed.,
/// Algorithm 9.1). With point Jacobi (M.inverse_diagonal() set) the preconditioner is fused into
/// the vector updates.
/// Preconditions: A and M symmetric and both positive definite or both negative definite (the
/// sign is taken from the first r·z); nothing checks symmetry. Memory: 3 work vectors (4 with a
/// preconditioner other than Jacobi). One iteration = one application of A and of M.
/// Status: breakdown when p·Ap or r·z has the wrong sign or vanishes (an indefinite A or M);
/// nan_detected when one of them (or the residual) is not finite.
///
/// Flexible (fcg): beta_k = -(z_{k+1}·A p_k) / (p_k·A p_k) instead of r_{k+1}·z_{k+1} /
/// r_k·z_k, the Polak-Ribiere form that keeps each direction A-orthogonal to the previous one
/// when M is not symmetric or changes from one iteration to the next (a multigrid cycle with
/// restricted additive Schwarz smoothing, a cycle in lower precision): Notay, "Flexible
/// conjugate gradients", SIAM J. Sci. Comput. 22 (2000), FCG(1); Golub and Ye, SIAM J. Sci.
/// Comput. 21 (1999). It costs one more inner product, computed in the pass that computes r·z
/// (z·q), and no more memory; with a fixed symmetric M it takes PCG's iterations up to
/// rounding. With Jacobi (fused) it is PCG. A still symmetric and definite; r·z must keep the
/// sign of r0·z0 (breakdown otherwise).
class Cg final : public KrylovSolver {
 public:
  explicit Cg(StopCriteria criteria = {}, bool flexible = false)
      : KrylovSolver(criteria), flexible_(flexible) {}
  std::string name() const override { return flexible_ ? "fcg" : "pcg"; }
  bool flexible() const noexcept { return flexible_; }

 protected:
  void iterate(const LinearOperator& A, const Preconditioner& M, const Vector& b, Vector& x,
               SolveReport& report) const override;

 private:
  bool flexible_;
};

/// Pipelined preconditioned conjugate gradients (Ghysels and Vanroose, Parallel Computing 40,
/// 2014, Algorithm 4; in Saad's notation: r the residual, u = M^-1 r, w = A u, p the direction,
/// s = A p, q = M^-1 s, z = A q). Every inner product of an iteration (gamma = r·u, delta = w·u,
/// ||r|| and the three that give p·s, the denominator of alpha, without Chronopoulos and Gear's
/// recurrence: kernels/krylov/pipecg/pipecg.hpp) comes out of one fused reduction in the pass
/// that updates all vectors, so one global synchronization per iteration can overlap the
/// preconditioner and the product (with a distributed vector, the MPI allreduce). Scalars stay
/// on the device, as in Cg. Iterations: the same as Cg's on 3D Poisson and the OpenFOAM
/// pressure matrix; on very ill-conditioned systems rounding delays it (ex10hs, condition
/// 5.5e11: 1.15 to 1.6 times Cg's iterations, depending on the replacement interval).
///
/// Residual replacement: the recurrences for r, u, w, s, q and z drift from their definitions
/// by rounding errors amplified each iteration (Cools, Yetkin, Agullo, Giraud and Vanroose,
/// SIAM J. Matrix Anal. Appl. 39, 2018). Every `replacement_interval` iterations (0: never) they
/// are recomputed from x and p: r = b - A x, u = M^-1 r, w = A u, s = A p, q = M^-1 s, z = A q,
/// at the cost of three products and two preconditioner applications. The default, 50: without
/// replacement pipelined CG breaks down on ex10hs (its denominator loses its sign after about
/// 2400 iterations), and replacing every iteration slows it as much as replacing the residual
/// slows CG (the recursive residual's local orthogonality is lost); from 20 to 100 iterations
/// it converges, and 50 costs about 3 products per 50 iterations (2% of the time).
/// Preconditions, status and iteration numbers as Cg (the denominator of alpha plays the role of
/// p·Ap). Memory: 9 work vectors. One iteration = one application of A and of M.
class PipelinedCg final : public KrylovSolver {
 public:
  /// Throws ConfigError when replacement_interval < 0 or `criteria` is out of range.
  PipelinedCg(StopCriteria criteria, int replacement_interval = 50);
  std::string name() const override { return "pipecg"; }
  int replacement_interval() const noexcept { return replacement_interval_; }

 protected:
  void iterate(const LinearOperator& A, const Preconditioner& M, const Vector& b, Vector& x,
               SolveReport& report) const override;

 private:
  int replacement_interval_;
};

/// Right-preconditioned BiCGStab (van der Vorst, SIAM J. Sci. Stat. Comput. 13, 1992; Saad,
/// Iterative Methods, 2nd ed., Algorithm 7.7 applied to A M^-1 u = b, x = M^-1 u: right
/// preconditioning as Saad section 9.3 does it for GMRES). The residual is that of the
/// unpreconditioned system.
/// Preconditions: A and M nonsingular; any nonsymmetric A. Memory: 8 work vectors. One iteration
/// = two applications of A and of M; the half step s = r - alpha v may end it early.
/// Status: breakdown when rho = r^·r, r^·v or t·t vanishes, or omega = 0; nan_detected when any
/// of these scalars or the residual is not finite.
class Bicgstab final : public KrylovSolver {
 public:
  using KrylovSolver::KrylovSolver;
  std::string name() const override { return "bicgstab"; }

 protected:
  void iterate(const LinearOperator& A, const Preconditioner& M, const Vector& b, Vector& x,
               SolveReport& report) const override;
};

/// Restarted GMRES(m) (Saad, Iterative Methods, 2nd ed., Algorithm 6.9 restarted as in section
/// 6.5) with Givens rotations on the Hessenberg matrix, preconditioned on the right (Algorithm
/// 9.5, the default) or on the left (Algorithm 9.4, GMRES on M^-1 A x = M^-1 b); `flexible`
/// stores the preconditioned vectors z_j (FGMRES, Saad Algorithm 9.6, right only) so M may change
/// from one iteration to the next. Each cycle restarts from the residual recomputed from x.
///
/// Orthogonalization: classical Gram-Schmidt with one reorthogonalization pass (cgs2, the
/// default: the whole column comes from one fused multi-dot per pass, two passes per step) or
/// modified Gram-Schmidt (mgs: j + 1 dependent dots, each fused with the update before it).
///
/// Scalars on the device: the Hessenberg matrix, the rotations and the least-squares solution
/// live in backend memory (kernels/krylov/gmres/gmres.hpp); the host reads the residual
/// estimates |g_{j+1}| of a window of check_every iterations at once (the one wait of the
/// window; a window never crosses the end of a cycle) and tests them in order, so the report
/// names the iteration that converged exactly; x may then hold up to check_every - 1 further
/// iterations of the same cycle (each lowers the minimized residual).
///
/// Stopping test: both sides test ||b - A x_k|| <= target (StopCriteria). Right preconditioning
/// minimizes it, and the recursive estimate |g_{k+1}| is that norm. Left preconditioning
/// minimizes the preconditioned residual ||M^-1 (b - A x_k)||; as SciPy's gmres does, the host
/// turns it into an estimate of the true residual with the ratio ||r_c|| / ||M^-1 r_c|| of the
/// residual r_c the cycle started from, and a converged estimate ends the cycle, whose
/// recomputed true residual must confirm it (otherwise the next cycle starts from it, with a new
/// ratio). This is not PETSc's default for -ksp_pc_side left, which stops on the preconditioned
/// norm ||M^-1 r_k|| <= rtol ||M^-1 b||: with point Jacobi on airfoil_2d (suitesparse) that
/// test is met at true residuals 3e4 times the target, which KrylovSolver::solve would report as
/// `stagnated`. residual_norm and residual_history hold the estimates (the true residual at
/// iteration 0 and at each restart).
///
/// Basis size: m = min(restart, n). Memory: m + 3 n-vectors (2m + 2 for FGMRES; 2 more on the
/// right when a preconditioner that prefers recording, a multigrid cycle, is replayed) and about
/// (m + 1) (m + 5) device scalars (the Hessenberg matrix, rotations, g and y).
/// Happy breakdown: h_{j+1,j} <= 10 (j + 1) eps ||A z_j|| (relative to the vector before
/// Gram-Schmidt): the Krylov space is invariant and the cycle ends with the exact least-squares
/// solution; the recomputed residual then decides between converged and a restart.
/// Status: breakdown when the triangular factor R of the Hessenberg matrix H is numerically rank
/// deficient (|R(j,j)| <= eps ||H||_F: the preconditioned operator is singular on the Krylov
/// space); nan_detected on a non-finite value. Whatever ends a cycle, x is first updated with the
/// least-squares solution over the columns built so far, so no progress is lost.
class Gmres final : public KrylovSolver {
 public:
  /// Where the preconditioner is applied (PETSc's -ksp_pc_side).
  enum class Side {
    right,  ///< A M^-1 u = b, x = M^-1 u: the residual is that of A x = b
    left,   ///< M^-1 A x = M^-1 b: the residual is the preconditioned one
  };
  /// How each new Arnoldi vector is orthogonalized against the basis.
  enum class Orthogonalization {
    cgs2,  ///< classical Gram-Schmidt, twice
    mgs,   ///< modified Gram-Schmidt
  };
  /// "right" or "left"; throws ConfigError (path "side") otherwise.
  static Side parse_side(const std::string& name);
  /// "cgs2" or "mgs"; throws ConfigError (path "orthogonalization") otherwise.
  static Orthogonalization parse_orthogonalization(const std::string& name);
  static const char* to_string(Side side);
  static const char* to_string(Orthogonalization orthogonalization);

  /// restart: the Krylov basis size m before a restart (>= 1; values above n act as n).
  /// Throws ConfigError when restart < 1 (path "restart"), when `flexible` is combined with
  /// Side::left (path "side"), or when `criteria` is out of range.
  Gmres(StopCriteria criteria, int restart, bool flexible, Side side = Side::right,
        Orthogonalization orthogonalization = Orthogonalization::cgs2);
  std::string name() const override { return flexible_ ? "fgmres" : "gmres"; }
  int restart() const noexcept { return restart_; }
  bool flexible() const noexcept { return flexible_; }
  Side side() const noexcept { return side_; }
  Orthogonalization orthogonalization() const noexcept { return orthogonalization_; }

 protected:
  void iterate(const LinearOperator& A, const Preconditioner& M, const Vector& b, Vector& x,
               SolveReport& report) const override;

 private:
  class Run;  // one solve (src/solvers/gmres.cpp)
  int restart_;
  bool flexible_;
  Side side_;
  Orthogonalization orthogonalization_;
};

}  // namespace kryflow
