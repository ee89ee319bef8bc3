#include <cmath>
#include <map>

#include "sections.hpp"

namespace lbo::jobs::job_file {

namespace {

// name, min and max of one [[constraints]] table; `first_line` keeps the line of each name.
std::optional<Constraint> read_constraint(Reader& r, const toml::table& t, const std::string& prefix, const JobSpec& job,
                                          std::map<std::string, std::size_t>& first_line) {
  r.check_keys(t, prefix, {"name", "min", "max"});
  Constraint c;
  bool ok = true;
  if (const auto name = r.get_string(t, "name", prefix, true)) {
    c.name = *name;
    if (name->empty()) {
      r.error(*t.get("name"), prefix + ".name", "is empty; name the metric the result reports, e.g. \"memory_gb\"");
      ok = false;
    } else if (job.objective.objectives().index_of(*name) >= 0) {
      r.error(*t.get("name"), prefix + ".name",
              in_quotes(*name) + " is what lbo optimizes, not a metric; limit a value the result reports in \"metrics\"");
      ok = false;
    } else if (const auto [it, inserted] = first_line.emplace(*name, t.source().begin.line); !inserted) {
      r.error(*t.get("name"), prefix + ".name",
              "limits " + in_quotes(*name) + " again (first on line " + std::to_string(it->second) +
                  "); give one [[constraints]] table both min and max");
      ok = false;
    }
  } else {
    ok = false;
  }
  for (const char* bound : {"min", "max"}) {
    if (const auto value = r.get_number(t, bound, prefix, false)) {
      if (!std::isfinite(*value)) {
        r.error(*t.get(bound), prefix + "." + bound, "must be a finite number");
        ok = false;
      } else {
        (bound[1] == 'i' ? c.min : c.max) = *value;
      }
    } else if (t.get(bound) != nullptr) {
      ok = false;
    }
  }
  if (ok && !c.min && !c.max) {
    r.error(t, prefix, "limits nothing; give it max (the value must be at most it), min, or both");
    ok = false;
  }
  if (ok && c.min && c.max && !(*c.min < *c.max)) {
    r.error(*t.get("min"), prefix + ".min", "must be < max (" + Objective::format(*c.max) + ")");
    ok = false;
  }
  return ok ? std::optional<Constraint>(c) : std::nullopt;
}

}  // namespace

void read_constraints(Reader& r, const toml::table& root, JobSpec& job) {
  const toml::node* node = root.get("constraints");
  if (node == nullptr) return;
  const toml::array* array = node->as_array();
  if (array == nullptr || !array->is_array_of_tables() || array->empty()) {
    r.error(*node, "constraints", "must be an array of tables: write each limit as a [[constraints]] table with name and max or min");
    return;
  }
  if (job.objective.table) {
    r.error(*node, "constraints", "limits metrics of a command's result; a tabulated objective has none to limit");
    return;
  }
  std::map<std::string, std::size_t> first_line;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const std::string prefix = "constraints[" + std::to_string(i) + "]";
    if (auto c = read_constraint(r, *array->get(i)->as_table(), prefix, job, first_line)) job.constraints.push_back(std::move(*c));
  }
}

}  // namespace lbo::jobs::job_file
