// Text and JSON summaries of solves, spectral-element solves and matrix analyses, and the live
// progress line.
#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace kryflow::cli {
namespace {

/// printf-style formatting into a std::string.
template <class... Args>
std::string format(const char* pattern, Args... args) {
  const int size = std::snprintf(nullptr, 0, pattern, args...);
  std::string text(static_cast<std::size_t>(size > 0 ? size : 0), '\0');
  std::snprintf(text.data(), text.size() + 1, pattern, args...);
  return text;
}

std::string line(const char* key, const std::string& value) {
  return format("  %-19s", key) + value + "\n";
}

std::string seconds_text(double seconds) {
  if (seconds < 1e-3) return format("%.1f us", seconds * 1e6);
  if (seconds < 1.0) return format("%.2f ms", seconds * 1e3);
  return format("%.3f s", seconds);
}

double seconds_per_iteration(const SolveReport& r) {
  return r.iterations > 0 ? r.solve_seconds / r.iterations : 0.0;
}

double spmv_bandwidth(const SolveSummary& s) {
  return s.spmv_seconds > 0.0 ? s.spmv_bytes / s.spmv_seconds : 0.0;
}

/// NaN and Inf have no JSON form; they become null.
nlohmann::json finite_or_null(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

std::string declared_text(const std::string& declared) {
  return declared.empty() ? "" : " (" + declared + ")";
}

/// `text` (lines ending in '\n') with every line indented by two spaces.
std::string indented(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::size_t stop = end == std::string::npos ? text.size() : end;
    out += "  " + text.substr(start, stop - start) + "\n";
    start = stop + 1;
  }
  return out;
}

}  // namespace

std::string symmetry_text(const MatrixProperties& p) {
  if (p.num_rows != p.num_cols) return "not square";
  if (p.asymmetry == 0.0) return "symmetric";
  if (p.numerically_symmetric()) return format("symmetric (asymmetry %.1e)", p.asymmetry);
  return format("nonsymmetric%s (asymmetry %.2e)",
                p.pattern_symmetric ? " values on a symmetric pattern" : "", p.asymmetry);
}

std::string solve_text(const SolveSummary& s) {
  const SolveReport& r = s.report;
  const MatrixProperties& p = s.properties;
  std::string text = "kryflow solve\n";
  text += line("matrix", s.matrix +
                             format(": %d x %d, %lld nonzeros, ", p.num_rows, p.num_cols,
                                    static_cast<long long>(p.nnz)) +
                             symmetry_text(p));
  text += line("right-hand side", s.rhs);
  text += line("backend", s.backend + ", device: " + s.device);
  text += line("format", s.format + (s.format_reason.empty() ? "" : ": " + s.format_reason));
  text += line("solver", s.solver_choice_reason);
  text += line("configuration", s.config.dump());
  text += line("setup", seconds_text(r.setup_seconds));
  if (!s.preconditioner_summary.empty()) text += indented(s.preconditioner_summary);
  text += line("solve", seconds_text(r.solve_seconds) + format(", %d iterations, ", r.iterations) +
                            seconds_text(seconds_per_iteration(r)) + " per iteration");
  text += line("status", std::string(to_string(r.status)) + ": " + r.reason);
  text += line("residual", format("recursive %.3e, true %.3e (relative to ||b|| = %.3e); "
                                  "convergence rate %.4f per iteration",
                                  r.relative_residual(), r.true_relative_residual(), r.rhs_norm,
                                  r.convergence_rate()));
  if (s.max_error) text += line("error", format("max |x_i - x*_i| = %.3e", *s.max_error));
  const double spmv = spmv_bandwidth(s);
  std::string spmv_line = format("%.1f GB/s (%.1f MB in %s)", spmv / 1e9, s.spmv_bytes / 1e6,
                                 seconds_text(s.spmv_seconds).c_str());
  if (s.copy.bytes_per_second) {
    const double copy = *s.copy.bytes_per_second;
    spmv_line +=
        format(", %.0f%% of the %.1f GB/s copy bandwidth", 100.0 * spmv / copy, copy / 1e9);
    if (spmv > copy) spmv_line += " (above it: the data of one SpMV stays in cache)";
  } else {
    spmv_line += "; copy bandwidth " + s.copy.note;
  }
  text += line("SpMV", spmv_line);
  return text;
}

