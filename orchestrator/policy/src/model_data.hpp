#pragma once
// ModelData: the run as the models see it. Trials' configurations encoded, their results
// oriented (larger is better) and warped per model task ([policy] output_warping) and, for a stepwise objective, one model task per step (and with
// [early_stopping] model = "rungs" or "highest_rung", one per rung); the warm-start tasks first.
// Every fit's data and every batch's view of a task come from here. Private to policy/.

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fit_service.hpp"
#include "scalarization.hpp"
#include "task_batch.hpp"
#include "lbo/jobs/encoding.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/policy.hpp"
#include "lbo/orchestrator/run_state.hpp"
#include "lbo/surrogate/surrogate.hpp"

namespace lbo::orchestrator {

class OutputWarping;

class ModelData {
 public:
  ModelData(const jobs::JobSpec& job, const std::vector<WarmTask>& warm_start);

  const jobs::Encoder& encoder() const { return encoder_; }
  Eigen::VectorXd encode(const jobs::Config& config) const;
  /// Model tasks per run task: the objective's steps, the rungs ([early_stopping] model), or 1.
  int steps() const { return steps_; }
  /// The model tasks of `task` that propose: every step of a stepwise objective (each
  /// nominates); with rung tasks, in order of preference (the first that has something to learn
  /// from nominates), max_step's and the rungs below (rungs), or from the highest rung with more
  /// results than the space has dimensions down (highest_rung); else the one.
  std::vector<int> proposing_steps(const RunState& state, int task) const;
  /// The model task that stands for a run task in tasks.csv and the report: max_step's with
  /// rung tasks, else the first.
  int reported_step() const { return rungs_.empty() ? 0 : steps_ - 1; }
  bool rung_tasks() const { return !rungs_.empty(); }
  /// Warm-start tasks, each one model task before the run's own.
  std::size_t warm_tasks() const { return warm_.size(); }
  const std::vector<std::string>& warm_sources() const { return warm_sources_; }
  /// Warm-start task k's results (its fit may take fewer: fit_rows()).
  std::size_t warm_results(std::size_t k) const { return warm_results_[k]; }

  /// Run model tasks: `task`'s `step` is slot(task, step) among the run's own (Hedge memories,
  /// batches, reports), model_task(task, step) among all (the fit's tasks).
  std::size_t slot(int task, int step) const {
    return static_cast<std::size_t>(task) * static_cast<std::size_t>(steps_) + static_cast<std::size_t>(step);
  }
  std::size_t model_task(int task, int step) const { return warm_.size() + slot(task, step); }
  /// "task", "task/step_2" for a stepwise objective, "task/epoch_9" for a rung.
  std::string name(const RunState& state, int task, int step) const;

