#include "lbo/orchestrator/task_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "lbo/orchestrator/results_csv.hpp"

namespace lbo::orchestrator {

namespace {

std::string number(double v) { return std::isfinite(v) ? jobs::Objective::format(v) : std::string(); }

// ",size,hypervolume,reference,reference_from" of tasks.csv.
std::string pareto_fields(const ParetoSummary& pareto) {
  std::string reference, from;
  for (std::size_t i = 0; i < pareto.reference.size(); ++i) {
    reference += (i ? ";" : "") + number(pareto.reference[i]);
    from += (i ? ";" : "") + std::string(pareto.derived[i] ? "derived" : "job");
  }
  return "," + std::to_string(pareto.size) + "," + (pareto.reference.empty() ? "" : number(pareto.hypervolume)) + "," + reference +
         "," + from;
}

}  // namespace

TaskSummary summarize_task(const RunState& state, int task, int step) {
  const jobs::Objective objective(state.job().direction);
  TaskSummary summary;
  // (trials created so far, value) of each ok result, larger is better.
  std::vector<std::pair<int, double>> results;
  int created = 0;
  for (const std::int64_t id : state.task_trials(task)) {
    const Trial& t = state.trial(id);
    ++created;
    if (t.finished && t.outcome.status == workers::TrialStatus::stopped) ++summary.stopped;
    if (!t.finished || t.outcome.status != workers::TrialStatus::ok) continue;
    if (step >= 0 && step >= static_cast<int>(t.outcome.steps.size())) continue;
    const double value = step >= 0 ? t.outcome.steps[static_cast<std::size_t>(step)] : t.outcome.objective;
    ++summary.ok;
    if (t.infeasible) {  // outside a limit: never the best
      ++summary.infeasible;
      continue;
    }
    if (!summary.best || objective.better(value, *summary.best)) {
      summary.best = value;
      summary.best_trial = t.id;
    }
    results.emplace_back(created, objective.oriented(value));
  }
  // With several objectives the run's best, which breaks a tie by dominance (never a dominated trial).
  if (step < 0 && state.several_objectives()) {
    if (const auto best = state.tasks()[static_cast<std::size_t>(task)].best_trial) {
      summary.best_trial = *best;
      summary.best = state.trial(*best).outcome.objective;
    }
  }
  if (results.empty()) return summary;
  const double first = results.front().second, best = objective.oriented(*summary.best);
  const double target = first + 0.95 * (best - first);
  for (const auto& [n, value] : results) {
    if (value >= target) {
      summary.trials_to_95 = n;
      break;
    }
  }
  return summary;
}

ParetoSummary summarize_pareto(const jobs::JobSpec& job, const RunState& state, int task) {
  ParetoSummary summary;
  const jobs::Objectives objectives = state.job().all_objectives();
  std::vector<std::vector<double>> feasible, front;
  for (const std::int64_t id : state.task_trials(task)) {
    const Trial& t = state.trial(id);
    if (!t.finished || t.outcome.status != workers::TrialStatus::ok || t.infeasible) continue;
    feasible.push_back(state.values_of(t));
  }
  for (const std::int64_t id : state.tasks()[static_cast<std::size_t>(task)].pareto) front.push_back(state.values_of(state.trial(id)));
  summary.size = front.size();
  const std::vector<double> derived = objectives.derived_reference(feasible);
  if (derived.empty()) return summary;
  summary.reference = derived;
  summary.derived.assign(objectives.size(), true);
  for (std::size_t i = 0; i < objectives.size() && i < job.objective.reference.size(); ++i) {
    if (std::isnan(job.objective.reference[i])) continue;
    summary.reference[i] = job.objective.reference[i];
    summary.derived[i] = false;
  }
  summary.hypervolume = objectives.hypervolume(front, summary.reference);
  return summary;
}

std::string pareto_reference(const jobs::Objectives& objectives, const ParetoSummary& pareto) {
  std::string text = " from (";
  for (std::size_t i = 0; i < pareto.reference.size(); ++i) {
    text += (i ? ", " : "") + objectives[i].name() + " " + number(pareto.reference[i]) + (pareto.derived[i] ? " derived" : "");
  }
  return text + ")";
}

std::string used_networks(const std::vector<double>& usage) {
  std::string text;
  for (std::size_t m = 0; m < usage.size(); ++m) {
    if (usage[m] > 0.5) text += (text.empty() ? "" : " ") + std::to_string(m);
  }
  return text;
}

std::string tasks_csv(const jobs::JobSpec& job, const RunState& state, const std::vector<TaskModelReport>& reports) {
  const int steps = std::max(1, job.objective.stepwise);
  std::vector<std::string> names;
  const std::vector<TaskIdentity>& tasks = state.job().tasks;
  for (const TaskIdentity& t : tasks) {
    for (int s = 0; s < steps; ++s) names.push_back(job.objective.stepwise > 0 ? t.name + "/step_" + std::to_string(s + 1) : t.name);
  }
  std::string text = "task,origin,step,budget,ok,best,best_trial,trials_to_95,networks";
  for (const std::string& n : names) text += "," + csv_field("similarity:" + n);
  for (const jobs::ParamSpec& p : job.space.params()) text += "," + csv_field(p.name);
  std::size_t networks = 0;
  for (const TaskModelReport& r : reports) networks = std::max(networks, r.usage.size());
  for (std::size_t m = 0; m < networks; ++m) text += ",usage:" + std::to_string(m);
  const bool kernels = std::any_of(reports.begin(), reports.end(), [](const TaskModelReport& r) { return !r.kernels.empty(); });
  if (kernels) text += ",kernels";
  const bool limits = !job.constraints.empty();
  if (limits) text += ",infeasible";
  const bool several = state.several_objectives();
  if (several) text += ",pareto_size,hypervolume,reference,reference_from";
  text += "\n";
  for (int task = 0; task < static_cast<int>(tasks.size()); ++task) {
    const TaskIdentity& spec = tasks[static_cast<std::size_t>(task)];
    for (int s = 0; s < steps; ++s) {
      const std::size_t k = static_cast<std::size_t>(task * steps + s);
      const TaskSummary summary = summarize_task(state, task, job.objective.stepwise > 0 ? s : -1);
      const TaskModelReport* report = k < reports.size() ? &reports[k] : nullptr;
      text += csv_field(spec.name) + "," + std::string(jobs::to_string(spec.origin)) + "," +
              (job.objective.stepwise > 0 ? std::to_string(s + 1) : "") + "," + std::to_string(spec.budget) + "," +
              std::to_string(summary.ok) + "," + (summary.best ? number(*summary.best) : "") + "," +
              (summary.best_trial >= 0 ? std::to_string(summary.best_trial) : "") + "," +
              (summary.trials_to_95 ? std::to_string(*summary.trials_to_95) : "") + "," +
              (report ? used_networks(report->usage) : "");
      for (std::size_t j = 0; j < names.size(); ++j) {
        text += ",";
        if (report && j < report->similarity.size()) text += number(report->similarity[j]);
      }
      for (int p = 0; p < job.space.size(); ++p) {
        text += ",";
        if (summary.best_trial < 0) continue;
        if (const auto& v = state.trial(summary.best_trial).config.values[static_cast<std::size_t>(p)]) {
          text += csv_field(job.space.format_value(p, *v));
        }
      }
      for (std::size_t m = 0; m < networks; ++m) {
        text += ",";
        if (report && m < report->usage.size()) text += number(report->usage[m]);
      }
      if (kernels) text += "," + (report ? csv_field(report->kernels) : std::string());
      if (limits) text += "," + std::to_string(summary.infeasible);
      if (several) text += pareto_fields(summarize_pareto(job, state, task));
      text += "\n";
    }
  }
  return text;
}


}  // namespace lbo::orchestrator
