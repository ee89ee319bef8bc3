// [objective] objectives: several named objectives (issue 57, item 3).
#include <cmath>
#include <map>

#include "sections.hpp"

namespace lbo::jobs::job_file {

namespace {

// Keys of the result line that are not objectives' values.
bool reserved(const std::string& name) { return name == "objective" || name == "steps" || name == "metrics"; }

// name, direction and reference of one objectives[i] table; `first_line` keeps each name's line.
bool read_one(Reader& r, const toml::table& t, const std::string& prefix, ObjectiveSpec& o,
              std::map<std::string, std::size_t>& first_line) {
  r.check_keys(t, prefix, {"name", "direction", "reference"});
  bool ok = true;
  std::string name;
  if (const auto n = r.get_string(t, "name", prefix, true)) {
    name = *n;
    if (name.empty()) {
      r.error(*t.get("name"), prefix + ".name", "is empty; name the value the result line gives, e.g. \"auc\"");
      ok = false;
    } else if (reserved(name)) {
      r.error(*t.get("name"), prefix + ".name",
              in_quotes(name) + " is a key of the result line already; call the objective by what it measures, e.g. \"auc\"");
      ok = false;
    } else if (const auto [it, inserted] = first_line.emplace(name, t.source().begin.line); !inserted) {
      r.error(*t.get("name"), prefix + ".name", "names " + in_quotes(name) + " again (first on line " + std::to_string(it->second) + ")");
      ok = false;
    }
  } else {
    ok = false;
  }
  Direction direction = Direction::maximize;
  if (const auto d = r.get_string(t, "direction", prefix, true)) {
    if (*d == "minimize") {
      direction = Direction::minimize;
    } else if (*d != "maximize") {
      r.error(*t.get("direction"), prefix + ".direction", in_quotes(*d) + " is neither \"maximize\" nor \"minimize\"");
      ok = false;
    }
  } else {
    ok = false;
  }
  double reference = std::nan("");
  if (const auto value = r.get_number(t, "reference", prefix, false)) {
    if (!std::isfinite(*value)) {
      r.error(*t.get("reference"), prefix + ".reference", "must be a finite number");
      ok = false;
    }
    reference = *value;
  } else if (t.get("reference") != nullptr) {
    ok = false;
  }
  if (ok) {
    o.several.emplace_back(direction, name);
    o.reference.push_back(reference);
  }
  return ok;
}

}  // namespace

void read_objectives(Reader& r, const toml::table& t, ObjectiveSpec& o) {
  const toml::node* node = t.get("objectives");
  if (node == nullptr) return;
  const toml::array* array = node->as_array();
  if (array == nullptr || !array->is_array_of_tables()) {
    r.error(*node, "objective.objectives",
            "must be an array of tables, e.g. [{ name = \"auc\", direction = \"maximize\" }, { name = \"train_s\", direction = \"minimize\" }]");
    return;
  }
  if (array->size() < 2) {
    r.error(*node, "objective.objectives", "names fewer than two objectives; for one, write direction = \"maximize\" or \"minimize\"");
    return;
  }
  if (t.get("direction") != nullptr) {
    r.error(*t.get("direction"), "objective.direction",
            "and objective.objectives both given; with several objectives each has its direction: remove this one");
  }
  if (o.table) {
    r.error(*node, "objective.objectives", "needs a command: a tabulated objective has one value per row");
  }
  if (o.stepwise > 0) {
    r.error(*node, "objective.objectives", "and objective.stepwise exclude each other: a stepwise result's steps are one objective");
  }
  std::map<std::string, std::size_t> first_line;
  bool ok = true;
  for (std::size_t i = 0; i < array->size(); ++i) {
    ok = read_one(r, *array->get(i)->as_table(), "objective.objectives[" + std::to_string(i) + "]", o, first_line) && ok;
  }
  if (!ok) {
    o.several.clear();
    o.reference.clear();
    return;
  }
  o.direction = o.several.front().direction();
}

}  // namespace lbo::jobs::job_file
