// lbo: latent feature maps shared through an Indian buffet process (LBO), with a residual GP
// and a transfer GP by default.
#include "lbo/surrogate/lbo.hpp"

#include "models.hpp"

namespace lbo::orchestrator::models {

ModelEntry lbo_model() {
  ModelEntry e;
  e.kind = jobs::SurrogateKind::lbo;
  e.make = [](const jobs::PolicySpec& policy, int dimension) {
    surrogate::LboOptions options;
    options.hidden.assign(static_cast<std::size_t>(policy.network_depth), policy.network_width);
    options.networks = policy.networks;
    options.ibp_alpha = policy.ibp_alpha;
    return with_gp_layers(std::make_unique<surrogate::Lbo>(dimension, options), policy, true);
  };
  // How much the task uses each network, q(z_m = 1).
  // A task the fit holds but has not fitted (no result when it ran) has only the prior's usage,
  // 0.5 for every network: no usage is reported for it ("not fitted").
  e.describe = [](const surrogate::SurrogateState& state, std::size_t m, bool fitted, TaskModelReport& report) {
    if (fitted && state.lbo && m < state.lbo->tasks.size() && state.lbo->tasks[m].fitted_size > 0) {
      report.usage = state.lbo->tasks[m].usage();
    }
  };
  return e;
}

}  // namespace lbo::orchestrator::models
