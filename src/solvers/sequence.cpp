// Sequences of systems: the reuse policy, and the host thread that rebuilds a preconditioner
// with a host factorization while the device solves.
#include "kryflow/solvers/sequence.hpp"

#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <stop_token>
#include <thread>
#include <utility>

#include "kryflow/core/error.hpp"

namespace kryflow {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

void validate(const ReusePolicy& policy) {
  if (policy.rebuild_every < 0) throw ConfigError("reuse", "rebuild_every must be >= 0");
  if (policy.iteration_growth != 0.0 && !(policy.iteration_growth > 1.0)) {
    throw ConfigError("reuse", "iteration_growth must be 0 (off) or > 1");
  }
}

}  // namespace

ReusePolicy ReusePolicy::parse(const std::string& text) {
  ReusePolicy policy;
  if (text == "never") return policy;
  if (text == "always") {
    policy.rebuild_every = 1;
    return policy;
  }
  const auto fail = [&text]() -> ConfigError {
    return ConfigError("reuse", "'" + text +
                                    "' is not one of never, always, every:K, growth:G, "
                                    "every:K,growth:G (K >= 1, G > 1)");
  };
  if (text.empty() || text.back() == ',') throw fail();
  std::size_t begin = 0;
  bool any = false;
  while (begin < text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    const std::size_t colon = item.find(':');
    if (colon == std::string::npos) throw fail();
    const std::string key = item.substr(0, colon), value = item.substr(colon + 1);
    try {
      std::size_t used = 0;
      if (key == "every") {
        policy.rebuild_every = std::stoi(value, &used);
        if (policy.rebuild_every < 1) throw fail();
      } else if (key == "growth") {
        policy.iteration_growth = std::stod(value, &used);
        if (!(policy.iteration_growth > 1.0)) throw fail();
      } else {
        throw fail();
      }
      if (used != value.size()) throw fail();
    } catch (const std::logic_error&) {  // stoi / stod: not a number, out of range
      throw fail();
    }
    any = true;
    begin = end + 1;
  }
  if (!any) throw fail();
  return policy;
}

std::string ReusePolicy::to_string() const {
  if (rebuild_every == 0 && iteration_growth == 0.0) return "never";
  std::string text;
  if (rebuild_every > 0) text = "every:" + std::to_string(rebuild_every);
  if (iteration_growth > 0.0) {
    char growth[32];
    std::snprintf(growth, sizeof growth, "%g", iteration_growth);
    text += (text.empty() ? "" : ",") + std::string("growth:") + growth;
  }
  return text;
}

const char* to_string(PreconditionerAction action) {
  switch (action) {
    case PreconditionerAction::built:
      return "built";
    case PreconditionerAction::rebuilt:
      return "rebuilt";
    case PreconditionerAction::reused:
      return "reused";
    case PreconditionerAction::swapped_in:
      return "swapped in";
  }
  return "?";
}

/// The host thread and what it hands over. The thread touches only `done`, `result` and
/// `error` (under the mutex) besides its own copy of the values and the const
/// factor_on_host; the main thread installs the result only after `done`.
struct SequenceSolver::Builder {
  Clock::time_point start = Clock::now();  // of the sequence
  std::vector<BuilderRun> runs;
  std::jthread thread;
  mutable std::mutex mutex;
  bool done = false;
  std::unique_ptr<HostFactorization> result;
  std::exception_ptr error;
  Clock::time_point finished_at;

  bool running() const {
    if (!thread.joinable()) return false;
    std::lock_guard<std::mutex> lock(mutex);
    return !done;
  }
  void launch(const Preconditioner& M, HostCsrMatrix values, int system) {
    stop();
    done = false;
    result.reset();
    error = nullptr;
    runs.push_back({system, seconds_between(start, Clock::now()), 0.0, false});
    thread = std::jthread([this, &M, values = std::move(values)](std::stop_token token) {
      std::unique_ptr<HostFactorization> made;
      std::exception_ptr failure;
      try {
        made = M.factor_on_host(values, token);
      } catch (...) {
        failure = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mutex);
      result = std::move(made);
      error = failure;
      finished_at = Clock::now();
      done = true;
    });
  }
  /// Stops the thread (its result is dropped) and joins it.
  void stop() {
    if (!thread.joinable()) return;
    thread.request_stop();
    thread.join();
    if (!runs.empty() && runs.back().end == 0.0) {
      runs.back().end = seconds_between(start, finished_at);
    }
    thread = std::jthread();
  }
};

SequenceSolver::SequenceSolver(const KrylovSolver& solver, Preconditioner& M, ReusePolicy policy)
    : solver_(solver), M_(M), policy_(policy), builder_(std::make_unique<Builder>()) {
  validate(policy_);
}

