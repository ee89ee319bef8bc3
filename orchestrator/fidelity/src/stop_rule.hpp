#pragma once
// StopRule (private to fidelity/): how a stop-mode rule judges a trial at a rung of its bracket,
// one class per rule, each with its paper (as Optuna's BasePruner). EarlyStopping
// (early_stopping.hpp) decides when a rung is judged (as reports come, or together with --sync)
// and asks the job's rule. A new rule: its class in a file of its own with a make_ function
// declared here, one line in the registry (stop_rule.cpp), its line in jobs/src/stopping_rules.cpp
// (its name and keys for the job file) and its test.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lbo/orchestrator/run_state.hpp"
#include "rung_table.hpp"

namespace lbo::orchestrator {

class CurveForecast;

class StopRule {
 public:
  virtual ~StopRule() = default;
  /// The decision on `t` at rung `k` of its bracket, where its value is `mine`: a stop, or
  /// nothing (it goes on). A function of the run state.
  virtual std::optional<StopDecision> decide(const RunState& state, const Trial& t, std::size_t k,
                                             const RungTable::AtRung& mine) const = 0;
  /// What it has to say for the log since it was last asked (a rule that cannot judge yet, and
  /// why): lines taken once.
  virtual std::vector<std::string> notes() { return {}; }
};

/// What a rule may read; both outlive it.
struct StopRuleParts {
  const RungTable& table;
  const CurveForecast& forecast;  ///< the forecast of a trial's final value from its curve
  bool sync = false;              ///< a --sync run
};

/// The job's rule (RungTable::spec().rule).
std::unique_ptr<StopRule> make_stop_rule(const StopRuleParts& parts);

// The rules, each in its own file.
std::unique_ptr<StopRule> make_asha_rule(const StopRuleParts& parts);        // asha_rule.cpp: ASHA, Hyperband's brackets
std::unique_ptr<StopRule> make_median_rule(const StopRuleParts& parts);      // median_rule.cpp: Vizier's median rule
std::unique_ptr<StopRule> make_predictive_rule(const StopRuleParts& parts);  // predictive_rule.cpp: forecast finals

}  // namespace lbo::orchestrator
