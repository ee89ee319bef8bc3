#pragma once
// RunState: the ledger of a run's trial history, and the one place its state machine lives.
// It changes only by applying journal records: the live master applies each record it appends,
// and recovery applies the records after a checkpoint to the checkpoint's state, so a resumed
// run is, record for record, the run that stopped. Policies, the scheduler and the reports
// (status, warm start, tasks.csv) read their counts from it.

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lbo/orchestrator/job_identity.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "lbo/workers/work_order.hpp"

namespace lbo::orchestrator {

/// An intermediate report of one of a trial's attempts (its metrics are in the journal and
/// reports.csv only).
struct StepReport {
  int attempt = 1;
  std::int64_t step = 0;
  double value = 0;
  double elapsed_s = 0;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(attempt, step, value, elapsed_s);
  }
};

struct Trial {
  std::int64_t id = 0;
  int task = 0;  ///< index into the job's tasks; -1 when every record naming it is lost
  jobs::Config config;
  int attempts = 0;         ///< attempts started so far
  int failed_attempts = 0;  ///< attempts that ended failed, timeout or crashed (not cancelled)
  bool finished = false;  ///< its final outcome is committed: it counts against the budget
  bool running = false;
  workers::Outcome outcome;  ///< of the last attempt that ended
  std::string worker;        ///< where the last attempt ran ("local:0", "rank2:1")
  ProposalSource proposed_by = ProposalSource::unrecorded;
  std::string proposal_note;  ///< why, for a random fallback
  /// When the last attempt started and ended (Unix seconds, the journal's clock); 0: unknown
  /// (its record is lost, or it has not ended).
  double started_unix = 0;
  double finished_unix = 0;
  /// Its intermediate reports, every attempt's, in the order they were accepted.
  std::vector<StepReport> reports;
  /// Finished ok with a metric outside a limit of the job's [[constraints]]: its objective is
  /// a result, never a best. Not saved: judged anew from its metrics by the run's constraints.
  bool infeasible = false;
  /// Its place among the run's final results, in journal order (0 the first; -1: not final, or
  /// unknown: a checkpoint of before version 5).
  std::int64_t final_seq = -1;
  /// The final results the run had when its first attempt started (-1: unknown). A --sync
  /// round's trials all start after the round before has ended, so a decision within the round
  /// that reads only the results before it (final_seq < finals_before: the predictive rule's)
  /// is the same in a run resumed in the middle of the round.
  std::int64_t finals_before = -1;

  /// The last step attempt `attempt` reported (0: none).
  std::int64_t last_step(int attempt) const;
  /// The steps its last attempt ran: the last it reported, or the step it was judged at when
  /// it reported none after (outcome.last_step). A stop that came while the objective reported
  /// on (a batch of reports) leaves it past the step of the decision.
  std::int64_t steps_run() const { return std::max(outcome.last_step, last_step(attempts)); }
  /// The resource its attempts spent, in steps: each attempt's from where it resumed (promotion)
  /// or from the start (a retry). TaskProgress::steps counts them so, but a trial stopped for
  /// good up to the step it was stopped at.
  std::int64_t steps_spent() const;
  /// Its first report at or past `step`: in the reports of every attempt (`every_attempt`: in
  /// promotion mode they make one curve) or of the newest. A trial stopped or paused counts up
  /// to the step it was stopped on: what it reported after (before the signal reached it)
  /// depends on timing.
  std::optional<StepReport> report_at(std::int64_t step, bool every_attempt) const;
  /// Paused at a rung ([early_stopping] mode = "promotion"): its last attempt ended there, and
  /// it waits to be promoted (another attempt) or to end `stopped`.
  bool paused() const { return !finished && !running && outcome.status == workers::TrialStatus::paused; }

