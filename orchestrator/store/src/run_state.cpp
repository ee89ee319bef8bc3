#include "lbo/orchestrator/run_state.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <variant>

namespace lbo::orchestrator {

namespace {

void erase(std::vector<std::int64_t>& ids, std::int64_t id) { ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end()); }

void push_once(std::vector<std::int64_t>& ids, std::int64_t id) {
  if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
}

std::string trial_name(std::int64_t id) { return "trial " + std::to_string(id); }

// The step a report of `attempt` at `step` counts its resource from: the attempt's last step,
// or for its first report the trial's last step if it goes on past it (a promoted attempt
// resumes), else 0 (a retry starts again).
std::int64_t counted_from(const Trial& t, int attempt, std::int64_t step) {
  if (const std::int64_t own = t.last_step(attempt); own > 0) return own;
  const std::int64_t trial_last = t.reports.empty() ? 0 : t.reports.back().step;
  return step > trial_last ? trial_last : 0;
}

// The steps of `t`'s reports, each attempt's from where it resumed or started; with `cut`, none
// past the step a final stop judged it at.
std::int64_t steps_of(const Trial& t, bool cut) {
  Trial replay;
  std::int64_t spent = 0;
  for (const StepReport& r : t.reports) {
    if (cut && r.attempt == t.attempts && r.step > t.outcome.last_step) break;  // its attempt's last reports
    spent += r.step - counted_from(replay, r.attempt, r.step);
    replay.reports.push_back(r);
  }
  return spent;
}

// What `t` counts toward its task's budget_steps (TaskProgress::steps): its steps, a trial
// stopped for good up to the step it was stopped at. What it reported after, before the stop
// reached its process, depends on timing: counted, a --sync run's task would end after a
// different trial each time (bench/fidelity, 2026-12-07: two runs of one seed parted at trial
// 474 of 754).
std::int64_t steps_counted(const Trial& t) {
  return steps_of(t, t.finished && t.outcome.status == workers::TrialStatus::stopped);
}

}  // namespace

std::int64_t Trial::steps_spent() const { return steps_of(*this, false); }

RunState::RunState(JobIdentity job, std::vector<Trial> trials, std::vector<std::int64_t> retries,
                   std::vector<std::int64_t> interrupted, bool round_handed_out)
    : job_(std::move(job)),
      has_job_(true),
      trials_(std::move(trials)),
      interrupted_(std::move(interrupted)),
      retries_(std::move(retries)),
      round_handed_out_(round_handed_out) {
  track_tasks();
  for (std::size_t i = 0; i < trials_.size(); ++i) {
    Trial& t = trials_[i];
    if (t.id != static_cast<std::int64_t>(i) || t.task >= static_cast<int>(tasks_.size())) {
      throw std::invalid_argument("RunState: trial " + std::to_string(t.id) + " does not fit the job");
    }
    running_ += t.running ? 1 : 0;
    if (t.lost()) continue;
    task_trials_[t.task].push_back(t.id);
    ++tasks_[t.task].created;
    ++tasks_[t.task].proposed[static_cast<std::size_t>(t.proposed_by)];
    if (t.finished) count_final(t);
    if (t.paused()) paused_.push_back(t.id);
    // A checkpoint of before version 5 has no order of its results: the next one comes after them all.
    if (t.finished) finals_ = std::max(finals_ + (t.final_seq < 0 ? 1 : 0), t.final_seq + 1);
    tasks_[t.task].steps += steps_counted(t);
  }
  for (const auto* queue : {&interrupted_, &retries_}) {
    for (std::int64_t id : *queue) {
      if (id < 0 || id >= next_trial_id()) throw std::invalid_argument("RunState: queued trial " + std::to_string(id) + " does not exist");
    }
  }
}

void RunState::apply(const JournalRecord& record) {
  std::visit([this](const auto& r) { on(r); }, record);
}

void RunState::track_tasks() {
  // Tasks only grow: a record naming fewer (damage) never drops what trials refer to.
  if (job_.tasks.size() > tasks_.size()) {
    tasks_.resize(job_.tasks.size());
    task_trials_.resize(job_.tasks.size());
  }
}

void RunState::on(const RunStarted& r) {
  std::vector<TaskIdentity> known = std::move(job_.tasks);
  const bool new_limits = r.job.constraints != job_.constraints;
  job_ = r.job;
  for (std::size_t i = job_.tasks.size(); i < known.size(); ++i) job_.tasks.push_back(std::move(known[i]));
  has_job_ = true;
  track_tasks();
  // A resumed run whose job file changed its limits judges every trial by the new ones.
  if (new_limits) rejudge();
}

