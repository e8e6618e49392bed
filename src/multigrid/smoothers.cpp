// Damped Jacobi, l1-Jacobi, Chebyshev, Gauss-Seidel and hybrid Gauss-Seidel smoothers.
#include "kryflow/multigrid/smoothers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/blas/blas.hpp"
#include "kernels/krylov/cg/cg.hpp"
#include "kernels/smoothers/smoothers.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/scalars.hpp"
#include "src/multigrid/csr_access.hpp"
#include "src/multigrid/lanczos_batch.hpp"

extern "C" void dhseqr_(const char* job, const char* compz, const int* n, const int* ilo,
                        const int* ihi, double* h, const int* ldh, double* wr, double* wi,
                        double* z, const int* ldz, double* work, const int* lwork, int* info);
extern "C" void dstev_(const char* jobz, const int* n, double* d, double* e, double* z,
                       const int* ldz, double* work, int* info);

namespace kryflow {
namespace {

/// The largest eigenvalue of the symmetric tridiagonal matrix (diagonal, off_diagonal) by
/// LAPACK's dstev; NaN when it fails, 0 for an empty matrix.
double largest_tridiagonal_eigenvalue(std::vector<double> diagonal,
                                      std::vector<double> off_diagonal) {
  const int m = static_cast<int>(diagonal.size());
  if (m == 0) return 0.0;
  off_diagonal.resize(static_cast<std::size_t>(m));
  int info = 0;
  const int one = 1;
  double unused = 0.0;
  dstev_("N", &m, diagonal.data(), off_diagonal.data(), &unused, &one, &unused, &info);
  if (info != 0) return std::nan("");
  return diagonal.back();  // ascending order
}

void require_square(const LinearOperator& A, const std::string& who) {
  if (A.num_rows() != A.num_cols()) {
    throw DimensionMismatch(who + " needs a square operator, got " + std::to_string(A.num_rows()) +
                            " x " + std::to_string(A.num_cols()));
  }
}

/// The interval [lambda_max / alpha, beta lambda_max] a Chebyshev smoother damps: its centre
/// theta, half-width delta and sigma = theta / delta (Saad, Algorithm 12.1).
struct ChebyshevInterval {
  double theta, delta, sigma;
  ChebyshevInterval(const ChebyshevSmoother::Parameters& p, double lambda_max) {
    const double upper = p.beta * lambda_max;
    const double lower = upper / p.alpha;
    theta = 0.5 * (upper + lower);
    delta = 0.5 * (upper - lower);
    sigma = theta / delta;
  }
};

/// The InvalidInput for entry `bad` (0-based) of d, zero or not finite: "<who>: the <what> of
/// row <bad + 1> is ...".
[[noreturn]] void throw_bad_entry(const Vector& d, index_t bad, const std::string& who,
                                  const char* what) {
  const double value = d.to_host()[static_cast<std::size_t>(bad)];
  throw InvalidInput(who + ": the " + what + " of row " + std::to_string(bad + 1) + " is " +
                     (value == 0.0 ? std::string("zero or missing") : std::to_string(value)));
}

/// 1 / d_i, or InvalidInput naming the first (1-based) row where d_i is zero or not finite.
Vector checked_inverse(const Vector& d, const std::string& who, const char* what) {
  Vector inverse(d.backend(), d.size());
  const index_t bad = kernels::blas::invert_diagonal(d.backend(), d.span(), inverse.span());
  if (bad >= 0) throw_bad_entry(d, bad, who, what);
  return inverse;
}

Vector inverse_diagonal_of(const LinearOperator& A, const std::string& who) {
  require_square(A, who);
  Vector d(A.backend(), static_cast<std::size_t>(A.num_rows()));
  A.diagonal(d);
  return checked_inverse(d, who, "diagonal entry");
}

void check_vectors(const LinearOperator* A, const Vector& b, const Vector& x, const char* who) {
  if (A == nullptr) throw InvalidInput(std::string(who) + ": setup(A) was not called");
  const auto n = static_cast<std::size_t>(A->num_rows());
  if (b.size() != n || x.size() != n) {
    throw DimensionMismatch(std::string(who) + ": the operator has " + std::to_string(n) +
                            " rows, b has " + std::to_string(b.size()) + " and x " +
                            std::to_string(x.size()));
  }
  if (!(b.backend() == A->backend()) || !(x.backend() == A->backend())) {
    throw InvalidInput(std::string(who) + ": b and x must live on the operator's backend");
  }
}

/// x <- x + d .* (b - A x) (x <- d .* b when x_is_zero), r a work vector.
void scaled_residual_update(const LinearOperator& A, const Vector& d, const Vector& b, Vector& x,
                            bool x_is_zero, Vector& r) {
  if (x_is_zero) {
    pointwise_multiply(d, b, x);
    return;
  }
  A.residual(b, x, r);
  pointwise_multiply(d, r, r);
  axpby(1.0, r, 1.0, x);
}

/// The Lanczos estimate of lambda_max(D^-1 A) in two phases. lanczos_queue runs `steps`
/// Jacobi-preconditioned CG steps on A x = v from x = 0, v a fixed pseudo-random vector (all
/// frequencies) (Saad, Iterative Methods, 2nd ed., sec. 6.7.3), and lanczos_estimate takes the
/// largest eigenvalue of their tridiagonal Lanczos matrix: the Ritz value approaches
/// lambda_max(D^-1 A) from below, much faster than power iteration; the start vector is balanced
/// by D^{1/2}. D^-1 A must be similar to a positive definite matrix (A and D both positive or
/// both negative definite); -1 otherwise. The CG steps are those of kryflow's PCG with
/// device-resident scalars (kernels/krylov/cg): p·Ap and r·z of every step stay where A lives in
/// `scalars` (lanczos_slots(steps) of them, fresh, i.e. zero) and the host reads them once, after
/// the last step (or after the last level's setup: Smoother::begin_setup), so a small level costs
/// launches, not round trips; the iterate x is not formed. r and p are work vectors of n
/// entries; q lives only here (the smoother keeps a vector less). A CsrMatrix of at most
/// kFusedLanczosRows rows takes the steps in one kernel (smoothers::cg_lanczos, the same
/// scalars): three launches per step bound the setup of small levels.
std::size_t lanczos_slots(int steps) {
  return 6 + 2 * static_cast<std::size_t>(steps);
}

/// Rows up to which lanczos_queue runs the fused steps on a CsrMatrix. A level of the pinned
/// OpenFOAM pressure matrix's hierarchy (at most 23,325 rows) spent 14 us per step in the three
/// kernels, 8 in the fused one; on large levels launches do not count, and the fused kernel's
/// grid-stride product and grid barriers are no faster than the tuned SpMV and reductions.
constexpr index_t kFusedLanczosRows = 100000;

void lanczos_queue(const LinearOperator& A, const Vector& inverse_diagonal, int steps, Vector& r,
                   Vector& p, DeviceScalars& scalars, detail::LanczosBatch* batch) {
  namespace cg = kernels::krylov::cg;
  const std::size_t n = inverse_diagonal.size();
  if (n == 0) return;
  const Backend& backend = A.backend();
  Vector q(backend, n);
  // r0 = D^{1/2} u, u uniform in [-1, 1): the start vector of the Lanczos process on the
  // symmetric D^{-1/2} A D^{-1/2} is then u itself, with every eigenvector present in the same
  // measure. A plain random r0 weights row i by 1/a_ii and misses the largest eigenvalues of
  // rows with large coefficients (a jumping-coefficient problem's coarse levels).
  kernels::blas::fill_pseudo_random(backend, r.span(), 0, inverse_diagonal.span());
  const auto* csr = dynamic_cast<const CsrMatrix*>(&A);
  if (csr != nullptr && csr->num_rows() <= kFusedLanczosRows) {
    Vector p_next(backend, n);
    const kernels::smoothers::LanczosSystem system{detail::smoother_view(*csr),
                                                   static_cast<std::int64_t>(csr->nnz()),
                                                   inverse_diagonal.span(),
                                                   r.span(),
                                                   p.span(),
                                                   p_next.span(),
                                                   q.span(),
                                                   scalars.slot(0).address};
    if (batch != nullptr) {
      batch->add(backend, steps, system, std::move(p_next), std::move(q));
    } else {
      kernels::smoothers::cg_lanczos(backend, {system}, steps);
    }
    return;
  }
  // Slots: the five of cg::Scalars, r·r (not needed), then p·Ap and r·z of each step. Fresh
  // (zero) scalars: a step after the kernels stopped leaves its p·Ap at 0, which
  // lanczos_estimate rejects.
  const auto m = static_cast<std::size_t>(steps);
  auto at = [&](std::size_t i) { return scalars.slot(i).address; };
  const cg::Scalars s{at(0), at(1), at(2), at(3), at(4)};
  const Span<const double> dinv = inverse_diagonal.span();
  cg::start(backend, dinv, r.span(), dinv.first(0), p.span(), s, at(5));
  for (std::size_t j = 0; j < m; ++j) {
    if (j > 0) cg::direction(backend, dinv, r.span(), dinv.first(0), p.span(), s);
    A.apply_dot(p, q, scalars.slot(6 + j));  // q = A p, p·q
    cg::update(backend, p.span(), q.span(), dinv, dinv.first(0), Span<double>(), r.span(), s,
               DeviceSum{at(6 + j), 0}, at(6 + j), at(5), at(6 + m + j), false);
  }
}

/// lambda_max from the scalars lanczos_queue left (read to the host: `host`).
double lanczos_estimate(std::span<const double> host, int steps) {
  const auto m = static_cast<std::size_t>(steps);
  double rz = host[2];  // r0·z0
  std::vector<double> diagonal, off_diagonal;
  double alpha_previous = 0.0, beta_previous = 0.0;
  // A and D both negative definite (a pressure matrix of the other sign convention) make rz and
  // pq negative and D^-1 A positive definite all the same: alpha = rz / pq > 0 is the test.
  for (std::size_t j = 0; j < m && rz != 0.0 && std::isfinite(rz); ++j) {
    const double alpha = rz / host[6 + j];
    if (!(alpha > 0.0) || !std::isfinite(alpha)) return -1.0;
    // T_jj = 1/alpha_j + beta_{j-1}/alpha_{j-1}, T_{j-1,j} = sqrt(beta_{j-1})/alpha_{j-1}.
    diagonal.push_back(1.0 / alpha + (j > 0 ? beta_previous / alpha_previous : 0.0));
    if (j > 0) off_diagonal.push_back(std::sqrt(beta_previous) / alpha_previous);
    const double rz_next = host[6 + m + j];
    const double beta = rz_next / rz;
    if (!(beta >= 0.0)) break;  // r·z changed sign or is not finite: the kernels stopped here
    rz = rz_next;
    alpha_previous = alpha;
    beta_previous = beta;
  }
  return largest_tridiagonal_eigenvalue(diagonal, off_diagonal);
}

/// The InvalidInput of checked_inverse for row `bad` (0-based) of A's diagonal.
[[noreturn]] void throw_bad_diagonal(const LinearOperator& A, index_t bad, const std::string& who) {
  Vector d(A.backend(), static_cast<std::size_t>(A.num_rows()));
  A.diagonal(d);
  throw_bad_entry(d, bad, who, "diagonal entry");
}

}  // namespace

// ---------------------------------------------------------------------------------------------

JacobiSmoother::JacobiSmoother(double omega) : omega_(omega) {
  if (!(omega > 0.0 && omega < 2.0)) throw ConfigError("jacobi_omega", "must be in (0, 2)");
}

void JacobiSmoother::setup(const LinearOperator& A) {
  Vector inverse = inverse_diagonal_of(A, "Jacobi smoother");
  axpby(0.0, inverse, omega_, inverse);
  scaled_inverse_diagonal_ = std::move(inverse);
  r_ = Vector(A.backend(), scaled_inverse_diagonal_.size());
  A_ = &A;
}

void JacobiSmoother::smooth(const Vector& b, Vector& x, bool x_is_zero) const {
  check_vectors(A_, b, x, "JacobiSmoother::smooth");
  scaled_residual_update(*A_, scaled_inverse_diagonal_, b, x, x_is_zero, r_);
}

// ---------------------------------------------------------------------------------------------

void L1JacobiSmoother::setup(const LinearOperator& A) {
  const CsrMatrix& csr = detail::require_square_csr(A, "l1-Jacobi smoother");
  Vector norms(A.backend(), static_cast<std::size_t>(A.num_rows()));
  kernels::smoothers::l1_row_norms(A.backend(), detail::smoother_view(csr), norms.span());
  inverse_l1_ = checked_inverse(norms, "l1-Jacobi smoother", "l1 norm");
  r_ = Vector(A.backend(), inverse_l1_.size());
  A_ = &A;
}

void L1JacobiSmoother::smooth(const Vector& b, Vector& x, bool x_is_zero) const {
  check_vectors(A_, b, x, "L1JacobiSmoother::smooth");
  scaled_residual_update(*A_, inverse_l1_, b, x, x_is_zero, r_);
}

// ---------------------------------------------------------------------------------------------

ChebyshevSmoother::ChebyshevSmoother(Parameters parameters) : parameters_(parameters) {
  if (parameters_.degree < 1) throw ConfigError("chebyshev_degree", "must be >= 1");
  if (!(parameters_.alpha > 1.0)) throw ConfigError("chebyshev_alpha", "must be > 1");
  if (!(parameters_.beta >= 1.0)) throw ConfigError("chebyshev_beta", "must be >= 1");
  if (parameters_.eigen_iterations < 1) {
    throw ConfigError("chebyshev_eigen_iterations", "must be >= 1");
  }
  if (parameters_.kind != Kind::first) {
    throw ConfigError("chebyshev_kind",
                      "the Jacobi Chebyshev smoother has the first kind only (fourth: the "
                      "preconditioned smoother)");
  }
}

void ChebyshevSmoother::setup(const LinearOperator& A) {
  begin_setup(A);
  finish_setup();
}

void ChebyshevSmoother::begin_setup(const LinearOperator& A) {
  begin(A, nullptr);
}

void ChebyshevSmoother::begin_setup_with_diagonal(const LinearOperator& A,
                                                  Vector inverse_diagonal) {
  begin(A, &inverse_diagonal);
}

void ChebyshevSmoother::begin(const LinearOperator& A, Vector* inverse_diagonal) {
  const char* who = "Chebyshev smoother";
  require_square(A, who);
  A_ = nullptr;  // smooth() refuses until finish_setup
  const auto n = static_cast<std::size_t>(A.num_rows());
  // The Lanczos scalars and, in the last slot, the first bad diagonal index (its first 4 bytes).
  const std::size_t slots = lanczos_slots(parameters_.eigen_iterations);
  pending_ = DeviceScalars(A.backend(), slots + 1);
  diagonal_given_ = inverse_diagonal != nullptr;
  if (diagonal_given_) {
    if (inverse_diagonal->size() != n) {
      throw DimensionMismatch(std::string(who) + ": the inverse diagonal has " +
                              std::to_string(inverse_diagonal->size()) + " entries, A " +
                              std::to_string(n) + " rows");
    }
    inverse_diagonal_ = std::move(*inverse_diagonal);
  } else {
    Vector d(A.backend(), n);
    A.diagonal(d);
    inverse_diagonal_ = Vector(A.backend(), n);
    kernels::blas::invert_diagonal(A.backend(), d.span(), inverse_diagonal_.span(),
                                   reinterpret_cast<unsigned int*>(pending_.slot(slots).address));
  }
  w_ = Vector(A.backend(), n);
  d_ = Vector(A.backend(), n);
  lanczos_queue(A, inverse_diagonal_, parameters_.eigen_iterations, w_, d_, pending_,
                lanczos_batch_);
  lanczos_batch_ = nullptr;  // for this setup only
  pending_A_ = &A;
}

void ChebyshevSmoother::finish_setup() {
  if (pending_A_ == nullptr) {
    if (A_ != nullptr) return;  // finished already
    throw InvalidInput("Chebyshev smoother: finish_setup before begin_setup");
  }
  const LinearOperator& A = *pending_A_;
  pending_A_ = nullptr;
  std::vector<double> host(pending_.size());
  pending_.read(0, host);
  pending_ = DeviceScalars();
  unsigned int first_bad = 0;
  std::memcpy(&first_bad, &host.back(), sizeof first_bad);
  if (!diagonal_given_ && kernels::blas::first_index_of(first_bad) >= 0) {
    throw_bad_diagonal(A, kernels::blas::first_index_of(first_bad), "Chebyshev smoother");
  }
  const double lambda =
      inverse_diagonal_.size() == 0 ? 1.0 : lanczos_estimate(host, parameters_.eigen_iterations);
  if (!(lambda > 0.0) || !std::isfinite(lambda)) {
    throw InvalidInput("Chebyshev smoother: the estimate of lambda_max(D^-1 A) is " +
                       std::to_string(lambda) +
                       ": A must be positive (or negative) definite with a diagonal of its sign");
  }
  lambda_max_ = lambda;
  A_ = &A;
  csr_ = dynamic_cast<const CsrMatrix*>(&A);
}

void ChebyshevSmoother::smooth(const Vector& b, Vector& x, bool x_is_zero) const {
  check_vectors(A_, b, x, "ChebyshevSmoother::smooth");
  const ChebyshevInterval interval(parameters_, lambda_max_);
  const double theta = interval.theta, delta = interval.delta, sigma = interval.sigma;
  double rho = 1.0 / sigma;
  // d_0 = D^-1 r_0 / theta; x_1 = x_0 + d_0 (Saad, Algorithm 12.1 preconditioned by D);
  // d_k = rho_k rho_{k-1} d_{k-1} + (2 rho_k / delta) D^-1 r_k; x_{k+1} = x_k + d_k. Each step
  // with a residual is one chebyshev_step, from one of x and w_ into the other; the first
  // target is chosen so that the last step lands in x.
  const int steps = parameters_.degree - (x_is_zero ? 1 : 0);  // steps with a residual
  // On a CsrMatrix, x_1 of a zero start is formed inside the first residual step's product
  // (chebyshev_first_steps, the same bits): one kernel and one pass over b less per call.
  const bool fused_start = x_is_zero && steps > 0 && csr_ != nullptr;
  Vector& start = steps % 2 == 0 ? x : w_;
  if (x_is_zero && !fused_start) {  // x_1 = d_0 = D^-1 b / theta
    kernels::blas::chebyshev_update(x.backend(), inverse_diagonal_.span(), b.span(), 1.0 / theta,
                                    0.0, d_.span(), start.span(), true);
  } else if (!x_is_zero && &start != &x) {
    kernels::blas::copy(x.backend(), x.span(), w_.span());
  }
  Vector* from = &start;
  Vector* to = &start == &x ? &w_ : &x;
  for (int k = 0; k < steps; ++k) {
    double alpha = 1.0 / theta;
    double beta = 0.0;
    if (x_is_zero || k > 0) {
      const double rho_next = 1.0 / (2.0 * sigma - rho);
      alpha = 2.0 * rho_next / delta;
      beta = rho_next * rho;
      rho = rho_next;
    }
    if (fused_start && k == 0) {
      csr_->chebyshev_first_steps(b, inverse_diagonal_, 1.0 / theta, alpha, beta, d_, *to);
    } else {
      A_->chebyshev_step(b, *from, inverse_diagonal_, alpha, beta, d_, *to);
    }
    std::swap(from, to);
  }
}

// ---------------------------------------------------------------------------------------------

PreconditionedChebyshevSmoother::PreconditionedChebyshevSmoother(Parameters parameters,
                                                                 std::unique_ptr<Preconditioner> M)
    : parameters_(parameters), M_(std::move(M)) {
  Parameters first = parameters_;
  first.kind = ChebyshevSmoother::Kind::first;
  ChebyshevSmoother check(first);  // the same ranges, the same ConfigErrors
  (void)check;
  if (M_ == nullptr) throw InvalidInput("PreconditionedChebyshevSmoother: no preconditioner");
}

std::string PreconditionedChebyshevSmoother::name() const {
  return std::string(parameters_.kind == ChebyshevSmoother::Kind::fourth ? "chebyshev4("
                                                                         : "chebyshev(") +
         M_->name() + ")";
}

void PreconditionedChebyshevSmoother::setup(const LinearOperator& A) {
  const char* who = "Chebyshev smoother";
  require_square(A, who);
  A_ = nullptr;
  M_->setup(A);
  const auto n = static_cast<std::size_t>(A.num_rows());
  const Backend& backend = A.backend();
  r_ = Vector(backend, n);
  z_ = Vector(backend, n);
  d_ = Vector(backend, n);
  double lambda = 1.0;
  if (n > 0) {
    // Arnoldi with modified Gram-Schmidt on M^-1 A; H is m x m, column-major for LAPACK.
    const int m = parameters_.eigen_iterations;
    std::vector<Vector> V;
    V.emplace_back(backend, n);
    fill_pseudo_random(V[0], 0);
    axpby(0.0, V[0], 1.0 / norm2(V[0]), V[0]);
    std::vector<double> H(static_cast<std::size_t>(m * m), 0.0);
    int steps = 0;
    for (int j = 0; j < m; ++j) {
      A.apply(V[j], r_);
      V.emplace_back(backend, n);
      M_->apply(r_, V[j + 1]);
      Vector& w = V[j + 1];
      for (int i = 0; i <= j; ++i) {
        const double h = dot(w, V[i]);
        H[static_cast<std::size_t>(j * m + i)] = h;
        axpby(-h, V[i], 1.0, w);
      }
      const double beta = norm2(w);
      steps = j + 1;
      if (!(beta > 1e-14 * std::abs(H[static_cast<std::size_t>(j * m + j)])) || j + 1 == m) {
        break;
      }
      H[static_cast<std::size_t>(j * m + j + 1)] = beta;
      axpby(0.0, w, 1.0 / beta, w);
    }
    // The eigenvalues of the leading steps x steps block (dhseqr, eigenvalues only); a NaN or
    // infinity from A or M gives no estimate.
    std::vector<double> h(static_cast<std::size_t>(steps * steps));
    bool finite = true;
    for (int c = 0; c < steps; ++c) {
      for (int r = 0; r < steps; ++r) {
        h[c * steps + r] = H[static_cast<std::size_t>(c * m + r)];
        finite = finite && std::isfinite(h[c * steps + r]);
      }
    }
    std::vector<double> wr(static_cast<std::size_t>(steps)), wi(static_cast<std::size_t>(steps));
    std::vector<double> work(static_cast<std::size_t>(std::max(1, 4 * steps)));
    const int one = 1, lwork = static_cast<int>(work.size());
    int info = 0;
    double unused = 0.0;
    if (finite) {
      dhseqr_("E", "N", &steps, &one, &steps, h.data(), &steps, wr.data(), wi.data(), &unused, &one,
              work.data(), &lwork, &info);
    }
    lambda = finite && info == 0 ? *std::max_element(wr.begin(), wr.end()) : std::nan("");
  }
  if (!(lambda > 0.0) || !std::isfinite(lambda)) {
    throw InvalidInput(std::string(who) + ": the estimate of lambda_max(M^-1 A) is " +
                       std::to_string(lambda) + ": A and M must be positive definite");
  }
  lambda_max_ = lambda;
  A_ = &A;
}

void PreconditionedChebyshevSmoother::smooth(const Vector& b, Vector& x, bool x_is_zero) const {
  check_vectors(A_, b, x, "PreconditionedChebyshevSmoother::smooth");
  // Step k: d_k = a_k M^-1 r_k + c_k d_{k-1}, x += d_k, r_{k+1} = r_k - A d_k, from
  // r_0 = b - A x_0. First kind (Saad, Algorithm 12.1): a_0 = 1 / theta, then
  // rho_k = 1 / (2 sigma - rho_{k-1}) (rho_0 = 1 / sigma), a_k = 2 rho_k / delta,
  // c_k = rho_k rho_{k-1}. Fourth kind (Lottes 2023, sec. 4; rho = beta lambda_max):
  // a_0 = 4 / (3 rho), a_k = (8k + 4) / ((2k + 3) rho), c_k = (2k - 1) / (2k + 3).
  // Each update of d and x goes through Preconditioner::apply_update, which M may fuse into
  // its last pass.
  const ChebyshevInterval interval(parameters_, lambda_max_);
  const bool fourth = parameters_.kind == ChebyshevSmoother::Kind::fourth;
  const double upper = parameters_.beta * lambda_max_;
  double rho = 1.0 / interval.sigma;
  auto coefficients = [&](int k) -> std::pair<double, double> {
    if (fourth) {
      if (k == 0) return {4.0 / (3.0 * upper), 0.0};
      return {(8.0 * k + 4.0) / ((2.0 * k + 3.0) * upper), (2.0 * k - 1.0) / (2.0 * k + 3.0)};
    }
    if (k == 0) return {1.0 / interval.theta, 0.0};
    const double next = 1.0 / (2.0 * interval.sigma - rho);
    const std::pair<double, double> step{2.0 * next / interval.delta, next * rho};
    rho = next;
    return step;
  };
  const auto [a0, c0] = coefficients(0);
  if (x_is_zero) {
    M_->apply_update(b, a0, c0, d_, x, true, z_);
  } else {
    A_->residual(b, x, r_);  // r_0 = b - A x_0
    M_->apply_update(r_, a0, c0, d_, x, false, z_);
  }
  for (int k = 1; k < parameters_.degree; ++k) {
    // r_k = r_{k-1} - A d_{k-1}; from a zero start r_1 = b - A d_0 (no copy of b).
    if (k == 1 && x_is_zero) {
      A_->residual(b, d_, r_);
    } else {
      A_->apply(-1.0, d_, 1.0, r_);
    }
    const auto [a, c] = coefficients(k);
    M_->apply_update(r_, a, c, d_, x, false, z_);
  }
}

// ---------------------------------------------------------------------------------------------

void GaussSeidelSmoother::setup(const LinearOperator& A) {
  const CsrMatrix& csr = detail::require_square_csr(A, "Gauss-Seidel smoother");
  inverse_diagonal_ = inverse_diagonal_of(A, "Gauss-Seidel smoother");
  A_ = &csr;
}

void GaussSeidelSmoother::smooth(const Vector& b, Vector& x, bool x_is_zero) const {
  check_vectors(A_, b, x, "GaussSeidelSmoother::smooth");
  if (x_is_zero) fill(x, 0.0);
  const auto sweep = [&](kernels::smoothers::SweepDirection direction) {
    kernels::smoothers::gauss_seidel(A_->backend(), detail::smoother_view(*A_),
                                     inverse_diagonal_.span(), b.span(), x.span(), direction);
  };
  if (direction_ != Direction::backward) sweep(kernels::smoothers::SweepDirection::forward);
  if (direction_ != Direction::forward) sweep(kernels::smoothers::SweepDirection::backward);
}

std::string GaussSeidelSmoother::name() const {
  switch (direction_) {
    case Direction::forward:
      return "gauss_seidel (forward)";
    case Direction::backward:
      return "gauss_seidel (backward)";
    case Direction::symmetric:
      break;
  }
  return "gauss_seidel (symmetric)";
}

// ---------------------------------------------------------------------------------------------

HybridGaussSeidelSmoother::HybridGaussSeidelSmoother(Parameters parameters)
    : parameters_(parameters) {
  if (parameters_.block_rows < 1) throw ConfigError("hybrid_block_rows", "must be >= 1");
}

void HybridGaussSeidelSmoother::setup(const LinearOperator& A) {
  const std::string who = "hybrid Gauss-Seidel smoother";
  const CsrMatrix& csr = detail::require_square_csr(A, who);
  Vector d(A.backend(), static_cast<std::size_t>(A.num_rows()));
  kernels::smoothers::hybrid_diagonal(A.backend(), detail::smoother_view(csr),
                                      parameters_.block_rows, parameters_.l1, d.span());
  inverse_diagonal_ = checked_inverse(
      d, who, parameters_.l1 ? "l1 diagonal (a_ii + off-block l1 norm)" : "diagonal entry");
  x_start_ = Vector(A.backend(), inverse_diagonal_.size());
  A_ = &csr;
}

void HybridGaussSeidelSmoother::smooth(const Vector& b, Vector& x, bool x_is_zero) const {
  check_vectors(A_, b, x, "HybridGaussSeidelSmoother::smooth");
  if (x_is_zero) fill(x, 0.0);
  const auto sweep = [&](kernels::smoothers::SweepDirection direction) {
    kernels::smoothers::hybrid_gauss_seidel(
        A_->backend(), detail::smoother_view(*A_), parameters_.block_rows, parameters_.l1,
        inverse_diagonal_.span(), b.span(), x.span(), x_start_.span(), direction);
  };
  if (parameters_.direction != Direction::backward) {
    sweep(kernels::smoothers::SweepDirection::forward);
  }
  if (parameters_.direction != Direction::forward) {
    sweep(kernels::smoothers::SweepDirection::backward);
  }
}

bool HybridGaussSeidelSmoother::supports_recording() const {
  return A_ != nullptr && A_->supports_recording();
}

std::string HybridGaussSeidelSmoother::name() const {
  const char* direction = parameters_.direction == Direction::forward    ? "forward"
                          : parameters_.direction == Direction::backward ? "backward"
                                                                         : "symmetric";
  return std::string("hybrid_gauss_seidel (") + direction + ", blocks of " +
         std::to_string(parameters_.block_rows) + " rows" + (parameters_.l1 ? ", l1)" : ")");
}

}  // namespace kryflow
