#include "promotions.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "lbo/orchestrator/run_outputs.hpp"

namespace lbo::orchestrator {

namespace {

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

// A trial's own reports decide its pause: with --sync too, no wait for the others is needed.
std::vector<StopDecision> Promotions::after_reports(const RunState& state, const std::vector<std::int64_t>& reported) const {
  std::vector<StopDecision> out;
  std::set<std::int64_t> seen;
  for (const std::int64_t id : reported) {
    const Trial& t = state.trial(id);
    if (!seen.insert(id).second || !t.running) continue;
    if (std::optional<StopDecision> d = at_target(state, t)) out.push_back(std::move(*d));
  }
  return out;
}

std::vector<StopDecision> Promotions::owed(const RunState& state) const {
  std::vector<StopDecision> out;
  for (const std::int64_t id : state.interrupted()) {
    if (std::optional<StopDecision> d = at_target(state, state.trial(id))) out.push_back(std::move(*d));
  }
  return out;
}

std::optional<StopDecision> Promotions::at_target(const RunState& state, const Trial& t) const {
  const std::int64_t target = table_.target_step(t);
  if (target >= table_.spec().max_step || t.last_step(t.attempts) < target) return std::nullopt;
  const std::vector<std::int64_t>& rungs = table_.rungs(table_.bracket_of(t.id));
  const auto k = static_cast<std::size_t>(std::find(rungs.begin(), rungs.end(), target) - rungs.begin());
  const std::optional<RungTable::AtRung> mine = table_.at_rung(t, target);
  if (!mine || k == rungs.size()) return std::nullopt;
  if (std::optional<StopDecision> stop = table_.hurdle(state, t, k, *mine)) return stop;
  StopDecision pause{t.id, t.attempts, mine->step, mine->value, mine->elapsed_s,
                     table_.describe(t, k, *mine) + "paused at " + format_objective(mine->value) + " to wait for a promotion", true};
  if (table_.spec().rule == jobs::StoppingRule::predictive) {
    if (const std::optional<PredictiveJudge::Chance> c = judge_.chance(state, t, k, *mine, judge_.within_round(t))) {
      pause.forecast = table_.oriented(c->forecast.mean);
    }
  }
  return pause;
}

bool Promotions::spent(const RunState& state, int task) {
  if (state.accepts_trials(task)) return false;
  const auto of_task = [&](std::int64_t id) { return state.trial(id).task == task; };
  return std::none_of(state.interrupted().begin(), state.interrupted().end(), of_task) &&
         std::none_of(state.retries().begin(), state.retries().end(), of_task);
}

bool Promotions::quiet(const RunState& state, int task) {
  if (!spent(state, task)) return false;
  const std::vector<std::int64_t>& ids = state.task_trials(task);
  return std::none_of(ids.begin(), ids.end(), [&](std::int64_t id) { return state.trial(id).running; });
}

bool Promotions::finishing(const RunState& state, int task) const {
  if (!spent(state, task)) return false;
  const std::vector<std::int64_t>& ids = state.task_trials(task);
  return std::none_of(ids.begin(), ids.end(), [&](std::int64_t id) {
    const Trial& t = state.trial(id);
    return t.running && table_.target_step(t) < table_.spec().max_step;
  });
}

std::optional<PredictiveJudge::Chance> Promotions::chance(const RunState& state, const Trial& t, std::size_t k) const {
  if (table_.spec().rule != jobs::StoppingRule::predictive) return std::nullopt;
  const std::optional<RungTable::AtRung> mine = table_.at_rung(t, table_.rungs(0)[k]);
  return mine ? judge_.chance(state, t, k, *mine, std::nullopt) : std::nullopt;
}

int Promotions::run_in_full(const RunState& state, int task) const {
  int full = state.tasks()[static_cast<std::size_t>(task)].ok;
  for (const std::int64_t id : state.task_trials(task)) {
    const Trial& t = state.trial(id);
    if (t.running && table_.target_step(t) >= table_.spec().max_step) ++full;
  }
  return full;
}

std::vector<Promotion> Promotions::promotable(const RunState& state, int task, bool finishing) const {
  std::vector<std::pair<Ranked, std::string>> ranked;
  std::vector<Ranked> paused;  // every paused trial of the task
  // A task whose budget_steps is spent promotes nothing more (but for the fallback below).
  const bool steps_left = state.steps_left(task);
  std::map<std::pair<int, std::size_t>, std::vector<Ranked>> rung_members;  // (bracket, rung) → its trials, best first
  for (const std::int64_t id : state.paused()) {
    const Trial& t = state.trial(id);
    if (t.task != task) continue;
    const int bracket = table_.bracket_of(id);
    const std::size_t k = table_.paused_rung(t);
    const Ranked mine{k, table_.oriented(t.outcome.objective), id};
    paused.push_back(mine);
    if (const std::optional<PredictiveJudge::Chance> c = chance(state, t, k)) {
      // The predictive rule: its chance decides, and ranks (after the rung).
      if (c->probability >= table_.spec().min_probability && steps_left) {
        ranked.emplace_back(Ranked{k, c->probability, id}, judge_.explain(*c) + ", at least " + percent(table_.spec().min_probability));
      }
      continue;
    }
    const std::int64_t rung = table_.rungs(bracket)[k];
    // Read once per rung: every paused trial waits at one (it is a member, so none is empty).
    std::vector<Ranked>& members = rung_members[{bracket, k}];
    if (members.empty()) {
      for (const auto& [other, value] : table_.rung_values(state, task, bracket, rung)) members.push_back({k, table_.oriented(value), other});
      std::sort(members.begin(), members.end());
    }
    const std::size_t top = members.size() / static_cast<std::size_t>(table_.spec().eta);
    const auto place = static_cast<std::size_t>(
        std::find_if(members.begin(), members.end(), [&](const Ranked& m) { return m.id == id; }) - members.begin());
    if (place < top && steps_left) {
      ranked.emplace_back(mine, "among the best " + std::to_string(top) + " of the " + std::to_string(members.size()) +
                                    " trials at " + table_.spec().step_name + " " + std::to_string(rung) + " (rung " +
                                    std::to_string(k + 1) + ")");
    }
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Promotion> out;
  for (auto& [r, reason] : ranked) out.push_back({r.id, std::move(reason)});
  if (!out.empty() || !finishing || paused.empty()) return out;
  // The budget is spent: the best paused trials (the highest rung, then the best value) run to
  // max_step until η have, so that the task's best is chosen among as many full-length trials
  // as a rung of the rule ranks, not taken from one (Syne Tune and Ray Tune finish the best
  // trials too). Once its budget_steps is spent, only while none has.
  const int full = run_in_full(state, task), eta = table_.spec().eta;
  const int wanted = steps_left ? eta - full : (state.tasks()[static_cast<std::size_t>(task)].ok == 0 && full == 0 ? 1 : 0);
  std::sort(paused.begin(), paused.end());
  const std::string max = table_.spec().step_name + " " + std::to_string(table_.spec().max_step);
  for (int i = 0; i < wanted && i < static_cast<int>(paused.size()); ++i) {
    out.push_back({paused[static_cast<std::size_t>(i)].id,
                   "run to " + max + " at the end of its task's budget, one of its best paused trials: " +
                       std::to_string(full) + " of the task's trials ran to " + max + " or are running there, fewer than η = " +
                       std::to_string(eta)});
  }
  return out;
}

std::optional<Promotion> Promotions::promotion(const RunState& state, const std::function<bool(int task)>& allowed,
                                                  const std::function<bool(std::int64_t trial)>& busy) const {
  std::set<int> tasks;
  for (const std::int64_t id : state.paused()) tasks.insert(state.trial(id).task);
  for (const int task : tasks) {
    if (!allowed(task)) continue;
    for (Promotion& p : promotable(state, task, finishing(state, task))) {
      if (!busy(p.trial)) return std::move(p);
    }
  }
  return std::nullopt;
}

std::vector<StopDecision> Promotions::unpromoted(const RunState& state) const {
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
      const std::size_t k = table_.paused_rung(t);
      const int bracket = table_.bracket_of(id);
      const std::size_t members = table_.rung_values(state, task, bracket, table_.rungs(bracket)[k]).size();
      const RungTable::AtRung mine{t.outcome.last_step, t.outcome.objective, t.outcome.duration_s};
      const std::optional<PredictiveJudge::Chance> c = chance(state, t, k);
      const std::string why = c ? judge_.explain(*c) + ", below " + percent(table_.spec().min_probability)
                                : "not among the best " + std::to_string(members / static_cast<std::size_t>(table_.spec().eta)) +
                                      " of the " + std::to_string(members) + " trials there";
      out.push_back({id, t.attempts, mine.step, mine.value, mine.elapsed_s,
                     table_.describe(t, k, mine) + "paused at " + format_objective(mine.value) + " and not promoted: " + why +
                         " when its task had nothing left to run"});
      if (c) out.back().forecast = table_.oriented(c->forecast.mean);
    }
  }
  return out;
}

}  // namespace lbo::orchestrator
