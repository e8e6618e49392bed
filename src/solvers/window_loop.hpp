// The iteration loop shared by the Krylov solvers with device-resident scalars: windows of
// check_every iterations, the first launched kernel by kernel and recorded while the device runs
// it, the later ones replayed from that record, each followed by an asynchronous copy of
// the scalars to the host; the next window is queued before the host checks the last one, so the
// device does not wait for the host's convergence test, except where the residual's rate foresees
// convergence by the iterations already queued (WindowLoop::likely_done): the next window then
// waits for that check instead of running past the end.
#pragma once

#include <cstddef>
#include <functional>

#include "kryflow/core/backend.hpp"
#include "workspace.hpp"

namespace kryflow {

struct WindowLoop {
  WindowLoop(const Backend& backend_in, KrylovSolver::Workspace& workspace_in,
             const IterationOptions& options, int max_iterations_in, bool graphs_in,
             std::function<void(std::size_t)> enqueue_in)
      : backend(&backend_in),
        workspace(&workspace_in),
        check_every(options.check_every),
        max_iterations(max_iterations_in),
        graphs(graphs_in),
        enqueue(std::move(enqueue_in)) {}
  const Backend* backend = nullptr;
  KrylovSolver::Workspace* workspace = nullptr;  ///< its scalars are copied after each window
  int check_every = 1;
  int max_iterations = 0;
  bool graphs = false;  ///< record a full window once and replay it
  /// Queues iteration j (0-based) of a window; its results go to the slots of position j.
  std::function<void(std::size_t j)> enqueue;
  /// Optional: the most iterations the window after `done` queued iterations may have.
  std::function<int(int done)> limit;
  /// Optional: queued after the window that brings the queued iterations to `done`.
  std::function<void(int done)> between;
  /// Optional: true when the iterations queued so far (`queued`) will probably end the method
  /// (KrylovSolver::likely_converged_by). The next window is then queued after the host's check
  /// of the last one instead of ahead of it, so a converging solve does not run a window past
  /// its end (a wrong guess costs one wait for the host, not an iteration).
  std::function<bool(int queued)> likely_done;
  /// Tests the window of `window` iterations after `done` completed ones from the host copy of
  /// all scalars, in order; returns true when the iteration must end.
  std::function<bool(int done, std::size_t window, const double* host)> inspect;
};

/// Runs windows until `inspect` returns true (the device then finishes the window queued ahead,
/// if any: x may hold up to check_every iterations more than the report's) or max_iterations
/// are done.
void run_windows(const WindowLoop& loop);

}  // namespace kryflow
