#include "lbo/jobs/objective.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

namespace lbo::jobs {

std::string_view to_string(Direction direction) { return direction == Direction::maximize ? "maximize" : "minimize"; }

Objective::Objective(Direction direction, std::string name) : direction_(direction), name_(std::move(name)) {}

bool Objective::better(double a, double b) const {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return oriented(a) > oriented(b);
}

std::ptrdiff_t Objective::best_of(const std::vector<double>& values) const {
  std::ptrdiff_t best = -1;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (best < 0 ? !std::isnan(values[i]) : better(values[i], values[static_cast<std::size_t>(best)])) {
      best = static_cast<std::ptrdiff_t>(i);
    }
  }
  return best;
}

std::string Objective::format(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

Objectives::Objectives(std::vector<Objective> objectives) : objectives_(std::move(objectives)) {
  if (objectives_.empty()) throw std::invalid_argument("Objectives: no objective");
  for (std::size_t i = 0; i < objectives_.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (objectives_[i].name() == objectives_[j].name()) {
        throw std::invalid_argument("Objectives: \"" + objectives_[i].name() + "\" is named twice");
      }
    }
  }
}

std::ptrdiff_t Objectives::index_of(std::string_view name) const {
  for (std::size_t i = 0; i < objectives_.size(); ++i) {
    if (objectives_[i].name() == name) return static_cast<std::ptrdiff_t>(i);
  }
  return -1;
}

bool Objectives::dominates(const std::vector<double>& a, const std::vector<double>& b) const {
  const auto has_nan = [](const std::vector<double>& v) { return std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); }); };
  if (a.size() != size() || b.size() != size()) throw std::invalid_argument("Objectives::dominates: one value per objective");
  if (has_nan(a)) return false;
  if (has_nan(b)) return true;
  bool better_in_one = false;
  for (std::size_t i = 0; i < size(); ++i) {
    if (objectives_[i].better(b[i], a[i])) return false;
    better_in_one = better_in_one || objectives_[i].better(a[i], b[i]);
  }
  return better_in_one;
}

// By hand: O(n²) comparisons, which a task's few hundred trials afford; no library we use keeps
// Pareto sets (a non-dominated sort as NSGA-II's would pay only at many thousands).
std::vector<std::size_t> Objectives::pareto_set(const std::vector<std::vector<double>>& results) const {
  std::vector<std::size_t> set;
  for (std::size_t i = 0; i < results.size(); ++i) {
    bool dominated = false;
    for (std::size_t j = 0; j < results.size() && !dominated; ++j) dominated = j != i && dominates(results[j], results[i]);
    if (!dominated) set.push_back(i);
  }
  return set;
}

std::string Constraint::describe() const {
  std::string text;
  if (min) text = Objective::format(*min) + " <= ";
  text += name;
  if (max) text += " <= " + Objective::format(*max);
  return text;
}

ConstraintCheck check_constraints(const std::vector<Constraint>& constraints, const std::string& metrics_json) {
  ConstraintCheck check;
  if (constraints.empty()) return check;
  const nlohmann::json metrics = nlohmann::json::parse(metrics_json, nullptr, false);
  for (const Constraint& c : constraints) {
    const auto value = metrics.is_object() ? metrics.find(c.name) : metrics.end();
    if (!metrics.is_object() || value == metrics.end() || value->is_null()) {
      check.problem = "the result's \"metrics\" lack \"" + c.name + "\", which [[constraints]] limits (" + c.describe() +
                      "): report it, e.g. {\"objective\": 0.9, \"metrics\": {\"" + c.name + "\": 12.5}}";
      return check;
    }
    if (!value->is_number() || !std::isfinite(value->get<double>())) {
      check.problem = "the result's metric \"" + c.name + "\", which [[constraints]] limits (" + c.describe() +
                      "), is " + (value->is_number() ? "not finite" : "not a number: " + value->dump());
      return check;
    }
    check.feasible = check.feasible && c.satisfied(value->get<double>());
  }
  return check;
}

}  // namespace lbo::jobs
