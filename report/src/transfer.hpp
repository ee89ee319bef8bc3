#pragma once
// Did transfer help: the runs of one report measured per task against one target (private to
// report/).

#include <nlohmann/json_fwd.hpp>

namespace lbo::report {

/// The share of the gap between a typical configuration and the best any run found that a
/// run's best so far may still miss and count as having reached the target.
inline constexpr double kTargetGap = 0.05;

/// For each task (matched by name across `runs`, the documents of run_data), the values every
/// run is measured against, whatever its own start:
///   best: the best objective any of the runs found on the task;
///   typical: the median of every successful result of the task, pooled over the runs (what a
///     configuration drawn at random tends to give; the worst result where it equals the best);
///   normalized regret after k trials: (best − best so far) / (best − typical), clipped to
///     [0, 1], and 1 before the first success, for the run's finished trials of the task in
///     trial-id order (failed trials count as trials and improve nothing).
/// Per run and task: trials_to_target, the first k whose regret is at most kTargetGap (null: not
/// reached); mean_regret, the mean regret over the first `compared` trials, where `compared` is
/// the fewest finished trials any of the runs has on the task (equal trials for every run). A
/// run that starts at the best earlier tasks found scores 1 and a small mean: a good start is
/// credited, not punished. Runs whose direction differs from the first run's are left out (null).
/// {"gap": kTargetGap, "tasks": [{"name", "best", "typical", "target", "compared",
///   "runs": [{"finished", "trials_to_target", "mean_regret", "first_regret"} | null, ...]}],
///  "notes": [...]}
nlohmann::json transfer_json(const nlohmann::json& runs);

}  // namespace lbo::report
