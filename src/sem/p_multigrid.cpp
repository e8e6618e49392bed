// p-multigrid for the spectral-element Poisson operator: the transfers between orders, the
// levels, and the assembled order-1 coarse problem.
#include "kryflow/sem/p_multigrid.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "kernels/sem/transfer.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/multigrid/dense_solver.hpp"

namespace kryflow::sem {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// A spectral-element level: the operator at one order, its Chebyshev smoother and the
/// transfers to the next lower order.
class SemLevel final : public MultigridLevel {
 public:
  /// `post` null: `smoother` smooths after the correction too.
  SemLevel(const SemPoissonOperator& A, std::unique_ptr<Smoother> smoother,
           std::unique_ptr<Smoother> post, const SemTransfer& transfer)
      : A_(&A), smoother_(std::move(smoother)), post_(std::move(post)), transfer_(&transfer) {}
  const LinearOperator& level_operator() const override { return *A_; }
  const Smoother& pre_smoother() const override { return *smoother_; }
  const Smoother& post_smoother() const override { return post_ ? *post_ : *smoother_; }
  index_t coarse_rows() const override { return transfer_->coarse_rows(); }
  void restrict_residual(const Vector& r, Vector& b_coarse) const override {
    transfer_->restrict_residual(r, b_coarse);
  }
  void prolongate_add(const Vector& e_coarse, Vector& x) const override {
    transfer_->prolongate(e_coarse, x, true);
  }
  bool supports_recording() const override {
    return A_->supports_recording() && smoother_->supports_recording() &&
           (post_ == nullptr || post_->supports_recording());
  }

 private:
  const SemPoissonOperator* A_;
  std::unique_ptr<Smoother> smoother_;
  std::unique_ptr<Smoother> post_;
  const SemTransfer* transfer_;
};

/// A fixed number of smoothing steps from z = 0 as a coarse solver (a fixed linear operator:
/// the Chebyshev polynomial is the same at every application).
class SmoothingSolver final : public Preconditioner {
 public:
  SmoothingSolver(std::unique_ptr<Smoother> smoother, int sweeps)
      : smoother_(std::move(smoother)), sweeps_(sweeps) {}
  void setup(const LinearOperator& A) override {
    smoother_->setup(A);
    A_ = &A;
  }
  index_t num_rows() const override { return A_->num_rows(); }
  index_t num_cols() const override { return A_->num_cols(); }
  const Backend& backend() const override { return A_->backend(); }
  void apply(const Vector& r, Vector& z) const override {
    for (int s = 0; s < sweeps_; ++s) smoother_->smooth(r, z, s == 0);
  }
  using Preconditioner::apply;
  std::string name() const override { return "chebyshev_sweeps"; }
  bool supports_recording() const override { return smoother_->supports_recording(); }

