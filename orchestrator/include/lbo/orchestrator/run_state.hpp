#pragma once
// The master's record of a run: every trial and each task's progress. The master is its only
// writer (libEnsemble's rule); policies and reports read it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/workers/work_order.hpp"

namespace lbo::orchestrator {

struct Trial {
  std::int64_t id = 0;
  int task = 0;  ///< index into JobSpec::tasks
  jobs::Config config;
  int attempts = 0;         ///< attempts started so far
  int failed_attempts = 0;  ///< attempts that ended failed, timeout or crashed (not cancelled)
  bool finished = false;  ///< its final outcome is committed: it counts against the budget
  bool running = false;
  workers::Outcome outcome;  ///< of the last attempt that ended
  std::string worker;        ///< where the last attempt ran ("local:0", "rank2:1")

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(id, task, config, attempts, failed_attempts, finished, running, outcome, worker);
  }
};

struct TaskProgress {
  int created = 0;   ///< trials handed out (each counts once, however many attempts)
  int finished = 0;  ///< trials with a committed final outcome
  int ok = 0;
  std::optional<std::int64_t> best_trial;  ///< by the job's direction
};

class RunState {
 public:
  explicit RunState(const jobs::JobSpec& job);
  /// A run's state from its trials (recovered from a checkpoint and the journal); trial ids
  /// must be 0, 1, 2, … and their tasks those of `job`.
  RunState(const jobs::JobSpec& job, std::vector<Trial> trials);

  const jobs::JobSpec& job() const { return *job_; }
  const std::vector<Trial>& trials() const { return trials_; }
  const Trial& trial(std::int64_t id) const { return trials_.at(static_cast<std::size_t>(id)); }
  const std::vector<TaskProgress>& tasks() const { return tasks_; }
  /// Ids of the trials of `task`, in creation order.
  const std::vector<std::int64_t>& task_trials(int task) const { return task_trials_.at(static_cast<std::size_t>(task)); }

  /// The job gained tasks (appended to job().tasks): track them too.
  void extend_tasks();
  /// A new trial of `task` with the next id.
  const Trial& add_trial(int task, jobs::Config config);
  /// An attempt of `id` starts on `worker`.
  void start_attempt(std::int64_t id, const std::string& worker);
  /// An attempt ended. `final`: no retry follows, the trial counts against its task's budget.
  void end_attempt(std::int64_t id, const workers::Outcome& outcome, const std::string& worker, bool final);
  /// A trial that was running when the run stopped is waiting to run again.
  void interrupt(std::int64_t id);

  /// Whether trial `a`'s objective beats `b`'s in the job's direction.
  bool better(double a, double b) const;
  std::optional<double> best_objective(int task) const;
  /// Whether every task has its budget of finished trials.
  bool all_budgets_done() const;
  int running_count() const { return running_; }

 private:
  const jobs::JobSpec* job_;
  std::vector<Trial> trials_;
  std::vector<TaskProgress> tasks_;
  std::vector<std::vector<std::int64_t>> task_trials_;
  int running_ = 0;
};

}  // namespace lbo::orchestrator
