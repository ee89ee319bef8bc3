#include "lbo/orchestrator/master.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>
#include <variant>

#include "attempts.hpp"
#include "checkpoint_folders.hpp"
#include "checkpointing.hpp"
#include "lbo/cluster/transport.hpp"
#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/fidelity.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "lbo/orchestrator/policy.hpp"
#include "lbo/orchestrator/ledger.hpp"
#include "lbo/orchestrator/run_outputs.hpp"
#include "lbo/orchestrator/run_state.hpp"
#include "lbo/orchestrator/scheduler.hpp"
#include "lbo/orchestrator/stop_signals.hpp"
#include "lbo/orchestrator/version.hpp"
#include "lbo/workers/runner.hpp"
#include "once_per_turn.hpp"
#include "periodic.hpp"
#include "proposal_replay.hpp"
#include "stop_control.hpp"
#include "task_arrivals.hpp"

namespace asio = boost::asio;

namespace lbo::orchestrator {

namespace {

JournalWriter open_journal(const RunDirectory& run_dir, const std::optional<RecoveredRun>& recovered, Console& console) {
  if (recovered) return continue_journal(run_dir, *recovered, [&console](const std::string& line) { console.warn(line); });
  return JournalWriter::create(run_dir.journal());
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

// What the last attempts left outside their process groups (setsid daemons) is looked for on a
// thread of its own; lbo waits for those looks before it exits, or its daemons outlive it.
void finish_sweeps(Console& console) {
  constexpr double kWait_s = 10;
  if (const std::size_t left = workers::finish_escaped_sweeps(kWait_s); left > 0) {
    console.warn(std::to_string(left) + " ended attempt(s) were not yet searched for processes left outside their "
                 "process group after " + format_objective(kWait_s) + " s; what they left may still run (the next run "
                 "of this job kills it)");
  }
}

// How the master's io_context is run: to the end for real transports; for a simulated one
// (Transport::simulated), handler by handler: before each handler, the completions due by its
// virtual clock are posted; when no handler is ready and nothing simulated runs, it blocks for a
// real event (a timer, add-task); while `policy` fits in the background, it waits for the fit in
// short real steps, so the fit costs virtual time as it would real time; otherwise it jumps the
// clock to the next completion.
void run_event_loop(boost::asio::io_context& io, cluster::Transport& transport, const Policy& policy) {
  if (!transport.simulated()) {
    io.run();
    return;
  }
  constexpr std::chrono::duration<double> kFitStep{0.002};
  while (!io.stopped()) {
    transport.deliver_completions(false);
    if (io.poll_one() > 0 || io.stopped()) continue;
    const std::optional<double> next = transport.next_completion_in();
    if (!next) {
      io.run_one();  // nothing simulated is running: real events only
    } else if (!policy.fitting()) {
      transport.deliver_completions(true);
    } else {
      const auto step = std::min(kFitStep, std::chrono::duration<double>(std::max(*next, 0.0)));
      io.run_one_for(std::chrono::duration_cast<std::chrono::steady_clock::duration>(step));
    }
  }
}

// A --sync run resumed: `policy` goes over what the last master did after the checkpoint
// (proposal_replay.hpp), its log lines unsaid (`quiet`: they were said then).
void replay(const JournalTail& tail, Policy& policy, const Scheduler& scheduler, bool& quiet, Console& console) {
  quiet = true;
  const ReplayResult replayed = replay_proposals(tail, policy, scheduler);
  quiet = false;
  const std::string said = replayed.summary();
  if (!replayed.mismatch.empty()) {
    console.warn(said);
  } else if (!said.empty()) {
    console.log(said);
  }
}

}  // namespace

// The loop: fill every free slot, journal each result as it comes, commit a turn's results with
// one fsync, and stop when the budgets are spent or a stop comes. Its named parts: the
// scheduler (what runs next), the policy (what it evaluates), StopControl (signals, the grace
// period, lbo's own failures), Checkpointing, TaskArrivals (add-task, the watched folder),
// RunOutputs (results.csv, tasks.csv, hedge.csv, the log, the status file, the report).
class Master::Loop : private Ledger::Listener {
 public:
  Loop(const jobs::JobSpec& job, RunDirectory& run_dir, TransportFactory make_transport, Console& console,
       MasterOptions options, std::optional<RecoveredRun> recovered)
      : job_(with_recorded_tasks(job, recovered)),
        run_dir_(run_dir),
        console_(console),
        options_(std::move(options)),
        journal_(open_journal(run_dir, recovered, console)),
        state_(recovered ? recovered->state : RunState()),
        // Its completions go to attempts_ (made below), once the loop runs; it starts nothing
        // before an attempt is submitted.
        transport_(make_transport(io_, [this](cluster::Completion c) { attempts_.on_completion(std::move(c)); })),
        outputs_(run_dir, job_, console,
                 {.failures_logged = options_.failures_logged, .status_file = options_.status_file,
                  .write_report = options_.write_report, .model_report = [this] { return policy_->model_report(state_); }}),
        policy_(make_policy(job_, {.sync = options_.sync,
                                   .log = [this, &console](const std::string& line) {
                                     if (!quiet_) console.log(line);
                                   },
                                   .hedge = [this](const HedgeDraw& draw) { outputs_.hedge_draw(draw); },
                                   .warm_start = std::move(options_.warm_start), .threads = options_.fit_threads,
                                   .fitted = [this] { asio::post(io_, [this] { fitted(); }); }})),
        scheduler_(job_, [this](const RunState& state, const TaskFilter& allowed) { return fidelity_.promotion(state, allowed); }),
        stops_(io_, *transport_, console, job_.grace_s,
               {.checkpoint_now = [this] { return checkpoints_.try_now(); },
                .write_status = [this](const std::string& s) { outputs_.write_status(s); },
                .check_done = [this] { check_done(); }, .finish = [this] { finish(); }}),
        checkpoints_(io_, run_dir, journal_, state_, *policy_, options_.clock, recovered ? recovered->next_checkpoint : 1,
                     console),
        arrivals_(run_dir, job_, state_, console, [this](const jobs::TaskSpec& task) { return add_task(task); }),
        progress_(io_, console.interactive() ? std::chrono::milliseconds(250) : options_.progress_every,
                  [this] {
                    console_.status(outputs_.progress_line(state_, {transport_->busy_count(), transport_->slot_count()},
                                                           finished_before_, started_));
                  }),
        tick_(io_, std::chrono::seconds(1), [this] { tick(); }),
        resumed_(resumes(recovered)) {
    options_.warm_start.clear();  // the policy has them
    ledger_.listen(*this);
    if (options_.deadline) {
      deadline_.emplace(*options_.deadline, job_, state_, [&console](const std::string& line) { console.log(line); });
    }
    if (resumed_) {
      kill_leftovers(run_dir, console);
      saved_policy_ = std::move(recovered->policy);
      if (options_.sync) tail_ = std::move(recovered->tail);
    }
    transport_->on_reports([this](std::vector<workers::TrialReport> batch) {
      if (!finished_) fidelity_.on_reports(std::move(batch), options_.clock());
    });
  }