nlohmann::json solve_json(const SolveSummary& s) {
  const SolveReport& r = s.report;
  const MatrixProperties& p = s.properties;
  const double spmv = spmv_bandwidth(s);
  nlohmann::json j;
  j["matrix"] = {{"source", s.matrix},
                 {"rows", p.num_rows},
                 {"cols", p.num_cols},
                 {"nnz", p.nnz},
                 {"symmetric", p.numerically_symmetric()},
                 {"symmetry", symmetry_text(p)}};
  j["rhs"] = s.rhs;
  j["backend"] = s.backend;
  j["format"] = {{"format", s.format}, {"reason", s.format_reason}};
  j["device"] = s.device;
  j["matrix"]["constant_null_space"] = p.constant_null_space;
  j["solver_choice"] = {
      {"source", s.solver_choice},
      {"reason", s.solver_choice_reason},
      {"advised_preset", p.suggested_solver},
      {"advised_overrides", p.suggested_overrides},
      {"advised_pin_unknown", p.suggested_pin_unknown > 0 ? nlohmann::json(p.suggested_pin_unknown)
                                                          : nlohmann::json(nullptr)},
      {"advised_arguments", advice_arguments(p)}};
  j["config"] = s.config;
  j["setup_seconds"] = r.setup_seconds;
  j["preconditioner_summary"] = s.preconditioner_summary;
  j["solve_seconds"] = r.solve_seconds;
  j["iterations"] = r.iterations;
  j["seconds_per_iteration"] = seconds_per_iteration(r);
  j["status"] = to_string(r.status);
  j["converged"] = r.converged();
  j["reason"] = r.reason;
  j["rhs_norm"] = finite_or_null(r.rhs_norm);
  j["relative_residual"] = finite_or_null(r.relative_residual());
  j["true_relative_residual"] = finite_or_null(r.true_relative_residual());
  j["convergence_rate"] = finite_or_null(r.convergence_rate());
  j["max_error"] = s.max_error ? finite_or_null(*s.max_error) : nlohmann::json(nullptr);
  j["spmv"] = {
      {"bytes", s.spmv_bytes},
      {"seconds", s.spmv_seconds},
      {"gb_per_s", spmv / 1e9},
      {"copy_gb_per_s", s.copy.bytes_per_second ? nlohmann::json(*s.copy.bytes_per_second / 1e9)
                                                : nlohmann::json(nullptr)},
      {"copy_buffer_bytes", s.copy.buffer_bytes},
      {"fraction_of_copy", s.copy.bytes_per_second ? nlohmann::json(spmv / *s.copy.bytes_per_second)
                                                   : nlohmann::json(nullptr)},
      {"copy_note", s.copy.note}};
  nlohmann::json history = nlohmann::json::array();
  for (double norm : r.residual_history) history.push_back(finite_or_null(norm));
  j["residual_history"] = std::move(history);
  return j;
}

