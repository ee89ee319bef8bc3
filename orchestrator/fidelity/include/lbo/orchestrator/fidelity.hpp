#pragma once
// Fidelity, the fidelity room's one public part: the master's part for trials that report as
// they run. It takes each batch of intermediate reports through the intake (trial_reports.hpp),
// records what it accepts (through the master's Ledger), and ends the attempts the job's [early_stopping] rule
// says to end (early_stopping.hpp in stop mode, promotions.hpp in promotion mode, over
// rung_table.hpp; those are the room's private headers). A stop is journaled at once as the
// trial's final result (status
// `stopped`, its value at the step it was stopped on); in promotion mode a pause is journaled
// as the attempt's end (status `paused`, its value at the rung), and the trial waits for a
// promotion (Scheduler asks promotion()) or ends `stopped` (settle()). The attempt's process is
// then ended as a cancel is (SIGTERM, SIGKILL after kill_grace_s); its own end brings nothing
// more but its free slot (ended_early()).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lbo/cluster/transport.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "lbo/orchestrator/ledger.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

class CurveForecast;
class EarlyStopping;
class Promotions;
class ReportIntake;
class RungTable;
struct StopDecision;

class Fidelity {
 public:
  struct Hooks {
    /// An attempt was stopped or paused (journaled and applied): commit it, and end its
    /// process when `running`.
    std::function<void(std::int64_t trial, int attempt, bool running)> ended;
    /// --sync: a held attempt's rungs were decided without a stop: apply its end now (its
    /// rungs are decided: no on_end() for it).
    std::function<void(cluster::Completion)> released;
    /// Whether the run is stopping: a --sync round is then interrupted, and its rungs are no
    /// longer decided (the next run runs what did not end again and decides them).
    std::function<bool()> stopping;
    std::function<void(const std::string&)> log;
  };

  /// Records go through `ledger` (the reports it accepts, its stops and pauses).
  Fidelity(const jobs::JobSpec& job, bool sync, Ledger& ledger, Hooks hooks);
  ~Fidelity();
  Fidelity(const Fidelity&) = delete;
  Fidelity& operator=(const Fidelity&) = delete;

  /// A batch of reports arrived.
  void on_reports(std::vector<workers::TrialReport> batch, double unix_time);
  /// An attempt ended (its TrialFinished applied): with --sync, a rung's wait may be over.
  void on_end(double unix_time);
  /// --sync: an attempt that ended ok before its round decided the rungs it reached is held
  /// here, to be judged there with the rest of its round (early_stopping.hpp): it comes back
  /// through Hooks::released, or ends stopped (Hooks::ended, not running). The completion when
  /// it is not held (the caller applies it).
  std::optional<cluster::Completion> hold(cluster::Completion c, double unix_time);
  /// The held attempts, now cancelled: a stop interrupts them with their round (the next run
  /// runs them again, as it does the round's cancelled attempts, and decides the rungs anew).
  std::vector<cluster::Completion> interrupt_held();
  /// Whether this ended attempt `attempt` of `trial` before its process did (forgotten now: the
  /// completion only frees its slot).
  bool ended_early(std::int64_t trial, int attempt);

  /// A resumed run, before it starts anything: the decisions a master killed between a report
  /// and its consequence owed the interrupted trials (Promotions::owed), journaled now.
  void settle_owed(double unix_time);
  /// Promotion mode: the paused trial a free slot should resume now (Scheduler).
  std::optional<std::int64_t> promotion(const RunState& state, const TaskFilter& allowed);
  /// Promotion mode: ends `stopped` the paused trials of tasks with nothing left to run or
  /// promote; whether it ended any.
  bool settle(double unix_time);
  /// Adds what the objective needs to know of its rungs to an attempt's environment:
  /// LBO_MAX_STEP, LBO_RESUME_STEP, LBO_TARGET_STEP and, in promotion mode, LBO_CHECKPOINT_DIR
  /// (`<trial folder>/checkpoint`, kept across attempts).
  void prepare(workers::WorkOrder& order, const Trial& trial) const;

  /// Stops, pauses and promotions logged one by one; later ones only count (results.csv and
  /// the journal have them all).
  static constexpr int kLogged = 10;

 private:
  void end(std::vector<StopDecision> decisions, double unix_time);
  void release();
  void say(int& count, const std::string& what, const char* kind);

  Ledger& ledger_;
  const RunState& state_;
  Hooks hooks_;
  std::unique_ptr<ReportIntake> intake_;
  std::unique_ptr<RungTable> table_;         // with [early_stopping]
  std::unique_ptr<CurveForecast> forecast_;  // with [early_stopping]; the predictive rule's
  std::unique_ptr<EarlyStopping> stopping_;  // stop mode
  std::unique_ptr<Promotions> promoting_;    // promotion mode
  bool sync_;
  std::set<workers::AttemptKey> ending_;  // attempts this ended whose process has not yet
  std::map<workers::AttemptKey, cluster::Completion> held_;  // --sync, by (trial, attempt)
  int stops_ = 0, pauses_ = 0, promotions_ = 0;
};

}  // namespace lbo::orchestrator
