#pragma once
// What the model says of each of the run's model tasks, for tasks.csv, `lbo status` and the
// report (TaskModelReport). Private to policy/.

#include <vector>

#include "fit_service.hpp"
#include "model_data.hpp"
#include "models/models.hpp"

namespace lbo::orchestrator {

/// Per run model task of `run_tasks` run tasks: what the fit's model knows of it (its entry's
/// describe()) and how alike the tasks' posterior means are at points spread across the space
/// (a fixed stream: reports of the same fit agree), correlated task by task. `fit`: the
/// adopted fit, null before the first (then every report is empty).
std::vector<TaskModelReport> describe_tasks(const Snapshot* fit, const ModelData& data, const models::ModelEntry& model,
                                            const jobs::JobSpec& job, std::size_t run_tasks);

}  // namespace lbo::orchestrator