void RunState::rejudge() {
  for (TaskProgress& task : tasks_) {
    task.infeasible = 0;
    task.best_trial.reset();
    task.pareto.clear();
  }
  for (Trial& t : trials_) {
    t.infeasible = false;
    if (t.lost() || !t.finished || t.outcome.status != workers::TrialStatus::ok) continue;
    TaskProgress& task = tasks_[t.task];
    t.infeasible = !jobs::check_constraints(job_.constraints, t.outcome.metrics_json).feasible;
    if (t.infeasible) {
      ++task.infeasible;
    } else {
      rank_result(t);
    }
  }
}

void RunState::on(const TaskAdded& r) {
  auto& tasks = job_.tasks;
  if (std::none_of(tasks.begin(), tasks.end(), [&](const TaskIdentity& t) { return t.name == r.task.name; })) {
    tasks.push_back(r.task);
  }
  track_tasks();
}

Trial* RunState::place(std::int64_t id, int task, const jobs::Config& config) {
  if (id < 0) return nullptr;
  while (next_trial_id() < id) {
    Trial lost;
    lost.id = next_trial_id();
    lost.task = -1;
    trials_.push_back(std::move(lost));
  }
  if (id == next_trial_id()) {
    Trial t;
    t.id = id;
    t.task = -1;
    trials_.push_back(std::move(t));
  }
  Trial& t = trials_[static_cast<std::size_t>(id)];
  if (t.lost() && task >= 0 && task < static_cast<int>(tasks_.size())) {
    t.task = task;
    t.config = config;
    auto& ids = task_trials_[task];
    ids.insert(std::upper_bound(ids.begin(), ids.end(), id), id);
    ++tasks_[task].created;
    ++tasks_[task].proposed[static_cast<std::size_t>(t.proposed_by)];
    if (t.finished) count_final(t);
  }
  return &t;
}

void RunState::on(const TrialStarted& r) {
  const bool known = r.trial >= 0 && r.trial < next_trial_id() && !trials_[static_cast<std::size_t>(r.trial)].lost();
  if (!known && (r.task < 0 || r.task >= static_cast<int>(tasks_.size()))) {
    note(trial_name(r.trial) + " names task #" + std::to_string(r.task) + ", which no intact record defines; it is left out");
  } else if (!known && r.attempt > 1) {
    note(trial_name(r.trial) + ": the record of its first attempt is lost; rebuilt from attempt " + std::to_string(r.attempt));
  }
  Trial* t = place(r.trial, r.task, r.config);
  if (t == nullptr) return;
  record_proposal(*t, r.proposed_by, r.proposal_note);
  if (t->finished) {
    note(trial_name(r.trial) + ": attempt " + std::to_string(r.attempt) + " starts after its final result; ignored");
    return;
  }
  t->attempts = std::max(t->attempts, r.attempt);
  t->worker = r.worker;
  t->started_unix = r.unix_time;
  t->finished_unix = 0;
  if (r.attempt == 1 && t->finals_before < 0) t->finals_before = finals_;
  if (!t->running) {
    // Trials that run again after a stop or a kill continue their round.
    if (running_ == 0 && interrupted_.empty()) round_handed_out_ = false;
    t->running = true;
    ++running_;
  }
  erase(interrupted_, r.trial);
  erase(retries_, r.trial);
  erase(paused_, r.trial);
}

void RunState::on(const TrialFinished& r) {
  const bool known = r.trial >= 0 && r.trial < next_trial_id() && !trials_[static_cast<std::size_t>(r.trial)].lost();
  if (!known) {
    if (r.task < 0 || r.task >= static_cast<int>(tasks_.size())) {
      place(r.trial, -1, {});
      note(trial_name(r.trial) + ": its result (attempt " + std::to_string(r.attempt) +
           ") cannot be placed: the records naming its task and configuration are lost");
      return;
    }
    note(trial_name(r.trial) + ": the record that started it is lost; rebuilt from its result");
  }
  Trial* t = place(r.trial, r.task, r.config);
  if (t == nullptr) return;
  record_proposal(*t, r.proposed_by, r.proposal_note);
  if (t->finished) {
    note(trial_name(r.trial) + ": a second final result (attempt " + std::to_string(r.attempt) + "); the first is kept");
    return;
  }
  const bool was_running = t->running;
  if (t->running) {
    t->running = false;
    --running_;
    round_handed_out_ = true;
  }
  t->attempts = std::max(t->attempts, r.attempt);
  t->outcome = r.outcome;
  t->worker = r.worker;
  // A paused trial ended `stopped` (its task had nothing left) ends no attempt: its last one
  // ended at the pause.
  if (was_running || t->finished_unix == 0) t->finished_unix = r.unix_time;
  const workers::TrialStatus status = r.outcome.status;
  const bool paused = status == workers::TrialStatus::paused;
  if (status != workers::TrialStatus::ok && !workers::runs_again_first(status) && !paused) ++t->failed_attempts;
  if (r.final) {
    t->finished = true;
    t->final_seq = finals_++;
    erase(interrupted_, r.trial);
    erase(retries_, r.trial);
    erase(paused_, r.trial);
    count_final(*t);
  } else if (paused) {
    erase(interrupted_, r.trial);  // a resume's owed pause (Promotions::owed)
    push_once(paused_, r.trial);
  } else if (workers::runs_again_first(status)) {
    push_once(interrupted_, r.trial);
  } else {
    push_once(retries_, r.trial);
  }
  // A final stop takes back what the tally counted past its step (the reports are unchanged:
  // the tally was steps_spent()).
  if (!t->lost() && t->finished && status == workers::TrialStatus::stopped) {
    tasks_[t->task].steps -= t->steps_spent() - steps_counted(*t);
  }
}

