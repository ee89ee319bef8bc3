#include "trial_reports.hpp"

#include <algorithm>

namespace lbo::orchestrator {

std::optional<TrialsReported> ReportIntake::accept(const RunState& state, std::vector<workers::TrialReport> batch,
                                                   double unix_time) {
  TrialsReported record;
  record.unix_time = unix_time;
  std::map<workers::AttemptKey, std::int64_t> batch_last;  // steps accepted in this batch
  std::map<std::int64_t, std::size_t> batch_count;                     // reports accepted in this batch
  for (workers::TrialReport& report : batch) {
    if (!report.error.empty()) {
      ignore(report, report.error);
      continue;
    }
    const bool known = report.trial >= 0 && report.trial < state.next_trial_id();
    const Trial* trial = known ? &state.trial(report.trial) : nullptr;
    const bool ended_early = trial != nullptr && !trial->running && trial->attempts == report.attempt &&
                             (trial->outcome.status == workers::TrialStatus::stopped ||
                              trial->outcome.status == workers::TrialStatus::paused);
    if (ended_early) {
      // The objective reports on until the stop reaches it: expected, said for the first few.
      if (++late_after_stop_ <= kLoggedPerAttempt) {
        log_("trial " + std::to_string(report.trial) + ": a report (step " + std::to_string(report.step) +
             ") is ignored: it arrived after the trial was " + std::string(workers::to_string(trial->outcome.status)) +
             (late_after_stop_ == kLoggedPerAttempt ? " (further such reports are not logged)" : ""));
      }
      continue;
    }
    if (trial == nullptr || !trial->running || trial->attempts != report.attempt) {
      ignore(report, "it arrived after the attempt ended");
      continue;
    }
    const workers::AttemptKey key{report.trial, report.attempt};
    const auto earlier = batch_last.find(key);
    const std::int64_t trial_last = one_curve_ && !trial->reports.empty() ? trial->reports.back().step : 0;
    const std::int64_t last =
        earlier != batch_last.end() ? earlier->second : std::max(trial->last_step(report.attempt), trial_last);
    if (report.step <= last) {
      ignore(report, "step " + std::to_string(report.step) + " is not past the last one reported (" +
                         std::to_string(last) + ")");
      continue;
    }
    if (max_step_ > 0 && report.step > max_step_) {
      ignore(report, "step " + std::to_string(report.step) + " is past [early_stopping] max_step (" +
                         std::to_string(max_step_) + ")");
      continue;
    }
    // Its first report at or past the target pauses it; nothing after that one counts.
    if (const std::int64_t target = target_ ? target_(*trial) : 0; target > 0 && last >= target) {
      ignore(report, "step " + std::to_string(report.step) + " comes after the attempt reached its target step (" +
                         std::to_string(target) + ", LBO_TARGET_STEP), where it is paused");
      continue;
    }
    if (trial->reports.size() + batch_count[report.trial] >= kMaxReportsPerTrial) {
      ignore(report, "the trial has made " + std::to_string(kMaxReportsPerTrial) +
                         " reports, the most lbo keeps for one trial; report every k-th step");
      continue;
    }
    ++batch_count[report.trial];
    batch_last[key] = report.step;
    record.reports.push_back(
        {report.trial, report.attempt, report.step, report.value, std::move(report.metrics_json), report.elapsed_s, report.read_unix});
  }
  if (record.reports.empty()) return std::nullopt;
  return record;
}

void ReportIntake::ignore(const workers::TrialReport& report, const std::string& why) {
  const int count = ++ignored_[{report.trial, report.attempt}];
  if (count > kLoggedPerAttempt) return;
  std::string line = "trial " + std::to_string(report.trial) + " attempt " + std::to_string(report.attempt) +
                     ": a report is ignored: " + why;
  if (count == kLoggedPerAttempt) line += " (further ignored reports of this attempt are not logged)";
  log_(line);
}

}  // namespace lbo::orchestrator
