// gp: a GP per task, no transfer (the baseline).
#include "models.hpp"

namespace lbo::orchestrator::models {

ModelEntry gp_model() {
  ModelEntry e;
  e.kind = jobs::SurrogateKind::gp;
  e.make = [](const jobs::PolicySpec&, int) -> std::unique_ptr<surrogate::Surrogate> {
    return std::make_unique<surrogate::GpSurrogate>();
  };
  return e;
}

}  // namespace lbo::orchestrator::models
