#pragma once
// Early stopping (private to fidelity/): which running trials to stop on their intermediate
// reports, by the job's [early_stopping] rule in stop mode (promotion mode: promotions.hpp).
// Every decision is a function of the run state (the journal): the rung table of a task's
// trials (rung_table.hpp) and, without --sync, the order in which reports were journaled.
// The rule that judges a trial at a rung is the job's StopRule (stop_rule.hpp: asha and
// hyperband in asha_rule.cpp, median in median_rule.cpp).
// With --sync the decisions at a rung wait until every running trial of the task and bracket
// has reached it, and are then made together (a synchronous successive halving per round), so
// neither the order of reports nor a resume changes them. A trial of the round that ends before
// the others reach a rung it passed is held (hold()): it still counts as running, is judged at
// each rung it reached with the others, and its result is released only then (released()), as a
// stop at a rung when the rule says so. For rungs past its last step it waits for nobody.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "lbo/orchestrator/run_state.hpp"
#include "rung_table.hpp"
#include "stop_rule.hpp"

namespace lbo::orchestrator {

class EarlyStopping {
 public:
  /// `parts` (the rung table, the forecast) outlive this.
  EarlyStopping(const StopRuleParts& parts, bool sync);
  ~EarlyStopping();

  /// The trials to stop now that the reports of `reported` (trial ids, in the order their
  /// reports came) are applied to `state`. Without --sync: each one's rungs up to its newest
  /// step, in order; with --sync: every rung whose wait ended.
  std::vector<StopDecision> after_reports(const RunState& state, const std::vector<std::int64_t>& reported);
  /// With --sync, an attempt that ended may end a rung's wait: the trials to stop now. With
  /// --sync, ask again (after_end) once the stops are applied, until none comes.
  std::vector<StopDecision> after_end(const RunState& state);

  /// With --sync: whether the attempt of `t` that just ended ok (its result not yet applied)
  /// must wait for rungs it reached that are not decided yet; it is then held.
  bool hold(const Trial& t);
  /// The rule's lines for the log since the last call (StopRule::notes).
  std::vector<std::string> notes() { return rule_->notes(); }
  /// Whether trial `id`'s attempt `attempt` is held.
  bool held(std::int64_t id, int attempt) const;
  /// The held attempts whose rungs are all decided without a stop, in trial order, no longer
  /// held (their results may be applied now); held attempts that were stopped are forgotten.
  std::vector<workers::AttemptKey> released(const RunState& state);

 private:
  /// The decision on `t` at rung `k` of its bracket: a stop, or nothing.
  std::optional<StopDecision> decide(const RunState& state, const Trial& t, std::size_t k) const;
  /// The rungs of `t`'s newest attempt it has reached and that are not decided yet, in order,
  /// deciding each until one stops it (into `out`).
  void decide_reached(const RunState& state, const Trial& t, std::vector<StopDecision>& out);
  std::vector<StopDecision> decide_waiting(const RunState& state);
  /// How many rungs of `t`'s bracket lie at or before the newest step of its newest attempt.
  std::size_t rungs_reached(const Trial& t) const;

  const RungTable& table_;
  std::unique_ptr<StopRule> rule_;
  bool sync_;
  std::map<workers::AttemptKey, std::size_t> decided_;  // (trial, attempt) → rungs decided
  std::set<workers::AttemptKey> held_;                   // (trial, attempt), --sync
};

}  // namespace lbo::orchestrator