  int run() {
    start();
    // lbo's own I/O may fail in any handler (a full disk, a read-only remount): the run then
    // stops as after a signal, and the loop goes on until it has.
    for (;;) {
      try {
        run_event_loop(io_, *transport_, *policy_);
        break;
      } catch (const IoError& e) {
        stops_.halt(e.what(), e.error_number());
      }
    }
    return end();
  }

 private:
  // Journals the start, says what runs where, starts the timers and fills the slots.
  void start() {
    started_ = std::chrono::steady_clock::now();
    finished_before_ = state_.finished_trials();
    // Nothing runs yet: a failure to write here ends the run at once (IoError to the caller).
    ledger_.open({std::string(lbo_version()), options_.clock(), transport_->slot_count(), JobIdentity::of(job_)});
    // The model is rebuilt on the run's tasks as they are now (the job file may have added some);
    // a --sync run's on the data its checkpoint held, as it was when its proposals after that
    // checkpoint were made (their replay follows).
    if (saved_policy_) policy_->restore(*saved_policy_, tail_ ? tail_->start : state_);
    saved_policy_.reset();
    if (tail_) {
      replay(*tail_, *policy_, scheduler_, quiet_, console_);
      tail_.reset();
    }
    // What a master killed between a report and the pause it called for left undone.
    if (resumed_) fidelity_.settle_owed(options_.clock());
    // A status left by an earlier master (its 75) must not speak for this one if it is killed.
    outputs_.write_status("running");
    // results.csv is first written here, in one rename (a resumed run's stays whole until now).
    outputs_.rewrite_results(state_);
    if (resumed_) {
      outputs_.rewrite_reports(state_);
      // An anchor: later recoveries start here, whatever the journal held before.
      checkpoints_.write(true);
    }
    outputs_.log_start(state_, resumed_, transport_->slot_count(), transport_->resources(),
                       deadline_ ? deadline_->start_line() : std::string());
    checkpoint_folders_.tidy(state_);  // what a killed master left of done tasks
    stops_.listen();
    progress_.start();
    checkpoints_.schedule(options_.checkpoint_every_s.value_or(job_.checkpoint_every_s),
                          [this](const IoError& e) { stops_.halt(e.what(), e.error_number()); },
                          [this] {
                            outputs_.write_task_report(state_);
                            outputs_.write_html_report(false, stops_.exit_code());
                          });
    arrivals_.poll();
    tick_.start();
    // A trial that would not finish by the deadline less grace_s is not started (fill_slots
    // asks the planner through may_start_), and at that time the usual stop begins.
    if (deadline_) stops_.watch_deadline(*deadline_, options_.clock);
    // A stop signal that came while lbo was starting (stop_signals.hpp) stops it before any
    // trial starts.
    if (const int held = held_stop_signal(); held != 0) stops_.on_signal(held);
    // A --sync round that ended while the last run was stopping was never refitted on.
    if (options_.sync && state_.interrupted().empty() && policy_->refit_due(state_) && !state_.all_budgets_done()) {
      policy_->results_committed(state_);
    }
    fill_slots();
    check_done();
  }

