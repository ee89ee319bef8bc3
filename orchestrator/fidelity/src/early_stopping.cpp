#include "early_stopping.hpp"

#include <algorithm>
#include <map>
#include <set>


namespace lbo::orchestrator {

EarlyStopping::EarlyStopping(const StopRuleParts& parts, bool sync)
    : table_(parts.table), rule_(make_stop_rule(parts)), sync_(sync) {}

EarlyStopping::~EarlyStopping() = default;

std::optional<StopDecision> EarlyStopping::decide(const RunState& state, const Trial& t, std::size_t k) const {
  const std::int64_t rung = table_.rungs(table_.bracket_of(t.id))[k];
  const std::optional<RungTable::AtRung> mine = table_.at_rung(t, rung);
  if (!mine) return std::nullopt;
  return rule_->decide(state, t, k, *mine);
}

void EarlyStopping::decide_reached(const RunState& state, const Trial& t, std::vector<StopDecision>& out) {
  const std::vector<std::int64_t>& rungs = table_.rungs(table_.bracket_of(t.id));
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
  if (sync_) return decide_waiting(state);
  std::vector<StopDecision> out;
  std::set<std::int64_t> seen;
  for (const std::int64_t id : reported) {
    if (!seen.insert(id).second) continue;
    const Trial& t = state.trial(id);
    if (t.running) decide_reached(state, t, out);
  }
  return out;
}

std::vector<StopDecision> EarlyStopping::after_end(const RunState& state) {
  return sync_ ? decide_waiting(state) : std::vector<StopDecision>();
}

std::size_t EarlyStopping::rungs_reached(const Trial& t) const {
  const std::vector<std::int64_t>& rungs = table_.rungs(table_.bracket_of(t.id));
  const std::int64_t last = t.last_step(t.attempts);
  return static_cast<std::size_t>(std::upper_bound(rungs.begin(), rungs.end(), last) - rungs.begin());
}

bool EarlyStopping::hold(const Trial& t) {
  if (!sync_) return false;
  const workers::AttemptKey key{t.id, t.attempts};
  if (decided_[key] >= rungs_reached(t)) return false;
  held_.insert(key);
  return true;
}

bool EarlyStopping::held(std::int64_t id, int attempt) const { return held_.contains({id, attempt}); }

std::vector<workers::AttemptKey> EarlyStopping::released(const RunState& state) {
  std::vector<workers::AttemptKey> out;
  for (auto it = held_.begin(); it != held_.end();) {
    const Trial& t = state.trial(it->trial);
    const bool stopped = !t.running || t.attempts != it->attempt;
    if (stopped || decided_[*it] >= rungs_reached(t)) {
      if (!stopped) out.push_back(*it);
      it = held_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

// --sync: a rung is decided for the running trials of a task and bracket once all of them have
// reached it (a held trial counts as having reached every rung, but is decided only at those
// it reached); then for each of them in id order, against every value at the rung, theirs
// included. After a rung that stopped any, the group's next rung is left for the next call.
std::vector<StopDecision> EarlyStopping::decide_waiting(const RunState& state) {
  std::map<std::pair<int, int>, std::vector<const Trial*>> running;  // (task, bracket) → trials
  for (const Trial& t : state.trials()) {
    if (t.running && !t.lost()) running[{t.task, table_.bracket_of(t.id)}].push_back(&t);
  }
  std::vector<StopDecision> out;
  for (auto& [key, trials] : running) {
    const std::vector<std::int64_t>& rungs = table_.rungs(key.second);
    for (std::size_t k = 0; k < rungs.size() && !trials.empty(); ++k) {
      const auto reached = [&](const Trial* t) { return t->last_step(t->attempts) >= rungs[k]; };
      const bool all_reached = std::all_of(trials.begin(), trials.end(), [&](const Trial* t) {
        return reached(t) || held(t->id, t->attempts);
      });
      if (!all_reached) break;
      std::vector<const Trial*> going_on;
      const std::size_t stops_before = out.size();
      for (const Trial* t : trials) {
        if (!reached(t)) continue;  // held, ended before this rung: it waits for nothing more
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
