#include "models.hpp"

#include <algorithm>
#include <cmath>

#include "lbo/jobs/objective.hpp"
#include "lbo/orchestrator/saved_model.hpp"
#include <cstdio>
#include <stdexcept>

#include "lbo/surrogate/residual.hpp"
#include "lbo/surrogate/transfer.hpp"

namespace lbo::orchestrator::models {

std::span<const ModelEntry> model_entries() {
  // A new model is one line here (and its line in jobs/src/surrogates.cpp).
  static const ModelEntry entries[] = {gp_model(), ablr_model(), lbo_model(), libo_model(), jumbo_model()};
  return entries;
}

const ModelEntry& model_entry(jobs::SurrogateKind kind) {
  for (const ModelEntry& e : model_entries()) {
    if (e.kind == kind) return e;
  }
  throw std::logic_error("surrogate " + std::string(jobs::to_string(kind)) + " has no entry in policy/src/models/");
}

std::unique_ptr<surrogate::Surrogate> with_gp_layers(std::unique_ptr<surrogate::Surrogate> model,
                                                     const jobs::PolicySpec& policy, bool on_by_default) {
  if (policy.residual_gp.value_or(on_by_default)) model = std::make_unique<surrogate::ResidualGp>(std::move(model));
  if (policy.transfer_gp.value_or(on_by_default)) model = std::make_unique<surrogate::TransferGp>(std::move(model));
  return model;
}

bool SwitchDensities::compared(std::size_t m) const {
  return taken && other && m < taken->size() && m < other->size() && !std::isnan((*taken)[m]) && !std::isnan((*other)[m]);
}

void log_switches(const std::string& model, SwitchDensities before, SwitchDensities after,
                  const std::function<std::string(std::size_t)>& describe, const ModelLog& log) {
  for (std::size_t k = 0; k < log.run_tasks; ++k) {
    const std::size_t m = log.warm + k;
    if (!after.compared(m) || after.takes(m) == before.takes(m)) continue;
    log.log(model + ": " + log.name(k) + " proposes from " + describe(m));
  }
}

std::string padded(const std::string& name, std::size_t width) {
  std::string s = name;
  s.append(width + 2 > s.size() ? width + 2 - s.size() : 0, ' ');
  return s;
}

std::string format_number(double v) { return jobs::Objective::significant(v, 3); }

}  // namespace lbo::orchestrator::models

namespace lbo::orchestrator {

SavedModel describe_saved_model(const PolicyState& saved, const std::vector<std::string>& task_names) {
  models::SavedTasks tasks;
  tasks.names = task_names;
  tasks.width = 4;
  for (std::size_t i = 0; i < task_names.size(); ++i) {
    tasks.model_tasks.push_back(saved.warm_sources.size() + i * static_cast<std::size_t>(std::max(1, saved.steps)));
    tasks.width = std::max(tasks.width, task_names[i].size());
  }
  SavedModel out;
  out.tasks.resize(task_names.size());
  for (const models::ModelEntry& entry : models::model_entries()) {
    for (std::size_t i = 0; entry.describe && i < task_names.size(); ++i) {
      entry.describe(saved.surrogate, tasks.model_tasks[i], true, out.tasks[i]);
    }
    if (entry.status) out.sections += entry.status(saved.surrogate, tasks);
  }
  return out;
}

}  // namespace lbo::orchestrator
