// ASHA (Li et al., "A System for Massively Parallel Hyperparameter Tuning", MLSys 2020), in its
// stopping form as Ray Tune runs it: a trial reaching a rung is stopped when its value is worse
// than the (1 − 1/η) quantile (linear interpolation) of the values the bracket's other trials
// of its task have there; the first to reach a rung always goes on. Hyperband (Li et al., JMLR
// 2018) is ASHA in each of its brackets (RungTable). With `transfer`, RUSH's hurdles
// (RungTable::hurdle) come first.

#include <algorithm>
#include <string>
#include <vector>

#include "lbo/orchestrator/run_outputs.hpp"
#include "lbo/surrogate/linalg.hpp"
#include "stop_rule.hpp"

namespace lbo::orchestrator {

namespace {

class AshaRule final : public StopRule {
 public:
  explicit AshaRule(const RungTable& table) : table_(table), eta_(table.spec().eta) {}

  std::optional<StopDecision> decide(const RunState& state, const Trial& t, std::size_t k,
                                     const RungTable::AtRung& mine) const override {
    if (std::optional<StopDecision> stop = table_.hurdle(state, t, k, mine)) return stop;
    const int bracket = table_.bracket_of(t.id);
    const std::int64_t rung = table_.rungs(bracket)[k];
    std::vector<double> others;
    for (const auto& [id, value] : table_.rung_values(state, t.task, bracket, rung)) {
      if (id != t.id) others.push_back(table_.oriented(value));
    }
    if (others.empty()) return std::nullopt;
    std::sort(others.begin(), others.end());
    const double cutoff = surrogate::sample_quantile(others, 1.0 - 1.0 / eta_);
    if (table_.oriented(mine.value) >= cutoff) return std::nullopt;
    return StopDecision{t.id, t.attempts, mine.step, mine.value, mine.elapsed_s,
                        table_.describe(t, k, mine) + format_objective(mine.value) + " is worse than " +
                            format_objective(table_.oriented(cutoff)) + ", the cutoff of the best 1/" + std::to_string(eta_) +
                            " of " + std::to_string(others.size()) + " other trial(s) there"};
  }

 private:
  const RungTable& table_;
  int eta_;
};

}  // namespace

std::unique_ptr<StopRule> make_asha_rule(const StopRuleParts& parts) { return std::make_unique<AshaRule>(parts.table); }

}  // namespace lbo::orchestrator