// The master journals only reports it checked (the trial runs that attempt, the step is past
// the attempt's last); a record that breaks that (damage, a foreign journal) is noted and the
// reports it can place are kept.
void RunState::on(const TrialsReported& r) {
  if (running_ > 0) round_handed_out_ = true;  // a report comes only after its round's hand-out
  for (const ReportedStep& report : r.reports) {
    if (report.trial < 0 || report.trial >= next_trial_id()) {
      note(trial_name(report.trial) + ": a report (step " + std::to_string(report.step) + ") for a trial no intact record started; ignored");
      continue;
    }
    Trial& t = trials_[static_cast<std::size_t>(report.trial)];
    if (!t.reports.empty() && report.attempt < t.reports.back().attempt) {
      note(trial_name(report.trial) + ": a report of attempt " + std::to_string(report.attempt) + " after one of attempt " +
           std::to_string(t.reports.back().attempt) + "; ignored");
      continue;
    }
    if (report.step <= t.last_step(report.attempt)) {
      note(trial_name(report.trial) + ": attempt " + std::to_string(report.attempt) + " reports step " +
           std::to_string(report.step) + " again or after a later one; ignored");
      continue;
    }
    if (!t.lost()) tasks_[t.task].steps += report.step - counted_from(t, report.attempt, report.step);
    t.reports.push_back({report.attempt, report.step, report.value, report.elapsed_s});
  }
}

std::int64_t Trial::last_step(int attempt) const {
  for (auto it = reports.rbegin(); it != reports.rend(); ++it) {
    if (it->attempt == attempt) return it->step;
  }
  return 0;
}

std::optional<StepReport> Trial::report_at(std::int64_t step, bool every_attempt) const {
  // Reports are kept in attempt order.
  const auto begin = every_attempt ? reports.begin() : std::partition_point(reports.begin(), reports.end(), [&](const StepReport& r) {
    return r.attempt < attempts;
  });
  const auto it = std::lower_bound(begin, reports.end(), step, [](const StepReport& r, std::int64_t s) { return r.step < s; });
  if (it == reports.end()) return std::nullopt;
  const bool cut = !running && (outcome.status == workers::TrialStatus::stopped || outcome.status == workers::TrialStatus::paused);
  if (cut && it->step > outcome.last_step) return std::nullopt;
  return *it;
}

void RunState::record_proposal(Trial& t, ProposalSource source, const std::string& note) {
  if (t.proposed_by != ProposalSource::unrecorded || source == ProposalSource::unrecorded) return;
  if (!t.lost()) {
    --tasks_[t.task].proposed[static_cast<std::size_t>(t.proposed_by)];
    ++tasks_[t.task].proposed[static_cast<std::size_t>(source)];
  }
  t.proposed_by = source;
  t.proposal_note = note;
}

void RunState::count_final(Trial& t) {
  if (t.lost()) return;
  TaskProgress& task = tasks_[t.task];
  ++task.finished;
  if (t.outcome.status == workers::TrialStatus::stopped) ++task.stopped;
  if (t.outcome.status != workers::TrialStatus::ok) return;
  ++task.ok;
  t.infeasible = !jobs::check_constraints(job_.constraints, t.outcome.metrics_json).feasible;
  if (t.infeasible) {
    ++task.infeasible;
    return;
  }
  rank_result(t);
}

void RunState::rank_result(const Trial& t) {
  TaskProgress& task = tasks_[t.task];
  if (!several_objectives()) {
    if (!task.best_trial || better(t.outcome.objective, trial(*task.best_trial).outcome.objective)) task.best_trial = t.id;
    return;
  }
  const jobs::Objectives objectives = job_.all_objectives();
  const std::vector<double> values = values_of(t);
  const auto dominates = [&](std::int64_t a, const std::vector<double>& b) { return objectives.dominates(values_of(trial(a)), b); };
  if (!task.best_trial) {
    task.best_trial = t.id;
  } else {
    const Trial& best = trial(*task.best_trial);
    const bool tie = !better(t.outcome.objective, best.outcome.objective) && !better(best.outcome.objective, t.outcome.objective);
    if (better(t.outcome.objective, best.outcome.objective) || (tie && objectives.dominates(values, values_of(best)))) {
      task.best_trial = t.id;
    }
  }
  if (std::any_of(task.pareto.begin(), task.pareto.end(), [&](std::int64_t id) { return dominates(id, values); })) return;
  std::erase_if(task.pareto, [&](std::int64_t id) { return objectives.dominates(values, values_of(trial(id))); });
  task.pareto.insert(std::upper_bound(task.pareto.begin(), task.pareto.end(), t.id), t.id);
}

