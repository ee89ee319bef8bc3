#pragma once
// What early stopping saved ([early_stopping]): the steps the trials that ended ok or stopped
// ran, against what they would have run had every one gone to max_step, and about how much
// trial time that is. Read by the "task done" line, the run's last line, `lbo status` and the
// report.

#include <cstdint>
#include <string>

#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

struct StepSavings {
  int trials = 0;             ///< trials that ended ok or stopped
  std::int64_t spent = 0;     ///< the steps they ran (Trial::steps_spent)
  std::int64_t full = 0;      ///< max_step × trials: each run to max_step
  /// The median time per step of the attempts that reported twice or more, from their reports'
  /// elapsed times (a process's start, before its first report, not counted); NaN without one.
  double seconds_per_step = 0;

  std::int64_t saved() const { return full - spent; }
  /// About the trial time the saved steps would have taken (NaN without seconds_per_step).
  double saved_seconds() const { return static_cast<double>(saved()) * seconds_per_step; }
};

/// Of `task`'s trials (every task's when negative).
StepSavings step_savings(const RunState& state, std::int64_t max_step, int task = -1);

/// "870 of 1728 epoch steps (49.7% saved: about 14.4 min of trial time)"; empty without a trial.
std::string describe(const StepSavings& savings, const std::string& step_name);

}  // namespace lbo::orchestrator
