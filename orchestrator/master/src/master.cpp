#include "lbo/orchestrator/master.hpp"

#include <signal.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <utility>
#include <sstream>

#include "lbo/jobs/error.hpp"
#include "lbo/jobs/protocol.hpp"
#include "lbo/orchestrator/checkpoint.hpp"
#include "lbo/orchestrator/files.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "lbo/orchestrator/policy.hpp"
#include "lbo/orchestrator/hedge_csv.hpp"
#include "lbo/orchestrator/results_csv.hpp"
#include "lbo/orchestrator/version.hpp"
#include "lbo/orchestrator/run_state.hpp"
#include "lbo/orchestrator/scheduler.hpp"
#include "lbo/orchestrator/stop_signals.hpp"
#include "lbo/orchestrator/task_report.hpp"
#include "lbo/orchestrator/task_requests.hpp"
#include "lbo/workers/runner.hpp"

namespace asio = boost::asio;

namespace lbo::orchestrator {

namespace {

std::string format_objective(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

// Clamped to 100 years: a nanosecond count overflows past 292 (a --deadline far ahead).
std::chrono::steady_clock::duration seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::min(s, 100.0 * 365 * 86'400)));
}

JournalWriter open_journal(const RunDirectory& run_dir, const std::optional<RecoveredRun>& recovered, Console& console) {
  if (recovered) return continue_journal(run_dir, *recovered, [&console](const std::string& line) { console.warn(line); });
  return JournalWriter::create(run_dir.journal());
}

RunState initial_state(const std::optional<RecoveredRun>& recovered) {
  if (recovered) return recovered->state;
  return RunState();
}

bool resumes(const std::optional<RecoveredRun>& recovered) { return recovered && !recovered->empty(); }

// Tasks added at runtime (add-task, watch) live in the journal, not in the job file: a resumed run
// continues with the recorded tasks plus any the job file appended. Idempotent, so callers that
// merged already (the CLI, for its log line) lose nothing.
jobs::JobSpec with_recorded_tasks(jobs::JobSpec job, const std::optional<RecoveredRun>& recovered) {
  if (resumes(recovered)) job.tasks = recovered->state.job().merged_tasks(job);
  return job;
}

// Kills what an lbo killed outright left running of this run's trials on this host: nothing of
// this run may be running now, and a trial that runs again must not share its folder.
void kill_leftovers(const RunDirectory& run_dir, Console& console) {
  if (const int groups = workers::kill_leftovers_under(run_dir.trials().string()); groups > 0) {
    console.log("killed " + std::to_string(groups) + " objective process group(s) that an earlier lbo of this run left "
                "running on this host");
  }
}

}  // namespace

class Master::Loop {
 public:
  Loop(const jobs::JobSpec& job, RunDirectory& run_dir, TransportFactory make_transport, Console& console,
       MasterOptions options, std::optional<RecoveredRun> recovered)
      : job_(with_recorded_tasks(job, recovered)),
        run_dir_(run_dir),
        console_(console),
        options_(options),
        journal_(open_journal(run_dir, recovered, console)),
        state_(initial_state(recovered)),
        policy_(make_policy(job_, PolicyOptions{options.sync, [&console](const std::string& line) { console.log(line); },
                                                [this](const HedgeDraw& draw) { guard_report([&] { hedge_csv_.append(draw); }); },
                                                std::move(options.warm_start), options.fit_threads})),
        scheduler_(job_),
        signals_(io_, SIGINT, SIGTERM, SIGUSR1),
        progress_timer_(io_),
        checkpoint_timer_(io_),
        grace_timer_(io_),
        tasks_timer_(io_),
        idle_timer_(io_),
        deadline_timer_(io_),
        csv_(run_dir.results_csv(), job_),
        hedge_csv_(run_dir.hedge_csv()),
        checkpoints_(run_dir.path()),
        next_checkpoint_(recovered ? recovered->next_checkpoint : 1),
        resumed_(resumes(recovered)) {
    options_.warm_start.clear();  // the policy has them
    // A closed terminal or ssh session stops the run like any other stop signal.
    signals_.add(SIGHUP);
    if (options_.deadline) {
      deadline_.emplace(*options_.deadline, job_, state_, [&console](const std::string& line) { console.log(line); });
    }
    if (resumed_) {
      kill_leftovers(run_dir, console);
      policy_->restore(recovered->policy, state_);
    }
    transport_ = make_transport(io_, [this](cluster::Completion c) { on_completion(std::move(c)); });
  }

