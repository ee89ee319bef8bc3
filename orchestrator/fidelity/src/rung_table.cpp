#include "rung_table.hpp"

#include <algorithm>
#include <cmath>

#include "lbo/orchestrator/run_outputs.hpp"

namespace lbo::orchestrator {

namespace {

// The first report of `t`'s newest attempt (reports are kept in attempt order).
std::vector<StepReport>::const_iterator newest_attempt(const Trial& t) {
  return std::partition_point(t.reports.begin(), t.reports.end(), [&](const StepReport& r) { return r.attempt < t.attempts; });
}

}  // namespace

RungTable::RungTable(const jobs::EarlyStoppingSpec& spec, jobs::Direction direction, std::uint64_t seed)
    : spec_(spec), objective_(direction), seed_(seed) {
  const int brackets = jobs::traits_of(spec.rule).brackets ? spec.brackets : 1;
  double total = 0;
  for (int b = 0; b < brackets; ++b) {
    rungs_.push_back(spec.rungs(b));
    const int halvings = brackets - 1 - b;
    total += std::pow(static_cast<double>(spec.eta), halvings) / (halvings + 1);
    bracket_cdf_.push_back(total);
  }
  for (double& c : bracket_cdf_) c /= total;
}
int RungTable::bracket_of(std::int64_t id) const {
  if (bracket_cdf_.size() <= 1) return 0;
  // The golden-ratio sequence spreads consecutive ids evenly over [0, 1); the seed shifts it.
  constexpr double kGolden = 0.6180339887498949;
  const double shift = std::fmod(static_cast<double>(seed_ % 1'000'003) * kGolden, 1.0);
  const double u = std::fmod(static_cast<double>(id + 1) * kGolden + shift, 1.0);
  const auto it = std::upper_bound(bracket_cdf_.begin(), bracket_cdf_.end(), u);
  return static_cast<int>(std::min<std::ptrdiff_t>(it - bracket_cdf_.begin(), static_cast<std::ptrdiff_t>(bracket_cdf_.size()) - 1));
}
RungTable::Reports RungTable::curve(const Trial& t) const {
  // In promotion mode an attempt resumes where the last one was paused (the intake takes only
  // steps past the trial's last): together they make one curve.
  return {promotes() ? t.reports.begin() : newest_attempt(t), t.reports.end()};
}
std::optional<RungTable::AtRung> RungTable::at_rung(const Trial& t, std::int64_t rung) const {
  const std::optional<StepReport> at = t.report_at(rung, promotes());
  if (!at) return std::nullopt;
  return AtRung{at->step, at->value, at->elapsed_s};
}
std::int64_t RungTable::resume_step(const Trial& t) const {
  if (!promotes()) return 0;
  const auto first = newest_attempt(t);
  return first == t.reports.begin() ? 0 : std::prev(first)->step;
}
std::int64_t RungTable::target_step(const Trial& t) const {
  return promotes() ? spec_.target_step(bracket_of(t.id), resume_step(t)) : spec_.max_step;
}
std::vector<std::pair<std::int64_t, double>> RungTable::rung_values(const RunState& state, int task, int bracket,
                                                                        std::int64_t rung) const {
  std::vector<std::pair<std::int64_t, double>> values;
  for (const std::int64_t id : state.task_trials(task)) {
    if (bracket_of(id) != bracket) continue;
    if (const auto at = at_rung(state.trial(id), rung)) values.emplace_back(id, at->value);
  }
  return values;
}
std::string RungTable::describe(const Trial& t, std::size_t k, const AtRung& mine) const {
  const std::vector<std::int64_t>& steps = rungs(bracket_of(t.id));
  std::string text = std::string(jobs::to_string(spec_.rule)) + " at " + spec_.step_name + " " + std::to_string(mine.step) +
                     " (rung " + std::to_string(k + 1) + " of " + std::to_string(steps.size());
  if (rungs_.size() > 1) text += ", bracket " + std::to_string(bracket_of(t.id));
  return text + "): ";
}
std::optional<StopDecision> RungTable::hurdle(const RunState& state, const Trial& t, std::size_t k,
                                                         const AtRung& mine) const {
  if (!spec_.transfer || !jobs::traits_of(spec_.rule).transfer || t.proposed_by == ProposalSource::earlier_best) return std::nullopt;
  const std::int64_t rung = rungs(bracket_of(t.id))[k];
  std::optional<double> hurdle;
  std::int64_t setter = -1;
  for (const std::int64_t id : state.task_trials(t.task)) {
    const Trial& other = state.trial(id);
    if (other.proposed_by != ProposalSource::earlier_best) continue;
    const std::optional<AtRung> at = at_rung(other, rung);
    if (at && (!hurdle || oriented(at->value) > *hurdle)) {
      hurdle = oriented(at->value);
      setter = id;
    }
  }
  if (!hurdle || oriented(mine.value) >= *hurdle) return std::nullopt;
  return StopDecision{t.id, t.attempts, mine.step, mine.value, mine.elapsed_s,
                      describe(t, k, mine) + format_objective(mine.value) + " is worse than " + format_objective(oriented(*hurdle)) +
                          ", the hurdle trial " + std::to_string(setter) +
                          " (an earlier task's best configuration) set there"};
}
std::size_t RungTable::paused_rung(const Trial& t) const {
  const std::vector<std::int64_t>& steps = rungs(bracket_of(t.id));
  const auto above = std::upper_bound(steps.begin(), steps.end(), t.outcome.last_step);
  return above == steps.begin() ? 0 : static_cast<std::size_t>(above - steps.begin()) - 1;
}
}  // namespace lbo::orchestrator
