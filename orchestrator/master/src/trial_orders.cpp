#include "trial_orders.hpp"

#include "lbo/jobs/protocol.hpp"

namespace lbo::orchestrator {

workers::WorkOrder work_order(const jobs::JobSpec& job, const jobs::TaskSpec& task, const RunPaths& run, const Trial& trial) {
  workers::WorkOrder order;
  order.trial = trial.id;
  order.attempt = trial.attempts;
  order.workdir = run.trial_dir(trial.id).string();
  order.params_json = job.space.to_json(trial.config);
  order.timeout_s = job.objective.timeout_s.value_or(0);
  order.kill_grace_s = job.objective.kill_grace_s;
  order.objective_names = job.objective.result_names();
  const std::string dataset = task.dataset ? task.dataset->string() : "";
  const jobs::PlaceholderValues values{dataset, task.name, std::to_string(trial.id),
                                       order.workdir + "/" + std::string(workers::kParamsFile), order.workdir};
  for (const std::string& arg : job.objective.command) order.argv.push_back(jobs::expand_placeholders(arg, values));
  order.env = {{"LBO_TASK", task.name}, {"LBO_DATASET", dataset}, {"LBO_TRIAL_ID", std::to_string(trial.id)}};
  return order;
}

void check_steps(int stepwise, workers::Outcome& outcome) {
  if (stepwise <= 0 || outcome.status != workers::TrialStatus::ok || static_cast<int>(outcome.steps.size()) == stepwise) {
    return;
  }
  outcome.status = workers::TrialStatus::failed;
  outcome.reason = "the result reports " + std::to_string(outcome.steps.size()) + " \"steps\" values; [objective] stepwise = " +
                   std::to_string(stepwise) + " expects " + std::to_string(stepwise);
}

void check_constraint_values(const std::vector<jobs::Constraint>& constraints, workers::Outcome& outcome) {
  if (outcome.status != workers::TrialStatus::ok) return;
  const jobs::ConstraintCheck check = jobs::check_constraints(constraints, outcome.metrics_json);
  if (check.problem.empty()) return;
  outcome.status = workers::TrialStatus::failed;
  outcome.reason = check.problem;
}

std::string lbo_error_message(const TrialFinished& finished) {
  const workers::Outcome& o = finished.outcome;
  return "trial " + std::to_string(finished.trial) + " could not be started on " + finished.worker + ": " + o.reason +
         (o.path.empty() ? "" : " (" + o.path + ")") + " (it runs again when the run resumes, without using a retry)";
}

TrialFinished finished_record(const Trial& trial, int attempt, const workers::Outcome& outcome, const std::string& worker,
                              double unix_time, int retries) {
  const workers::TrialStatus status = outcome.status;
  const bool final =
      status == workers::TrialStatus::ok || (!workers::runs_again_first(status) && trial.failed_attempts >= retries);
  return TrialFinished{trial.id, attempt,    final,        outcome,           worker,
                       unix_time, trial.task, trial.config, trial.proposed_by, trial.proposal_note};
}

}  // namespace lbo::orchestrator
