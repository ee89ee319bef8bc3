#include "lbo/orchestrator/run_outputs.hpp"

#include <cstdio>
#include <sstream>

#include "lbo/jobs/error.hpp"
#include "lbo/jobs/objective.hpp"
#include "lbo/orchestrator/files.hpp"
#include "lbo/orchestrator/step_savings.hpp"
#include "lbo/orchestrator/task_report.hpp"

namespace lbo::orchestrator {

std::string format_objective(double v) { return jobs::Objective::format(v); }

RunOutputs::RunOutputs(const RunPaths& run, const jobs::JobSpec& job, Console& console, Options options)
    : run_(run),
      job_(job),
      console_(console),
      options_(std::move(options)),
      csv_(run.results_csv(), job),
      hedge_csv_(run.hedge_csv()),
      reports_csv_(run.reports_csv()) {}

void RunOutputs::committed(const RunState& state, const std::vector<EndedAttempt>& ended) {
  std::vector<const Trial*> finished;
  for (const EndedAttempt& e : ended) {
    const Trial& t = state.trial(e.trial);
    if (t.finished) finished.push_back(&t);
    report_attempt(state, t, e.attempt);
  }
  guard([&] {
    csv_.append(state, finished);
    csv_.flush();
  });
}

void RunOutputs::rewrite_results(const RunState& state) {
  guard([&] { csv_.rewrite(state); });
}

void RunOutputs::reported(const RunState& state, const TrialsReported& record) {
  guard([&] { reports_csv_.append(state, record); });
}

void RunOutputs::rewrite_reports(const RunState& state) {
  guard([&] { reports_csv_.rewrite(state, run_.journal()); });
}

void RunOutputs::hedge_draw(const HedgeDraw& draw) {
  guard([&] { hedge_csv_.append(draw); });
}

// `attempt`: the attempt that ended (the trial may already run its next one: slots are refilled
// before the commit).
void RunOutputs::report_attempt(const RunState& state, const Trial& t, int attempt) {
  const TaskIdentity& task = state.job().tasks[static_cast<std::size_t>(t.task)];
  if (t.outcome.status == workers::TrialStatus::cancelled || t.outcome.status == workers::TrialStatus::lbo_error) return;
  // A stop or a pause is no failure: Fidelity logs the first ones.
  const bool failed = workers::is_failure(t.outcome.status);
  if (failed && ++failures_ <= options_.failures_logged) {
    std::string what = "trial " + std::to_string(t.id) + " (" + task.name + ") attempt " + std::to_string(attempt) + " " +
                       std::string(workers::to_string(t.outcome.status)) + ": " + t.outcome.reason;
    what += t.finished ? "" : "; retrying";
    if (failures_ == options_.failures_logged) what += " (further failures are only counted)";
    console_.log(what);
  }
  const TaskProgress& progress = state.tasks()[static_cast<std::size_t>(t.task)];
  // Two trials that end the budget in one commit both see it done: the line is said once.
  const auto index = static_cast<std::size_t>(t.task);
  if (done_said_.size() <= index) done_said_.resize(index + 1, false);
  if (t.finished && state.task_done(t.task) && !done_said_[index]) {
    done_said_[index] = true;
    write_task_report(state);
    const auto best = state.best_objective(t.task);
    const std::string of = progress.finished < task.budget ? std::to_string(progress.finished) + " trials"
                                                             : std::to_string(task.budget);
    const std::string steps = task.budget_steps > 0 ? ", " + std::to_string(progress.steps) + "/" +
                                                          std::to_string(task.budget_steps) + " steps"
                                                    : std::string();
    std::string saved;
    if (job_.early_stopping) {
      const std::string text = describe(step_savings(state, job_.early_stopping->max_step, t.task), job_.early_stopping->step_name);
      if (!text.empty()) saved = "; ran " + text;
    }
    const bool limits = !job_.constraints.empty();
    std::string front;
    if (state.several_objectives()) {
      const ParetoSummary pareto = summarize_pareto(job_, state, t.task);
      front = "; Pareto set of " + std::to_string(pareto.size) + ", hypervolume " + format_objective(pareto.hypervolume);
      if (!pareto.reference.empty()) front += pareto_reference(state.job().all_objectives(), pareto);
    }
    console_.log("task " + task.name + " done: " + std::to_string(progress.ok) + "/" + of + " ok" + steps +
                 (progress.stopped > 0 ? ", " + std::to_string(progress.stopped) + " stopped early" : std::string()) +
                 (limits ? " (" + std::to_string(progress.infeasible) + " of them infeasible)" : std::string()) +
                 (best ? std::string(limits ? ", best feasible " : ", best ") + format_objective(*best) + " (trial " +
                             std::to_string(*progress.best_trial) + ")"
                       : std::string(limits ? ", no feasible trial" : ", no successful trial")) +
                 front + saved);
    // A task whose proposals never came from the job's model fitted on it says so: what it
    // learned from earlier tasks came through their posteriors, or not at all.
    const int interim = progress.proposed_by(ProposalSource::interim_gp);
    if (interim > 0 && progress.proposed_by(ProposalSource::model) == 0) {
      console_.warn("task " + task.name + " ended before a fit of the model covered it: " + std::to_string(interim) +
                    " of its trials were proposed by an interim GP on its own results (proposed_by interim-gp)" +
                    (progress.proposed_by(ProposalSource::model_prior) > 0
                         ? ", " + std::to_string(progress.proposed_by(ProposalSource::model_prior)) +
                               " from an earlier task's posterior (model-prior)"
                         : std::string()) +
                    "; the model's fits took longer than the task's trials");
    }
  }
}

void RunOutputs::write_task_report(const RunState& state) {
  guard([&] { hedge_csv_.flush(); });
  guard([&] {
    const std::vector<TaskModelReport> reports = options_.model_report ? options_.model_report() : std::vector<TaskModelReport>{};
    write_file_atomically(run_.tasks_csv(), tasks_csv(job_, state, reports), Durability::cached);
  });
}

void RunOutputs::write_html_report(bool end, int exit_code) {
  if (!options_.write_report) return;
  const auto now = std::chrono::steady_clock::now();
  if (!end && now < next_report_) return;
  try {
    options_.write_report(end, exit_code);
  } catch (const std::exception& e) {
    console_.warn(std::string("cannot write the report: ") + e.what());
  }
  next_report_ = now + 10 * (std::chrono::steady_clock::now() - now);
}

// A batch script reads it once lbo is gone; a failure to write it is said and changes nothing.
void RunOutputs::write_status(const std::string& status) {
  if (options_.status_file.empty()) return;
  try {
    write_file_atomically(options_.status_file, status + "\n", Durability::synced);
  } catch (const std::exception& e) {
    console_.warn(std::string("cannot write the status file: ") + e.what());
  }
}

void RunOutputs::log_start(const RunState& state, bool resumed, int slots, const std::vector<std::string>& resources,
                           const std::string& deadline_line) {
  const std::vector<TaskIdentity>& tasks = state.job().tasks;
  int budget = 0;
  for (const TaskIdentity& t : tasks) budget += t.budget;
  std::string line = (resumed ? "resuming run " : "run ") + job_.name + ": " + std::to_string(tasks.size()) +
                     " task(s), " + std::to_string(budget) + " trials";
  if (resumed) {
    line += " (" + std::to_string(state.finished_trials()) + " done, " + std::to_string(state.interrupted().size()) +
            " interrupted to run again)";
  }
  console_.log(line + " on " + std::to_string(slots) + " slot(s); results in " + run_.path().string());
  for (const std::string& where : resources) console_.log(where);
  if (!deadline_line.empty()) console_.log(deadline_line);
}

void RunOutputs::log_end(const RunState& state, const RunEnd& end) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - end.started).count();
  const int finished = state.finished_trials();
  char summary[160];
  std::snprintf(summary, sizeof summary, "%d trials finished in %.1f s", finished - end.finished_before, elapsed);
  if (end.finished_before > 0) {
    std::snprintf(summary, sizeof summary, "%d trials finished in %.1f s (%d in all, with earlier runs)",
                  finished - end.finished_before, elapsed, finished);
  }
  if (job_.early_stopping) {
    const std::string text = describe(step_savings(state, job_.early_stopping->max_step), job_.early_stopping->step_name);
    if (!text.empty()) {
      console_.log("early stopping (" + std::string(jobs::to_string(job_.early_stopping->rule)) + "): the trials ran " + text +
                   " against every one run to " + job_.early_stopping->step_name + " " +
                   std::to_string(job_.early_stopping->max_step) + "; process starts not counted");
    }
  }
  if (end.exit_code == 0) {
    console_.log(std::string("done: ") + summary + "; " + run_.results_csv().string());
    return;
  }
  console_.log(std::string("stopped: ") + summary + "; " +
               (!end.checkpoint.empty() ? "state saved in " + end.checkpoint.string()
                                        : "no final checkpoint; the journal " + run_.journal().string() +
                                              " holds every committed result"));
  if (!end.resume_command.empty()) console_.log("resume with: " + end.resume_command);
}

