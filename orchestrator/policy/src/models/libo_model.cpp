// libo: a kernel learned from the earlier tasks' exploration (LiBO), with a GP switch.
#include "lbo/surrogate/libo.hpp"

#include "models.hpp"

namespace lbo::orchestrator::models {

ModelEntry libo_model() {
  ModelEntry e;
  e.kind = jobs::SurrogateKind::libo;
  e.make = [](const jobs::PolicySpec& policy, int dimension) -> std::unique_ptr<surrogate::Surrogate> {
    surrogate::LiboOptions options;
    options.full_share = policy.libo_full_share;
    options.gp_switch = policy.libo_gp_switch;
    return std::make_unique<surrogate::Libo>(dimension, options);
  };
  e.describe = [](const surrogate::SurrogateState& state, std::size_t m, bool, TaskModelReport& report) {
    if (state.libo && m < state.libo->task_kernels.size()) report.kernels = state.libo->task_kernels[m];
  };
  // Tasks whose GP switch moved: the plain GP or k̂.
  e.log_fit = [](const surrogate::SurrogateState* before, const surrogate::SurrogateState& after,
                 const jobs::PolicySpec& policy, const ModelLog& log) {
    const auto& libo = after.libo;
    if (!libo || !policy.libo_gp_switch) return;
    SwitchDensities old;
    if (before && before->libo) old = {&before->libo->loo_plain, &before->libo->loo_learned};
    log_switches("libo", old, {&libo->loo_plain, &libo->loo_learned}, [&](std::size_t m) {
      return surrogate::libo_plain_chosen(*libo, m) ? libo->task_kernels[m] : "its k̂ GP (k̂: " + libo->task_kernels[m] + ")";
    }, log);
  };
  // The kernel k̂ per task.
  e.status = [](const surrogate::SurrogateState& state, const SavedTasks& tasks) -> std::string {
    const auto& libo = state.libo;
    if (!libo) return "";
    std::string out = "libo kernels (k̂ from the exploration of " + std::to_string(libo->learned_from.size()) +
                      " finished task(s); k_full: all base kernels):\n";
    for (std::size_t i = 0; i < tasks.names.size(); ++i) {
      const std::size_t k = tasks.model_tasks[i];
      if (k < libo->task_kernels.size() && !libo->task_kernels[k].empty()) {
        out += "  " + padded(tasks.names[i], tasks.width) + libo->task_kernels[k] + "\n";
      }
    }
    return out;
  };
  return e;
}

}  // namespace lbo::orchestrator::models
