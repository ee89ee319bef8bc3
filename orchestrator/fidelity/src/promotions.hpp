#pragma once
// Promotions (private to fidelity/): [early_stopping] mode = "promotion" for asha and hyperband,
// ASHA as Li et al. ("A System for Massively Parallel Hyperparameter Tuning", MLSys 2020,
// Algorithm 2) give it. A trial's attempt runs from the step it resumes after to its bracket's
// next rung (RungTable::target_step) and is paused there. A free slot promotes, before it
// starts anything new, a paused trial that is among the best ⌊n/η⌋ of the n trials of its task
// and bracket at its rung (the highest rung first, then the best value, then the lowest id). A
// task with nothing left to start first runs its best paused trials (the highest rung, then the
// best value) to max_step until η of its trials have: ASHA needs η trials at a rung to promote
// one, and a task's best must be chosen among as many full-length trials as a rung ranks. Then,
// with nothing running, it ends its paused trials `stopped`. A task whose budget_steps is
// spent promotes nothing more, but one trial to max_step if none ran there. Under the predictive
// rule a paused trial is promoted when the probability that its value at max_step beats its
// task's best is at least min_probability (the likeliest first; predictive_rule.hpp), and by
// ASHA's rank while that cannot be forecast (its task has no result, or the rung's regression
// too few curves). All of it is a function of the run state; a pause depends on the trial's own
// reports only, so --sync needs no wait.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lbo/orchestrator/run_state.hpp"
#include "predictive_rule.hpp"
#include "rung_table.hpp"

namespace lbo::orchestrator {

/// A paused trial promoted to its next rung, and why.
struct Promotion {
  std::int64_t trial = 0;
  std::string reason;  ///< "among the best 2 of the 7 trials at epoch 3 (rung 2)"
};

class Promotions {
 public:
  /// `parts` (the rung table, the forecast) outlive this.
  explicit Promotions(const StopRuleParts& parts) : table_(parts.table), judge_(parts.table, parts.forecast, parts.sync) {}

  /// The trials of `reported` (trial ids) that reached their attempt's target rung: paused, or
  /// stopped below RUSH's hurdle there.
  std::vector<StopDecision> after_reports(const RunState& state, const std::vector<std::int64_t>& reported) const;
  /// The interrupted trials whose last attempt had reached its target rung: the pauses (or
  /// hurdle stops) a master killed after journaling the report, before the pause, owed them.
  /// Run again instead, such a trial would head for its next rung unpromoted.
  std::vector<StopDecision> owed(const RunState& state) const;
  /// The paused trial to promote now, among the tasks `allowed` admits, but none of `busy` (its
  /// process has not ended yet); the first task in job order that has one.
  std::optional<Promotion> promotion(const RunState& state, const std::function<bool(int task)>& allowed,
                                     const std::function<bool(std::int64_t trial)>& busy) const;
  /// The paused trials that end `stopped` now: those of each task with nothing left to start,
  /// run or promote.
  std::vector<StopDecision> unpromoted(const RunState& state) const;

 private:
  /// What trial `t` gets for having reached its newest attempt's target rung, if it has.
  std::optional<StopDecision> at_target(const RunState& state, const Trial& t) const;
  /// The paused trials of `task` that may be promoted, best first; `finishing`: see finishing().
  std::vector<Promotion> promotable(const RunState& state, int task, bool finishing) const;
  /// spent(), and every trial of `task` that runs runs to max_step: its best paused trials are
  /// run to max_step now, side by side.
  bool finishing(const RunState& state, int task) const;
  /// Nothing of `task` is left to start or waits to run again.
  static bool spent(const RunState& state, int task);
  /// spent(), and nothing of `task` runs.
  static bool quiet(const RunState& state, int task);
  /// `task`'s trials run to max_step: finished ok, or running there.
  int run_in_full(const RunState& state, int task) const;
  /// The predictive rule's chance for paused trial `t` at its rung `k` as of now (promotions are
  /// made between --sync rounds), if the rule is that and it can be forecast.
  std::optional<PredictiveJudge::Chance> chance(const RunState& state, const Trial& t, std::size_t k) const;

  const RungTable& table_;
  PredictiveJudge judge_;
};

}  // namespace lbo::orchestrator
