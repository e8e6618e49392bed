// The multigrid cycle over a hierarchy of levels, and the operator-made level.
#include "kryflow/multigrid/multigrid.hpp"

#include <array>
#include <cmath>
#include <string>

#include "kernels/backend/queue_clock.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/core/timing.hpp"

namespace kryflow {

OperatorLevel::OperatorLevel(const LinearOperator& A, const LinearOperator& restriction,
                             const LinearOperator& prolongation, std::unique_ptr<Smoother> pre,
                             std::unique_ptr<Smoother> post)
    : A_(&A),
      restriction_(&restriction),
      prolongation_(&prolongation),
      pre_(std::move(pre)),
      post_(std::move(post)) {
  if (!pre_) throw InvalidInput("OperatorLevel: a pre-smoother is required");
  const index_t n = A.num_rows();
  const index_t coarse = restriction.num_rows();
  if (A.num_cols() != n || restriction.num_cols() != n || prolongation.num_rows() != n ||
      prolongation.num_cols() != coarse) {
    throw DimensionMismatch(
        "OperatorLevel: A is " + std::to_string(n) + " x " + std::to_string(A.num_cols()) + ", R " +
        std::to_string(coarse) + " x " + std::to_string(restriction.num_cols()) + ", P " +
        std::to_string(prolongation.num_rows()) + " x " + std::to_string(prolongation.num_cols()));
  }
}

void OperatorLevel::restrict_residual(const Vector& r, Vector& b_coarse) const {
  restriction_->apply(r, b_coarse);
}

void OperatorLevel::prolongate_add(const Vector& e_coarse, Vector& x) const {
  prolongation_->apply(1.0, e_coarse, 1.0, x);
}

bool OperatorLevel::supports_recording() const {
  return A_->supports_recording() && restriction_->supports_recording() &&
         prolongation_->supports_recording() && pre_->supports_recording() &&
         (post_ == nullptr || post_->supports_recording());
}

// ---------------------------------------------------------------------------------------------

CycleType parse_cycle_type(const std::string& name) {
  if (name == "v") return CycleType::v;
  if (name == "w") return CycleType::w;
  if (name == "f") return CycleType::f;
  throw ConfigError("cycle", "unknown cycle '" + name + "' (valid choices: v, w, f)");
}

const char* to_string(CycleType cycle) {
  switch (cycle) {
    case CycleType::v:
      return "v";
    case CycleType::w:
      return "w";
    case CycleType::f:
      return "f";
  }
  return "v";
}

// ---------------------------------------------------------------------------------------------

namespace {

// The components of a smoothed level in cycle order (CycleComponentTime::component); the
// coarsest level's coarse_solve follows the last level's.
constexpr std::array<const char*, 5> kLevelComponents = {"pre_smoothing", "residual", "restriction",
                                                         "prolongation", "post_smoothing"};
enum class Component : std::size_t {
  pre_smoothing,
  residual,
  restriction,
  prolongation,
  post_smoothing,
  coarse_solve
};

}  // namespace

/// The marks of profile_cycle: begin() before a component, end(level, component) after it, on
/// the backend's queue; totals() the seconds of every slot (level, component) per cycle.
class Multigrid::CycleTimer {
 public:
  CycleTimer(const Backend& backend, std::size_t levels) : clock_(backend), levels_(levels) {}
  /// Runs `work`, marked as `component` of level l when `timer` is not null.
  template <class Work>
  static void time(CycleTimer* timer, std::size_t l, Component component, Work&& work) {
    if (timer != nullptr) timer->begin();
    work();
    if (timer != nullptr) timer->end(l, component);
  }
  void start_cycle() { ++cycle_; }
  void begin() { open_ = clock_.mark(); }
  void end(std::size_t level, Component component) {
    const std::size_t slot =
        component == Component::coarse_solve
            ? levels_ * kLevelComponents.size()
            : level * kLevelComponents.size() + static_cast<std::size_t>(component);
    intervals_.push_back({cycle_, slot, open_, clock_.mark()});
  }
  /// seconds[c][slot]: the time of slot in cycle c, its visits summed. Waits for the last mark.
  std::vector<std::vector<double>> totals() {
    std::vector<std::vector<double>> seconds(
        static_cast<std::size_t>(cycle_ + 1),
        std::vector<double>(levels_ * kLevelComponents.size() + 1, 0.0));
    // The last interval first: its wait covers the others.
    for (auto it = intervals_.rbegin(); it != intervals_.rend(); ++it) {
      seconds[static_cast<std::size_t>(it->cycle)][it->slot] += clock_.seconds(it->begin, it->end);
    }
    return seconds;
  }

