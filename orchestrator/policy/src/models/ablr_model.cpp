// ablr: adaptive Bayesian linear regression on shared features (Perrone et al. 2018).
#include "lbo/surrogate/ablr.hpp"

#include "models.hpp"

namespace lbo::orchestrator::models {

ModelEntry ablr_model() {
  ModelEntry e;
  e.kind = jobs::SurrogateKind::ablr;
  e.make = [](const jobs::PolicySpec& policy, int dimension) {
    surrogate::AblrOptions options;
    options.hidden.assign(static_cast<std::size_t>(policy.network_depth), policy.network_width);
    return with_gp_layers(std::make_unique<surrogate::Ablr>(dimension, options), policy, false);
  };
  return e;
}

}  // namespace lbo::orchestrator::models
