// What `kryflow solve` and `kryflow info` print: text and JSON summaries, and the live progress
// line.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kryflow/linalg/format_advisor.hpp"
#include "kryflow/linalg/matrix_analysis.hpp"
#include "kryflow/solvers/stop_criteria.hpp"

namespace kryflow::cli {

/// The backend's measured copy bandwidth, the roofline the SpMV bandwidth is compared with.
struct CopyBandwidth {
  std::optional<double> bytes_per_second;  ///< bytes read plus written per second; none: see note
  std::size_t buffer_bytes = 0;            ///< size of each of the two buffers copied
  std::string note;                        ///< why there is no measurement ("" when measured)
};

/// Everything a solve reports.
struct SolveSummary {
  std::string matrix;  ///< the file, or a description of the built-in problem
  MatrixProperties properties;
  std::string rhs;  ///< the file, or "A * 1"
  std::string backend;
  std::string device;
  std::string format;         ///< "CSR", "SELL-32-1", "BSR-4", with the stored precision
  std::string format_reason;  ///< why (the advisor's reason, or "chosen with --format")
  nlohmann::json config;      ///< the fully resolved configuration
  SolveReport report;
  std::optional<double> max_error;  ///< max_i |x_i - 1| when b = A * 1
  double spmv_bytes = 0.0;          ///< bytes one SpMV moves at least
  double spmv_seconds = 0.0;        ///< mean time of one SpMV after the solve
  CopyBandwidth copy;               ///< the backend's copy bandwidth, or why it is missing
};

/// "symmetric", "nonsymmetric (asymmetry 1.2e-03)", ...
std::string symmetry_text(const MatrixProperties& properties);

std::string solve_text(const SolveSummary& summary);
nlohmann::json solve_json(const SolveSummary& summary);

std::string info_text(const std::string& file, const std::string& declared,
                      const MatrixProperties& properties, const FormatAdvice& format);
nlohmann::json info_json(const std::string& file, const std::string& declared,
                         const MatrixProperties& properties, const FormatAdvice& format);
/// "CSR", "SELL-32-1" or "BSR-4": the advised format with its parameters.
std::string format_label(const FormatAdvice& format);

/// The `\r`-updated progress line on stderr (iteration, relative residual, convergence rate),
/// drawn at most 10 times a second; does nothing when disabled (stderr not a terminal).
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  ~ProgressLine() { finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool enabled() const noexcept { return enabled_; }
  /// The solver's monitor: iteration k, ||r_k|| and ||b||.
  void update(int iteration, double residual_norm, double rhs_norm);
  /// Erases the line (once).
  void finish();

 private:
  bool enabled_;
  bool drawn_ = false;
  double initial_residual_ = 0.0;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace kryflow::cli
