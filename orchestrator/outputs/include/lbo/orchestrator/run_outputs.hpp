#pragma once
// RunOutputs: what a run tells people as its records are committed: results.csv, tasks.csv,
// hedge.csv, the log's failure and task lines, the progress line, the status file and the
// report. Reports, not state: every file here is rebuilt from the journal on resume, so a write
// that fails is said once and the run goes on (the journal's failures are what stop it).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "lbo/jobs/error.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/console.hpp"
#include "lbo/orchestrator/hedge_csv.hpp"
#include "lbo/orchestrator/policy.hpp"
#include "lbo/orchestrator/reports_csv.hpp"
#include "lbo/orchestrator/results_csv.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

/// An attempt that ended (the trial may already run its next one).
struct EndedAttempt {
  std::int64_t trial = 0;
  int attempt = 1;
};

/// How an invocation of the run ends, for its last line.
struct RunEnd {
  int finished_before = 0;  ///< trials finished by earlier invocations
  std::chrono::steady_clock::time_point started;
  int exit_code = 0;
  std::filesystem::path checkpoint;  ///< the final checkpoint; empty: none could be written
  std::string resume_command;        ///< printed when the run stopped; empty: none
};

/// What the progress line counts besides the state.
struct SlotCounts {
  int busy = 0;
  int slots = 0;
};

class RunOutputs {
 public:
  struct Options {
    /// Failures logged one by one; later ones only count in the progress line.
    int failures_logged = 10;
    /// LBO_STATUS_FILE (MasterOptions::status_file); empty: none.
    std::filesystem::path status_file;
    /// Writes report.html (MasterOptions::write_report); empty: none.
    std::function<void(bool end, int exit_code)> write_report;
    /// The model's report per model task, for tasks.csv.
    std::function<std::vector<TaskModelReport>()> model_report;
  };

  /// `job` must outlive this; the run's tasks are the state's.
  RunOutputs(const RunPaths& run, const jobs::JobSpec& job, Console& console, Options options);

  /// A trial's attempts ended and were committed: results.csv rows of the finished ones, the
  /// first failures in the log, and a line (and tasks.csv) when a task's budget is done.
  void committed(const RunState& state, const std::vector<EndedAttempt>& ended);
  /// results.csv from the state, whole (on resume and at the end).
  void rewrite_results(const RunState& state);
  /// Intermediate reports were journaled (reports.csv).
  void reported(const RunState& state, const TrialsReported& record);
  /// reports.csv from the whole journal (on resume: rows a killed lbo had not written).
  void rewrite_reports(const RunState& state);
  /// One Hedge draw of a proposal handed out (hedge.csv).
  void hedge_draw(const HedgeDraw& draw);
  /// tasks.csv (best, trials to 95%, the model's view of each task) and hedge.csv's buffer.
  void write_task_report(const RunState& state);
  /// report.html: a periodic one waits until ten times its last build time has passed (the
  /// report reads the whole journal: at most a tenth of the master's time); `end` always writes.
  void write_html_report(bool end, int exit_code);
  /// LBO_STATUS_FILE's text ("running", "75", the exit status). A failure is said.
  void write_status(const std::string& status);

  /// The first lines: what runs, how many slots, where the results go, where the slots are,
  /// the deadline (`deadline_line`, empty: none).
  void log_start(const RunState& state, bool resumed, int slots, const std::vector<std::string>& resources,
                 const std::string& deadline_line);
  /// The last lines: done, or stopped with where the state is and the command that resumes.
  void log_end(const RunState& state, const RunEnd& end);
  /// The live progress line: per open task done/budget and best, tasks done, failures, the
  /// model's share, busy slots and this invocation's trials per minute.
  std::string progress_line(const RunState& state, SlotCounts slots, int finished_before,
                            std::chrono::steady_clock::time_point started) const;
  int failures() const { return failures_; }

  /// Runs `write` (a report's write); an Error is said once and does not stop the run.
  template <class Write>
  void guard(Write write) {
    try {
      write();
    } catch (const Error& e) {
      if (!report_failed_) console_.warn(std::string(e.what()) + " (the report is rewritten when the run resumes)");
      report_failed_ = true;
    }
  }

 private:
  void report_attempt(const RunState& state, const Trial& t, int attempt);

  RunPaths run_;
  const jobs::JobSpec& job_;
  Console& console_;
  Options options_;
  ResultsCsv csv_;
  HedgeCsv hedge_csv_;
  ReportsCsv reports_csv_;
  std::chrono::steady_clock::time_point next_report_{};  // no periodic report before
  bool report_failed_ = false;
  int failures_ = 0;
  std::vector<bool> done_said_;  // per task: its "task ... done" line was logged
};

/// "0.41", "3.8e-08": an objective in the log.
std::string format_objective(double v);

}  // namespace lbo::orchestrator