  // The run's last words: results.csv and tasks.csv whole, a final checkpoint, the report, the
  // log's summary and the status file.
  int end() {
    finish_sweeps(console_);
    outputs_.rewrite_results(state_);
    outputs_.write_task_report(state_);
    const bool checkpointed = checkpoints_.try_now();
    const int exit_code = stops_.exit_code();
    outputs_.write_html_report(true, exit_code);
    console_.clear_status();
    outputs_.log_end(state_, {finished_before_, started_, exit_code,
                              checkpointed ? run_dir_.checkpoint(checkpoints_.newest()) : std::filesystem::path(),
                              options_.resume_command});
    outputs_.write_status(std::to_string(exit_code));
    return exit_code;
  }

  // Reports go to reports.csv once they count.
  void applied(const JournalRecord& record, const RunState& state) override {
    if (const auto* reported = std::get_if<TrialsReported>(&record)) outputs_.reported(state, *reported);
  }

  // Journaled and fsynced before it counts; then the run opens it as its tasks are spent.
  bool add_task(const jobs::TaskSpec& task) {
    if (!ledger_.record(TaskAdded{TaskIdentity::of(task), options_.clock()}, Ledger::Write::synced)) return false;
    stops_.new_task();
    console_.log("task " + task.name + " added (" + std::string(jobs::to_string(task.origin)) + "), budget " +
                 std::to_string(task.budget) + (task.dataset ? ", dataset " + task.dataset->string() : std::string()));
    // Results the model has not been fitted on (the run had nothing left to propose) are what
    // the new task should learn from.
    if (policy_->refit_due(state_) && !(options_.sync && (transport_->busy_count() > 0 || policy_->fitting()))) {
      policy_->results_committed(state_);
    }
    fill_slots();
    // A task whose trials do not fit before the deadline leaves nothing running: stop then.
    if (deadline_) asio::post(io_, [this] { check_done(); });
    return true;
  }

  // Every second: a transport without slots, the lock file, new tasks.
  void tick() {
    // Every worker rank lost (MpiTransport): nothing can run; the next allocation resumes.
    if (!stops_.stopping() && transport_->slot_count() == 0) {
      stops_.stop_resumable("no slot is left (every worker rank was lost)");
    }
    if (const std::string lock = run_dir_.keep_lock_file(); !lock.empty()) console_.warn(lock);
    if (!stops_.stopping()) arrivals_.poll();
  }

  void fill_slots() {
    if (stops_.stopping() || finished_) return;
    if (options_.sync && transport_->busy_count() > 0) return;  // the round is still running
    // The round's fit runs on its own thread (signals are handled meanwhile); fitted() goes on.
    if (options_.sync && policy_->fitting()) return;
    // A --sync run that was stopped finishes its interrupted round before proposing anything;
    // one killed while handing a round out hands out the rest of it too (as the killed master
    // would have: from the model it was proposing from, the next checkpoint's).
    const bool interrupted_round = options_.sync && !state_.interrupted().empty() && state_.round_handed_out();
    while (!stops_.stopping() && transport_->busy_count() < transport_->slot_count()) {
      std::optional<NextAttempt> next = scheduler_.next(state_, *policy_, interrupted_round, may_start_);
      if (!next) break;
      attempts_.dispatch(std::move(*next));
    }
    // Promotion mode: a task with nothing left to run or promote ends its paused trials.
    if (!stops_.stopping()) fidelity_.settle(options_.clock());
  }

