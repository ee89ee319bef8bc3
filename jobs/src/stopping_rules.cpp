#include <algorithm>
#include <stdexcept>

#include "lbo/jobs/job_spec.hpp"

namespace lbo::jobs {

namespace {

// A new rule is one line here (and its class with one registry line in
// orchestrator/fidelity/src/stop_rule.cpp).
constexpr StoppingRuleTraits kCatalog[] = {
    // rule                   name         brackets promotes min_trials transfer forecasts
    {StoppingRule::asha, "asha", false, true, false, true, false},
    {StoppingRule::hyperband, "hyperband", true, true, false, true, false},
    {StoppingRule::median, "median", false, false, true, false, false},
    {StoppingRule::predictive, "predictive", false, true, false, false, true},
};

}  // namespace

std::span<const StoppingRuleTraits> stopping_rule_catalog() { return kCatalog; }

const StoppingRuleTraits& traits_of(StoppingRule rule) {
  const auto* it = std::find_if(std::begin(kCatalog), std::end(kCatalog), [rule](const StoppingRuleTraits& t) { return t.rule == rule; });
  if (it == std::end(kCatalog)) throw std::logic_error("a stopping rule without its line in jobs/src/stopping_rules.cpp");
  return *it;
}

}  // namespace lbo::jobs
