#include "early_stopping.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "lbo/orchestrator/run_outputs.hpp"

namespace lbo::orchestrator {

namespace {

// The q-quantile of ascending `xs` with linear interpolation between order statistics (numpy's
// default, which Ray Tune's ASHA uses).
double quantile(const std::vector<double>& xs, double q) {
  const double position = q * static_cast<double>(xs.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, xs.size() - 1);
  return xs[below] + (position - static_cast<double>(below)) * (xs[above] - xs[below]);
}

// The first report of `t`'s newest attempt (reports are kept in attempt order).
std::vector<StepReport>::const_iterator newest_attempt(const Trial& t) {
  return std::partition_point(t.reports.begin(), t.reports.end(), [&](const StepReport& r) { return r.attempt < t.attempts; });
}

// Best first: the higher rung, then the better value, then the lower id.
struct Ranked {
  std::size_t rung = 0;
  double value = 0;  // oriented
  std::int64_t id = 0;
  bool operator<(const Ranked& o) const {
    if (rung != o.rung) return rung > o.rung;
    if (value != o.value) return value > o.value;
    return id < o.id;
  }
};

}  // namespace

EarlyStopping::EarlyStopping(const jobs::EarlyStoppingSpec& spec, jobs::Direction direction, std::uint64_t seed, bool sync)
    : spec_(spec), maximize_(direction == jobs::Direction::maximize), seed_(seed), sync_(sync) {
  const int brackets = spec.rule == jobs::StoppingRule::hyperband ? spec.brackets : 1;
  double total = 0;
  for (int b = 0; b < brackets; ++b) {
    rungs_.push_back(spec.rungs(b));
    const int halvings = brackets - 1 - b;
    total += std::pow(static_cast<double>(spec.eta), halvings) / (halvings + 1);
    bracket_cdf_.push_back(total);
  }
  for (double& c : bracket_cdf_) c /= total;
}

int EarlyStopping::bracket_of(std::int64_t id) const {
  if (bracket_cdf_.size() <= 1) return 0;
  // The golden-ratio sequence spreads consecutive ids evenly over [0, 1); the seed shifts it.
  constexpr double kGolden = 0.6180339887498949;
  const double shift = std::fmod(static_cast<double>(seed_ % 1'000'003) * kGolden, 1.0);
  const double u = std::fmod(static_cast<double>(id + 1) * kGolden + shift, 1.0);
  const auto it = std::upper_bound(bracket_cdf_.begin(), bracket_cdf_.end(), u);
  return static_cast<int>(std::min<std::ptrdiff_t>(it - bracket_cdf_.begin(), static_cast<std::ptrdiff_t>(bracket_cdf_.size()) - 1));
}

std::pair<std::vector<StepReport>::const_iterator, std::vector<StepReport>::const_iterator> EarlyStopping::curve(
    const Trial& t) const {
  // In promotion mode an attempt resumes where the last one was paused (the intake takes only
  // steps past the trial's last): together they make one curve.
  return {promotes() ? t.reports.begin() : newest_attempt(t), t.reports.end()};
}

std::optional<EarlyStopping::AtRung> EarlyStopping::at_rung(const Trial& t, std::int64_t rung) const {
  const auto [begin, end] = curve(t);
  const auto it = std::lower_bound(begin, end, rung, [](const StepReport& r, std::int64_t step) { return r.step < step; });
  if (it == end) return std::nullopt;
  // A trial stopped or paused counts up to the step it was stopped on: what it reported after
  // (before the signal reached it) depends on timing.
  const bool cut = !t.running && (t.outcome.status == workers::TrialStatus::stopped ||
                                  t.outcome.status == workers::TrialStatus::paused);
  if (cut && it->step > t.outcome.last_step) return std::nullopt;
  return AtRung{it->step, it->value, it->elapsed_s};
}

std::int64_t EarlyStopping::resume_step(const Trial& t) const {
  if (!promotes()) return 0;
  const auto first = newest_attempt(t);
  return first == t.reports.begin() ? 0 : std::prev(first)->step;
}

std::int64_t EarlyStopping::target_step(const Trial& t) const {
  return promotes() ? spec_.target_step(bracket_of(t.id), resume_step(t)) : spec_.max_step;
}

std::vector<std::pair<std::int64_t, double>> EarlyStopping::rung_values(const RunState& state, int task, int bracket,
                                                                        std::int64_t rung) const {
  std::vector<std::pair<std::int64_t, double>> values;
  for (const std::int64_t id : state.task_trials(task)) {
    if (bracket_of(id) != bracket) continue;
    if (const auto at = at_rung(state.trial(id), rung)) values.emplace_back(id, at->value);
  }
  return values;
}

std::string EarlyStopping::describe(const Trial& t, std::size_t k, const AtRung& mine) const {
  const std::vector<std::int64_t>& rungs = rungs_[static_cast<std::size_t>(bracket_of(t.id))];
  std::string text = std::string(jobs::to_string(spec_.rule)) + " at " + spec_.step_name + " " + std::to_string(mine.step) +
                     " (rung " + std::to_string(k + 1) + " of " + std::to_string(rungs.size());
  if (rungs_.size() > 1) text += ", bracket " + std::to_string(bracket_of(t.id));
  return text + "): ";
}

std::optional<StopDecision> EarlyStopping::decide(const RunState& state, const Trial& t, std::size_t k) const {
  const std::int64_t rung = rungs_[static_cast<std::size_t>(bracket_of(t.id))][k];
  const std::optional<AtRung> mine = at_rung(t, rung);
  if (!mine) return std::nullopt;
  return spec_.rule == jobs::StoppingRule::median ? decide_median(state, t, k, *mine) : decide_asha(state, t, k, *mine);
}

std::optional<StopDecision> EarlyStopping::decide_hurdle(const RunState& state, const Trial& t, std::size_t k,
                                                         const AtRung& mine) const {
  if (!spec_.transfer || t.proposed_by == ProposalSource::earlier_best) return std::nullopt;
  const std::int64_t rung = rungs_[static_cast<std::size_t>(bracket_of(t.id))][k];
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

std::optional<StopDecision> EarlyStopping::decide_asha(const RunState& state, const Trial& t, std::size_t k,
                                                       const AtRung& mine) const {
  if (std::optional<StopDecision> stop = decide_hurdle(state, t, k, mine)) return stop;
  const int bracket = bracket_of(t.id);
  const std::int64_t rung = rungs_[static_cast<std::size_t>(bracket)][k];
  std::vector<double> others;
  for (const auto& [id, value] : rung_values(state, t.task, bracket, rung)) {
    if (id != t.id) others.push_back(oriented(value));
  }
  if (others.empty()) return std::nullopt;
  std::sort(others.begin(), others.end());
  const double cutoff = quantile(others, 1.0 - 1.0 / spec_.eta);
  if (oriented(mine.value) >= cutoff) return std::nullopt;
  return StopDecision{t.id, t.attempts, mine.step, mine.value, mine.elapsed_s,
                      describe(t, k, mine) + format_objective(mine.value) + " is worse than " + format_objective(oriented(cutoff)) +
                          ", the cutoff of the best 1/" + std::to_string(spec_.eta) + " of " +
                          std::to_string(others.size()) + " other trial(s) there"};
}

std::optional<StopDecision> EarlyStopping::decide_median(const RunState& state, const Trial& t, std::size_t k,
                                                         const AtRung& mine) const {
  const std::int64_t rung = rungs_[0][k];
  std::vector<double> averages;
  for (const std::int64_t id : state.task_trials(t.task)) {
    if (id == t.id) continue;
    const Trial& other = state.trial(id);
    const std::optional<AtRung> at = at_rung(other, rung);
    if (!at) continue;
    const auto [begin, end] = curve(other);
    double sum = 0;
    int n = 0;
    for (auto r = begin; r != end && r->step <= at->step; ++r, ++n) sum += oriented(r->value);
    averages.push_back(sum / n);
  }
  if (static_cast<int>(averages.size()) < spec_.min_trials) return std::nullopt;
  std::sort(averages.begin(), averages.end());
  const double median = quantile(averages, 0.5);
  const auto [begin, end] = curve(t);
  double best = oriented(begin->value);
  for (auto r = begin; r != end && r->step <= mine.step; ++r) best = std::max(best, oriented(r->value));
  if (best >= median) return std::nullopt;
  return StopDecision{t.id, t.attempts, mine.step, mine.value, mine.elapsed_s,
                      describe(t, k, mine) + "its best " + format_objective(oriented(best)) + " is worse than " +
                          format_objective(oriented(median)) + ", the median of " + std::to_string(averages.size()) +
                          " other trial(s)' running averages there"};
}

void EarlyStopping::decide_reached(const RunState& state, const Trial& t, std::vector<StopDecision>& out) {
  const std::vector<std::int64_t>& rungs = rungs_[static_cast<std::size_t>(bracket_of(t.id))];
  const std::int64_t last = t.last_step(t.attempts);
  std::size_t& decided = decided_[{t.id, t.attempts}];
  for (; decided < rungs.size() && rungs[decided] <= last; ++decided) {
    if (std::optional<StopDecision> stop = decide(state, t, decided)) {
      out.push_back(std::move(*stop));
      decided = rungs.size();
      return;
    }
  }
}

std::vector<StopDecision> EarlyStopping::after_reports(const RunState& state, const std::vector<std::int64_t>& reported) {
  std::vector<StopDecision> out;
  if (promotes()) {
    decide_targets(state, reported, out);
    return out;
  }
  if (sync_) return decide_waiting(state);
  std::set<std::int64_t> seen;
  for (const std::int64_t id : reported) {
    if (!seen.insert(id).second) continue;
    const Trial& t = state.trial(id);
    if (t.running) decide_reached(state, t, out);
  }
  return out;
}

std::vector<StopDecision> EarlyStopping::after_end(const RunState& state) {
  return sync_ && !promotes() ? decide_waiting(state) : std::vector<StopDecision>();
}

// ---- promotion mode ---------------------------------------------------------------------------

// A trial's own reports decide its pause: with --sync too, no wait for the others is needed.
void EarlyStopping::decide_targets(const RunState& state, const std::vector<std::int64_t>& reported,
                                   std::vector<StopDecision>& out) const {
  std::set<std::int64_t> seen;
  for (const std::int64_t id : reported) {
    const Trial& t = state.trial(id);
    if (!seen.insert(id).second || !t.running) continue;
    const std::int64_t target = target_step(t);
    if (target >= spec_.max_step || t.last_step(t.attempts) < target) continue;
    const std::vector<std::int64_t>& rungs = rungs_[static_cast<std::size_t>(bracket_of(t.id))];
    const auto k = static_cast<std::size_t>(std::find(rungs.begin(), rungs.end(), target) - rungs.begin());
    const std::optional<AtRung> mine = at_rung(t, target);
    if (!mine || k == rungs.size()) continue;
    if (std::optional<StopDecision> stop = decide_hurdle(state, t, k, *mine)) {
      out.push_back(std::move(*stop));
      continue;
    }
    out.push_back({t.id, t.attempts, mine->step, mine->value, mine->elapsed_s,
                   describe(t, k, *mine) + "paused at " + format_objective(mine->value) + " to wait for a promotion", true});
  }
}

std::size_t EarlyStopping::paused_rung(const Trial& t) const {
  const std::vector<std::int64_t>& rungs = rungs_[static_cast<std::size_t>(bracket_of(t.id))];
  const auto above = std::upper_bound(rungs.begin(), rungs.end(), t.outcome.last_step);
  return above == rungs.begin() ? 0 : static_cast<std::size_t>(above - rungs.begin()) - 1;
}

bool EarlyStopping::quiet(const RunState& state, int task) {
  if (state.accepts_trials(task)) return false;
  const auto of_task = [&](std::int64_t id) { return state.trial(id).task == task; };
  if (std::any_of(state.interrupted().begin(), state.interrupted().end(), of_task) ||
      std::any_of(state.retries().begin(), state.retries().end(), of_task)) {
    return false;
  }
  const std::vector<std::int64_t>& ids = state.task_trials(task);
  return std::none_of(ids.begin(), ids.end(), [&](std::int64_t id) { return state.trial(id).running; });
}

std::vector<Promotion> EarlyStopping::promotable(const RunState& state, int task, bool quiet) const {
  std::vector<std::pair<Ranked, std::string>> ranked;
  std::optional<Ranked> best_paused;
  // A task whose budget_steps is spent promotes nothing more (but for the fallback below).
  const bool steps_left = state.steps_left(task);
  for (const std::int64_t id : state.paused()) {
    const Trial& t = state.trial(id);
    if (t.task != task) continue;
    const int bracket = bracket_of(id);
    const std::size_t k = paused_rung(t);
    const Ranked mine{k, oriented(t.outcome.objective), id};
    if (!best_paused || mine < *best_paused) best_paused = mine;
    const std::int64_t rung = rungs_[static_cast<std::size_t>(bracket)][k];
    std::vector<Ranked> members;
    for (const auto& [other, value] : rung_values(state, task, bracket, rung)) members.push_back({k, oriented(value), other});
    std::sort(members.begin(), members.end());
    const std::size_t top = members.size() / static_cast<std::size_t>(spec_.eta);
    const auto place = static_cast<std::size_t>(
        std::find_if(members.begin(), members.end(), [&](const Ranked& m) { return m.id == id; }) - members.begin());
    if (place < top && steps_left) {
      ranked.emplace_back(mine, "among the best " + std::to_string(top) + " of the " + std::to_string(members.size()) +
                                    " trials at " + spec_.step_name + " " + std::to_string(rung) + " (rung " +
                                    std::to_string(k + 1) + ")");
    }
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Promotion> out;
  for (auto& [r, reason] : ranked) out.push_back({r.id, std::move(reason)});
  if (out.empty() && quiet && best_paused && state.tasks()[static_cast<std::size_t>(task)].ok == 0) {
    out.push_back({best_paused->id, "the best paused trial of its task, which has nothing left to run and no trial run to " +
                                        spec_.step_name + " " + std::to_string(spec_.max_step)});
  }
  return out;
}

std::optional<Promotion> EarlyStopping::promotion(const RunState& state, const std::function<bool(int task)>& allowed,
                                                  const std::function<bool(std::int64_t trial)>& busy) const {
  std::set<int> tasks;
  for (const std::int64_t id : state.paused()) tasks.insert(state.trial(id).task);
  for (const int task : tasks) {
    if (!allowed(task)) continue;
    for (Promotion& p : promotable(state, task, quiet(state, task))) {
      if (!busy(p.trial)) return std::move(p);
    }
  }
  return std::nullopt;
}

std::vector<StopDecision> EarlyStopping::unpromoted(const RunState& state) const {
  std::set<int> tasks;
  for (const std::int64_t id : state.paused()) tasks.insert(state.trial(id).task);
  std::vector<StopDecision> out;
  for (const int task : tasks) {
    if (!quiet(state, task) || !promotable(state, task, true).empty()) continue;
    std::vector<std::int64_t> ids;
    for (const std::int64_t id : state.paused()) {
      if (state.trial(id).task == task) ids.push_back(id);
    }
    std::sort(ids.begin(), ids.end());
    for (const std::int64_t id : ids) {
      const Trial& t = state.trial(id);
      const std::size_t k = paused_rung(t);
      const int bracket = bracket_of(id);
      const std::size_t members = rung_values(state, task, bracket, rungs_[static_cast<std::size_t>(bracket)][k]).size();
      const AtRung mine{t.outcome.last_step, t.outcome.objective, t.outcome.duration_s};
      out.push_back({id, t.attempts, mine.step, mine.value, mine.elapsed_s,
                     describe(t, k, mine) + "paused at " + format_objective(mine.value) + " and not promoted: not among the best " +
                         std::to_string(members / static_cast<std::size_t>(spec_.eta)) + " of the " + std::to_string(members) +
                         " trials there when its task had nothing left to run"});
    }
  }
  return out;
}

// --sync: a rung is decided for the running trials of a task and bracket once all of them have
// reached it; then for each of them in id order, against every value at the rung, theirs
// included. After a rung that stopped any, the group's next rung is left for the next call.
std::vector<StopDecision> EarlyStopping::decide_waiting(const RunState& state) {
  std::map<std::pair<int, int>, std::vector<const Trial*>> running;  // (task, bracket) → trials
  for (const Trial& t : state.trials()) {
    if (t.running && !t.lost()) running[{t.task, bracket_of(t.id)}].push_back(&t);
  }
  std::vector<StopDecision> out;
  for (auto& [key, trials] : running) {
    const std::vector<std::int64_t>& rungs = rungs_[static_cast<std::size_t>(key.second)];
    for (std::size_t k = 0; k < rungs.size() && !trials.empty(); ++k) {
      const bool all_reached = std::all_of(trials.begin(), trials.end(),
                                           [&](const Trial* t) { return t->last_step(t->attempts) >= rungs[k]; });
      if (!all_reached) break;
      std::vector<const Trial*> going_on;
      const std::size_t stops_before = out.size();
      for (const Trial* t : trials) {
        std::size_t& decided = decided_[{t->id, t->attempts}];
        if (decided > k) {
          going_on.push_back(t);
          continue;
        }
        decided = k + 1;
        if (std::optional<StopDecision> stop = decide(state, *t, k)) {
          out.push_back(std::move(*stop));
        } else {
          going_on.push_back(t);
        }
      }
      // The trials stopped here may have reported past this rung before the stop reaches them:
      // the next rung waits until the state says they are stopped (the caller asks again).
      if (out.size() > stops_before) break;
      trials = std::move(going_on);
    }
  }
  return out;
}

}  // namespace lbo::orchestrator