  // One fdatasync commits every result that arrived in this turn of the event loop.
  void commit() {
    fill_.run_if_asked();  // a proposal does not wait on the disk
    ledger_.commit();
    outputs_.committed(state_, attempts_.take_ended());
    checkpoint_folders_.tidy(state_);
    const bool more_to_propose = !stops_.stopping() && !state_.all_budgets_done();
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

  void check_done() {
    if (finished_ || commit_.asked() || transport_->busy_count() > 0) return;
    if (stops_.stopping()) {
      // Attempts held for their round's rungs (--sync) end cancelled; their commit comes back.
      if (std::vector<cluster::Completion> held = fidelity_.interrupt_held(); !held.empty()) {
        for (cluster::Completion& c : held) attempts_.complete(std::move(c), false);
        return;
      }
      if (options_.sync && policy_->fitting()) {
        console_.log("the run stops while the model fits on the round's results; the next run fits again before it "
                     "proposes");
      }
      finish();
    } else if (options_.sync && policy_->fitting()) {
      return;  // the next round waits for its fit (fitted())
    } else if (deadline_ && !state_.all_budgets_done()) {
      // Nothing runs, and the slots were just offered: no trial fits before the deadline.
      stops_.stop_resumable(deadline_->nothing_fits(options_.clock()));
    } else if (state_.all_budgets_done()) {
      if (job_.schedule.idle_timeout_s <= 0) {
        finish();
      } else if (!stops_.idle()) {
        stops_.wait_idle(job_.schedule.idle_timeout_s, "lbo add-task" + (job_.schedule.watch ? ", or a file in " +
                                                                         job_.schedule.watch->string() : std::string()));
      }
    }
  }

  // --sync: the fit of the round's results is published; the next round starts.
  void fitted() {
    if (finished_) return;
    fill_slots();
    check_done();
  }

  void finish() {
    finished_ = true;
    transport_->shutdown();
    stops_.cancel();
    checkpoints_.cancel();
    progress_.cancel();
    tick_.cancel();
  }

  jobs::JobSpec job_;  // as the job file says; the run's tasks are state_.job()'s
  RunDirectory& run_dir_;
  Console& console_;
  MasterOptions options_;
  JournalWriter journal_;
  RunState state_;  // changes only by the records of ledger_
  Ledger ledger_{journal_, state_, [this](const IoError& e) { stops_.halt(e.what(), e.error_number()); }};
  bool quiet_ = false;  // the policy's log lines are not said (a replay): before policy_, which logs
  asio::io_context io_;
  std::unique_ptr<cluster::Transport> transport_;  // made before the parts that use it
  RunOutputs outputs_;
  std::unique_ptr<Policy> policy_;
  Scheduler scheduler_;
  std::optional<DeadlinePlanner> deadline_;
  TaskFilter may_start_ = [this](int task) { return !deadline_ || deadline_->may_start(task, options_.clock()); };
  StopControl stops_;
  Checkpointing checkpoints_;
  TaskArrivals arrivals_;
  // Reports are journaled as they come (a record per batch), fsynced with the next commit.
  Fidelity fidelity_{job_, options_.sync, ledger_,
                     {.ended = [this](std::int64_t trial, int attempt, bool running) {
                        if (running) transport_->cancel(trial);
                        attempts_.ended_early(trial, attempt);
                      },
                      .released = [this](cluster::Completion c) { attempts_.complete(std::move(c), false); },
                      .stopping = [this] { return stops_.stopping(); },
                      .log = [this](const std::string& line) { console_.log(line); }}};
  CheckpointFolders checkpoint_folders_{job_, run_dir_, [this](const std::string& line) { console_.log(line); }};
  Periodic progress_, tick_;  // the progress line; every second: lost slots, the lock file, new tasks

  Attempts attempts_{job_, run_dir_, ledger_, fidelity_, *transport_, deadline_, options_.sync,
                     {.halt = [this](const std::string& message, int error_number) { stops_.halt(message, error_number); },
                      .ended = [this] { commit_.ask(); }, .slot_free = [this] { fill_.ask(); }, .clock = options_.clock}};
  bool resumed_ = false;
  std::optional<PolicyState> saved_policy_;  // a resumed run's, until start() restores it
  std::optional<JournalTail> tail_;          // a resumed --sync run's, until start() replays it
  // A turn's results are committed with one fsync; the slots they freed are refilled once all
  // of them are applied, so a wave of trials that ended together is proposed from all of its
  // results, not from one more result at each proposal.
  OncePerTurn commit_{io_, [this] { commit(); }};
  OncePerTurn fill_{io_, [this] { fill_slots(); }};
  bool finished_ = false;
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
