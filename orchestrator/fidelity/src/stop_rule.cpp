#include "stop_rule.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace lbo::orchestrator {

namespace {

// One line per rule. Written out, not registered by each file's static initializer: a static
// library's object that nothing names is left out of the link, and its rule with it.
struct Entry {
  jobs::StoppingRule rule;
  std::unique_ptr<StopRule> (*make)(const StopRuleParts&);
};
constexpr Entry kRules[] = {
    {jobs::StoppingRule::asha, make_asha_rule},
    {jobs::StoppingRule::hyperband, make_asha_rule},  // ASHA in each bracket
    {jobs::StoppingRule::median, make_median_rule},
    {jobs::StoppingRule::predictive, make_predictive_rule},
};

}  // namespace

std::unique_ptr<StopRule> make_stop_rule(const StopRuleParts& parts) {
  const jobs::StoppingRule rule = parts.table.spec().rule;
  const auto* it = std::find_if(std::begin(kRules), std::end(kRules), [rule](const Entry& e) { return e.rule == rule; });
  if (it == std::end(kRules)) throw std::logic_error("a stopping rule without its line in orchestrator/fidelity/src/stop_rule.cpp");
  return it->make(parts);
}

}  // namespace lbo::orchestrator