  /// Whether a trial's result can enter `step`'s model task (a stepwise one must report every
  /// step; a rung's needs a report there, max_step's a trial that finished ok).
  bool usable(const Trial& t, int step) const;
  /// What a trial usable at `step` says of it, larger is better (unwarped). With several
  /// objectives, at the objective's own model task, `scalarized` is its task's scalarization().
  double value_of(const Trial& t, int step, const Scalarization* scalarized = nullptr) const;
  /// With several objectives ([objective] objectives): how `task`'s results become the one
  /// number each its models learn at `step` (ParEGO, scalarization.hpp), its range from the
  /// task's usable results and its weights drawn anew with each result (from the job's seed,
  /// the task and its count of results: the same for a fit, the proposals made from it and its
  /// rebuild from a checkpoint; a function of the journal). Empty with one objective,
  /// and at a rung's model task, which learns the primary objective's reports.
  std::optional<Scalarization> scalarization(const RunState& state, int task, int step) const;
  /// `task`'s results usable at `step`, ascending ids.
  std::vector<std::int64_t> usable_trials(const RunState& state, int task, int step) const;
  /// The observations of every model task, warm-start tasks' aside.
  std::int64_t observations(const RunState& state) const;
  /// The trials' configurations, encoded, as rows.
  Eigen::MatrixXd encoded(const RunState& state, const std::vector<std::int64_t>& ids) const;
  /// What the trials say of `step`, larger is better: a task's usable trials, as the models see
  /// them ([policy] output_warping, fitted to these values).
  Eigen::VectorXd values(const RunState& state, const std::vector<std::int64_t>& ids, int step) const;
  /// value_of() each, unwarped; `ids` of one task.
  Eigen::VectorXd raw_values(const RunState& state, const std::vector<std::int64_t>& ids, int step) const;
  /// A model task's warping as trials_of() last fitted it, and the results it was fitted to.
  struct WarpingMemo {
    Eigen::VectorXd raw;  // the usable results, unwarped, ascending ids
    std::shared_ptr<const OutputWarping> warping;
  };
  /// `task`'s trials as the batch of its `step` sees them. With a `memo` (the caller's, one per
  /// model task), the warping is fitted anew only when the task's usable results changed: it
  /// sorts them, and this runs at every proposal
  /// (bench/log/2026-11-28-simulated-scale-eighth-run-output-warping-2-048.md).
  TaskTrials trials_of(const RunState& state, int task, int step, WarpingMemo* memo = nullptr) const;
  /// The rows a fit takes of a model task's `values` (larger is better): every one, or with
  /// [policy] max_fit_results = N and more than N, the best ⌈N/2⌉ (ties: the earlier) and the
  /// rest spread evenly over the others in their order. Ascending indices. `cap`, when smaller,
  /// stands for N.
  std::vector<std::size_t> fit_rows(const Eigen::VectorXd& values, std::optional<int> cap = std::nullopt) const;
  /// fit_rows() of a model task's usable trials `ids` with their `values`: the trials a fit
  /// takes, and their values.
  std::pair<std::vector<std::int64_t>, Eigen::VectorXd> fit_subset(const std::vector<std::int64_t>& ids,
                                                                   const Eigen::VectorXd& values,
                                                                   std::optional<int> cap = std::nullopt) const;
  /// Every model task's observations for a fit: the warm-start tasks, then each run task's steps
  /// (fit_rows() of each; `trials` lists all the usable ones a fit covers).
  FitRequest training_data(const RunState& state) const;
  /// The data of the fit `fitted` describes (a checkpoint's PolicyState::fitted, made of an
  /// earlier training_data()): the warm-start tasks, then each run model task's rows as that
  /// fit had them, their configurations encoded from `state`. Throws std::runtime_error when a
  /// row names a trial `state` does not hold.
  FitRequest training_data(const RunState& state, const std::vector<FittedTask>& fitted) const;

 private:
  // The warm-start tasks' part of every fit.
  FitRequest warm_request() const;
  // Appends one run model task to `request`: the trials of its rows with their values, every
  // trial it could learn from, and whether its task is finished.
  void add_task(FitRequest& request, const RunState& state, std::vector<std::int64_t> rows, Eigen::VectorXd values,
                std::vector<std::int64_t> usable, bool finished) const;
  // A fit's seed: drawn from the results it covers.
  std::uint64_t fit_seed(const FitRequest& request) const;
  // raw_values() with the task's scalarization already made (trials_of makes it once).
  Eigen::VectorXd raw_values(const RunState& state, const std::vector<std::int64_t>& ids, int step,
                             const Scalarization* scalarized) const;
  // Larger is better inside the models: a minimize job negates its objective.
  double oriented(double objective) const;
  // A warm task's results as the models learn them: oriented by its own direction with one
  // objective, scalarized with weights of its own (drawn from the seed and `index`, its place
  // in the warm start) with several.
  Eigen::VectorXd warm_values(const WarmTask& w, std::size_t index) const;

  const jobs::JobSpec& job_;
  jobs::Encoder encoder_;
  int steps_ = 1;
  std::vector<std::int64_t> rungs_;  // [early_stopping] model's steps (rungs, highest_rung); else empty
  bool promotes_ = false;            // promotion mode: a trial's attempts make one curve
  std::vector<surrogate::Observations> warm_;  // encoded, larger is better, warped
  std::vector<std::string> warm_sources_;
  std::vector<std::size_t> warm_results_;  // each warm-start task's results, before fit_rows()
};

}  // namespace lbo::orchestrator
