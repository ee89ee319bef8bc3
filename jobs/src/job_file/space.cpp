#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "sections.hpp"

namespace lbo::jobs::job_file {

namespace {

// results.csv has these columns before the parameters; a parameter may not share a name.
constexpr std::string_view kFixedColumns[] = {"trial", "task", "status", "objective", "attempts", "duration_s", "worker"};

// step_1..step_T: the results.csv columns of a stepwise objective.
bool is_step_column(std::string_view name, int steps) {
  if (steps <= 0 || !name.starts_with("step_")) return false;
  int k = 0;
  const std::string_view digits = name.substr(5);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
  return ec == std::errc() && end == digits.data() + digits.size() && k >= 1 && k <= steps;
}

bool is_parameter_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front()))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::optional<double> to_double(std::optional<std::int64_t> v) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

// A condition ({ model = "xgboost" }) waiting until every parameter is known.
struct PendingConditions {
  int param;
  const toml::table* when;
  std::string prefix;
};

// Whether `name` may name a parameter; reported otherwise.
bool usable_name(Reader& r, const toml::key& key, const std::string& name, const std::string& prefix, int steps) {
  if (!is_parameter_name(name)) {
    r.error(key.source(), prefix, "parameter names use letters, digits and '_', starting with a letter or '_'");
    return false;
  }
  if (std::find(std::begin(kFixedColumns), std::end(kFixedColumns), name) != std::end(kFixedColumns)) {
    r.error(key.source(), prefix, "the name is taken by a results.csv column; rename the parameter");
    return false;
  }
  if (is_step_column(name, steps)) {
    r.error(key.source(), prefix, "the name is taken by a results.csv column of objective.stepwise; rename the parameter");
    return false;
  }
  return true;
}

// low, high and log of a float or int parameter.
void read_range(Reader& r, const toml::table& t, const std::string& prefix, ParamSpec& p) {
  for (std::string_view key : {"choices"}) {
    if (const toml::node* n = t.get(key)) r.error(*n, prefix + "." + std::string(key), "only categorical parameters have choices");
  }
  const auto low = p.type == ParamType::real ? r.get_number(t, "low", prefix, true) : to_double(r.get_int(t, "low", prefix, true));
  const auto high =
      p.type == ParamType::real ? r.get_number(t, "high", prefix, true) : to_double(r.get_int(t, "high", prefix, true));
  if (const auto log = r.get_bool(t, "log", prefix)) p.log = *log;
  if (!low || !high) return;
  p.low = *low;
  p.high = *high;
  // Int bounds are compared and printed as the integers written, not as doubles: near 2^63,
  // neighbouring integers are one double.
  const bool is_int = p.type == ParamType::integer;
  const std::int64_t int_low = is_int ? *t.get("low")->value_exact<std::int64_t>() : 0;
  const std::int64_t int_high = is_int ? *t.get("high")->value_exact<std::int64_t>() : 0;
  const auto text = [&](double v, std::int64_t i) { return is_int ? std::to_string(i) : format_number(v); };
  if (!std::isfinite(p.low) || !std::isfinite(p.high)) {
    r.error(t, prefix, "low and high must be finite");
  } else if (is_int ? !(int_low < int_high) : !(p.low < p.high)) {
    r.error(*t.get("low"), prefix, "low (" + text(p.low, int_low) + ") must be < high (" + text(p.high, int_high) + ")");
  } else if (is_int && (int_low < -kMaxIntBound || int_high > kMaxIntBound)) {
    r.error(*t.get(int_low < -kMaxIntBound ? "low" : "high"), prefix,
            "int bounds must lie within -" + std::to_string(kMaxIntBound) + " and " + std::to_string(kMaxIntBound) +
                " (±2^53, the integers a double holds exactly; got " + text(p.low, int_low) + " to " +
                text(p.high, int_high) + "); use a float parameter for a wider range");
  } else if (p.log && !(p.low > 0)) {
    r.error(*t.get("low"), prefix, "log = true needs low > 0 (got " + text(p.low, int_low) + "); raise low or drop log");
  }
}

void read_choices(Reader& r, const toml::table& t, const std::string& prefix, ParamSpec& p) {
  for (std::string_view key : {"low", "high", "log"}) {
    if (const toml::node* n = t.get(key)) r.error(*n, prefix + "." + std::string(key), "categorical parameters take only choices");
  }
  const toml::node* node = t.get("choices");
  if (node == nullptr) {
    r.error(t, prefix + ".choices", "missing; add choices = [\"a\", \"b\"]");
    return;
  }
  const toml::array* array = node->as_array();
  if (array == nullptr || array->empty()) {
    r.error(*node, prefix + ".choices", "must be a non-empty array of strings");
    return;
  }
  for (std::size_t i = 0; i < array->size(); ++i) {
    const toml::node& element = *array->get(i);
    const auto choice = element.value_exact<std::string>();
    const std::string key = prefix + ".choices[" + std::to_string(i) + "]";
    if (!choice) {
      r.error(element, key,
              "must be a string, not " + std::string(type_name(element)) + "; quote it, or use type = \"int\" for numbers");
    } else if (std::find(p.choices.begin(), p.choices.end(), *choice) != p.choices.end()) {
      r.error(element, key, in_quotes(*choice) + " is listed twice");
    } else {
      p.choices.push_back(*choice);
    }
  }
}

