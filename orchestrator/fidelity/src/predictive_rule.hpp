#pragma once
// The predictive rule's judgement (private to fidelity/): the probability that a trial's value at
// max_step beats its task's best, from its forecast (curve_forecast.hpp). The stop rule
// (predictive_rule.cpp) stops below [early_stopping] min_probability; in promotion mode,
// Promotions promotes the paused trials at or above it, the likeliest first.

#include <cstddef>
#include <optional>
#include <string>

#include "curve_forecast.hpp"
#include "lbo/orchestrator/run_state.hpp"
#include "rung_table.hpp"
#include "stop_rule.hpp"

namespace lbo::orchestrator {

/// A probability as a percentage: "12.5%", "0.3%", "0.042%", "below 0.01%".
std::string percent(double p);

class PredictiveJudge {
 public:
  struct Chance {
    double probability = 0;  ///< P(value at max_step beats the task's best)
    Forecast forecast;       ///< oriented
    double best = 0;         ///< the task's best, oriented
  };

  /// `table` and `forecast` outlive this. `sync`: a --sync run, whose decisions within a round
  /// read only the results from before it (within_round()).
  PredictiveJudge(const RungTable& table, const CurveForecast& forecast, bool sync);

  /// `t`'s chance at rung `k` of bracket 0, where its value is `mine`: nothing while its task has
  /// no result (ok and feasible) or the rung's regression too few curves. Of the results whose
  /// final_seq is below `before`, when given: its task's best and the curves.
  std::optional<Chance> chance(const RunState& state, const Trial& t, std::size_t k, const RungTable::AtRung& mine,
                               std::optional<std::int64_t> before) const;
  /// The bound for a decision on `t` made while its round runs (a stop, a pause): with --sync the
  /// results from before `t` started (Trial::finals_before), so that the round resumed after some
  /// of its trials ended decides alike; none without.
  std::optional<std::int64_t> within_round(const Trial& t) const;
  /// "its forecast at epoch 81 is 0.712345 ± 0.021 (from 57 curve(s) of 3 task(s)): a
  /// probability of 0.3% to beat the task's best, 0.74".
  std::string explain(const Chance& c) const;
  /// The best value of the stopping objective among `task`'s feasible ok trials (whose
  /// final_seq is below `before`, when given), oriented.
  std::optional<double> task_best(const RunState& state, int task, std::optional<std::int64_t> before) const;

 private:
  const RungTable& table_;
  const CurveForecast& forecast_;
  bool sync_;
};

}  // namespace lbo::orchestrator
