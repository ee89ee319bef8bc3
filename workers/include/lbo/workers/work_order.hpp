#pragma once
// One evaluation of the objective, as sent to a worker, and what came of it.

#include <compare>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace lbo::workers {

/// How an attempt ended. Only `ok` carries an objective value.
enum class TrialStatus : std::uint8_t {
  ok,         ///< exit status 0 and a valid result
  failed,     ///< non-zero exit, missing/unparsable result, NaN/inf objective, cannot start
  timeout,    ///< ran past its time limit and was killed
  crashed,    ///< killed by a signal it did not get from lbo
  cancelled,  ///< stopped by lbo (shutdown); not a result, the trial runs again later
  /// lbo could not run it: its own I/O failed (the trial directory, the params file, a pipe,
  /// a process limit). Not a result and not the objective's fault: the trial runs again
  /// without using a retry, and the run stops until the condition is fixed.
  lbo_error,
  /// Stopped early by the job's [early_stopping] rule on its intermediate reports: not a
  /// failure and never retried; its objective is its value at the step it was stopped on.
  stopped,
  /// [early_stopping] mode = "promotion": the attempt reached its rung and was paused there
  /// (not a failure, no retry used); its objective is its value at the rung. The trial is
  /// resumed from its checkpoint folder if promoted, else it ends `stopped`.
  paused,
};
std::string_view to_string(TrialStatus status);
/// The objective's failure: failed, timeout or crashed (not a stop, a pause or lbo's doing).
inline bool is_failure(TrialStatus status) {
  return status == TrialStatus::failed || status == TrialStatus::timeout || status == TrialStatus::crashed;
}
/// Not a result of the objective (cancelled, lbo_error): the trial runs again first, without
/// using a retry.
inline bool runs_again_first(TrialStatus status) {
  return status == TrialStatus::cancelled || status == TrialStatus::lbo_error;
}

/// Files of a trial's working directory (`trials/<id>/`).
inline constexpr std::string_view kParamsFile = "params.json";
inline constexpr std::string_view kResultFile = "result.json";
inline constexpr std::string_view kStdoutFile = "stdout";
inline constexpr std::string_view kStderrFile = "stderr";
/// [early_stopping] mode = "promotion": the environment variable that names the trial's
/// checkpoint folder, kept across its attempts (the worker creates it).
inline constexpr std::string_view kCheckpointDirVar = "LBO_CHECKPOINT_DIR";

/// One attempt of one trial: the key of everything kept per attempt (reports, decisions, held
/// completions). Ordered by trial, then attempt.
struct AttemptKey {
  std::int64_t trial = 0;
  int attempt = 1;
  auto operator<=>(const AttemptKey&) const = default;
};

struct EnvVar {
  std::string name, value;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(name, value);
  }
};

/// What a worker needs to run one attempt; it knows nothing of jobs or tasks beyond this.
struct WorkOrder {
  std::int64_t trial = 0;
  int attempt = 1;
  std::vector<std::string> argv;  ///< placeholders already expanded; never run through a shell
  std::vector<EnvVar> env;        ///< added to the worker's environment (LBO_TASK, ...)
  std::string workdir;            ///< absolute; created if missing; the child's working directory
  std::string params_json;        ///< written to <workdir>/params.json before the start
  double timeout_s = 0;           ///< 0: no limit
  double kill_grace_s = 5;        ///< SIGTERM → SIGKILL delay for timeouts and cancels
  /// The objectives the result line gives by name ([objective] objectives); empty: the single
  /// "objective" (version 2).
  std::vector<std::string> objective_names;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t version) {
    archive(trial, attempt, argv, env, workdir, params_json, timeout_s, kill_grace_s);
    if (version >= 2) archive(objective_names);
  }
};

struct Outcome {
  TrialStatus status = TrialStatus::failed;
  double objective = 0;       ///< meaningful when status == ok
  std::vector<double> steps;  ///< per-step values, when the objective reports them
  std::string metrics_json = "{}";
  std::string reason;  ///< why it is not ok, for people: "exit status 3; stderr: ..."
  double duration_s = 0;
  int error_number = 0;  ///< lbo_error: the system's errno (it tells whether the condition may pass)
  std::string cores;     ///< the CPUs it was pinned to ("0-3"); empty: not pinned
  std::string gpus;      ///< the GPUs it was given ("0,1"); empty: none
  /// The file or folder of this trial a reason is about (lbo could not write it), or empty. Kept
  /// out of `reason`, which names the file only by its name in the trial folder, so that the
  /// same failure of many trials reads the same and groups ("failures by reason").
  std::string path;
  /// The last step its attempt reported (intermediate reports; 0: none), for a stopped trial
  /// the step it was stopped on.
  std::int64_t last_step = 0;
  /// With several objectives, each one's value in the job's order (`objective` the first's);
  /// empty with one (version 6).
  std::vector<double> values;
  /// A trial the predictive rule stopped or paused: the forecast of its value at max_step it was
  /// judged by, of the objective its reports give; NaN otherwise (version 7).
  double forecast = std::numeric_limits<double>::quiet_NaN();

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t version) {
    archive(status, objective, steps, metrics_json, reason, duration_s);
    if (version >= 2) archive(error_number);
    if (version >= 3) archive(cores, gpus);
    if (version >= 4) archive(path);
    if (version >= 5) archive(last_step);
    if (version >= 6) archive(values);
    if (version >= 7) archive(forecast);
  }
};

/// One intermediate report of a running attempt (a `lbo:report` line of its stdout), as the
/// worker read it; the master checks it against the trial and journals it.
struct TrialReport {
  std::int64_t trial = 0;
  int attempt = 1;
  std::int64_t step = 0;
  double value = 0;
  std::string metrics_json = "{}";
  double elapsed_s = 0;  ///< since the attempt started, when the line was read
  std::string error;     ///< non-empty: the line is no report (why); step and value are unset
  /// When the worker read the line, by its own wall clock (Unix seconds; 0: unknown, version 1):
  /// what a report's delay to the master is measured from (bench/scale_report.cpp).
  double read_unix = 0;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t version) {
    archive(trial, attempt, step, value, metrics_json, elapsed_s, error);
    if (version >= 2) archive(read_unix);
  }
};

}  // namespace lbo::workers