std::optional<ParamSpec> read_param(Reader& r, const toml::table& t, const std::string& name, const std::string& prefix) {
  r.check_keys(t, prefix, {"type", "low", "high", "log", "choices", "when"});
  ParamSpec p;
  p.name = name;
  const auto type = r.get_string(t, "type", prefix, false);
  if (!type) {
    if (t.get("type") == nullptr) r.error(t, prefix + ".type", "missing; add type = \"float\", \"int\" or \"categorical\"");
    return std::nullopt;
  }
  const std::size_t errors_before = r.errors().size();
  if (*type == "float" || *type == "int") {
    p.type = *type == "float" ? ParamType::real : ParamType::integer;
    read_range(r, t, prefix, p);
  } else if (*type == "categorical") {
    p.type = ParamType::categorical;
    read_choices(r, t, prefix, p);
  } else {
    r.error(*t.get("type"), prefix + ".type", in_quotes(*type) + " is not a type; use \"float\", \"int\" or \"categorical\"");
  }
  if (r.errors().size() != errors_before) return std::nullopt;
  return p;
}

// The categorical parameter and its choices a condition names, or nullopt (reported).
std::optional<Condition> read_condition(Reader& r, const toml::key& key, const toml::node& node, const std::string& where,
                                        const ParamSpec& child, const std::vector<ParamSpec>& params) {
  const std::string parent_name(key.str());
  const auto parent = std::find_if(params.begin(), params.end(), [&](const ParamSpec& p) { return p.name == parent_name; });
  if (parent == params.end()) {
    std::vector<std::string> names;
    for (const ParamSpec& p : params) {
      if (p.type == ParamType::categorical) names.push_back(p.name);
    }
    r.error(key.source(), where,
            "no parameter is called " + in_quotes(parent_name) + (names.empty() ? "" : "; categorical parameters: " + join_quoted(names)));
    return std::nullopt;
  }
  if (parent->name == child.name) {
    r.error(key.source(), where, "a parameter cannot depend on itself");
    return std::nullopt;
  }
  if (parent->type != ParamType::categorical) {
    r.error(key.source(), where,
            "conditions must name a categorical parameter; " + in_quotes(parent_name) + " is " + std::string(to_string(parent->type)));
    return std::nullopt;
  }
  Condition condition;
  condition.parent = static_cast<int>(parent - params.begin());
  std::vector<const toml::node*> values;
  bool ok = true;
  if (const toml::array* array = node.as_array()) {
    for (const toml::node& v : *array) values.push_back(&v);
    if (values.empty()) {
      r.error(node, where, "needs at least one value");
      ok = false;
    }
  } else {
    values.push_back(&node);
  }
  for (const toml::node* v : values) {
    const auto value = v->value_exact<std::string>();
    const auto choice = value ? std::find(parent->choices.begin(), parent->choices.end(), *value) : parent->choices.end();
    if (choice == parent->choices.end()) {
      r.error(*v, where,
              (value ? in_quotes(*value) : std::string(type_name(*v))) + " is not a choice of " + in_quotes(parent_name) +
                  "; choices: " + join_quoted(parent->choices));
      ok = false;
      continue;
    }
    condition.choices.push_back(static_cast<int>(choice - parent->choices.begin()));
  }
  if (!ok) return std::nullopt;  // every bad value of it is reported above
  return condition;
}

bool read_conditions(Reader& r, const PendingConditions& pending, std::vector<ParamSpec>& params) {
  bool ok = true;
  for (auto&& [key, node] : *pending.when) {
    const std::string where = pending.prefix + "." + std::string(key.str());
    std::optional<Condition> condition = read_condition(r, key, node, where, params[pending.param], params);
    if (!condition) {
      ok = false;
      continue;
    }
    params[pending.param].when.push_back(std::move(*condition));
  }
  return ok;
}

}  // namespace

void read_space(Reader& r, const toml::table& space, JobSpec& job) {
  // toml++ tables are ordered by key; keep the file's order, which users read results in.
  std::vector<std::pair<const toml::key*, const toml::node*>> entries;
  for (auto&& [key, node] : space) entries.emplace_back(&key, &node);
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const auto& pa = a.first->source().begin;
    const auto& pb = b.first->source().begin;
    return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
  });
  if (entries.empty()) {
    r.error(space, "space", "define at least one parameter, e.g. x = { type = \"float\", low = 0, high = 1 }");
    return;
  }
  std::vector<ParamSpec> params;
  std::vector<PendingConditions> conditions;
  bool all_valid = true;
  for (const auto& [key, node] : entries) {
    const std::string name(key->str());
    const std::string prefix = "space." + name;
    if (!usable_name(r, *key, name, prefix, job.objective.stepwise)) all_valid = false;
    const toml::table* t = node->as_table();
    if (t == nullptr) {
      r.error(*node, prefix, "must be a table such as { type = \"float\", low = 0, high = 1 }");
      all_valid = false;
      continue;
    }
    std::optional<ParamSpec> param = read_param(r, *t, name, prefix);
    if (!param) {
      all_valid = false;
      continue;
    }
    if (const toml::node* when = t->get("when")) {
      if (!when->is_table()) {
        r.error(*when, prefix + ".when", "must be a table such as { model = \"xgboost\" }");
        all_valid = false;
      } else {
        conditions.push_back({static_cast<int>(params.size()), when->as_table(), prefix + ".when"});
      }
    }
    params.push_back(std::move(*param));
  }
  if (!all_valid) return;
  for (const PendingConditions& pending : conditions) {
    if (!read_conditions(r, pending, params)) all_valid = false;
  }
  if (!all_valid) return;
  try {
    job.space = Space(std::move(params));
  } catch (const std::invalid_argument& e) {
    r.error(space, "space", e.what());
  }
}

}  // namespace lbo::jobs::job_file
