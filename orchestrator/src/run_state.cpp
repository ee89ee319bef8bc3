#include "lbo/orchestrator/run_state.hpp"

#include <stdexcept>
#include <string>

namespace lbo::orchestrator {

RunState::RunState(const jobs::JobSpec& job)
    : job_(&job), tasks_(job.tasks.size()), task_trials_(job.tasks.size()) {}

RunState::RunState(const jobs::JobSpec& job, std::vector<Trial> trials) : RunState(job) {
  trials_ = std::move(trials);
  for (std::size_t i = 0; i < trials_.size(); ++i) {
    const Trial& t = trials_[i];
    if (t.id != static_cast<std::int64_t>(i) || t.task < 0 || t.task >= static_cast<int>(tasks_.size())) {
      throw std::invalid_argument("RunState: trial " + std::to_string(t.id) + " does not fit the job");
    }
    task_trials_[t.task].push_back(t.id);
    TaskProgress& task = tasks_[t.task];
    ++task.created;
    running_ += t.running ? 1 : 0;
    if (!t.finished) continue;
    ++task.finished;
    if (t.outcome.status != workers::TrialStatus::ok) continue;
    ++task.ok;
    if (!task.best_trial || better(t.outcome.objective, trials_[*task.best_trial].outcome.objective)) task.best_trial = t.id;
  }
}

void RunState::extend_tasks() {
  if (job_->tasks.size() < tasks_.size()) throw std::logic_error("RunState::extend_tasks: tasks only grow");
  tasks_.resize(job_->tasks.size());
  task_trials_.resize(job_->tasks.size());
}

void RunState::interrupt(std::int64_t id) {
  Trial& t = trials_.at(static_cast<std::size_t>(id));
  if (!t.running) return;
  t.running = false;
  --running_;
}

const Trial& RunState::add_trial(int task, jobs::Config config) {
  if (task < 0 || task >= static_cast<int>(tasks_.size())) throw std::out_of_range("RunState::add_trial: task");
  Trial t;
  t.id = static_cast<std::int64_t>(trials_.size());
  t.task = task;
  t.config = std::move(config);
  task_trials_[task].push_back(t.id);
  trials_.push_back(std::move(t));
  ++tasks_[task].created;
  return trials_.back();
}

void RunState::start_attempt(std::int64_t id, const std::string& worker) {
  Trial& t = trials_.at(static_cast<std::size_t>(id));
  if (t.running || t.finished) throw std::logic_error("RunState::start_attempt: trial is not waiting");
  t.running = true;
  ++t.attempts;
  t.worker = worker;
  ++running_;
}

void RunState::end_attempt(std::int64_t id, const workers::Outcome& outcome, const std::string& worker,
                           bool final) {
  Trial& t = trials_.at(static_cast<std::size_t>(id));
  if (!t.running) throw std::logic_error("RunState::end_attempt: trial is not running");
  t.running = false;
  --running_;
  t.outcome = outcome;
  t.worker = worker;
  if (outcome.status != workers::TrialStatus::ok && outcome.status != workers::TrialStatus::cancelled) {
    ++t.failed_attempts;
  }
  if (!final) return;
  t.finished = true;
  TaskProgress& task = tasks_[t.task];
  ++task.finished;
  if (outcome.status != workers::TrialStatus::ok) return;
  ++task.ok;
  if (!task.best_trial || better(outcome.objective, trial(*task.best_trial).outcome.objective)) {
    task.best_trial = id;
  }
}

bool RunState::better(double a, double b) const {
  return job_->objective.direction == jobs::Direction::maximize ? a > b : a < b;
}

std::optional<double> RunState::best_objective(int task) const {
  const auto& best = tasks_.at(static_cast<std::size_t>(task)).best_trial;
  if (!best) return std::nullopt;
  return trial(*best).outcome.objective;
}

bool RunState::all_budgets_done() const {
  for (std::size_t i = 0; i < tasks_.size(); ++i) {
    if (tasks_[i].finished < job_->tasks[i].budget) return false;
  }
  return true;
}

}  // namespace lbo::orchestrator