 private:
  std::unique_ptr<Smoother> smoother_;
  int sweeps_;
  const LinearOperator* A_ = nullptr;
};

/// The Chebyshev parameters of a smoother: the first kind with Jacobi (`preconditioned`
/// false), chebyshev_kind with a Schwarz preconditioner.
ChebyshevSmoother::Parameters chebyshev_parameters(const PMultigrid::Parameters& p,
                                                   bool preconditioned, bool finest = true) {
  ChebyshevSmoother::Parameters c;
  c.degree = finest || p.coarse_levels_chebyshev_degree == 0 ? p.chebyshev_degree
                                                             : p.coarse_levels_chebyshev_degree;
  c.alpha = p.chebyshev_alpha;
  c.eigen_iterations = p.chebyshev_eigen_iterations;
  if (preconditioned) c.kind = p.chebyshev_kind;
  return c;
}

std::unique_ptr<Smoother> chebyshev(const PMultigrid::Parameters& p, bool finest = true) {
  return std::make_unique<ChebyshevSmoother>(chebyshev_parameters(p, false, finest));
}

/// The smoother of a level above the coarsest (`finest`: the operator's own level).
std::unique_ptr<Smoother> level_smoother(const PMultigrid::Parameters& p, bool finest) {
  using Kind = PMultigrid::SmootherKind;
  if (p.smoother == Kind::chebyshev_jacobi) return chebyshev(p, finest);
  if (p.smoother == Kind::vertex_patch) {
    VertexPatchSmoother::Parameters vertex_patch = p.vertex_patch;
    vertex_patch.precision = p.schwarz_precision;
    return std::make_unique<VertexPatchSmoother>(vertex_patch);
  }
  return std::make_unique<PreconditionedChebyshevSmoother>(
      chebyshev_parameters(p, true, finest),
      std::make_unique<SchwarzPreconditioner>(p.smoother == Kind::chebyshev_asm
                                                  ? SchwarzPreconditioner::Method::additive
                                                  : SchwarzPreconditioner::Method::restricted,
                                              p.schwarz_precision));
}

const char* smoother_text(PMultigrid::SmootherKind kind) {
  switch (kind) {
    case PMultigrid::SmootherKind::chebyshev_asm:
      return "Chebyshev-accelerated additive Schwarz (element patches, FDM)";
    case PMultigrid::SmootherKind::vertex_patch:
      return "multiplicative Schwarz on vertex patches (FDM), forward before and backward after "
             "the correction";
    case PMultigrid::SmootherKind::chebyshev_ras:
      return "Chebyshev-accelerated restricted additive Schwarz (element patches, FDM)";
    default:
      return "Chebyshev-Jacobi";
  }
}

void check_size(const Vector& v, index_t n, const char* what) {
  if (v.size() != static_cast<std::size_t>(n)) {
    throw DimensionMismatch(std::string("SemTransfer: ") + what + " has " +
                            std::to_string(v.size()) + " entries, expected " + std::to_string(n));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// SemTransfer

SemTransfer::Side SemTransfer::make_side(const SemPoissonOperator& A, bool owners) {
  const GlobalNumbering& numbering = A.numbering();
  const std::vector<index_t> l2g(numbering.local_to_global.begin(),
                                 numbering.local_to_global.end());
  Side side{&A, Array<index_t>::from_host(A.backend(), l2g), {}, {}};
  if (owners) {
    // The first local point of each global point owns it (2 at Dirichlet points).
    std::vector<std::uint8_t> owner(l2g.size(), 0);
    std::vector<char> seen(static_cast<std::size_t>(numbering.num_global), 0);
    for (std::size_t l = 0; l < l2g.size(); ++l) {
      const auto g = static_cast<std::size_t>(l2g[l]);
      if (seen[g] != 0) continue;
      seen[g] = 1;
      owner[l] = A.dirichlet()[g] != 0 ? 2 : 1;
    }
    side.owner = Array<std::uint8_t>::from_host(A.backend(), owner);
  } else {
    std::vector<double> weight(static_cast<std::size_t>(numbering.num_global));
    for (std::size_t g = 0; g < weight.size(); ++g) weight[g] = A.dirichlet()[g] != 0 ? 0.0 : 1.0;
    side.weight = Array<double>::from_host(A.backend(), weight);
  }
  return side;
}

kernels::sem::TransferSideView SemTransfer::view(const Side& side) {
  const GlobalNumbering& numbering = side.A->numbering();
  kernels::sem::TransferSideView v;
  v.num_elements = numbering.num_elements;
  v.n = numbering.order + 1;
  v.num_global = numbering.num_global;
  v.local_to_global = side.local_to_global.data();
  v.global_offsets = side.A->global_offsets().data();
  v.global_locals = side.A->global_locals().data();
  v.weight = side.weight.data();
  v.owner = side.owner.data();
  return v;
}

SemTransfer::SemTransfer(const SemPoissonOperator& fine, const SemPoissonOperator& coarse) {
  if (!(fine.backend() == coarse.backend())) {
    throw InvalidInput("SemTransfer: the two operators live on different backends");
  }
  if (fine.numbering().num_elements != coarse.numbering().num_elements) {
    throw InvalidInput("SemTransfer: the operators have " +
                       std::to_string(fine.numbering().num_elements) + " and " +
                       std::to_string(coarse.numbering().num_elements) + " elements");
  }
  if (fine.rule().order <= coarse.rule().order) {
    throw InvalidInput("SemTransfer: the fine order " + std::to_string(fine.rule().order) +
                       " is not above the coarse order " + std::to_string(coarse.rule().order));
  }
  fine_ = make_side(fine, true);
  coarse_ = make_side(coarse, false);
  const std::vector<double> J = lagrange_interpolation_matrix(coarse.rule(), fine.rule().nodes);
  const int nf = fine.rule().order + 1;
  const int nc = coarse.rule().order + 1;
  std::vector<double> Jt(J.size());
  for (int a = 0; a < nf; ++a) {
    for (int i = 0; i < nc; ++i) {
      Jt[static_cast<std::size_t>(i * nf + a)] = J[static_cast<std::size_t>(a * nc + i)];
    }
  }
  interpolation_ = Array<double>::from_host(fine.backend(), J);
  transpose_ = Array<double>::from_host(fine.backend(), Jt);
  local_ = Array<double>(coarse.backend(), coarse.numbering().local_to_global.size());
}

void SemTransfer::prolongate(const Vector& coarse, Vector& fine, bool add) const {
  check_size(coarse, coarse_rows(), "the coarse vector");
  check_size(fine, fine_rows(), "the fine vector");
  kernels::sem::transfer_prolongate(fine_.A->backend(), view(coarse_), view(fine_),
                                    interpolation_.data(), coarse.span(), add ? 1.0 : 0.0,
                                    fine.span());
}

void SemTransfer::restrict_residual(const Vector& fine, Vector& coarse) const {
  check_size(fine, fine_rows(), "the fine vector");
  check_size(coarse, coarse_rows(), "the coarse vector");
  const Backend& backend = fine_.A->backend();
  const kernels::sem::TransferSideView out = view(coarse_);
  kernels::sem::transfer_interpolate(backend, view(fine_), out.n, transpose_.data(), fine.span(),
                                     local_.span());
  kernels::sem::transfer_assemble(backend, out, local_.span(), 0.0, coarse.span());
}

// ---------------------------------------------------------------------------------------------
// PMultigrid

AmgPreconditioner::Parameters PMultigrid::default_amg() {
  AmgPreconditioner::Parameters p;
  using A = AmgPreconditioner;
  p.strength = A::Strength::classical;
  p.strength_threshold = 0.25;
  p.coarsening = A::Coarsening::pmis;
  p.aggressive_levels = 1;
  p.interpolation = A::Interpolation::mm_extended_i;
  p.max_elements_per_row = 4;
  p.smoother = A::SmootherKind::chebyshev;
  p.chebyshev_degree = 2;
  p.chebyshev_alpha = 10.0;
  p.hierarchy_precision = Precision::float32;
  // 3 levels instead of 4 on Kershaw's order-1 level (9261 unknowns): its cycle 53 -> 27 us on
  // the H200 with the same iterations (bench/results/h200_pmg/NOTES.md).
  p.coarse_size = 2000;
  return p;
}

std::vector<int> PMultigrid::default_orders(int order, Schedule schedule) {
  std::vector<int> orders;
  int p = order;
  while (p > 1) {
    switch (schedule) {
      case Schedule::halving:
        p = p <= 3 ? 1 : p / 2;
        break;
      case Schedule::halving_then_unit:
        p = p <= 3 ? p - 1 : p / 2;
        break;
      case Schedule::minus_two:
        p = std::max(p - 2, 1);
        break;
      case Schedule::two_level:
        p = 1;
        break;
    }
    orders.push_back(p);
  }
  return orders;
}

PMultigrid::PMultigrid(Parameters parameters, std::unique_ptr<Preconditioner> coarse_solver)
    : Multigrid(parameters.cycle),
      parameters_(std::move(parameters)),
      coarse_solver_(std::move(coarse_solver)) {
  const auto& orders = parameters_.orders;
  for (std::size_t l = 0; l < orders.size(); ++l) {
    if (orders[l] < 1 || (l > 0 && orders[l] >= orders[l - 1])) {
      throw ConfigError("orders", "the coarse orders must be positive and decreasing");
    }
  }
  if (!orders.empty() && orders.back() != 1) {
    throw ConfigError("orders", "the coarse orders must end in 1 (the assembled level)");
  }
  if (parameters_.chebyshev_degree < 1) {
    throw ConfigError("chebyshev_degree", "must be at least 1");
  }
  if (parameters_.coarse_levels_chebyshev_degree < 0) {
    throw ConfigError("coarse_levels_chebyshev_degree", "must be at least 0");
  }
  try {
    (void)VertexPatchSmoother(parameters_.vertex_patch);  // its ranges, checked where they live
  } catch (const ConfigError& e) {
    const std::string prefix = e.path() + ": ";
    const std::string what = e.what();
    throw ConfigError("vertex_patch_" + e.path(),
                      what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what);
  }
  if (parameters_.chebyshev_kind != ChebyshevSmoother::Kind::first &&
      parameters_.smoother == SmootherKind::chebyshev_jacobi) {
    throw ConfigError("chebyshev_kind",
                      "the fourth kind needs a Schwarz smoother (chebyshev_asm or chebyshev_ras)");
  }
  if (!(parameters_.chebyshev_alpha > 1.0)) {
    throw ConfigError("chebyshev_alpha", "must be above 1");
  }
  if (parameters_.chebyshev_eigen_iterations < 1) {
    throw ConfigError("chebyshev_eigen_iterations", "must be at least 1");
  }
  if (parameters_.chebyshev_coarse_sweeps < 1) {
    throw ConfigError("chebyshev_coarse_sweeps", "must be at least 1");
  }
  if (coarse_solver_ == nullptr)
    coarse_solver_ = std::make_unique<AmgPreconditioner>(default_amg());
}

PMultigrid::~PMultigrid() = default;

void PMultigrid::release() {
  // The assembled level's solver is the caller's (or default_amg's): kept for the next setup.
  std::unique_ptr<Preconditioner> coarse = clear_hierarchy();
  if (coarse != nullptr && parameters_.coarsest == Coarsest::assembled) {
    coarse_solver_ = std::move(coarse);
  }
  transfers_.clear();
  operators_.clear();
  cycle_fine_.reset();
  coarse_matrix_.reset();
  level_orders_.clear();
  summary_.clear();
}

void PMultigrid::setup(const LinearOperator& A) {
  const auto* fine = dynamic_cast<const SemPoissonOperator*>(&A);
  if (fine == nullptr) {
    throw NotSupported(
        "p_multigrid: A must be a spectral-element Poisson operator (kryflow sem); for an "
        "assembled matrix use amg");
  }
  release();
  std::unique_ptr<Preconditioner> coarse;
  try {
    const int order = fine->rule().order;
    std::vector<int> orders = parameters_.orders.empty()
                                  ? default_orders(order, parameters_.schedule)
                                  : parameters_.orders;
    if (!orders.empty() && orders.front() >= order) {
      throw ConfigError("orders", "the first coarse order " + std::to_string(orders.front()) +
                                      " is not below the operator's order " +
                                      std::to_string(order));
    }
    level_orders_.push_back(order);
    for (int p : orders) level_orders_.push_back(p);

    // The operators of the cycle: A itself, or A in the cycle's arithmetic (its data shared),
    // and their lower orders (at_order keeps the arithmetic).
    auto start = std::chrono::steady_clock::now();
    const SemPoissonOperator* top = fine;
    if (fine->arithmetic() != parameters_.cycle_precision) {
      cycle_fine_ = fine->with_arithmetic(parameters_.cycle_precision);
      top = cycle_fine_.get();
    }
    for (int p : orders) operators_.push_back(top->at_order(p));
    const double operator_seconds = seconds_since(start);

    start = std::chrono::steady_clock::now();
    std::vector<const SemPoissonOperator*> chain = {top};
    for (const auto& op : operators_) chain.push_back(op.get());
    for (std::size_t l = 0; l + 1 < chain.size(); ++l) {
      transfers_.push_back(std::make_unique<SemTransfer>(*chain[l], *chain[l + 1]));
    }
    const double transfer_seconds = seconds_since(start);

    start = std::chrono::steady_clock::now();
    std::vector<std::unique_ptr<Smoother>> smoothers;
    for (std::size_t l = 0; l + 1 < chain.size(); ++l) {
      smoothers.push_back(level_smoother(parameters_, l == 0));
      smoothers.back()->begin_setup(*chain[l]);
    }
    for (auto& s : smoothers) s->finish_setup();
    // Vertex patches: the post-smoother is the adjoint sweep on the same patches.
    std::vector<std::unique_ptr<Smoother>> post_smoothers(smoothers.size());
    std::string patch_text;
    for (std::size_t l = 0; l < smoothers.size(); ++l) {
      if (const auto* v = dynamic_cast<const VertexPatchSmoother*>(smoothers[l].get())) {
        post_smoothers[l] = v->adjoint();
        patch_text += (l == 0 ? "" : ", ") + std::to_string(v->num_patches()) + " patches in " +
                      std::to_string(v->num_colors()) + " colors";
        if (v->num_uncovered() > 0) {
          patch_text += " and " + std::to_string(v->num_uncovered()) + " points by Jacobi";
        }
      }
    }
    const double smoother_seconds = seconds_since(start);

    start = std::chrono::steady_clock::now();
    const SemPoissonOperator& lowest = *chain.back();
    const LinearOperator* coarse_operator = &lowest;
    std::string coarse_text;
    if (parameters_.coarsest == Coarsest::chebyshev) {
      coarse = std::make_unique<SmoothingSolver>(chebyshev(parameters_, false),
                                                 parameters_.chebyshev_coarse_sweeps);
      coarse->setup(lowest);
      coarse_text = std::to_string(parameters_.chebyshev_coarse_sweeps) +
                    " Chebyshev-Jacobi steps on the matrix-free operator";
    } else {
      if (lowest.rule().order > 3) {
        throw ConfigError("orders", "the coarsest order must be at most 3 to be assembled");
      }
      coarse_matrix_ = std::make_unique<CsrMatrix>(
          CsrMatrix::from_coo(lowest.backend(), lowest.assembled_matrix()));
      coarse_operator = coarse_matrix_.get();
      coarse = std::move(coarse_solver_);
      coarse->setup(*coarse_matrix_);
      coarse_text = coarse->name() + " on the assembled matrix";
      if (const auto* amg = dynamic_cast<const AmgPreconditioner*>(coarse.get())) {
        const HierarchyReport& report = amg->hierarchy_report();
        coarse_text = "one AMG cycle on the assembled matrix (" +
                      std::to_string(report.levels.size()) + " levels, operator complexity " +
                      std::to_string(report.operator_complexity).substr(0, 4) + ")";
      }
    }
    lowest.backend().synchronize();
    const double coarse_seconds = seconds_since(start);

    std::vector<std::unique_ptr<MultigridLevel>> levels;
    for (std::size_t l = 0; l + 1 < chain.size(); ++l) {
      levels.push_back(std::make_unique<SemLevel>(*chain[l], std::move(smoothers[l]),
                                                  std::move(post_smoothers[l]), *transfers_[l]));
    }
    set_hierarchy(std::move(levels), *coarse_operator, std::move(coarse));

    std::string text = "p-multigrid: orders";
    for (std::size_t l = 0; l < chain.size(); ++l) {
      text += (l == 0 ? " " : ", ") + std::to_string(level_orders_[l]) + " (" +
              std::to_string(chain[l]->num_rows()) + " unknowns)";
    }
    const bool patches = parameters_.smoother == SmootherKind::vertex_patch;
    text +=
        std::string("\n  smoother: ") + smoother_text(parameters_.smoother) +
        (parameters_.smoother == SmootherKind::chebyshev_jacobi
             ? ""
             : std::string(", local solves in ") +
                   std::string(to_string(parameters_.schwarz_precision))) +
        (patches
             ? " (" + patch_text + (parameters_.vertex_patch.fused ? ", fused steps" : "") +
                   "), relaxation " +
                   std::to_string(parameters_.vertex_patch.relaxation).substr(0, 5)
             : ", degree " + std::to_string(parameters_.chebyshev_degree) +
                   (parameters_.coarse_levels_chebyshev_degree > 0 &&
                            (level_orders_.size() > 2 ||
                             (level_orders_.size() > 1 &&
                              parameters_.coarsest == Coarsest::chebyshev))
                        ? " (coarser levels " +
                              std::to_string(parameters_.coarse_levels_chebyshev_degree) + ")"
                        : std::string()) +
                   (parameters_.chebyshev_kind == ChebyshevSmoother::Kind::fourth
                        ? std::string(", fourth kind")
                        : ", alpha " + std::to_string(parameters_.chebyshev_alpha).substr(0, 5))) +
        (parameters_.cycle_precision == Precision::float32
             ? "\n  cycle arithmetic float32 (element Laplacians in float; vectors, "
               "transfers and the coarse matrix in double)"
             : "") +
        "\n  coarsest: " + coarse_text;
    if (coarse_matrix_) {
      text += "; " + std::to_string(coarse_matrix_->nnz()) + " entries";
    }
    char phases[256];
    std::snprintf(phases, sizeof phases,
                  "\n  setup: operators %.4f s, transfers %.4f s, smoothers %.4f s, coarse "
                  "%.4f s\n",
                  operator_seconds, transfer_seconds, smoother_seconds, coarse_seconds);
    text += phases;
    summary_ = text;
  } catch (...) {
    if (coarse != nullptr && parameters_.coarsest == Coarsest::assembled) {
      coarse_solver_ = std::move(coarse);
    }
    release();
    throw;
  }
}

}  // namespace kryflow::sem