namespace {

std::string bounding_box_text(const SemSummary& s) {
  return format("[%g, %g] x [%g, %g] x [%g, %g]", s.lower[0], s.upper[0], s.lower[1], s.upper[1],
                s.lower[2], s.upper[2]);
}

std::string problem_text(const SemSummary& s) {
  return format(
      "-Laplace(u) = f with u = sin(k x + 0.3) sin(k y + 0.7) sin(k z + 1.1), f = 3 k^2 u, "
      "k = pi / L = %.6g (L = %g, the largest bounding-box extent); u on the Dirichlet points "
      "(lifted), x0 = 0",
      s.wavenumber, s.extent);
}

double sem_seconds_per_iteration(const SemSummary& s) {
  return seconds_per_iteration(s.report);
}

double ns_per_dof_per_iteration(const SemSummary& s) {
  return s.dofs > 0 ? sem_seconds_per_iteration(s) / static_cast<double>(s.dofs) * 1e9 : 0.0;
}

double apply_bandwidth(const SemSummary& s) {
  return s.apply_seconds > 0.0 ? s.apply_bytes / s.apply_seconds : 0.0;
}

double ns_per_dof(const SemSummary& s, double seconds) {
  return s.dofs > 0 ? seconds / static_cast<double>(s.dofs) * 1e9 : 0.0;
}

double apply_gdofs(const SemSummary& s) {
  return s.apply_seconds > 0.0 ? static_cast<double>(s.dofs) / s.apply_seconds / 1e9 : 0.0;
}

/// The seconds per cycle of the components of the profiled cycle, summed.
double cycle_seconds(const SemSummary& s) {
  double total = 0.0;
  for (const CycleComponentTime& c : s.cycle_components) total += c.seconds;
  return total;
}

/// The share of the cycle of the components' kinds: smoothing (pre and post), the level
/// operator (the residual), the transfers (restriction and prolongation) and the coarse solve.
struct CycleKinds {
  double smoothing = 0.0, level_operator = 0.0, transfer = 0.0, coarse_solve = 0.0;
};

CycleKinds cycle_kinds(const SemSummary& s) {
  CycleKinds kinds;
  for (const CycleComponentTime& c : s.cycle_components) {
    if (c.component == "pre_smoothing" || c.component == "post_smoothing") {
      kinds.smoothing += c.seconds;
    } else if (c.component == "residual") {
      kinds.level_operator += c.seconds;
    } else if (c.component == "restriction" || c.component == "prolongation") {
      kinds.transfer += c.seconds;
    } else {
      kinds.coarse_solve += c.seconds;
    }
  }
  return kinds;
}

double share(double seconds, double total) {
  return total > 0.0 ? seconds / total : 0.0;
}

const CycleLevel* cycle_level(const SemSummary& s, std::size_t level) {
  return level < s.cycle_levels.size() ? &s.cycle_levels[level] : nullptr;
}

std::string cycle_components_text(const SemSummary& s) {
  const double total = cycle_seconds(s);
  const CycleKinds kinds = cycle_kinds(s);
  std::string text =
      line("cycle components",
           format("median of %d cycles on b after the solve: %s per cycle; smoothing %.1f%%, "
                  "operator %.1f%%, transfer %.1f%%, coarse solve %.1f%%",
                  s.profiled_cycles, seconds_text(total).c_str(),
                  100.0 * share(kinds.smoothing, total), 100.0 * share(kinds.level_operator, total),
                  100.0 * share(kinds.transfer, total), 100.0 * share(kinds.coarse_solve, total)));
  text += "    level  order  unknowns  component         ms per cycle   share\n";
  for (const CycleComponentTime& c : s.cycle_components) {
    const CycleLevel* level = cycle_level(s, c.level);
    const std::string order =
        level != nullptr && level->order > 0 ? std::to_string(level->order) : "-";
    text += format("    %5zu  %5s  %8lld  %-16s  %12.4f  %5.1f%%\n", c.level, order.c_str(),
                   static_cast<long long>(level != nullptr ? level->unknowns : 0),
                   c.component.c_str(), c.seconds * 1e3, 100.0 * share(c.seconds, total));
  }
  return text;
}

nlohmann::json cycle_components_json(const SemSummary& s) {
  const double total = cycle_seconds(s);
  const CycleKinds kinds = cycle_kinds(s);
  nlohmann::json levels = nlohmann::json::array();
  for (std::size_t l = 0; l < s.cycle_levels.size(); ++l) {
    const CycleLevel& level = s.cycle_levels[l];
    levels.push_back(
        {{"level", l},
         {"unknowns", level.unknowns},
         {"order", level.order > 0 ? nlohmann::json(level.order) : nlohmann::json(nullptr)}});
  }
  nlohmann::json components = nlohmann::json::array();
  for (const CycleComponentTime& c : s.cycle_components) {
    components.push_back({{"level", c.level},
                          {"component", c.component},
                          {"seconds", c.seconds},
                          {"share", share(c.seconds, total)}});
  }
  return {{"cycles", s.profiled_cycles},
          {"seconds_per_cycle", total},
          {"share",
           {{"smoothing", share(kinds.smoothing, total)},
            {"operator", share(kinds.level_operator, total)},
            {"transfer", share(kinds.transfer, total)},
            {"coarse_solve", share(kinds.coarse_solve, total)}}},
          {"levels", std::move(levels)},
          {"components", std::move(components)}};
}

}  // namespace

