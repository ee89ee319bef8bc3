#pragma once
// What the model a checkpoint holds says of the run's tasks, for `lbo status`: each model's
// entry in the registry (policy/src/models/) describes its own state.

#include <string>
#include <vector>

#include "lbo/orchestrator/policy.hpp"
#include "lbo/orchestrator/policy_state.hpp"

namespace lbo::orchestrator {

struct SavedModel {
  /// Per run task (`task_names`' order): what the model knows of it (lbo: its networks' usage).
  std::vector<TaskModelReport> tasks;
  /// The model's own sections (LiBO's kernel per task, JUMBO's network), lines ending in '\n'.
  std::string sections;
};

/// `saved`: a checkpoint's policy state; `task_names`: the run's tasks, in order.
SavedModel describe_saved_model(const PolicyState& saved, const std::vector<std::string>& task_names);

}  // namespace lbo::orchestrator