 private:
  struct Interval {
    int cycle;
    std::size_t slot, begin, end;
  };
  kernels::QueueClock clock_;
  std::size_t levels_;
  int cycle_ = -1;
  std::size_t open_ = 0;
  std::vector<Interval> intervals_;
};

Multigrid::Multigrid(Parameters parameters) : parameters_(parameters) {
  if (parameters_.pre_sweeps < 0) throw ConfigError("pre_sweeps", "must be >= 0");
  if (parameters_.post_sweeps < 0) throw ConfigError("post_sweeps", "must be >= 0");
}

Multigrid::~Multigrid() = default;

index_t Multigrid::num_rows() const {
  if (!levels_.empty()) return levels_.front()->level_operator().num_rows();
  return coarse_operator_ != nullptr ? coarse_operator_->num_rows() : 0;
}

const Backend& Multigrid::backend() const {
  static const Backend none = Backend::reference();
  if (!levels_.empty()) return levels_.front()->level_operator().backend();
  return coarse_operator_ != nullptr ? coarse_operator_->backend() : none;
}

void Multigrid::set_hierarchy(std::vector<std::unique_ptr<MultigridLevel>> levels,
                              const LinearOperator& coarse_operator,
                              std::unique_ptr<Preconditioner>&& coarse_solver) {
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const index_t next = l + 1 < levels.size() ? levels[l + 1]->level_operator().num_rows()
                                               : coarse_operator.num_rows();
    if (levels[l]->coarse_rows() != next) {
      throw DimensionMismatch("Multigrid: level " + std::to_string(l) + " restricts to " +
                              std::to_string(levels[l]->coarse_rows()) +
                              " rows, the next level has " + std::to_string(next));
    }
  }
  std::vector<Work> work(levels.size() + 1);
  for (std::size_t l = 0; l <= levels.size(); ++l) {
    const LinearOperator& A = l < levels.size() ? levels[l]->level_operator() : coarse_operator;
    const auto n = static_cast<std::size_t>(A.num_rows());
    if (l > 0) {
      work[l].b = Vector(A.backend(), n);
      work[l].x = Vector(A.backend(), n);
    }
    work[l].r = Vector(A.backend(), n);
    if (l == levels.size()) work[l].z = Vector(A.backend(), n);
  }
  levels_ = std::move(levels);
  coarse_operator_ = &coarse_operator;
  coarse_solver_ = std::move(coarse_solver);
  work_ = std::move(work);
}

bool Multigrid::supports_recording() const {
  if (coarse_solver_ == nullptr || coarse_operator_ == nullptr) return false;
  if (!coarse_solver_->supports_recording() || !coarse_operator_->supports_recording()) {
    return false;
  }
  for (const auto& level : levels_) {
    if (!level->supports_recording()) return false;
  }
  return true;
}

std::unique_ptr<Preconditioner> Multigrid::clear_hierarchy() {
  levels_.clear();
  work_.clear();
  coarse_operator_ = nullptr;
  return std::move(coarse_solver_);
}

void Multigrid::check_vectors(const Vector& b, const Vector& x, const char* who) const {
  if (coarse_solver_ == nullptr) {
    throw InvalidInput(std::string(who) + ": setup(A) was not called");
  }
  if (&b == &x) throw InvalidInput(std::string(who) + ": the two vectors must be distinct");
  const auto n = static_cast<std::size_t>(num_rows());
  if (b.size() != n || x.size() != n) {
    throw DimensionMismatch(std::string(who) + ": the hierarchy has " + std::to_string(n) +
                            " rows, the vectors " + std::to_string(b.size()) + " and " +
                            std::to_string(x.size()));
  }
  if (!(b.backend() == backend()) || !(x.backend() == backend())) {
    throw InvalidInput(std::string(who) + ": vectors must live on the hierarchy's backend (" +
                       backend().name() + ")");
  }
}

void Multigrid::apply(const Vector& r, Vector& z) const {
  check_vectors(r, z, "Multigrid::apply");
  visit(0, r, z, true, parameters_.cycle, nullptr);
}

void Multigrid::cycle(const Vector& b, Vector& x, bool x_is_zero) const {
  check_vectors(b, x, "Multigrid::cycle");
  visit(0, b, x, x_is_zero, parameters_.cycle, nullptr);
}

