// jumbo: a warm GP on features learned from finished tasks and a cold GP per task (JUMBO).
#include "lbo/surrogate/jumbo.hpp"

#include <algorithm>

#include "models.hpp"

namespace lbo::orchestrator::models {

namespace {

// What the warm network learned from, when it changes (and that there is none yet).
void log_network(const surrogate::JumboState* before, const surrogate::JumboState& after, const jobs::PolicySpec& policy,
                 const ModelLog& log) {
  if (before && before->trained_key == after.trained_key && !before->network.empty()) return;
  if (after.network.empty()) {
    if (!before) log.log("jumbo: no task has finished yet: proposals come from each task's cold GP alone");
    return;
  }
  std::int64_t rows = 0;
  for (std::size_t i = 1; i < after.trained_key.size(); i += 2) rows += after.trained_key[i];
  log.log("jumbo: the warm network learned from " + std::to_string(after.trained_key.size() / 2) + " finished task(s), " +
          std::to_string(rows) + " results; open tasks propose from the cold GP among the warm GP's best (jumbo_threshold " +
          format_number(policy.jumbo_threshold) + ")" +
          (policy.jumbo_cold_switch ? ", or from the cold GP alone while it predicts their results better (jumbo_cold_switch)"
                                    : ""));
}

}  // namespace

ModelEntry jumbo_model() {
  ModelEntry e;
  e.kind = jobs::SurrogateKind::jumbo;
  e.make = [](const jobs::PolicySpec& policy, int dimension) -> std::unique_ptr<surrogate::Surrogate> {
    surrogate::JumboOptions options;
    options.hidden.assign(static_cast<std::size_t>(std::max(policy.network_depth - 1, 0)), policy.network_width);
    options.threshold = policy.jumbo_threshold;
    options.cold_switch = policy.jumbo_cold_switch;
    return std::make_unique<surrogate::Jumbo>(dimension, options);
  };
  e.describe = [](const surrogate::SurrogateState& state, std::size_t m, bool fitted, TaskModelReport& report) {
    if (state.jumbo && fitted) report.kernels = surrogate::describe_jumbo_task(*state.jumbo, m);
  };
  e.log_fit = [](const surrogate::SurrogateState* before, const surrogate::SurrogateState& after,
                 const jobs::PolicySpec& policy, const ModelLog& log) {
    const auto& jumbo = after.jumbo;
    if (!jumbo) return;
    const surrogate::JumboState* old_state = before && before->jumbo ? &*before->jumbo : nullptr;
    log_network(old_state, *jumbo, policy, log);
    if (jumbo->network.empty() || !policy.jumbo_cold_switch) return;
    SwitchDensities old;
    if (old_state && !old_state->network.empty()) old = {&old_state->loo_cold, &old_state->loo_warm};
    log_switches("jumbo", old, {&jumbo->loo_cold, &jumbo->loo_warm}, [&](std::size_t m) {
      return surrogate::describe_jumbo_task(*jumbo, m) +
             (surrogate::jumbo_cold_alone(*jumbo, m) ? ": the warm GP's features predict its own results worse" : "");
    }, log);
  };
  // The warm network, and per task the GP it proposes from.
  e.status = [](const surrogate::SurrogateState& state, const SavedTasks& tasks) -> std::string {
    const auto& jumbo = state.jumbo;
    if (!jumbo) return "";
    std::int64_t rows = 0;
    for (std::size_t i = 1; i < jumbo->trained_key.size(); i += 2) rows += jumbo->trained_key[i];
    std::string out = "jumbo warm network: " +
                      (jumbo->network.empty() ? std::string("none yet (no finished task; each task is its cold GP)")
                                              : "trained on " + std::to_string(jumbo->trained_key.size() / 2) +
                                                    " finished task(s), " + std::to_string(rows) + " results") +
                      "\n";
    if (jumbo->network.empty()) return out;
    out += "jumbo model per task (at its last fit):\n";
    for (std::size_t i = 0; i < tasks.names.size(); ++i) {
      const std::size_t k = tasks.model_tasks[i];
      if (k < jumbo->cold.fitted_sizes.size() && jumbo->cold.fitted_sizes[k] > 0) {
        out += "  " + padded(tasks.names[i], tasks.width) + surrogate::describe_jumbo_task(*jumbo, k) + "\n";
      }
    }
    return out;
  };
  return e;
}

}  // namespace lbo::orchestrator::models