  int run() {
    started_ = std::chrono::steady_clock::now();
    finished_before_ = finished_count();
    // Nothing runs yet: a failure to write here ends the run at once (IoError to the caller).
    const RunStarted started{std::string(lbo_version()), options_.clock(), transport_->slot_count(), JobIdentity::of(job_)};
    journal_.append(started);
    journal_.sync();
    state_.apply(started);
    // A status left by an earlier master (its 75) must not speak for this one if it is killed.
    write_status_file("running");
    if (resumed_) {
      guard_report([&] { csv_.rewrite(state_); });
      // An anchor: later recoveries start here, whatever the journal held before.
      write_checkpoint(true);
    }
    log_start();
    wait_for_signal();
    schedule_progress();
    schedule_checkpoint();
    poll_new_tasks();
    schedule_task_poll();
    schedule_deadline();
    // A stop signal that came while lbo was starting (stop_signals.hpp) stops it before any
    // trial starts.
    if (const int held = held_stop_signal(); held != 0) on_signal(held);
    // A --sync round that ended while the last run was stopping was never refitted on.
    if (options_.sync && state_.interrupted().empty() && policy_->refit_due(state_) && !state_.all_budgets_done()) {
      policy_->results_committed(state_);
    }
    fill_slots();
    check_done();
    // lbo's own I/O may fail in any handler (a full disk, a read-only remount): the run then
    // stops as after a signal, and the loop goes on until it has.
    for (;;) {
      try {
        io_.run();
        break;
      } catch (const IoError& e) {
        halt(e.what(), e.error_number());
      }
    }
    finish_sweeps();
    guard_report([&] { csv_.rewrite(state_); });
    write_task_report();
    final_checkpoint_ok_ = try_checkpoint_now();
    write_html_report(true);
    console_.clear_status();
    report_end();
    write_status_file(exit_code_);
    return exit_code_;
  }

 private:
  // Trials whose final attempt has ended, in all invocations of the run.
  int finished_count() const {
    int finished = 0;
    for (const TaskProgress& p : state_.tasks()) finished += p.finished;
    return finished;
  }

  // What the last attempts left outside their process groups (setsid daemons) is looked for on
  // a thread of its own; lbo waits for those looks before it exits, or its daemons outlive it.
  void finish_sweeps() {
    constexpr double kWait_s = 10;
    if (const std::size_t left = workers::finish_escaped_sweeps(kWait_s); left > 0) {
      console_.warn(std::to_string(left) + " ended attempt(s) were not yet searched for processes left outside their "
                    "process group after " + format_objective(kWait_s) + " s; what they left may still run (the next "
                    "run of this job kills it)");
    }
  }

  void log_start() {
    const int finished = finished_count();
    std::string line = (resumed_ ? "resuming run " : "run ") + job_.name + ": " + std::to_string(job_.tasks.size()) +
                       " task(s), " + std::to_string(job_.total_budget()) + " trials";
    if (resumed_) {
      line += " (" + std::to_string(finished) + " done, " + std::to_string(state_.interrupted().size()) +
              " interrupted to run again)";
    }
    console_.log(line + " on " + std::to_string(transport_->slot_count()) + " slot(s); results in " +
                 run_dir_.path().string());
    for (const std::string& where : transport_->resources()) console_.log(where);
    if (deadline_) console_.log(deadline_->start_line());
  }

  void wait_for_signal() {
    signals_.async_wait([this](const boost::system::error_code& ec, int signal_number) {
      if (!ec) on_signal(signal_number);
    });
  }

