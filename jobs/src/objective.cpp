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

std::string Objective::significant(double value, int digits) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*g", digits, value);
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

namespace {

// The hypervolume of maximized points above the origin, by slicing along the last objective
// (While et al. 2006, "HSO"): the points sorted by it, best first, each slab between two of
// their values is the (m-1)-dimensional hypervolume of the points at least that good. By hand:
// no library we use computes hypervolumes, and a task's few hundred results in 2-4 objectives
// are what this exact sweep affords (WFG or the box decomposition pay at thousands).
double hypervolume_above_origin(std::vector<std::vector<double>> points, std::size_t m) {
  if (points.empty()) return 0.0;
  if (m == 1) {
    double best = 0.0;
    for (const auto& p : points) best = std::max(best, p[0]);
    return best;
  }
  std::sort(points.begin(), points.end(), [m](const auto& a, const auto& b) { return a[m - 1] > b[m - 1]; });
  double volume = 0.0;
  std::vector<std::vector<double>> slice;
  for (std::size_t i = 0; i < points.size(); ++i) {
    slice.push_back(points[i]);
    const double next = i + 1 < points.size() ? points[i + 1][m - 1] : 0.0;
    const double depth = points[i][m - 1] - next;
    if (depth > 0) volume += depth * hypervolume_above_origin(slice, m - 1);
  }
  return volume;
}

}  // namespace

double Objectives::hypervolume(const std::vector<std::vector<double>>& results, const std::vector<double>& reference) const {
  if (reference.size() != size()) throw std::invalid_argument("Objectives::hypervolume: one reference value per objective");
  std::vector<std::vector<double>> points;
  for (std::size_t k : pareto_set(results)) {
    const std::vector<double>& r = results[k];
    std::vector<double> p(size());
    bool above = true;
    for (std::size_t i = 0; i < size() && above; ++i) {
      p[i] = objectives_[i].oriented(r[i]) - objectives_[i].oriented(reference[i]);
      above = p[i] > 0;  // false for a NaN too
    }
    if (above) points.push_back(std::move(p));
  }
  return hypervolume_above_origin(std::move(points), size());
}

std::vector<double> Objectives::derived_reference(const std::vector<std::vector<double>>& results) const {
  std::vector<double> worst(size(), std::nan("")), best(size(), std::nan(""));
  for (const auto& r : results) {
    if (r.size() != size() || std::any_of(r.begin(), r.end(), [](double x) { return std::isnan(x); })) continue;
    for (std::size_t i = 0; i < size(); ++i) {
      if (std::isnan(worst[i]) || objectives_[i].better(worst[i], r[i])) worst[i] = r[i];
      if (std::isnan(best[i]) || objectives_[i].better(r[i], best[i])) best[i] = r[i];
    }
  }
  if (std::isnan(worst[0])) return {};
  std::vector<double> reference(size());
  for (std::size_t i = 0; i < size(); ++i) {
    const double range = std::abs(best[i] - worst[i]);
    const double margin = range > 0 ? 0.1 * range : 1.0;
    reference[i] = objectives_[i].maximizes() ? worst[i] - margin : worst[i] + margin;
  }
  return reference;
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