std::string RunOutputs::progress_line(const RunState& state, SlotCounts slots, int finished_before,
                                      std::chrono::steady_clock::time_point started) const {
  std::ostringstream line;
  int tasks_done = 0;
  int finished = 0;
  int stopped = 0;
  const std::vector<TaskIdentity>& tasks = state.job().tasks;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const TaskProgress& p = state.tasks()[i];
    finished += p.finished;
    stopped += p.stopped;
    if (state.task_done(static_cast<int>(i))) {
      ++tasks_done;
      continue;
    }
    if (p.created == 0) continue;
    line << tasks[i].name << " " << p.finished << "/" << tasks[i].budget;
    if (tasks[i].budget_steps > 0) line << ", steps " << p.steps << "/" << tasks[i].budget_steps;
    if (const auto best = state.best_objective(static_cast<int>(i))) line << " best " << format_objective(*best);
    line << " | ";
  }
  if (tasks.size() > 1) line << "tasks done " << tasks_done << "/" << tasks.size() << " | ";
  if (failures_ > 0) line << "failed attempts " << failures_ << " | ";
  if (stopped > 0) line << "stopped early " << stopped << " | ";
  if (job_.policy.surrogate != jobs::SurrogateKind::random) {
    if (const std::string share = model_share(state); !share.empty()) line << share << " | ";
  }
  // The rate of this invocation: a resumed run's earlier trials took an earlier one's time.
  const double minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() / 60;
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.1f", minutes > 0 ? (finished - finished_before) / minutes : 0.0);
  line << "busy " << slots.busy << "/" << slots.slots << " | " << rate << " trials/min";
  return line.str();
}

}  // namespace lbo::orchestrator