std::string sem_text(const SemSummary& s) {
  const SolveReport& r = s.report;
  std::string text = "kryflow sem\n";
  std::string mesh = s.mesh_source;
  if (!s.mesh_version.empty()) mesh += " (" + s.mesh_version + ")";
  mesh += format(": %lld elements, %lld curved-side records (ignored: elements are trilinear)",
                 static_cast<long long>(s.elements), static_cast<long long>(s.curved_side_records));
  text += line("mesh", mesh);
  text += line("bounding box", bounding_box_text(s));
  text += line("deformation", s.deformation);
  text += line("order", format("p = %d", s.order));
  text +=
      line("points", format("%lld DoFs (global points), %lld local points, %lld Dirichlet "
                            "points",
                            static_cast<long long>(s.dofs), static_cast<long long>(s.local_points),
                            static_cast<long long>(s.dirichlet_points)));
  text += line("Dirichlet faces", s.dirichlet);
  text += line("problem", problem_text(s));
  text += line("backend", s.backend + ", device: " + s.device);
  text += line("kernels", s.kernels);
  text += line("solver", s.solver + ", preconditioner " + s.preconditioner +
                             format(", relative tolerance %g, at most %d iterations",
                                    s.relative_tolerance, s.max_iterations));
  if (!s.preconditioner_summary.empty()) text += s.preconditioner_summary;
  text += line("setup", "operator " + seconds_text(s.operator_setup_seconds) + ", preconditioner " +
                            seconds_text(s.preconditioner_setup_seconds) +
                            (s.solver_setup_seconds > 0.0
                                 ? ", solver " + seconds_text(s.solver_setup_seconds)
                                 : std::string(", no solver setup (--cold-solve)")));
  text += line("solve", seconds_text(r.solve_seconds) + format(", %d iterations, ", r.iterations) +
                            seconds_text(sem_seconds_per_iteration(s)) +
                            format(" per iteration, %.3f ns per DoF per iteration",
                                   ns_per_dof_per_iteration(s)));
  text += line("time to solution",
               format("%.2f ns per DoF (solve), %.2f with the preconditioner's and solver's setup",
                      ns_per_dof(s, r.solve_seconds),
                      ns_per_dof(s, r.solve_seconds + s.preconditioner_setup_seconds +
                                        s.solver_setup_seconds)));
  if (!s.repeated_solve_seconds.empty()) {
    std::vector<double> t = s.repeated_solve_seconds;
    std::sort(t.begin(), t.end());
    const double median = t[t.size() / 2];
    text +=
        line("repeated solves",
             format("%zu more from x0 = 0: median ", t.size()) + seconds_text(median) +
                 format(" (%.2f ns per DoF), fastest ", ns_per_dof(s, median)) +
                 seconds_text(t.front()) + format(" (%.2f ns per DoF)", ns_per_dof(s, t.front())));
    const bool same = std::all_of(s.repeated_iterations.begin(), s.repeated_iterations.end(),
                                  [&](int k) { return k == r.iterations; });
    if (!same || !s.repeated_notes.empty()) {
      std::string iterations;
      for (const int k : s.repeated_iterations) iterations += " " + std::to_string(k);
      std::string notes;
      for (const auto& n : s.repeated_notes) notes += "; " + n;
      text += line("", "their iterations:" + iterations + notes);
    }
  }
  text += line("status", std::string(to_string(r.status)) + ": " + r.reason);
  text += line("residual", format("recursive %.3e, true %.3e (||b - A x|| / ||b|| from a separate "
                                  "apply, ||b|| = %.3e)",
                                  r.relative_residual(), s.true_relative_residual, r.rhs_norm));
  text += line("error", format("max |x - u| = %.3e over all points", s.max_error));
  const double bandwidth = apply_bandwidth(s);
  std::string op = seconds_text(s.apply_seconds) +
                   format(" per apply (median), %.3f GDoF/s, %.1f GB/s (%.1f MB per apply)",
                          apply_gdofs(s), bandwidth / 1e9, s.apply_bytes / 1e6);
  if (s.copy.bytes_per_second) {
    const double copy = *s.copy.bytes_per_second;
    op += format(", %.0f%% of the %.1f GB/s copy bandwidth", 100.0 * bandwidth / copy, copy / 1e9);
    if (bandwidth > copy) op += " (above it: the operator's data stay in cache)";
  } else {
    op += "; copy bandwidth " + s.copy.note;
  }
  text += line("operator", op);
  if (!s.cycle_components.empty()) text += cycle_components_text(s);
  return text;
}

