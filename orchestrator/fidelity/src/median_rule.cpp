// The median stopping rule (Golovin et al., "Google Vizier: A Service for Black-Box
// Optimization", KDD 2017), checked at the rungs: a trial whose best value so far is worse than
// the median of the running averages (up to the rung) of the other trials of its task that
// reached it is stopped, once min_trials others have.

#include <algorithm>
#include <string>
#include <vector>

#include "lbo/orchestrator/run_outputs.hpp"
#include "lbo/surrogate/linalg.hpp"
#include "stop_rule.hpp"

namespace lbo::orchestrator {

namespace {

class MedianRule final : public StopRule {
 public:
  explicit MedianRule(const RungTable& table) : table_(table), min_trials_(table.spec().min_trials) {}

  std::optional<StopDecision> decide(const RunState& state, const Trial& t, std::size_t k,
                                     const RungTable::AtRung& mine) const override {
    const std::int64_t rung = table_.rungs(0)[k];
    std::vector<double> averages;
    for (const std::int64_t id : state.task_trials(t.task)) {
      if (id == t.id) continue;
      const Trial& other = state.trial(id);
      const std::optional<RungTable::AtRung> at = table_.at_rung(other, rung);
      if (!at) continue;
      const auto [begin, end] = table_.curve(other);
      double sum = 0;
      int n = 0;
      for (auto r = begin; r != end && r->step <= at->step; ++r, ++n) sum += table_.oriented(r->value);
      averages.push_back(sum / n);
    }
    if (static_cast<int>(averages.size()) < min_trials_) return std::nullopt;
    std::sort(averages.begin(), averages.end());
    const double median = surrogate::sample_quantile(averages, 0.5);
    const auto [begin, end] = table_.curve(t);
    double best = table_.oriented(begin->value);
    for (auto r = begin; r != end && r->step <= mine.step; ++r) best = std::max(best, table_.oriented(r->value));
    if (best >= median) return std::nullopt;
    return StopDecision{t.id, t.attempts, mine.step, mine.value, mine.elapsed_s,
                        table_.describe(t, k, mine) + "its best " + format_objective(table_.oriented(best)) +
                            " is worse than " + format_objective(table_.oriented(median)) + ", the median of " +
                            std::to_string(averages.size()) + " other trial(s)' running averages there"};
  }

 private:
  const RungTable& table_;
  int min_trials_;
};

}  // namespace

std::unique_ptr<StopRule> make_median_rule(const StopRuleParts& parts) { return std::make_unique<MedianRule>(parts.table); }

}  // namespace lbo::orchestrator