SequenceSolver::~SequenceSolver() {
  try {
    finish();
  } catch (...) {
    // A destructor must not throw; finish() only joins.
  }
}

void SequenceSolver::finish() {
  if (builder_) builder_->stop();
  finished_ = true;
}

bool SequenceSolver::builder_running() const {
  return builder_->running();
}

const std::vector<BuilderRun>& SequenceSolver::builder_runs() const {
  return builder_->runs;
}

const std::vector<SequenceStep>& SequenceSolver::steps() const {
  return steps_;
}

SequenceStep SequenceSolver::solve(const CsrMatrix& A, const Vector& b, Vector& x) {
  if (finished_) throw InvalidInput("SequenceSolver::solve after finish()");
  if (A.num_rows() != A.num_cols()) {
    throw DimensionMismatch("SequenceSolver: A is " + std::to_string(A.num_rows()) + " x " +
                            std::to_string(A.num_cols()) + ", not square");
  }
  if (n_ >= 0 && (A.num_rows() != n_ || A.nnz() != nnz_)) {
    throw DimensionMismatch("SequenceSolver: system " + std::to_string(steps_.size()) + " has " +
                            std::to_string(A.num_rows()) + " rows and " + std::to_string(A.nnz()) +
                            " entries; the sequence has " + std::to_string(n_) + " and " +
                            std::to_string(nnz_) + " (one pattern for the whole sequence)");
  }
  Builder& builder = *builder_;
  SequenceStep step;
  step.index = static_cast<int>(steps_.size());
  const Clock::time_point before = Clock::now();
  bool fresh = false;  // a new preconditioner for this solve: its iterations are the baseline
  if (n_ < 0) {
    M_.setup(A);
    n_ = A.num_rows();
    nnz_ = A.nnz();
    step.action = PreconditionerAction::built;
    built_from_ = step.index;
    fresh = true;
  } else {
    // A finished host rebuild is installed first (never waited for).
    if (builder.thread.joinable()) {
      std::unique_lock<std::mutex> lock(builder.mutex);
      if (builder.done) {
        std::unique_ptr<HostFactorization> result = std::move(builder.result);
        std::exception_ptr error = builder.error;
        lock.unlock();
        builder.stop();  // joins a thread that has ended
        if (error) std::rethrow_exception(error);
        if (result) {
          M_.install(std::move(result), A.backend());
          builder.runs.back().installed = true;
          step.action = PreconditionerAction::swapped_in;
          built_from_ = builder.runs.back().system;  // its age counts from those values
          fresh = true;
        }
      }
    }
    // Due by age (a host rebuild just swapped in may already be old: the builder then starts
    // again from the latest values) or by the growth of the last solve's iterations over the
    // first with the current preconditioner (not judged right after a swap).
    const bool swapped = step.action == PreconditionerAction::swapped_in;
    const bool due =
        (policy_.rebuild_every > 0 && step.index - built_from_ >= policy_.rebuild_every) ||
        (!swapped && policy_.iteration_growth > 0.0 && !steps_.empty() &&
         baseline_iterations_ > 0 &&
         steps_.back().report.iterations > policy_.iteration_growth * baseline_iterations_);
    if (due) {
      if (policy_.asynchronous && M_.has_host_factorization()) {
        // One rebuild at a time: while one is in flight (or finished and not yet swapped in,
        // which the next solve does) the request is already being served.
        if (!builder.thread.joinable()) {
          if (host_pattern_.row_ptr.empty()) {
            host_pattern_ = HostCsrMatrix{n_, A.row_ptr().to_host(), A.col_idx().to_host(), {}};
          }
          HostCsrMatrix values = host_pattern_;
          values.values = A.values_to_host();
          builder.launch(M_, std::move(values), step.index);
          step.rebuild_started = true;
        }
      } else {
        M_.update_values(A);
        step.action = PreconditionerAction::rebuilt;
        built_from_ = step.index;
        fresh = true;
      }
    }
  }
  const Clock::time_point solve_begin = Clock::now();
  step.preconditioner_seconds = seconds_between(before, solve_begin);
  step.report = solver_.solve(A, M_, b, x);
  const Clock::time_point solve_end = Clock::now();
  step.solve_begin = seconds_between(builder.start, solve_begin);
  step.solve_end = seconds_between(builder.start, solve_end);
  if (fresh) baseline_iterations_ = step.report.iterations;
  // A host rebuild that finished during the solve is dated from its own clock.
  if (builder.thread.joinable()) {
    std::lock_guard<std::mutex> lock(builder.mutex);
    if (builder.done && builder.runs.back().end == 0.0) {
      builder.runs.back().end = seconds_between(builder.start, builder.finished_at);
    }
  }
  steps_.push_back(step);
  return step;
}

}  // namespace kryflow
