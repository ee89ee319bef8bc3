#pragma once
// The end of the allocation a run lives in, and what follows from it: where the end comes from
// (--deadline, LBO_DEADLINE, SLURM), how long a task's trials take (TrialDurations), and
// whether a trial started now is likely to finish in time (DeadlinePlanner). A trial that
// cannot finish would be cancelled at the walltime and run again in the next allocation: not
// starting it costs nothing, starting it costs its slot time.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/run_state.hpp"
#include "lbo/workers/work_order.hpp"

namespace lbo::orchestrator {

/// When the allocation ends, and who said so.
struct Deadline {
  double unix_time = 0;
  /// "--deadline", "LBO_DEADLINE", "SLURM_JOB_END_TIME" or "squeue" (as the log names it).
  std::string source;
};

/// The forms a deadline may take, for messages.
inline constexpr std::string_view kDeadlineForms =
    "unix seconds (1795575600), an ISO-8601 date-time (2026-11-25T03:00:00, local time unless it ends in Z or "
    "±HH:MM) or a duration from now (+3600, +90m, +2h, +1h30m)";

/// `text` as unix seconds: unix seconds, an ISO-8601 date-time (local time unless it ends in Z
/// or ±HH:MM) or `+` a duration from `now` (+SECONDS, +90m, +2h, +1h30m, +45s). Throws
/// InputError naming `what` (the option or variable) and the accepted forms, also for a time
/// that is not after `now`.
double parse_deadline(std::string_view text, double now, std::string_view what);

/// squeue's end time of a job (`squeue -h -j ID -o %e`): local time "YYYY-MM-DDTHH:MM:SS", or
/// "N/A", "Unknown", "NONE" for none (nullopt). Throws Error on anything else.
std::optional<double> parse_squeue_end_time(std::string_view text);

/// "2026-11-25T03:00:00Z".
std::string format_utc(double unix_time);

/// What the deadline search found, and what it has to say.
struct DeadlineSearch {
  std::optional<Deadline> deadline;
  std::vector<std::string> notes;     ///< e.g. a SLURM job without an end time
  std::vector<std::string> warnings;  ///< a SLURM source that could not be read: no deadline
};

/// How long squeue may take before lbo gives up on it (a warning, no deadline).
inline constexpr std::chrono::milliseconds kSqueueTimeout{5000};

/// The allocation's end: `option` (--deadline) if given, else the environment's LBO_DEADLINE,
/// else under SLURM (SLURM_JOB_ID set) SLURM_JOB_END_TIME, else what `squeue` says of the job,
/// run with `squeue_timeout` (a missing, failing or hanging squeue is a warning, never an
/// error). A bad --deadline or LBO_DEADLINE throws InputError.
DeadlineSearch find_deadline(const std::optional<std::string>& option, double now,
                             std::chrono::milliseconds squeue_timeout = kSqueueTimeout);

/// How long a trial of a task takes, with what it rests on.
struct DurationEstimate {
  double seconds = 0;
  std::string basis;  ///< "90th percentile of 12", "longest of 2 of all tasks", "timeout_s", ...
};

/// The durations of a run's attempts that ended with an outcome of the objective's own (ok,
/// failed, timeout, crashed; not cancelled or lbo_error, whose time says nothing of the
/// objective), per task and over all tasks.
///
/// Estimator: per task, the 90th percentile by nearest rank (the ⌈0.9 n⌉-th smallest) of its
/// last n ≤ 50 durations, which is the longest of them while n < 10; a task with none takes the
/// same over the last 50 of all tasks. Why: starting a trial that does not finish wastes its
/// slot until the cut-off and it runs again anyway, not starting one wastes only the time left;
/// a high quantile makes the first rare (about one start in ten at the very boundary) without
/// letting one outlier (a hung attempt) block a task as the maximum would. The window follows a
/// drift (a model converging on slower or faster configurations) and bounds the cost: an
/// add() sorts at most 50 numbers, a query is a lookup, so dispatch never scans trials.
class TrialDurations {
 public:
  static constexpr std::size_t kWindow = 50;

  TrialDurations() = default;
  /// Seeded with the attempts `state` holds (a resumed run: each trial's last ended attempt),
  /// in the order they ended.
  explicit TrialDurations(const RunState& state);

  /// An attempt of `task` ended with `outcome`; one that says nothing of the objective's time
  /// is ignored.
  void add(int task, const workers::Outcome& outcome);
  /// The task's own estimate, else the pooled one; nullopt before any attempt has ended.
  std::optional<DurationEstimate> estimate(int task) const;

  /// Whether an attempt that ended with `status` counts.
  static bool counts(workers::TrialStatus status);
  /// The nearest-rank 90th percentile of `durations` (not empty).
  static double percentile_90(std::vector<double> durations);

 private:
  struct Window {
    std::vector<double> last;  // a ring of at most kWindow
    std::size_t next = 0;
    double p90 = 0;
    void add(double seconds);
  };
  std::vector<Window> tasks_;
  Window all_;
};

/// Answers, for the master: may a trial of task t start now, and if not, why not. A trial fits
/// when now + its estimated duration ≤ the cut-off (the deadline less the job's grace_s, the
/// time a stop gives running trials). Before any attempt has ended, the estimate is the
/// objective's timeout_s if it has one; without one, trials start until the cut-off.
class DeadlinePlanner {
 public:
  using Log = std::function<void(const std::string&)>;

  /// `job`'s tasks may grow while the planner lives (add-task, watch); `state`: the run as it
  /// stands (a resumed one's durations count).
  DeadlinePlanner(Deadline deadline, const jobs::JobSpec& job, const RunState& state, Log log);

  const Deadline& deadline() const { return deadline_; }
  /// The deadline less grace_s: trials should have ended by then, and a stop begins then.
  double cutoff() const;
  /// What the run's first log lines say about the deadline.
  std::string start_line() const;

  /// An attempt of `task` ended.
  void record(int task, const workers::Outcome& outcome) { durations_.add(task, outcome); }
  /// How long a trial of `task` is expected to take; nullopt when there is nothing to go on.
  std::optional<DurationEstimate> estimate(int task) const;

  /// Whether a trial of `task` started at `now` is likely to end by the cut-off. Logs once when
  /// a task's answer changes (and once that there is nothing to estimate from), not per call.
  bool may_start(int task, double now);
  /// The answer for `task` at `now` as a sentence: "task b: not starting trials: a trial takes
  /// ~340 s (90th percentile of 12), 210 s left before the deadline ... less grace_s 60".
  std::string explain(int task, double now) const;
  /// Why a run with nothing running and no trial that fits stops.
  std::string nothing_fits(double now) const;
  /// Why a run stops at the cut-off.
  std::string cutoff_reached() const;

 private:
  enum class Answer : std::uint8_t { unasked, fits, does_not_fit };

  Deadline deadline_;
  const jobs::JobSpec* job_;
  const RunState* state_;  // the run's tasks
  TrialDurations durations_;
  Log log_;
  std::vector<Answer> answers_;  // per task, the last answer logged
  bool said_no_estimate_ = false;
};

}  // namespace lbo::orchestrator