  /// Damage destroyed every record that named its task and configuration: the id stays taken
  /// (never reused), and the trial belongs to no task.
  bool lost() const { return task < 0; }

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t version) {
    archive(id, task, config, attempts, failed_attempts, finished, running, outcome, worker);
    if (version >= 2) archive(proposed_by, proposal_note);
    if (version >= 3) archive(started_unix, finished_unix);
    if (version >= 4) archive(reports);
    if (version >= 5) archive(final_seq, finals_before);
  }
};

struct TaskProgress {
  int created = 0;   ///< trials handed out (each counts once, however many attempts)
  int finished = 0;  ///< trials with a committed final outcome
  int ok = 0;        ///< finished ok
  int stopped = 0;   ///< stopped early ([early_stopping]): neither ok nor failed
  int infeasible = 0;  ///< of the ok ones, those outside a limit of [[constraints]]
  /// The resource spent: the steps its trials reported, an attempt's from where it resumed
  /// (promotion) or from the start (a retry), counted as the reports are applied; a trial
  /// stopped for good counts up to the step it was stopped at (what it reported after depends
  /// on when the stop reached it). What budget_steps is checked against.
  std::int64_t steps = 0;
  /// By the primary objective's direction, of the feasible ok trials (of equal ones, the first
  /// not dominated: with several objectives a best is never a dominated trial).
  std::optional<std::int64_t> best_trial;
  /// With several objectives ([objective] objectives): the feasible ok trials no other one of
  /// the task dominates (its Pareto set), ascending ids. Empty with one objective.
  std::vector<std::int64_t> pareto;
  /// Trials created, by how they were proposed (index: ProposalSource).
  std::array<int, kProposalSources> proposed{};

  int failed() const { return finished - ok - stopped; }
  int proposed_by(ProposalSource source) const { return proposed[static_cast<std::size_t>(source)]; }
};

/// Whether a trial of a task may start now (the deadline: whether one is likely to finish in
/// time). Asked before anything is proposed for the task, or a paused trial promoted.
using TaskFilter = std::function<bool(int task)>;

class RunState;
/// "model 90% (2 interim-gp, 1 random-fallback)": of the trials of `tasks` (all when empty) that
/// a model-based policy was to propose (not the initial design, whose earlier tasks' best
/// configurations included), the share the job's model proposed (its own fit of the task, or an
/// earlier task's posterior), then those an interim GP and random fallbacks proposed; "initial design" while only the
/// design has proposed; empty when nothing was proposed. For model-based policies only.
std::string model_share(const RunState& state, const std::vector<int>& tasks = {});

class RunState {
 public:
  /// Before the first record: no job, no trials.
  RunState() = default;
  /// The state a checkpoint holds. Trial ids must be 0, 1, 2, … and their tasks the job's (or
  /// -1 for lost trials). `round_handed_out`: see round_handed_out().
  RunState(JobIdentity job, std::vector<Trial> trials, std::vector<std::int64_t> retries,
           std::vector<std::int64_t> interrupted, bool round_handed_out = true);

  /// The one way the state changes. RunStarted sets the job, TaskAdded adds a task,
  /// TrialStarted creates a trial (attempt 1, next id) or starts another attempt, TrialFinished
  /// ends the running attempt: final (counted), paused at a rung (Fidelity promotes it or ends
  /// it), or queued to run again (a cancelled attempt, or lbo's own error, first and without
  /// using a retry; a failure as a retry). Records that damage
  /// left inconsistent (a trial whose creation is lost, a result for an unknown trial) are
  /// applied as far as they can be and noted in anomalies().
  void apply(const JournalRecord& record);
  /// The run stopped (recovery): attempts still running will not report; they end as cancelled
  /// ones do, and their trials run again first, in id order.
  void stop_running();