  // First signal: stop dispatching, checkpoint, grace period. Second: cancel the running
  // trials now. Third: kill them.
  void on_signal(int signal_number) {
    ++signals_received_;
    const std::string name = "SIG" + std::string(sigabbrev_np(signal_number));
    if (signals_received_ == 1) {
      if (exit_code_ == kExitDone) exit_code_ = kExitResumable;
      // mpirun forwards SIGTERM and SIGINT to every rank, and a worker rank that gets one
      // cancels its trials at once: the grace period is only sure for SIGUSR1 and SIGHUP.
      const bool ranks_too = (signal_number == SIGTERM || signal_number == SIGINT) && transport_->remote();
      begin_stop("received " + name, ranks_too ? " unless the worker ranks got " + name + " too (mpirun forwards it to "
                                                     "every rank, which then cancels its trials at once; send mpirun "
                                                     "SIGUSR1 for a grace period)"
                                               : std::string());
    } else if (signals_received_ == 2) {
      console_.log("received " + name + " again: cancelling the running trials");
      grace_timer_.cancel();
      transport_->cancel_all();
    } else {
      console_.log("received " + name + " a third time: killing the running trials");
      transport_->shutdown();
      finish();
      return;
    }
    wait_for_signal();
    check_done();
  }

  // No new trials, a checkpoint, and the running ones get grace_s to finish before they are
  // cancelled. The first cause (a signal, or lbo's own I/O failing) says why; later ones add
  // nothing. With nothing running, the run ends once the current handler is done.
  void begin_stop(const std::string& why, const std::string& grace_note = {}) {
    if (stopping_) return;
    stopping_ = true;
    // A launcher may kill the master during the grace period (mpirun SIGKILLs its ranks soon
    // after forwarding SIGTERM): from this checkpoint on the run is resumable, so say so now.
    if (try_checkpoint_now() && exit_code_ == kExitResumable) write_status_file(kExitResumable);
    if (const int running = transport_->busy_count(); running > 0) {
      console_.log(why + ": no new trials; " + std::to_string(running) + " running trial(s) have " +
                   format_objective(job_.grace_s) + " s to finish" + grace_note + " (signal again to cancel them now)");
    } else {
      console_.log(why + ": no new trials; none is running");
    }
    grace_timer_.expires_after(seconds(job_.grace_s));
    grace_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || finished_) return;
      if (transport_->busy_count() > 0) console_.log("grace period over: cancelling the running trials");
      transport_->cancel_all();
    });
    asio::post(io_, [this] { check_done(); });
  }

  // lbo's own I/O failed (its journal, run folder or a trial's files): nothing is charged to a
  // trial for it, and the run stops rather than burn its budget. Exit 75 when the condition may
  // pass (a full disk, a read-only remount, a quota), so the same command resumes the run.
  void halt(const std::string& what, int error_number) {
    if (io_failed_) return;
    io_failed_ = true;
    const bool may_pass = IoError::may_pass(error_number);
    if (exit_code_ == kExitDone || !may_pass) exit_code_ = may_pass ? kExitResumable : kExitError;
    console_.log("lbo's own I/O failed: " + what);
    begin_stop(may_pass ? "stopping until that is fixed (the same command then resumes the run)" : "stopping");
  }

  // Appends `record` to the journal; false when lbo's own I/O failed (the run then halts).
  bool journal(const JournalRecord& record) {
    try {
      journal_.append(record);
      return true;
    } catch (const IoError& e) {
      halt(e.what(), e.error_number());
      return false;
    }
  }

  // results.csv and tasks.csv are reports, rebuilt from the state on every resume: a failure
  // to write them is said once and does not stop the run (the journal's failures do).
  template <class Write>
  void guard_report(Write write) {
    try {
      write();
    } catch (const Error& e) {
      if (!report_failed_) console_.warn(std::string(e.what()) + " (the report is rewritten when the run resumes)");
      report_failed_ = true;
    }
  }

  // New tasks: `lbo add-task` requests and new files in the watched folder.
  void poll_new_tasks() {
    if (stopping_ || finished_) return;
    std::vector<PendingRequest> requests;
    try {
      requests = pending_task_requests(run_dir_.path());
    } catch (const std::exception& e) {
      console_.warn(std::string("cannot read task requests: ") + e.what());
    }
    for (const PendingRequest& r : requests) {
      try {
        if (!r.request) {
          answer_task_request(r, false, r.error);
          continue;
        }
        const jobs::TaskSpec task = task_from_request(*r.request, job_.schedule.default_budget);
        if (const std::string why = task_conflict(task, JobIdentity::of(job_).tasks, job_.objective.command); !why.empty()) {
          answer_task_request(r, false, "cannot add task " + task.name + ": " + why);
          continue;
        }
        if (!add_task(task)) {
          answer_task_request(r, false, "cannot add task " + task.name + ": lbo cannot write the run's journal");
          continue;
        }
        answer_task_request(r, true,
                            "task " + task.name + " added to the running run " + job_.name + " with a budget of " +
                                std::to_string(task.budget) + " trials");
      } catch (const std::exception& e) {
        console_.warn("task request " + r.file.filename().string() + ": " + e.what());
      }
    }
    if (!job_.schedule.watch) return;
    const WatchedFiles watched = new_watched_files(*job_.schedule.watch, job_.schedule.watch_pattern, job_.tasks);
    for (const std::filesystem::path& file : watched.not_matching) {
      if (ignored_files_.insert(file.string()).second) {
        console_.log("watched file " + file.string() + " skipped: its name does not match [schedule] watch_pattern \"" +
                     job_.schedule.watch_pattern + "\"");
      }
    }
    for (const std::filesystem::path& file : watched.new_tasks) {
      jobs::TaskSpec task;
      task.name = jobs::task_name_for(file);
      task.dataset = file;
      task.budget = job_.schedule.default_budget;
      task.origin = jobs::TaskOrigin::watched;
      if (const std::string why = task_conflict(task, JobIdentity::of(job_).tasks, job_.objective.command); !why.empty()) {
        if (ignored_files_.insert(file.string()).second) console_.warn("watched file " + file.string() + " skipped: " + why);
        continue;
      }
      add_task(task);
    }
  }

  bool add_task(const jobs::TaskSpec& task) {
    const TaskAdded added{TaskIdentity::of(task), options_.clock()};
    if (!journal(added)) return false;
    try {
      journal_.sync();
    } catch (const IoError& e) {
      halt(e.what(), e.error_number());
      return false;
    }
    job_.tasks.push_back(task);
    state_.apply(added);
    idle_timer_.cancel();
    idle_ = false;
    console_.log("task " + task.name + " added (" + std::string(jobs::to_string(task.origin)) + "), budget " +
                 std::to_string(task.budget) + (task.dataset ? ", dataset " + task.dataset->string() : std::string()));
    // Results the model has not been fitted on (the run had nothing left to propose) are what
    // the new task should learn from.
    if (policy_->refit_due(state_) && !(options_.sync && transport_->busy_count() > 0)) {
      policy_->results_committed(state_);
    }
    fill_slots();
    // A task whose trials do not fit before the deadline leaves nothing running: stop then.
    if (deadline_) asio::post(io_, [this] { check_done(); });
    return true;
  }

  void schedule_task_poll() {
    tasks_timer_.expires_after(std::chrono::seconds(1));
    tasks_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || finished_) return;
      // Every worker rank lost (MpiTransport): nothing can run; the next allocation resumes.
      if (!stopping_ && transport_->slot_count() == 0) {
        if (exit_code_ == kExitDone) exit_code_ = kExitResumable;
        begin_stop("no slot is left (every worker rank was lost)");
      }
      if (const std::string lock = run_dir_.keep_lock_file(); !lock.empty()) console_.warn(lock);
      poll_new_tasks();
      schedule_task_poll();
    });
  }

  void fill_slots() {
    if (stopping_ || finished_) return;
    if (options_.sync && transport_->busy_count() > 0) return;  // the round is still running
    // A --sync run that was stopped finishes its interrupted round before proposing anything.
    const bool interrupted_round = options_.sync && !state_.interrupted().empty();
    while (!stopping_ && transport_->busy_count() < transport_->slot_count()) {
      std::optional<NextAttempt> next = scheduler_.next(state_, *policy_, interrupted_round, may_start_);
      if (!next) break;
      dispatch(std::move(*next));
    }
  }

  // The attempt is journaled before its process exists, so a resume always knows it may be
  // running (and kills what it left). Appended, not yet fsynced: the page cache outlives an lbo
  // killed outright, and a machine crash takes the attempt's process with it.
  void dispatch(NextAttempt next) {
    const std::int64_t id = next.trial;
    const TrialStarted started{id, next.task, next.attempt, std::move(next.config),
                               cluster::to_string(transport_->next_slot()), options_.clock(), next.proposed_by,
                               std::move(next.proposal_note)};
    if (!journal(started)) return;
    state_.apply(started);
    const Trial& trial = state_.trial(id);
    const jobs::TaskSpec& task = job_.tasks[trial.task];
    workers::WorkOrder order;
    order.trial = id;
    order.attempt = trial.attempts;
    order.workdir = run_dir_.trial_dir(id).string();
    order.params_json = job_.space.to_json(trial.config);
    order.timeout_s = job_.objective.timeout_s.value_or(0);
    order.kill_grace_s = job_.objective.kill_grace_s;
    const std::string dataset = task.dataset ? task.dataset->string() : "";
    const jobs::PlaceholderValues values{dataset, task.name, std::to_string(id),
                                         order.workdir + "/" + std::string(workers::kParamsFile), order.workdir};
    for (const std::string& arg : job_.objective.command) order.argv.push_back(jobs::expand_placeholders(arg, values));
    order.env = {{"LBO_TASK", task.name}, {"LBO_DATASET", dataset}, {"LBO_TRIAL_ID", std::to_string(id)}};

    transport_->submit(std::move(order));
  }

  // A failed attempt is retried while `retries` allows. A cancelled one (lbo stopping, or a
  // worker rank terminated under it) runs again first without using up a retry, and so does
  // one that lbo itself could not run (its own I/O failed), which also stops the run.
  void on_completion(cluster::Completion c) {
    const int steps = job_.objective.stepwise;
    if (steps > 0 && c.outcome.status == workers::TrialStatus::ok && static_cast<int>(c.outcome.steps.size()) != steps) {
      c.outcome.status = workers::TrialStatus::failed;
      c.outcome.reason = "the result reports " + std::to_string(c.outcome.steps.size()) + " \"steps\" values; [objective] stepwise = " +
                         std::to_string(steps) + " expects " + std::to_string(steps);
    }
    const workers::TrialStatus status = c.outcome.status;
    const bool runs_again_first = status == workers::TrialStatus::cancelled || status == workers::TrialStatus::lbo_error;
    const Trial& trial = state_.trial(c.trial);
    const bool final = status == workers::TrialStatus::ok ||
                       (!runs_again_first && trial.failed_attempts >= job_.objective.retries);
    const TrialFinished finished{c.trial,          c.attempt,    final,
                                 c.outcome,        cluster::to_string(c.worker), options_.clock(),
                                 trial.task,       trial.config, trial.proposed_by,
                                 trial.proposal_note};
    // Applied even when the journal cannot take it: the final checkpoint may still keep it.
    journal(finished);
    state_.apply(finished);
    if (deadline_) deadline_->record(trial.task, c.outcome);
    if (status == workers::TrialStatus::lbo_error) {
      const std::string where = c.outcome.path.empty() ? "" : " (" + c.outcome.path + ")";
      halt("trial " + std::to_string(c.trial) + " could not be started on " + finished.worker + ": " + c.outcome.reason +
               where + " (it runs again when the run resumes, without using a retry)",
           c.outcome.error_number);
    }
    uncommitted_.emplace_back(c.trial, c.attempt);
    if (!flush_posted_) {
      flush_posted_ = true;
      asio::post(io_, [this] { commit(); });
    }
    // Refill before the fsync: a proposal does not wait on the disk. (--sync waits for the
    // round to end and the refit.)
    if (!options_.sync) fill_slots();
  }

  // One fdatasync commits every result that arrived in this turn of the event loop.
  void commit() {
    flush_posted_ = false;
    try {
      journal_.sync();
    } catch (const IoError& e) {
      halt(e.what(), e.error_number());
    }
    for (const auto& [id, attempt] : uncommitted_) {
      const Trial& t = state_.trial(id);
      if (t.finished) guard_report([&] { csv_.append(state_, t); });
      report_attempt(t, attempt);
    }
    uncommitted_.clear();
    guard_report([&] { csv_.flush(); });
    const bool more_to_propose = !stopping_ && !state_.all_budgets_done();
    if (!options_.sync) {
      if (more_to_propose) policy_->results_committed(state_);  // a refit in the background
    } else if (transport_->busy_count() == 0 && more_to_propose) {
      // The round is over: refit on everything, then go on. An interrupted round left over
      // from a stop must finish first; the uninterrupted run refit only after all of it.
      if (state_.interrupted().empty()) policy_->results_committed(state_);
      fill_slots();
    }
    check_done();
  }

  // `attempt`: the attempt that ended (the trial may already run its next one: slots are
  // refilled before the commit).
  void report_attempt(const Trial& t, int attempt) {
    const jobs::TaskSpec& task = job_.tasks[t.task];
    if (t.outcome.status == workers::TrialStatus::cancelled || t.outcome.status == workers::TrialStatus::lbo_error) return;
    if (t.outcome.status != workers::TrialStatus::ok && ++failures_ <= options_.failures_logged) {
      std::string what = "trial " + std::to_string(t.id) + " (" + task.name + ") attempt " +
                         std::to_string(attempt) + " " + std::string(workers::to_string(t.outcome.status)) +
                         ": " + t.outcome.reason;
      what += t.finished ? "" : "; retrying";
      if (failures_ == options_.failures_logged) what += " (further failures are only counted)";
      console_.log(what);
    }
    const TaskProgress& progress = state_.tasks()[t.task];
    if (t.finished && progress.finished == task.budget) {
      write_task_report();
      const auto best = state_.best_objective(t.task);
      console_.log("task " + task.name + " done: " + std::to_string(progress.ok) + "/" + std::to_string(task.budget) +
                   " ok" + (best ? ", best " + format_objective(*best) + " (trial " +
                                       std::to_string(*progress.best_trial) + ")"
                                 : std::string(", no successful trial")));
    }
  }

  void check_done() {
    if (finished_ || flush_posted_ || transport_->busy_count() > 0) return;
    if (stopping_) {
      finish();
    } else if (deadline_ && !state_.all_budgets_done()) {
      // Nothing runs, and the slots were just offered: no trial fits before the deadline.
      stop_for_deadline(deadline_->nothing_fits(options_.clock()));
    } else if (state_.all_budgets_done()) {
      if (job_.schedule.idle_timeout_s <= 0) {
        finish();
      } else if (!idle_) {
        // Every task is done: wait for a new one (add-task, watch) a while before exiting.
        idle_ = true;
        console_.log("every task is done; waiting up to " + format_objective(job_.schedule.idle_timeout_s) +
                     " s for a new one (lbo add-task" + (job_.schedule.watch ? ", or a file in " + job_.schedule.watch->string() : std::string()) + ")");
        idle_timer_.expires_after(seconds(job_.schedule.idle_timeout_s));
        idle_timer_.async_wait([this](const boost::system::error_code& ec) {
          if (ec || finished_ || !idle_) return;
          console_.log("no new task came: exiting");
          finish();
        });
      }
    }
  }

  void finish() {
    finished_ = true;
    transport_->shutdown();
    signals_.cancel();
    progress_timer_.cancel();
    checkpoint_timer_.cancel();
    grace_timer_.cancel();
    tasks_timer_.cancel();
    idle_timer_.cancel();
    deadline_timer_.cancel();
  }

  // The deadline: a trial that would not finish by it less grace_s is not started (fill_slots
  // asks the planner through may_start_), and at that time the usual stop begins, so the run is
  // never killed half-way by the end of its allocation.
  void schedule_deadline() {
    if (!deadline_) return;
    deadline_timer_.expires_after(seconds(std::max(0.0, deadline_->cutoff() - options_.clock())));
    deadline_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || finished_) return;
      // A steady clock and the wall clock drift apart (NTP): wait for the rest.
      if (options_.clock() < deadline_->cutoff()) {
        schedule_deadline();
        return;
      }
      stop_for_deadline(deadline_->cutoff_reached());
    });
  }

  void stop_for_deadline(const std::string& why) {
    if (stopping_) return;
    if (exit_code_ == kExitDone) exit_code_ = kExitResumable;
    begin_stop(why);
  }

  // The whole master state, written atomically. `now`: on this thread (a stop, the end);
  // otherwise in the background, skipped while the previous one is still being written.
  // Throws IoError.
  void write_checkpoint(bool now) {
    journal_.sync();
    Checkpoint c;
    c.sequence = next_checkpoint_;
    c.unix_time = options_.clock();
    c.job = state_.job();
    c.trials = state_.trials();
    c.retries = state_.retries();
    c.interrupted = state_.interrupted();
    c.journal_bytes = journal_.size_bytes();
    c.policy = policy_->state();
    if (now) {
      checkpoints_.write_now(c);
    } else if (!checkpoints_.write_async(std::move(c))) {
      return;  // the previous one is still being written: try again next period
    }
    ++next_checkpoint_;
  }

  // MasterOptions::status_file. A batch script reads it once lbo is gone; a failure to write it
  // is said and changes nothing else.
  void write_status_file(int code) { write_status_file(std::to_string(code)); }
  void write_status_file(const std::string& status) {
    if (options_.status_file.empty()) return;
    try {
      write_file_atomically(options_.status_file, status + "\n", Durability::synced);
    } catch (const std::exception& e) {
      console_.warn(std::string("cannot write the status file: ") + e.what());
    }
  }

  // A stop's checkpoint. Its failure is said and does not stop the stop: the journal holds
  // every committed result (and whatever it could not take is then lost, as after kill -9).
  bool try_checkpoint_now() {
    try {
      write_checkpoint(true);
      return true;
    } catch (const IoError& e) {
      console_.warn(std::string("cannot write a checkpoint: ") + e.what() + "; a resume starts from the journal");
      return false;
    }
  }

  // tasks.csv: best, trials to 95%, latent networks and similarity per task. A report, not
  // state: a failure is a warning.
  void write_task_report() {
    guard_report([&] { hedge_csv_.flush(); });
    guard_report([&] {
      write_file_atomically(run_dir_.tasks_csv(), tasks_csv(job_, state_, policy_->model_report()), Durability::cached);
    });
  }

  // The report reads the whole journal: with a short checkpoint period and a long run it would
  // take the master's time, so a periodic one waits until ten times its last build time has
  // passed (at most a tenth of the master's time; with the default 60 s period and 10,000
  // trials, every checkpoint still writes it). The last one is always written.
  void write_html_report(bool end) {
    if (!options_.write_report) return;
    const auto now = std::chrono::steady_clock::now();
    if (!end && now < next_report_) return;
    try {
      options_.write_report(end, exit_code_);
    } catch (const std::exception& e) {
      console_.warn(std::string("cannot write the report: ") + e.what());
    }
    next_report_ = now + 10 * (std::chrono::steady_clock::now() - now);
  }

  void schedule_checkpoint() {
    checkpoint_timer_.expires_after(seconds(options_.checkpoint_every_s.value_or(job_.checkpoint_every_s)));
    checkpoint_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || finished_) return;
      if (const auto error = checkpoints_.take_error()) console_.warn("checkpoint failed: " + *error);
      try {
        write_checkpoint(false);
      } catch (const IoError& e) {
        halt(e.what(), e.error_number());
      }
      write_task_report();
      write_html_report(false);
      schedule_checkpoint();
    });
  }

  void schedule_progress() {
    const auto period = console_.interactive() ? std::chrono::milliseconds(250) : options_.progress_every;
    progress_timer_.expires_after(period);
    progress_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || finished_) return;
      console_.status(progress_line());
      schedule_progress();
    });
  }

  std::string progress_line() const {
    std::ostringstream line;
    int tasks_done = 0;
    int finished = 0;
    for (std::size_t i = 0; i < job_.tasks.size(); ++i) {
      const TaskProgress& p = state_.tasks()[i];
      finished += p.finished;
      if (p.finished >= job_.tasks[i].budget) {
        ++tasks_done;
        continue;
      }
      if (p.created == 0) continue;
      line << job_.tasks[i].name << " " << p.finished << "/" << job_.tasks[i].budget;
      if (const auto best = state_.best_objective(static_cast<int>(i))) line << " best " << format_objective(*best);
      line << " | ";
    }
    if (job_.tasks.size() > 1) line << "tasks done " << tasks_done << "/" << job_.tasks.size() << " | ";
    if (failures_ > 0) line << "failed attempts " << failures_ << " | ";
    if (job_.policy.surrogate != jobs::SurrogateKind::random) {
      if (const std::string share = model_share(state_); !share.empty()) line << share << " | ";
    }
    // The rate of this invocation: a resumed run's earlier trials took an earlier one's time.
    const double minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count() / 60;
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.1f", minutes > 0 ? (finished - finished_before_) / minutes : 0.0);
    line << "busy " << transport_->busy_count() << "/" << transport_->slot_count() << " | " << rate << " trials/min";
    return line.str();
  }

  void report_end() {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    const int finished = finished_count();
    char summary[160];
    std::snprintf(summary, sizeof summary, "%d trials finished in %.1f s", finished - finished_before_, elapsed);
    if (finished_before_ > 0) {
      std::snprintf(summary, sizeof summary, "%d trials finished in %.1f s (%d in all, with earlier runs)",
                    finished - finished_before_, elapsed, finished);
    }
    if (exit_code_ == kExitDone) {
      console_.log(std::string("done: ") + summary + "; " + run_dir_.results_csv().string());
      return;
    }
    console_.log(std::string("stopped: ") + summary + "; " +
                 (final_checkpoint_ok_ ? "state saved in " + run_dir_.checkpoint(next_checkpoint_ - 1).string()
                                       : "no final checkpoint; the journal " + run_dir_.journal().string() +
                                             " holds every committed result"));
    if (!options_.resume_command.empty()) console_.log("resume with: " + options_.resume_command);
  }

  jobs::JobSpec job_;  // its tasks grow as tasks are added
  RunDirectory& run_dir_;
  Console& console_;
  MasterOptions options_;
  JournalWriter journal_;
  RunState state_;  // changes only by records appended to journal_
  std::unique_ptr<Policy> policy_;
  Scheduler scheduler_;
  std::optional<DeadlinePlanner> deadline_;
  TaskFilter may_start_ = [this](int task) { return !deadline_ || deadline_->may_start(task, options_.clock()); };

  asio::io_context io_;
  asio::signal_set signals_;
  asio::steady_timer progress_timer_, checkpoint_timer_, grace_timer_, tasks_timer_, idle_timer_, deadline_timer_;
  std::unique_ptr<cluster::Transport> transport_;
  ResultsCsv csv_;
  HedgeCsv hedge_csv_;
  std::chrono::steady_clock::time_point next_report_{};  // no periodic report before
  CheckpointWriter checkpoints_;
  std::uint64_t next_checkpoint_;

  std::vector<std::pair<std::int64_t, int>> uncommitted_;  // (trial, attempt) ended in this turn
  bool resumed_ = false;
  bool flush_posted_ = false;
  bool stopping_ = false;
  bool finished_ = false;
  bool io_failed_ = false;           // lbo's own I/O failed: the run is stopping (halt)
  bool report_failed_ = false;       // results.csv or tasks.csv could not be written (said once)
  bool final_checkpoint_ok_ = true;
  bool idle_ = false;  // every task done, waiting for a new one
  std::set<std::string> ignored_files_;  // watched files that cannot be tasks, warned about once
  int signals_received_ = 0;
  int failures_ = 0;
  int exit_code_ = kExitDone;
  std::chrono::steady_clock::time_point started_;
  int finished_before_ = 0;  // trials finished by earlier invocations of the run
};

Master::Master(const jobs::JobSpec& job, RunDirectory& run_dir, TransportFactory make_transport, Console& console,
               MasterOptions options, std::optional<RecoveredRun> recovered)
    : loop_(std::make_unique<Loop>(job, run_dir, std::move(make_transport), console, std::move(options),
                                   std::move(recovered))) {}

Master::~Master() = default;

int Master::run() { return loop_->run(); }

}  // namespace lbo::orchestrator