nlohmann::json sem_json(const SemSummary& s) {
  const SolveReport& r = s.report;
  const double bandwidth = apply_bandwidth(s);
  nlohmann::json j;
  j["mesh"] = {{"source", s.mesh_source},
               {"version", s.mesh_version},
               {"elements", s.elements},
               {"curved_side_records_ignored", s.curved_side_records},
               {"bounding_box", {{"lower", s.lower}, {"upper", s.upper}}},
               {"deformation", s.deformation}};
  j["order"] = s.order;
  j["problem"] = problem_text(s);
  j["wavenumber"] = s.wavenumber;
  j["dofs"] = s.dofs;
  j["local_points"] = s.local_points;
  j["dirichlet_points"] = s.dirichlet_points;
  j["dirichlet_faces"] = s.dirichlet;
  j["backend"] = s.backend;
  j["device"] = s.device;
  j["kernels"] = s.kernels;
  j["solver"] = s.solver;
  j["preconditioner"] = s.preconditioner;
  if (!s.preconditioner_summary.empty()) j["preconditioner_summary"] = s.preconditioner_summary;
  if (!s.configuration.is_null()) j["configuration"] = s.configuration;
  j["ns_per_dof"] = {
      {"solve", ns_per_dof(s, r.solve_seconds)},
      {"setup_and_solve",
       ns_per_dof(s, r.solve_seconds + s.preconditioner_setup_seconds + s.solver_setup_seconds)}};
  j["relative_tolerance"] = s.relative_tolerance;
  j["max_iterations"] = s.max_iterations;
  j["setup_seconds"] = {{"operator", s.operator_setup_seconds},
                        {"preconditioner", s.preconditioner_setup_seconds},
                        {"solver", s.solver_setup_seconds}};
  j["solve_seconds"] = r.solve_seconds;
  if (!s.repeated_solve_seconds.empty()) {
    j["repeated_solve_seconds"] = s.repeated_solve_seconds;
    j["repeated_iterations"] = s.repeated_iterations;
  }
  j["iterations"] = r.iterations;
  j["status"] = to_string(r.status);
  j["converged"] = r.converged();
  j["reason"] = r.reason;
  j["seconds_per_iteration"] = sem_seconds_per_iteration(s);
  j["ns_per_dof_per_iteration"] = ns_per_dof_per_iteration(s);
  j["rhs_norm"] = finite_or_null(r.rhs_norm);
  j["relative_residual"] = finite_or_null(r.relative_residual());
  j["true_relative_residual"] = finite_or_null(s.true_relative_residual);
  j["max_error"] = finite_or_null(s.max_error);
  j["operator"] = {
      {"seconds_per_apply", s.apply_seconds},
      {"gdof_per_s", apply_gdofs(s)},
      {"bytes_per_apply", s.apply_bytes},
      {"gb_per_s", bandwidth / 1e9},
      {"copy_gb_per_s", s.copy.bytes_per_second ? nlohmann::json(*s.copy.bytes_per_second / 1e9)
                                                : nlohmann::json(nullptr)},
      {"copy_buffer_bytes", s.copy.buffer_bytes},
      {"fraction_of_copy", s.copy.bytes_per_second
                               ? nlohmann::json(bandwidth / *s.copy.bytes_per_second)
                               : nlohmann::json(nullptr)},
      {"copy_note", s.copy.note}};
  if (!s.cycle_components.empty()) j["cycle_components"] = cycle_components_json(s);
  return j;
}

std::string advice_arguments(const MatrixProperties& p) {
  if (p.suggested_solver == "none") return "";
  std::string arguments = "--preset " + p.suggested_solver;
  if (!p.suggested_format.empty()) arguments += " --format " + p.suggested_format;
  for (const std::string& assignment : p.suggested_overrides) arguments += " -p " + assignment;
  if (p.suggested_pin_unknown > 0) {
    arguments += " --pin-unknown " + std::to_string(p.suggested_pin_unknown);
  }
  return arguments;
}

std::string row_sums_text(const MatrixProperties& p) {
  std::string text =
      format("%d of %d rows sum to zero (within %.0e of the row's magnitude)", p.zero_row_sum_rows,
             p.num_rows, MatrixProperties::zero_row_sum_tolerance);
  if (p.constant_null_space) {
    text +=
        ": A 1 = 0, so A is singular with the constants in its null space; fix one unknown "
        "(--pin-unknown 1)";
  }
  return text;
}

std::string format_label(const FormatAdvice& f) {
  if (f.format == "bsr") return "BSR-" + std::to_string(f.block_size);
  if (f.format == "sell") {
    return "SELL-" + std::to_string(f.slice_height) + "-" + std::to_string(f.sigma);
  }
  return "CSR";
}

