#pragma once
// Objective and Objectives: the one place that knows what a result's numbers mean (issue 57).
// An objective has a name and a direction; every part of lbo that asks which of two results is
// better, orients a value for a model (larger is better), picks a best or formats a value asks
// an Objective, and with several objectives which result dominates asks Objectives. A job with
// one objective has one named "objective", as its result line {"objective": v} says.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lbo::jobs {

enum class Direction : std::uint8_t { maximize, minimize };
std::string_view to_string(Direction direction);

class Objective {
 public:
  /// The name a single objective has in the result line.
  static constexpr std::string_view kDefaultName = "objective";

  Objective() = default;  ///< "objective", maximized
  explicit Objective(Direction direction, std::string name = std::string(kDefaultName));

  const std::string& name() const { return name_; }
  Direction direction() const { return direction_; }
  bool maximizes() const { return direction_ == Direction::maximize; }

  /// `value` turned so that larger is better: what the models, the rung tables and the task
  /// summaries compare. Its own inverse.
  double oriented(double value) const { return maximizes() ? value : -value; }
  /// Whether `a` is strictly better than `b`. A NaN is never better, and any number is better
  /// than a NaN (a missing best).
  bool better(double a, double b) const;
  /// The index of the best of `values` (the first of equal ones); -1 when there is none.
  std::ptrdiff_t best_of(const std::vector<double>& values) const;
  /// A value as lbo's log and tables write it: 6 significant digits ("0.812345", "1.5e-07").
  static std::string format(double value) { return significant(value, 6); }
  /// `value` to `digits` significant digits (printf's %g): the one number formatter of lbo's
  /// text (6 for objectives, 3 for the model's figures and comparisons).
  static std::string significant(double value, int digits);

  bool operator==(const Objective&) const = default;

 private:
  Direction direction_ = Direction::maximize;
  std::string name_ = std::string(kDefaultName);
};

/// The objectives of a job, in the order the job names them; the first is the primary one (the
/// one a single "best" and early stopping go by). Results are given as one value per objective,
/// in that order.
class Objectives {
 public:
  /// Throws std::invalid_argument when `objectives` is empty or names one twice.
  explicit Objectives(std::vector<Objective> objectives);

  std::size_t size() const { return objectives_.size(); }
  const Objective& operator[](std::size_t i) const { return objectives_[i]; }
  const Objective& primary() const { return objectives_.front(); }
  /// The index of the objective called `name`, or -1.
  std::ptrdiff_t index_of(std::string_view name) const;

  /// Pareto dominance: `a` is at least as good as `b` in every objective and better in one.
  /// Both hold one value per objective; a result with a NaN dominates nothing and is
  /// dominated by every result without one.
  bool dominates(const std::vector<double>& a, const std::vector<double>& b) const;
  /// The indices of the results no other result dominates (the Pareto set), in order; of
  /// equal results, each is kept.
  std::vector<std::size_t> pareto_set(const std::vector<std::vector<double>>& results) const;
  /// The hypervolume `results` dominate above `reference` (one value per objective each): the
  /// measure of the points at least as good as the reference that some result is at least as
  /// good as. Results with a NaN, or not better than the reference in every objective, add
  /// nothing. Exact; O(n^(m-1) log n) for n results and m objectives.
  double hypervolume(const std::vector<std::vector<double>>& results, const std::vector<double>& reference) const;
  /// A reference point when the job gives none: per objective, the worst of `results` moved
  /// away from the best by a tenth of their range (1 when the range is 0), so that every result
  /// adds to the hypervolume. Empty when no result is without a NaN.
  std::vector<double> derived_reference(const std::vector<std::vector<double>>& results) const;

 private:
  std::vector<Objective> objectives_;
};

/// A limit on a value the result reports in its "metrics" object ([[constraints]] name, min
/// and/or max, both inclusive): a trial whose value lies outside is infeasible. Its objective
/// is still a result the models learn; it is never a best.
struct Constraint {
  std::string name;
  std::optional<double> min, max;

  /// Whether `value` meets the limit (a NaN meets none).
  bool satisfied(double value) const { return value == value && (!min || value >= *min) && (!max || value <= *max); }
  /// "memory_gb <= 16", "0.1 <= latency_ms <= 5".
  std::string describe() const;
  bool operator==(const Constraint&) const = default;
};

/// What `constraints` make of a result's metrics (the JSON object text a result carries).
struct ConstraintCheck {
  bool feasible = true;
  /// Empty, or why the result cannot be judged: a value missing or not a finite number, for
  /// people ("result.metrics lacks \"memory_gb\", which [[constraints]] limits: report it ...").
  std::string problem;
};
ConstraintCheck check_constraints(const std::vector<Constraint>& constraints, const std::string& metrics_json);

}  // namespace lbo::jobs