std::vector<CycleComponentTime> Multigrid::profile_cycle(const Vector& b, int cycles) const {
  if (coarse_solver_ == nullptr) {
    throw InvalidInput("Multigrid::profile_cycle: setup(A) was not called");
  }
  if (cycles < 1) {
    throw InvalidInput("Multigrid::profile_cycle: cycles is " + std::to_string(cycles) +
                       ", expected >= 1");
  }
  Vector z(backend(), static_cast<std::size_t>(num_rows()));
  check_vectors(b, z, "Multigrid::profile_cycle");
  CycleTimer timer(backend(), levels_.size());
  for (int c = 0; c < cycles; ++c) {
    timer.start_cycle();
    visit(0, b, z, true, parameters_.cycle, &timer);
  }
  const std::vector<std::vector<double>> per_cycle = timer.totals();

  std::vector<CycleComponentTime> out;
  out.reserve(levels_.size() * kLevelComponents.size() + 1);
  for (std::size_t slot = 0; slot <= levels_.size() * kLevelComponents.size(); ++slot) {
    std::vector<double> samples;
    samples.reserve(per_cycle.size());
    for (const std::vector<double>& cycle : per_cycle) samples.push_back(cycle[slot]);
    const double seconds = median(std::move(samples));
    CycleComponentTime entry;
    entry.level = slot / kLevelComponents.size();
    entry.component = entry.level == levels_.size()
                          ? "coarse_solve"
                          : kLevelComponents[slot % kLevelComponents.size()];
    entry.seconds = std::isfinite(seconds) && seconds > 0.0 ? seconds : 0.0;
    out.push_back(std::move(entry));
  }
  return out;
}

void Multigrid::coarse_solve(const Vector& b, Vector& x, bool x_is_zero) const {
  if (x_is_zero) {
    coarse_solver_->apply(b, x);
    return;
  }
  // x <- x + M^-1 (b - A x): the same as M^-1 b for an exact coarse solver.
  Work& w = work_.back();
  coarse_operator_->residual(b, x, w.r);
  coarse_solver_->apply(w.r, w.z);
  axpby(1.0, w.z, 1.0, x);
}

void Multigrid::visit(std::size_t l, const Vector& b, Vector& x, bool x_is_zero, CycleType type,
                      CycleTimer* timer) const {
  // With a timer (profile_cycle), a mark before and after each component; without, one test
  // of a null pointer per component.
  if (l == levels_.size()) {
    CycleTimer::time(timer, l, Component::coarse_solve, [&] { coarse_solve(b, x, x_is_zero); });
    return;
  }
  const MultigridLevel& level = *levels_[l];
  Vector& r = work_[l].r;
  Vector& b_coarse = work_[l + 1].b;
  Vector& x_coarse = work_[l + 1].x;
  CycleTimer::time(timer, l, Component::pre_smoothing, [&] {
    for (int s = 0; s < parameters_.pre_sweeps; ++s) {
      level.pre_smoother().smooth(b, x, x_is_zero && s == 0);
    }
    if (x_is_zero && parameters_.pre_sweeps == 0) fill(x, 0.0);
  });
  CycleTimer::time(timer, l, Component::residual,
                   [&] { level.level_operator().residual(b, x, r); });
  CycleTimer::time(timer, l, Component::restriction, [&] { level.restrict_residual(r, b_coarse); });
  const bool coarsest_next = l + 1 == levels_.size();
  switch (type) {
    case CycleType::v:
      visit(l + 1, b_coarse, x_coarse, true, CycleType::v, timer);
      break;
    case CycleType::w:
      visit(l + 1, b_coarse, x_coarse, true, CycleType::w, timer);
      if (!coarsest_next) visit(l + 1, b_coarse, x_coarse, false, CycleType::w, timer);
      break;
    case CycleType::f:
      visit(l + 1, b_coarse, x_coarse, true, CycleType::f, timer);
      if (!coarsest_next) visit(l + 1, b_coarse, x_coarse, false, CycleType::v, timer);
      break;
  }
  CycleTimer::time(timer, l, Component::prolongation, [&] { level.prolongate_add(x_coarse, x); });
  CycleTimer::time(timer, l, Component::post_smoothing, [&] {
    for (int s = 0; s < parameters_.post_sweeps; ++s) level.post_smoother().smooth(b, x, false);
  });
}

}  // namespace kryflow