std::string info_text(const std::string& file, const std::string& declared,
                      const MatrixProperties& p, const FormatAdvice& f) {
  const auto& rows = p.row_lengths;
  std::string text = "kryflow info\n";
  text += line("file", file + declared_text(declared));
  text += line("size", format("%d rows x %d columns, %lld nonzeros", p.num_rows, p.num_cols,
                              static_cast<long long>(p.nnz)));
  text += line("row lengths", format("min %d, mean %.2f, max %d; %d empty rows", rows.min,
                                     rows.mean, rows.max, rows.empty_rows));
  text += line("symmetry", symmetry_text(p) + (p.pattern_symmetric ? ", pattern symmetric"
                                                                   : ", pattern nonsymmetric"));
  text += line("diagonal", format("%d positive, %d negative, %d zero or missing; %d of %d rows "
                                  "diagonally dominant",
                                  p.positive_diagonal, p.negative_diagonal, p.missing_diagonal,
                                  p.diagonally_dominant_rows, p.num_rows));
  if (p.jacobi_coupling > 0.0) {
    std::string coupling =
        format("median %.3g over the %s (below 1: diagonally dominant)", p.jacobi_coupling,
               p.block_size >= 2 ? "block rows of sum_J ||D_I^-1 A_IJ||_inf"
                                 : "rows of sum_j |a_ij| / |a_ii|");
    if (p.ilut_growth > 0.0) {
      coupling += std::isfinite(p.ilut_growth)
                      ? format("; ILUT growth ||(LU)^-1 A v|| / ||v|| = %.3g", p.ilut_growth)
                      : std::string("; ILUT growth infinite (zero pivot or overflow)");
    }
    text += line("Jacobi coupling", coupling);
  }
  text += line("non-finite values", p.has_nonfinite ? "present (NaN or Inf)" : "none");
  text += line("row sums", row_sums_text(p));
  text += line("suggested preset", p.suggested_solver + ": " + p.suggestion_reason);
  if (p.suggested_solver != "none") {
    text += line("suggested command", "kryflow solve -A " + file + " " + advice_arguments(p));
  }
  text += line("SpMV format", format_label(f) + ": " + f.reason);
  return text;
}

nlohmann::json info_json(const std::string& file, const std::string& declared,
                         const MatrixProperties& p, const FormatAdvice& f) {
  return {{"file", file},
          {"declared", declared},
          {"rows", p.num_rows},
          {"cols", p.num_cols},
          {"nnz", p.nnz},
          {"row_lengths",
           {{"min", p.row_lengths.min},
            {"mean", p.row_lengths.mean},
            {"max", p.row_lengths.max},
            {"empty_rows", p.row_lengths.empty_rows}}},
          {"pattern_symmetric", p.pattern_symmetric},
          {"asymmetry", finite_or_null(p.asymmetry)},
          {"symmetric", p.numerically_symmetric()},
          {"positive_diagonal", p.positive_diagonal},
          {"negative_diagonal", p.negative_diagonal},
          {"missing_diagonal", p.missing_diagonal},
          {"diagonally_dominant_rows", p.diagonally_dominant_rows},
          {"jacobi_coupling", p.jacobi_coupling},
          {"ilut_growth", finite_or_null(p.ilut_growth)},
          {"has_nonfinite", p.has_nonfinite},
          {"zero_row_sum_rows", p.zero_row_sum_rows},
          {"constant_null_space", p.constant_null_space},
          {"suggested_preset", p.suggested_solver},
          {"suggested_overrides", p.suggested_overrides},
          {"suggested_pin_unknown", p.suggested_pin_unknown > 0
                                        ? nlohmann::json(p.suggested_pin_unknown)
                                        : nlohmann::json(nullptr)},
          {"suggested_arguments", advice_arguments(p)},
          {"suggestion_reason", p.suggestion_reason},
          {"format",
           {{"format", f.format},
            {"label", format_label(f)},
            {"block_size", f.block_size},
            {"detected_block_size", f.detected_block_size},
            {"slice_height", f.slice_height},
            {"sigma", f.sigma},
            {"csr_bytes", f.csr_bytes},
            {"sell_bytes", f.sell_bytes},
            {"sell_padding", f.sell_padding},
            {"bsr_bytes", f.bsr_bytes},
            {"reason", f.reason}}}};
}

void ProgressLine::update(int iteration, double residual_norm, double rhs_norm) {
  if (!enabled_) return;
  if (iteration == 0) initial_residual_ = residual_norm;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_ = true;
  const double relative = rhs_norm > 0.0 ? residual_norm / rhs_norm : residual_norm;
  const double rate = iteration > 0 && initial_residual_ > 0.0
                          ? std::pow(residual_norm / initial_residual_, 1.0 / iteration)
                          : 0.0;
  std::fprintf(stderr, "\r  iteration %7d   relative residual %.3e   rate %.4f  ", iteration,
               relative, rate);
  std::fflush(stderr);
}

void ProgressLine::finish() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(stderr, "\r%70s\r", "");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace kryflow::cli
