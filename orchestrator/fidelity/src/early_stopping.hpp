#pragma once
// Early stopping (private to fidelity/): which running trials to stop on their intermediate
// reports, by the job's [early_stopping] rule in stop mode (promotion mode: promotions.hpp).
// Every decision is a function of the run state (the journal): the rung table of a task's
// trials (rung_table.hpp) and, without --sync, the order in which reports were journaled.
// - asha (Li et al., "A System for Massively Parallel Hyperparameter Tuning", MLSys 2020, in
//   its stopping form as Ray Tune runs it): a trial reaching a rung is stopped when its value
//   is worse than the (1 − 1/η) quantile (linear interpolation) of the values the bracket's
//   other trials of its task have there; the first to reach a rung always goes on.
// - hyperband (Li et al., JMLR 2018): ASHA in each bracket.
// - median (Golovin et al., "Google Vizier", KDD 2017): at a rung, a trial whose best value so
//   far is worse than the median of the running averages (up to the rung) of the other trials
//   of its task that reached it is stopped, once min_trials others have.
// - transfer (asha, hyperband): RUSH's hurdles (RungTable::hurdle) come first.
// With --sync the decisions at a rung wait until every running trial of the task and bracket
// has reached it, and are then made together (a synchronous successive halving per round), so
// neither the order of reports nor a resume changes them. A trial of the round that ends before
// the others reach a rung it passed is held (hold()): it still counts as running, is judged at
// each rung it reached with the others, and its result is released only then (released()), as a
// stop at a rung when the rule says so. For rungs past its last step it waits for nobody.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "lbo/orchestrator/run_state.hpp"
#include "rung_table.hpp"

namespace lbo::orchestrator {

class EarlyStopping {
 public:
  /// `table` outlives this.
  EarlyStopping(const RungTable& table, bool sync);

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
  /// Whether trial `id`'s attempt `attempt` is held.
  bool held(std::int64_t id, int attempt) const;
  /// The held attempts whose rungs are all decided without a stop, in trial order, no longer
  /// held (their results may be applied now); held attempts that were stopped are forgotten.
  std::vector<workers::AttemptKey> released(const RunState& state);

 private:
  /// The decision on `t` at rung `k` of its bracket: a stop, or nothing.
  std::optional<StopDecision> decide(const RunState& state, const Trial& t, std::size_t k) const;
  std::optional<StopDecision> decide_asha(const RunState& state, const Trial& t, std::size_t k,
                                          const RungTable::AtRung& mine) const;
  std::optional<StopDecision> decide_median(const RunState& state, const Trial& t, std::size_t k,
                                            const RungTable::AtRung& mine) const;
  /// The rungs of `t`'s newest attempt it has reached and that are not decided yet, in order,
  /// deciding each until one stops it (into `out`).
  void decide_reached(const RunState& state, const Trial& t, std::vector<StopDecision>& out);
  std::vector<StopDecision> decide_waiting(const RunState& state);
  /// How many rungs of `t`'s bracket lie at or before the newest step of its newest attempt.
  std::size_t rungs_reached(const Trial& t) const;

  const RungTable& table_;
  const jobs::EarlyStoppingSpec& spec_;
  bool sync_;
  std::map<workers::AttemptKey, std::size_t> decided_;  // (trial, attempt) → rungs decided
  std::set<workers::AttemptKey> held_;                   // (trial, attempt), --sync
};

}  // namespace lbo::orchestrator
