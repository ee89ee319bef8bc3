#pragma once
// Fidelity (private to master/): the master's part for trials that report as they run. It takes
// each batch of intermediate reports through the intake (trial_reports.hpp), journals and
// applies what it accepts, and stops the trials the job's [early_stopping] rule says to stop
// (early_stopping.hpp): a stop is journaled at once as the trial's final result (status
// `stopped`, its value at the step it was stopped on), and its process is then ended as a
// cancel is (SIGTERM, SIGKILL after kill_grace_s). The process's own end brings nothing more.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "early_stopping.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "lbo/orchestrator/run_state.hpp"
#include "trial_reports.hpp"

namespace lbo::orchestrator {

class Fidelity {
 public:
  struct Hooks {
    /// Appends a record to the journal; false when lbo's own I/O failed (the run then halts).
    std::function<bool(const JournalRecord&)> journal;
    /// Reports were journaled and applied (reports.csv).
    std::function<void(const TrialsReported&)> reported;
    /// A trial was stopped early (journaled and applied): end its process, commit its result.
    std::function<void(std::int64_t trial, int attempt)> stopped;
    std::function<void(const std::string&)> log;
  };

  /// `state` changes only through records this journals (and the master's own).
  Fidelity(const jobs::JobSpec& job, bool sync, RunState& state, Hooks hooks);

  /// A batch of reports arrived.
  void on_reports(std::vector<workers::TrialReport> batch, double unix_time);
  /// An attempt ended (its TrialFinished applied): with --sync, a rung's wait may be over.
  void on_end(double unix_time);

  /// Stops logged one by one; later ones only count (results.csv has them all).
  static constexpr int kStopsLogged = 10;

 private:
  void stop(std::vector<StopDecision> decisions, double unix_time);

  RunState& state_;
  Hooks hooks_;
  ReportIntake intake_;
  std::optional<EarlyStopping> rule_;
  bool sync_;
  int stops_ = 0;
};

}  // namespace lbo::orchestrator