std::vector<double> RunState::values_of(const Trial& t) const {
  if (!several_objectives()) return {t.outcome.objective};
  if (t.outcome.values.size() == job_.objectives.size()) return t.outcome.values;
  return std::vector<double>(job_.objectives.size(), std::nan(""));
}

bool RunState::on_pareto_front(const Trial& t) const {
  if (t.lost() || !several_objectives()) return false;
  const std::vector<std::int64_t>& set = tasks_[static_cast<std::size_t>(t.task)].pareto;
  return std::binary_search(set.begin(), set.end(), t.id);
}

void RunState::stop_running() {
  for (Trial& t : trials_) {
    if (!t.running) continue;
    t.running = false;
    --running_;
    // Its attempt ended as a stop's cancel would have ended it: the outcome is no longer an
    // earlier attempt's (a pause there would make it look paused at that rung).
    t.outcome = workers::Outcome{};
    t.outcome.status = workers::TrialStatus::cancelled;
    t.outcome.reason = "interrupted: lbo stopped while the attempt ran";
    if (!t.lost()) interrupted_.push_back(t.id);
  }
  std::sort(interrupted_.begin(), interrupted_.end());
  interrupted_.erase(std::unique(interrupted_.begin(), interrupted_.end()), interrupted_.end());
}

std::string model_share(const RunState& state, const std::vector<int>& tasks) {
  int model = 0, interim = 0, fallback = 0, design = 0;
  for (std::size_t i = 0; i < state.tasks().size(); ++i) {
    if (!tasks.empty() && std::find(tasks.begin(), tasks.end(), static_cast<int>(i)) == tasks.end()) continue;
    const TaskProgress& p = state.tasks()[i];
    model += p.proposed_by(ProposalSource::model) + p.proposed_by(ProposalSource::model_prior);
    interim += p.proposed_by(ProposalSource::interim_gp);
    fallback += p.proposed_by(ProposalSource::random_fallback);
    design += p.proposed_by(ProposalSource::initial) + p.proposed_by(ProposalSource::earlier_best);
  }
  // Until the model proposes, there is no share to give (issue 31: "model 100%" was said of
  // the earlier tasks' best configurations during the initial design). An interim GP is not
  // the job's model: its proposals are counted apart.
  if (model + interim + fallback == 0) return design > 0 ? "initial design" : std::string();
  const int percent = static_cast<int>(100.0 * model / (model + interim + fallback));
  std::string others;
  if (interim > 0) others += std::to_string(interim) + " interim-gp";
  if (fallback > 0) others += (others.empty() ? "" : ", ") + std::to_string(fallback) + " random-fallback";
  return "model " + std::to_string(percent) + "%" + (others.empty() ? std::string() : " (" + others + ")");
}

bool RunState::better(double a, double b) const { return jobs::Objective(job_.direction).better(a, b); }

std::optional<double> RunState::best_objective(int task) const {
  const auto& best = tasks_.at(static_cast<std::size_t>(task)).best_trial;
  if (!best) return std::nullopt;
  return trial(*best).outcome.objective;
}

int RunState::finished_trials() const {
  int finished = 0;
  for (const TaskProgress& p : tasks_) finished += p.finished;
  return finished;
}

bool RunState::steps_left(int task) const {
  const std::int64_t budget = job_.tasks.at(static_cast<std::size_t>(task)).budget_steps;
  return budget <= 0 || tasks_.at(static_cast<std::size_t>(task)).steps < budget;
}

bool RunState::accepts_trials(int task) const {
  return tasks_.at(static_cast<std::size_t>(task)).created < job_.tasks.at(static_cast<std::size_t>(task)).budget &&
         steps_left(task);
}

bool RunState::task_done(int task) const {
  const TaskProgress& p = tasks_.at(static_cast<std::size_t>(task));
  return p.finished >= job_.tasks.at(static_cast<std::size_t>(task)).budget ||
         (!accepts_trials(task) && p.finished >= p.created);
}

bool RunState::all_budgets_done() const {
  for (std::size_t i = 0; i < tasks_.size(); ++i) {
    if (!task_done(static_cast<int>(i))) return false;
  }
  return true;
}

}  // namespace lbo::orchestrator