  bool has_job() const { return has_job_; }
  /// The job as the records describe it: the latest RunStarted plus the tasks added since.
  const JobIdentity& job() const { return job_; }
  const std::vector<Trial>& trials() const { return trials_; }
  const Trial& trial(std::int64_t id) const { return trials_.at(static_cast<std::size_t>(id)); }
  /// The id a new trial gets.
  std::int64_t next_trial_id() const { return static_cast<std::int64_t>(trials_.size()); }
  const std::vector<TaskProgress>& tasks() const { return tasks_; }
  /// Ids of the trials of `task`, in creation order.
  const std::vector<std::int64_t>& task_trials(int task) const { return task_trials_.at(static_cast<std::size_t>(task)); }
  /// Trials to run again before any new one: stopped by a stop, or by lbo's own error, in order.
  const std::vector<std::int64_t>& interrupted() const { return interrupted_; }
  /// Trials that failed and have a retry left, in order.
  const std::vector<std::int64_t>& retries() const { return retries_; }
  /// Trials paused at a rung (Trial::paused), in the order they were paused.
  const std::vector<std::int64_t>& paused() const { return paused_; }
  int running_count() const { return running_; }
  /// Whether the round under way was handed out whole. A round begins with the first attempt
  /// started while nothing runs or waits to run again; a --sync master hands out every attempt of a round before any
  /// of them reports or ends (one call, between two turns of its event loop), so a round in which
  /// an attempt has reported or ended was handed out whole, and one in which none has may have
  /// been cut short by a master killed while handing it out: resumed, it hands out the rest.
  /// True before any round.
  bool round_handed_out() const { return round_handed_out_; }
  /// What damage did to the history, one line each (empty for an undamaged journal).
  const std::vector<std::string>& anomalies() const { return anomalies_; }

  /// Whether objective value `a` beats `b` in the job's direction.
  bool better(double a, double b) const;
  /// Whether the run has several objectives ([objective] objectives).
  bool several_objectives() const { return !job_.objectives.empty(); }
  /// A trial's values, one per objective of the run (its objective alone with one; NaNs when its
  /// result lacks them).
  std::vector<double> values_of(const Trial& t) const;
  /// Whether `t` is in its task's Pareto set (several objectives only).
  bool on_pareto_front(const Trial& t) const;
  std::optional<double> best_objective(int task) const;
  /// Whether `task` has steps left in its budget_steps (always without one).
  bool steps_left(int task) const;
  /// Whether `task` may start a new trial: trials left in its budget and steps in its budget_steps.
  bool accepts_trials(int task) const;
  /// Whether `task` is done: its budget of trials finished, or no new trial may start and every
  /// trial it started is finished.
  bool task_done(int task) const;
  /// Whether every task is done.
  bool all_budgets_done() const;
  /// Trials whose final attempt has ended, over all tasks and every invocation of the run.
  int finished_trials() const;

 private:
  void on(const RunStarted& r);
  void on(const TaskAdded& r);
  void on(const TrialStarted& r);
  void on(const TrialFinished& r);
  void on(const TrialsReported& r);

  void track_tasks();
  /// Trial `id` with its task and configuration known: created, or a lost one filled in.
  Trial* place(std::int64_t id, int task, const jobs::Config& config);
  void count_final(Trial& t);
  /// `t` (feasible, ok) enters its task's best and Pareto set where it belongs.
  void rank_result(const Trial& t);
  /// Every finished trial judged anew by the job's constraints, and the bests with them.
  void rejudge();
  /// The first record that says how a trial was proposed decides it.
  void record_proposal(Trial& t, ProposalSource source, const std::string& note);
  void note(std::string anomaly) { anomalies_.push_back(std::move(anomaly)); }

  JobIdentity job_;
  bool has_job_ = false;
  std::vector<Trial> trials_;
  std::vector<TaskProgress> tasks_;
  std::vector<std::vector<std::int64_t>> task_trials_;
  std::vector<std::int64_t> interrupted_, retries_, paused_;
  int running_ = 0;
  std::int64_t finals_ = 0;  // final results applied (the next one's final_seq)
  bool round_handed_out_ = true;
  std::vector<std::string> anomalies_;
};

}  // namespace lbo::orchestrator
