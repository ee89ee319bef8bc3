#include "lbo/app/status.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "lbo/jobs/error.hpp"
#include "lbo/jobs/objective.hpp"
#include "lbo/orchestrator/recovery.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/orchestrator/saved_model.hpp"
#include "lbo/orchestrator/step_savings.hpp"
#include "lbo/orchestrator/task_report.hpp"

namespace fs = std::filesystem;

namespace lbo::orchestrator {

namespace {

std::string local_time(double unix_time) {
  const auto t = static_cast<std::time_t>(unix_time);
  std::tm local{};
  localtime_r(&t, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local);
  return text;
}

std::string number(double v) { return jobs::Objective::format(v); }

// "5 initial, 40 model (100%)": how a task's trials were proposed.
std::string proposed_by(const TaskProgress& p) {
  std::string text;
  const auto add = [&](ProposalSource source, const char* name) {
    if (const int n = p.proposed_by(source); n > 0) text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + name;
  };
  add(ProposalSource::initial, "initial");
  add(ProposalSource::random, "random");
  add(ProposalSource::model, "model");
  add(ProposalSource::model_prior, "prior");
  add(ProposalSource::interim_gp, "interim-gp");
  add(ProposalSource::earlier_best, "earlier-best");
  add(ProposalSource::random_fallback, "fallback");
  return text.empty() ? "-" : text;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

}  // namespace

namespace {

// "state: running (...)", "state: not running (last held by ...)" or "state: unknown (...)".
void write_lock_state(std::ostream& out, const LockHolder& lock) {
  if (!lock.unknown_why.empty()) {
    out << "state: unknown (" << lock.unknown_why << "; lbo cannot tell whether a live lbo uses the folder)\n";
  } else if (lock.held) {
    out << "state: running (" << (lock.holder.empty() ? "holder unknown" : lock.holder) << ")\n";
  } else {
    std::string last;
    if (!lock.holder.empty()) {
      last = " (last held by " + lock.holder +
             (lock.ended ? ", which ended" : ", which stopped without ending: killed, or its machine lost") + ")";
    }
    out << "state: not running" << last << "\n";
  }
}

void write_checkpoint_line(std::ostream& out, const RecoveredRun& run) {
  if (run.checkpoint_file) {
    const double age =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() - run.checkpoint_time;
    out << "last checkpoint: " << run.checkpoint_file->filename().string() << " at " << local_time(run.checkpoint_time);
    if (run.state.job().virtual_clock) {
      out << " (virtual time: a simulated run)\n";  // ahead of the real clock: no age
    } else {
      out << " (" << static_cast<long>(std::max(0.0, age)) << " s ago)\n";
    }
  } else {
    out << "last checkpoint: none yet (the journal holds everything)\n";
  }
}

std::vector<std::string> task_names(const JobIdentity& job) {
  std::vector<std::string> names;
  for (const TaskIdentity& t : job.tasks) names.push_back(t.name);
  return names;
}

std::size_t name_width(const JobIdentity& job) {
  std::size_t width = 4;
  for (const TaskIdentity& t : job.tasks) width = std::max(width, t.name.size());
  return width;
}

// "3 trials: 2 5 9": a task's Pareto set, its first kShown members by id.
std::string pareto_members(const std::vector<std::int64_t>& pareto) {
  constexpr std::size_t kShown = 10;
  std::string text = std::to_string(pareto.size()) + (pareto.size() == 1 ? " trial" : " trials");
  for (std::size_t i = 0; i < pareto.size() && i < kShown; ++i) text += (i == 0 ? ": " : " ") + std::to_string(pareto[i]);
  return pareto.size() > kShown ? text + " …" : text;
}

// One row per task: progress, failures, unfinished trials, trials to 95%, the latent networks
// it uses (lbo), how its trials were proposed, its best.
void write_task_table(std::ostream& out, const RecoveredRun& run, const LockHolder& lock) {
  const RunState& state = run.state;
  const JobIdentity& job = state.job();
  // The journal's running trials are those a live run has in flight (or a dead one left).
  std::vector<int> running(state.tasks().size(), 0);
  for (std::int64_t id : state.interrupted()) running[static_cast<std::size_t>(state.trial(id).task)] += 1;
  const SavedModel model = describe_saved_model(run.policy, task_names(job));
  const auto networks_of = [&](std::size_t task) -> std::string {
    // No usage: the saved model has not fitted the task (lbo; "-" for other models too).
    if (task >= model.tasks.size() || model.tasks[task].usage.empty()) return "-";
    const std::string used = used_networks(model.tasks[task].usage);
    return used.empty() ? "none" : used;
  };
  // Trials started but not finished: running under a live lbo, to rerun after a stopped one.
  const char* unfinished = lock.held ? "running" : lock.unknown_why.empty() ? "to rerun" : "unfinished";
  // Each column is at least as wide as its usual contents, and wider when a cell needs it (a
  // budget of 1e8), always with two spaces before the next.
  std::vector<std::vector<std::string>> table{{"task", "origin", "done/budget", "ok", "failed", unfinished, "to 95%",
                                               "networks", "proposed by",
                                               "best (" + std::string(jobs::to_string(job.direction)) + ")"}};
  std::vector<std::size_t> widths{name_width(job) + 2, 10, 13, 6, 8, 10, 8, 12, 13, 0};
  // Trials stopped early ([early_stopping]) are neither ok nor failed: a column of their own
  // in runs that have any.
  const bool any_stopped = std::any_of(state.tasks().begin(), state.tasks().end(),
                                       [](const TaskProgress& p) { return p.stopped > 0; });
  if (any_stopped) {
    table[0].insert(table[0].begin() + 5, "stopped");
    widths.insert(widths.begin() + 5, 9);
  }
  // Trials paused at a rung (promotion mode) wait to be promoted or to end stopped: counted
  // apart while any do.
  std::vector<int> paused(state.tasks().size(), 0);
  for (const std::int64_t id : state.paused()) paused[static_cast<std::size_t>(state.trial(id).task)] += 1;
  const auto paused_column = static_cast<std::ptrdiff_t>(any_stopped ? 6 : 5);
  if (!state.paused().empty()) {
    table[0].insert(table[0].begin() + paused_column, "paused");
    widths.insert(widths.begin() + paused_column, 8);
  }
  // A job with [[constraints]]: the ok trials outside a limit, and the best is the best feasible.
  const bool limits = !state.job().constraints.empty();
  if (limits) {
    table[0].insert(table[0].begin() + 4, "infeasible");
    widths.insert(widths.begin() + 4, 12);
    table[0].back() = "best feasible (" + std::string(jobs::to_string(job.direction)) + ")";
  }
  const auto shifted = [&](std::ptrdiff_t column) { return column + (limits ? 1 : 0); };
  // Several objectives: each task's Pareto set (its size and members), after its best by the first.
  const bool several = state.several_objectives();
  if (several) {
    table[0].back() = std::string(limits ? "best feasible " : "best ") + state.job().all_objectives().primary().name() + " (" +
                      std::string(jobs::to_string(job.direction)) + ")";
    table[0].push_back("pareto set");
    widths.push_back(0);
  }
  for (std::size_t i = 0; i < state.tasks().size(); ++i) {
    const TaskProgress& p = state.tasks()[i];
    const TaskSummary summary = summarize_task(state, static_cast<int>(i));
    table.push_back({job.tasks[i].name, std::string(jobs::to_string(job.tasks[i].origin)),
                     std::to_string(p.finished) + "/" + std::to_string(job.tasks[i].budget), std::to_string(p.ok),
                     std::to_string(p.failed()), std::to_string(running[i]),
                     summary.trials_to_95 ? std::to_string(*summary.trials_to_95) : "-", networks_of(i), proposed_by(p),
                     summary.best ? number(*summary.best) + " (trial " + std::to_string(summary.best_trial) + ")" : "-"});
    if (limits) table.back().insert(table.back().begin() + 4, std::to_string(p.infeasible));
    if (any_stopped) table.back().insert(table.back().begin() + shifted(5), std::to_string(p.stopped));
    if (!state.paused().empty()) table.back().insert(table.back().begin() + shifted(paused_column), std::to_string(paused[i]));
    if (several) table.back().push_back(pareto_members(p.pareto));
  }
  for (const std::vector<std::string>& row : table) {
    for (std::size_t c = 0; c + 1 < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size() + 2);
  }
  for (const std::vector<std::string>& row : table) {
    for (std::size_t c = 0; c + 1 < row.size(); ++c) out << pad(row[c], widths[c]);
    out << row.back() << "\n";
  }
}

// The ten most frequent reasons of failed trials.
void write_failures(std::ostream& out, const RunState& state) {
  std::map<std::string, int> reasons;
  for (const Trial& t : state.trials()) {
    if (!t.finished || t.lost() || !workers::is_failure(t.outcome.status)) continue;
    std::string reason = std::string(workers::to_string(t.outcome.status)) + ": " + t.outcome.reason;
    if (reason.size() > 120) reason = reason.substr(0, 117) + "...";
    ++reasons[reason];
  }
  if (reasons.empty()) return;
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [reason, count] : reasons) sorted.emplace_back(count, reason);
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  out << "failures by reason:\n";
  for (std::size_t i = 0; i < sorted.size() && i < 10; ++i) out << "  " << sorted[i].first << " x " << sorted[i].second << "\n";
  if (sorted.size() > 10) out << "  (" << sorted.size() - 10 << " more reasons)\n";
}

// "early stopping: the ended trials ran 870 of 1728 epoch steps (...)", for a job with
// [early_stopping] (read from its job.toml); nothing otherwise.
void write_savings(std::ostream& out, const fs::path& run_dir, const RunState& state) {
  std::ifstream in(RunPaths(run_dir).job_file(), std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::optional<jobs::StepsOfJob> steps = jobs::early_stopping_steps_in(text);
  if (!steps) return;
  const std::string saved = describe(step_savings(state, steps->max_step), steps->step_name);
  if (!saved.empty()) {
    out << "early stopping: the trials that ended ok or stopped ran " << saved << ", against each run to "
        << steps->step_name << " " << steps->max_step << "\n";
  }
}

}  // namespace

std::string status_report(const fs::path& run_dir, const LockOptions& locking) {
  if (!has_run_state(run_dir)) {
    throw InputError(run_dir.string() + ": not a run directory (no " + RunPaths(run_dir).journal().filename().string() + ")");
  }
  const RecoveredRun run = recover_run(run_dir);
  std::ostringstream out;
  out << "run: " << fs::absolute(run_dir).string() << "\n";
  const LockHolder lock = lock_holder(run_dir, locking);
  write_lock_state(out, lock);
  write_checkpoint_line(out, run);
  if (run.empty()) out << "the run has no record yet (a start stopped at once); `lbo run` starts it\n";
  write_task_table(out, run, lock);
  write_savings(out, run_dir, run.state);
  out << describe_saved_model(run.policy, task_names(run.state.job())).sections;
  if (const RunPaths paths(run_dir); fs::exists(paths.tasks_csv())) {
    out << "per-task report (best per step, task similarity): " << paths.tasks_csv().string() << "\n";
  }
  write_failures(out, run.state);
  for (const std::string& w : run.warnings) out << "warning: " << w << "\n";
  return out.str();
}

}  // namespace lbo::orchestrator
