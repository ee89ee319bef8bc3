#pragma once
// Per-task reports of a lifelong run: runs/<name>/tasks.csv and the task table of `lbo status`.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/policy.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

/// One task's (or one step's) results so far.
struct TaskSummary {
  int ok = 0;
  int infeasible = 0;  ///< of `ok`, outside a limit of [[constraints]]; never the best
  int stopped = 0;  ///< stopped early ([early_stopping]); not among `ok`, never the best
  std::optional<double> best;
  std::int64_t best_trial = -1;
  /// Trials of the task (in the order they were created, failed ones included) until the best
  /// so far first covered 95% of the way from the task's first result to its best.
  std::optional<int> trials_to_95;
};

/// `step` < 0: the trials' objective; otherwise their step `step` value (stepwise objectives).
TaskSummary summarize_task(const RunState& state, int task, int step = -1);

/// A task's Pareto set with several objectives: its size, the hypervolume it dominates and the
/// reference point that was measured from, each value the job's `reference` or, where it gives
/// none, derived from the task's feasible results (jobs::Objectives::derived_reference).
struct ParetoSummary {
  std::size_t size = 0;
  double hypervolume = 0.0;
  std::vector<double> reference;  ///< empty while the task has no feasible result
  std::vector<bool> derived;      ///< per objective: whether its reference value was derived
};
ParetoSummary summarize_pareto(const jobs::JobSpec& job, const RunState& state, int task);
/// " from (auc 0.5, train_s 3960 derived)": the reference a hypervolume was measured from.
std::string pareto_reference(const jobs::Objectives& objectives, const ParetoSummary& pareto);

/// Latent networks with q(z = 1) > ½, as "0 3 7" (empty when none or not an lbo model).
std::string used_networks(const std::vector<double>& usage);

/// tasks.csv: one row per task (per task and step for a stepwise objective) with origin, step,
/// budget, ok, best, best_trial, trials_to_95, networks, then one similarity column per row
/// ("similarity:<task>"), then the best configuration's parameters, then for an lbo model
/// q(z_m = 1) of each latent network m ("usage:<m>", LBO's z), then for a libo model the kernel
/// k̂ each task's GP was last fitted with ("kernels"), then with [[constraints]] the count of
/// infeasible results ("infeasible"), then with several objectives the Pareto set's size
/// ("pareto_size"), its hypervolume ("hypervolume") and reference point ("reference", the
/// values joined by ';'; "reference_from": "job" or "derived" for each). `reports` come from
/// Policy::model_report(state) (may be empty: a model-free policy).
std::string tasks_csv(const jobs::JobSpec& job, const RunState& state, const std::vector<TaskModelReport>& reports);

}  // namespace lbo::orchestrator
