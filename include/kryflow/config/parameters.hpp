// Parameter declarations and the three visitors that use them: strict JSON reader, resolved
// JSON writer and Markdown reference generator.
//
// Each component (a solver type, a preconditioner type) declares every parameter once, in its
// `declare(visitor)`: name, type, valid range or choices, one-line description; the default is the
// value the parameter holds in a default-constructed parameters object. The visitors below read,
// write and document those declarations, so the JSON reader, the resolved configuration and
// docs/config.md cannot disagree (the scheme follows AMGCL's parameter structs).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kryflow::config {

/// Valid values of a numeric parameter: an interval whose ends are optional, open or closed.
struct Range {
  std::optional<double> lower;
  bool lower_closed = true;
  std::optional<double> upper;
  bool upper_closed = true;

  static Range any() { return {}; }
  /// [value, inf)
  static Range at_least(double value) { return {value, true, std::nullopt, true}; }
  /// (value, inf)
  static Range greater_than(double value) { return {value, false, std::nullopt, true}; }
  /// [lower, upper)
  static Range closed_open(double lower, double upper) { return {lower, true, upper, false}; }

  bool contains(double value) const noexcept;
  /// ">= 0", "> 1", "[0, 1)", "any" (for messages and the Markdown reference).
  std::string describe() const;
};

class ParameterVisitor;
struct ComponentSlot;

/// The parameters of one component type. `declare` names every parameter once, in the order
/// they are read, written and documented.
class ComponentParameters {
 public:
  virtual ~ComponentParameters() = default;
  virtual void declare(ParameterVisitor& visitor) = 0;
};

/// One selectable type of a component family, e.g. "jacobi" among the preconditioners.
struct ComponentType {
  std::string name;
  std::string description;  ///< one or two sentences for the reference
  /// Parameters holding their defaults.
  std::function<std::unique_ptr<ComponentParameters>()> make_parameters;
};

/// The types one JSON object may select with its "type" key (e.g. the solvers).
struct ComponentFamily {
  std::string name;          ///< "solver", "preconditioner"
  std::string description;   ///< one sentence for the reference
  std::string default_type;  ///< the type a missing "type" key means
  std::vector<ComponentType> types;

  /// The type called `type_name`, or null.
  const ComponentType* find(const std::string& type_name) const;
  /// "pcg, bicgstab, gmres, fgmres", in declaration order.
  std::string type_list() const;
};

/// A nested component chosen by "type" (e.g. a solver's preconditioner) with its parameters.
/// Starts as the family's default type with default parameters.
struct ComponentSlot {
  explicit ComponentSlot(const ComponentFamily& family);
  /// Switches to `type_name` with default parameters. Throws ConfigError (path "type") when the
  /// family has no such type.
  void select(const std::string& type_name);

  const ComponentFamily* family;
  std::string type;
  std::unique_ptr<ComponentParameters> parameters;
};

/// What a component's `declare` calls, once per parameter. `value` holds the default on entry
/// (the reader overwrites it with the configured value).
class ParameterVisitor {
 public:
  virtual ~ParameterVisitor() = default;
  /// An integer parameter (32-bit) with its valid range.
  virtual void integer(const char* name, int& value, Range range, const char* description) = 0;
  /// A real parameter with its valid range.
  virtual void real(const char* name, double& value, Range range, const char* description) = 0;
  /// A string parameter whose value is one of `choices` (in the order they are documented).
  virtual void choice(const char* name, std::string& value, const std::vector<std::string>& choices,
                      const char* description) = 0;
  /// A nested component: a JSON object with a "type" key and that type's parameters.
  virtual void component(const char* name, ComponentSlot& slot, const char* description) = 0;
};

/// Reads `json` (an object) into `parameters`, strictly: a key not declared, a value of the wrong
/// JSON type, outside its range, not among its choices, or an unknown component type throws
/// ConfigError whose path is the JSON path (`path_prefix` + "." + key, e.g.
/// "solver.preconditioner.omega") and whose message lists the valid keys, the valid range or the
/// valid choices. Missing keys keep their defaults. Integer parameters accept any JSON number with
/// an integral value (1e4).
void read_json(const nlohmann::json& json, ComponentParameters& parameters,
               const std::string& path_prefix = "");

/// The configuration `parameters` describe, every default filled in (components as
/// {"type": ..., parameters...}). read_json of the result gives the same parameters.
nlohmann::json write_json(ComponentParameters& parameters);

/// The Markdown reference of the configuration rooted at `root` (a heading per component
/// family, a table per type: key, type, default, valid values, description). `title_level` is the
/// number of '#' of the family headings.
std::string write_markdown(ComponentParameters& root, int title_level = 2);

}  // namespace kryflow::config
