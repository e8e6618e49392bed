// Building solvers from JSON configurations: the registry of solver and preconditioner types,
// configuration files, shipped presets, command-line overrides and the generated reference.
//
// A configuration nests like the composition it describes:
//
//   {"solver": {"type": "pcg", "max_iterations": 1000, "relative_tolerance": 1e-8,
//               "preconditioner": {"type": "jacobi", "omega": 1.0}}}
//
// Every key is optional (`{}` means PCG with Jacobi); unknown keys, wrong types, out-of-range
// values and unknown types are ConfigErrors naming the JSON path and the valid keys or choices.
// docs/config.md is config_reference_markdown().
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kryflow/preconditioners/preconditioner.hpp"
#include "kryflow/solvers/krylov_solver.hpp"

namespace kryflow::config {

/// A solver and its preconditioner built from a configuration, plus the configuration with every
/// default filled in (echo it in reports so any run can be reproduced).
/// The preconditioner is not set up: call `preconditioner->setup(A)` before solving.
struct SolverSetup {
  std::unique_ptr<KrylovSolver> solver;
  std::unique_ptr<Preconditioner> preconditioner;
  nlohmann::json resolved;
};

/// Builds the solver and preconditioner `config` describes (missing keys take their defaults).
/// Throws ConfigError naming the JSON path (e.g. "solver.preconditioner.omega") and listing the
/// valid keys, range or choices, for an unknown key or type, a value of the wrong type or out of
/// range, and for inconsistent stopping criteria. build_solver(r.resolved).resolved == r.resolved.
SolverSetup build_solver(const nlohmann::json& config);

/// The fully resolved default configuration (what build_solver({}) resolves to).
nlohmann::json default_config();

/// Parses a JSON file. Throws InvalidInput when the file cannot be opened and ConfigError
/// ("file: line L, column C: problem") on a JSON syntax error. The content is not validated here
/// (build_solver does that).
nlohmann::json load_config_file(const std::filesystem::path& file);

/// The folder holding the shipped presets: the environment variable KRYFLOW_PRESET_DIR when set
/// and non-empty, else the source tree's configs/ folder chosen at build time.
std::filesystem::path preset_directory();

/// Names of the presets in preset_directory() (file names without ".json"), sorted.
std::vector<std::string> preset_names();

/// Loads preset `name` (preset_directory() / (name + ".json")). Throws ConfigError (path
/// "preset") listing the available presets when there is no such preset, and what
/// load_config_file throws otherwise.
nlohmann::json load_preset(const std::string& name);

/// Applies one command-line override "dotted.key=value" to `config`, creating intermediate
/// objects as needed: "solver.relative_tolerance=1e-10", "solver.preconditioner.type=identity".
/// The value is parsed as JSON when it parses (numbers, true/false, null, arrays, objects,
/// quoted strings), otherwise taken as a string. Keys are checked later by build_solver. Throws
/// ConfigError when the assignment has no '=', an empty key or an empty key segment, or when a
/// segment before the last names a value that is not an object.
void apply_override(nlohmann::json& config, const std::string& assignment);

/// The configuration `source` names, then `overrides` (apply_override's "key=value") in order:
/// an empty source is {} (every default); text whose first non-blank character is '{' is JSON
/// text; a source ending in ".json" is a configuration file (load_config_file); anything else
/// names a preset (load_preset). Throws ConfigError for invalid JSON text ("configuration: line
/// L, column C: ..."), an unknown preset or a bad override; InvalidInput for a file that cannot
/// be opened. The keys are checked later, by build_solver.
nlohmann::json resolve_configuration(const std::string& source,
                                     const std::vector<std::string>& overrides = {});

/// The Markdown reference of every configuration key, generated from the declarations
/// (docs/config.md holds its output; `kryflow config-doc` prints it).
std::string config_reference_markdown();

}  // namespace kryflow::config
