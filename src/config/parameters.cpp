// The parameter visitors: strict JSON reader, resolved JSON writer, Markdown reference writer.
#include "kryflow/config/parameters.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "kryflow/core/error.hpp"

namespace kryflow::config {
namespace {

std::string join_path(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

/// A JSON value as it would appear in a file, for messages ("3", "\"abc\"", "[1,2]").
std::string show(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

std::string json_type_name(const nlohmann::json& value) {
  return value.is_number() ? "number" : std::string(value.type_name());
}

std::string number_text(double value) {
  return nlohmann::json(value).dump();
}

/// Range ends: integral values without a fraction ("0", "1"), others as JSON writes them.
std::string bound_text(double value) {
  if (std::abs(value) < 1e15 && std::floor(value) == value) {
    return std::to_string(static_cast<long long>(value));
  }
  return number_text(value);
}

/// Collects the names a `declare` visits, without touching any value.
class KeyCollector final : public ParameterVisitor {
 public:
  void integer(const char* name, int&, Range, const char*) override { keys.emplace_back(name); }
  void real(const char* name, double&, Range, const char*) override { keys.emplace_back(name); }
  void choice(const char* name, std::string&, const std::vector<std::string>&,
              const char*) override {
    keys.emplace_back(name);
  }
  void component(const char* name, ComponentSlot&, const char*) override {
    keys.emplace_back(name);
  }
  std::vector<std::string> keys;
};

std::string key_list(const std::vector<std::string>& keys) {
  std::string list;
  for (const std::string& key : keys) list += (list.empty() ? "" : ", ") + key;
  return list.empty() ? "none" : list;
}

/// Reads the declared keys of one JSON object; see read_json.
class JsonReader final : public ParameterVisitor {
 public:
  JsonReader(const nlohmann::json& object, std::string prefix)
      : object_(object), prefix_(std::move(prefix)) {}

  void integer(const char* name, int& value, Range range, const char* description) override {
    (void)description;
    const nlohmann::json* item = find(name);
    if (item == nullptr) return;
    const std::string path = join_path(prefix_, name);
    const bool integral = item->is_number_integer() || item->is_number_unsigned() ||
                          (item->is_number_float() && std::isfinite(item->get<double>()) &&
                           std::floor(item->get<double>()) == item->get<double>());
    if (!integral) {
      throw ConfigError(path, "expected an integer, got " + json_type_name(*item) + " " +
                                  show(*item) + " (valid: " + range.describe() + ")");
    }
    const double x = item->get<double>();
    if (!range.contains(x) || x < std::numeric_limits<int>::min() ||
        x > std::numeric_limits<int>::max()) {
      throw ConfigError(path, "value " + show(*item) + " is out of range (valid: " +
                                  range.describe() + ", 32-bit integer)");
    }
    value = static_cast<int>(x);
  }

  void real(const char* name, double& value, Range range, const char* description) override {
    (void)description;
    const nlohmann::json* item = find(name);
    if (item == nullptr) return;
    const std::string path = join_path(prefix_, name);
    if (!item->is_number()) {
      throw ConfigError(path, "expected a number, got " + json_type_name(*item) + " " +
                                  show(*item) + " (valid: " + range.describe() + ")");
    }
    const double x = item->get<double>();
    if (!std::isfinite(x) || !range.contains(x)) {
      throw ConfigError(
          path, "value " + show(*item) + " is out of range (valid: " + range.describe() + ")");
    }
    value = x;
  }

  void choice(const char* name, std::string& value, const std::vector<std::string>& choices,
              const char* description) override {
    (void)description;
    const nlohmann::json* item = find(name);
    if (item == nullptr) return;
    const std::string path = join_path(prefix_, name);
    if (!item->is_string()) {
      throw ConfigError(path, "expected a string, got " + json_type_name(*item) + " " +
                                  show(*item) + " (valid choices: " + key_list(choices) + ")");
    }
    const std::string text = item->get<std::string>();
    if (std::find(choices.begin(), choices.end(), text) == choices.end()) {
      throw ConfigError(path,
                        "unknown value '" + text + "' (valid choices: " + key_list(choices) + ")");
    }
    value = text;
  }

  void component(const char* name, ComponentSlot& slot, const char* description) override {
    (void)description;
    const nlohmann::json* item = find(name);
    if (item == nullptr) return;
    read_component(*item, slot, join_path(prefix_, name));
  }

  /// Throws ConfigError for the first key of the object that `declare` did not visit.
  void reject_unknown_keys(const std::vector<std::string>& valid,
                           const std::string& context) const {
    for (const auto& [key, item] : object_.items()) {
      (void)item;
      if (visited_.count(key) == 0) {
        throw ConfigError(join_path(prefix_, key),
                          "unknown key" + context + " (valid keys: " + key_list(valid) + ")");
      }
    }
  }

  void mark_visited(const std::string& key) { visited_.insert(key); }

  static void read_component(const nlohmann::json& item, ComponentSlot& slot,
                             const std::string& path) {
    const ComponentFamily& family = *slot.family;
    if (!item.is_object()) {
      throw ConfigError(path, "expected a JSON object {\"type\": ...} selecting the " +
                                  family.name + ", got " + json_type_name(item) + " " + show(item) +
                                  " (valid types: " + family.type_list() + ")");
    }
    std::string type = family.default_type;
    if (const auto it = item.find("type"); it != item.end()) {
      if (!it->is_string()) {
        throw ConfigError(path + ".type", "expected a string, got " + json_type_name(*it) + " " +
                                              show(*it) + " (valid choices: " + family.type_list() +
                                              ")");
      }
      type = it->get<std::string>();
      if (family.find(type) == nullptr) {
        throw ConfigError(path + ".type", "unknown " + family.name + " type '" + type +
                                              "' (valid choices: " + family.type_list() + ")");
      }
    }
    slot.select(type);
    JsonReader reader(item, path);
    reader.mark_visited("type");
    slot.parameters->declare(reader);
    KeyCollector collector;
    slot.parameters->declare(collector);
    collector.keys.insert(collector.keys.begin(), "type");
    reader.reject_unknown_keys(collector.keys, " for " + family.name + " type '" + type + "'");
  }

 private:
  const nlohmann::json* find(const char* name) {
    visited_.insert(name);
    const auto it = object_.find(name);
    return it == object_.end() ? nullptr : &*it;
  }

  const nlohmann::json& object_;
  std::string prefix_;
  std::set<std::string> visited_;
};

/// Writes every declared parameter's current value.
class JsonWriter final : public ParameterVisitor {
 public:
  void integer(const char* name, int& value, Range, const char*) override { json[name] = value; }
  void real(const char* name, double& value, Range, const char*) override { json[name] = value; }
  void choice(const char* name, std::string& value, const std::vector<std::string>&,
              const char*) override {
    json[name] = value;
  }
  void component(const char* name, ComponentSlot& slot, const char*) override {
    nlohmann::json sub = write_json(*slot.parameters);
    sub["type"] = slot.type;
    json[name] = std::move(sub);
  }
  nlohmann::json json = nlohmann::json::object();
};

/// One row per declared parameter; nested component families are queued for their own section.
class MarkdownTable final : public ParameterVisitor {
 public:
  struct Pending {
    std::string path;
    const ComponentFamily* family;
  };

  /// `sections`: where each family is documented, shared by all tables: a family met again
  /// (a preconditioner nested in a preconditioner) refers to its first section.
  MarkdownTable(std::string prefix, std::map<const ComponentFamily*, std::string>* sections)
      : prefix_(std::move(prefix)), sections_(sections) {}

  void integer(const char* name, int& value, Range range, const char* description) override {
    row(name, "integer", "`" + std::to_string(value) + "`", range.describe(), description);
  }
  void real(const char* name, double& value, Range range, const char* description) override {
    row(name, "number", "`" + number_text(value) + "`", range.describe(), description);
  }
  void choice(const char* name, std::string& value, const std::vector<std::string>& choices,
              const char* description) override {
    std::string valid;
    for (const std::string& c : choices) valid += (valid.empty() ? "`" : ", `") + c + "`";
    row(name, "string", "`\"" + value + "\"`", valid, description);
  }
  void component(const char* name, ComponentSlot& slot, const char* description) override {
    const std::string path = join_path(prefix_, name);
    const auto [at, added] = sections_->emplace(slot.family, path);
    row(name, "object", "`{\"type\": \"" + slot.type + "\"}`", "see `" + at->second + "`",
        description);
    if (added) pending.push_back({path, slot.family});
  }

  std::string table() const {
    if (rows_.empty()) return "No parameters besides `type`.\n";
    return "| key | type | default | valid values | description |\n|---|---|---|---|---|\n" + rows_;
  }

  std::vector<Pending> pending;

 private:
  void row(const char* name, const char* type, const std::string& default_value,
           const std::string& valid, const char* description) {
    rows_ += "| `" + std::string(name) + "` | " + type + " | " + default_value + " | " +
             escape(valid) + " | " + escape(description) + " |\n";
  }
  /// A '|' would end the table cell.
  static std::string escape(const std::string& text) {
    std::string escaped;
    for (char c : text) {
      if (c == '|') escaped += '\\';
      escaped += c;
    }
    return escaped;
  }
  std::string prefix_;
  std::map<const ComponentFamily*, std::string>* sections_;
  std::string rows_;
};

}  // namespace

bool Range::contains(double value) const noexcept {
  if (lower && (lower_closed ? value < *lower : value <= *lower)) return false;
  if (upper && (upper_closed ? value > *upper : value >= *upper)) return false;
  return true;
}

std::string Range::describe() const {
  if (lower && upper) {
    return std::string(lower_closed ? "[" : "(") + bound_text(*lower) + ", " + bound_text(*upper) +
           (upper_closed ? "]" : ")");
  }
  if (lower) return std::string(lower_closed ? ">= " : "> ") + bound_text(*lower);
  if (upper) return std::string(upper_closed ? "<= " : "< ") + bound_text(*upper);
  return "any";
}

const ComponentType* ComponentFamily::find(const std::string& type_name) const {
  for (const ComponentType& type : types) {
    if (type.name == type_name) return &type;
  }
  return nullptr;
}

std::string ComponentFamily::type_list() const {
  std::vector<std::string> names;
  for (const ComponentType& type : types) names.push_back(type.name);
  return key_list(names);
}

ComponentSlot::ComponentSlot(const ComponentFamily& of) : family(&of) {
  select(family->default_type);
}

void ComponentSlot::select(const std::string& type_name) {
  const ComponentType* found = family->find(type_name);
  if (found == nullptr) {
    throw ConfigError("type", "unknown " + family->name + " type '" + type_name +
                                  "' (valid choices: " + family->type_list() + ")");
  }
  type = found->name;
  parameters = found->make_parameters();
}

void read_json(const nlohmann::json& json, ComponentParameters& parameters,
               const std::string& path_prefix) {
  if (!json.is_object()) {
    throw ConfigError(path_prefix.empty() ? "(top level)" : path_prefix,
                      "expected a JSON object, got " + json_type_name(json) + " " + show(json));
  }
  JsonReader reader(json, path_prefix);
  parameters.declare(reader);
  KeyCollector collector;
  parameters.declare(collector);
  reader.reject_unknown_keys(collector.keys, "");
}

nlohmann::json write_json(ComponentParameters& parameters) {
  JsonWriter writer;
  parameters.declare(writer);
  return std::move(writer.json);
}

std::string write_markdown(ComponentParameters& root, int title_level) {
  const std::string family_heading(static_cast<std::size_t>(title_level), '#');
  const std::string type_heading = family_heading + "#";
  std::ostringstream out;
  std::map<const ComponentFamily*, std::string> sections;
  MarkdownTable top("", &sections);
  root.declare(top);
  std::deque<MarkdownTable::Pending> queue(top.pending.begin(), top.pending.end());
  std::set<std::string> documented;
  bool first = true;
  while (!queue.empty()) {
    const MarkdownTable::Pending next = queue.front();
    queue.pop_front();
    if (!documented.insert(next.path).second) continue;
    const ComponentFamily& family = *next.family;
    if (!first) out << "\n";
    first = false;
    out << family_heading << " `" << next.path << "`\n\n"
        << family.description << " Selected by `" << next.path << ".type`: ";
    for (std::size_t i = 0; i < family.types.size(); ++i) {
      out << (i == 0 ? "" : ", ") << "`" << family.types[i].name << "`"
          << (family.types[i].name == family.default_type ? " (default)" : "");
    }
    out << ".\n";
    for (const ComponentType& type : family.types) {
      MarkdownTable table(next.path, &sections);
      type.make_parameters()->declare(table);
      out << "\n"
          << type_heading << " `" << next.path << ".type = \"" << type.name << "\"`\n\n"
          << type.description << "\n\n"
          << table.table();
      queue.insert(queue.end(), table.pending.begin(), table.pending.end());
    }
  }
  return out.str();
}

}  // namespace kryflow::config
