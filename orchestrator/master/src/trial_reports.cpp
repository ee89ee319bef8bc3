#include "trial_reports.hpp"

namespace lbo::orchestrator {

std::optional<TrialsReported> ReportIntake::accept(const RunState& state, std::vector<workers::TrialReport> batch,
                                                   double unix_time) {
  TrialsReported record;
  record.unix_time = unix_time;
  std::map<std::pair<std::int64_t, int>, std::int64_t> batch_last;  // steps accepted in this batch
  for (workers::TrialReport& report : batch) {
    if (!report.error.empty()) {
      ignore(report, report.error);
      continue;
    }
    const bool known = report.trial >= 0 && report.trial < state.next_trial_id();
    const Trial* trial = known ? &state.trial(report.trial) : nullptr;
    if (trial == nullptr || !trial->running || trial->attempts != report.attempt) {
      ignore(report, "it arrived after the attempt ended");
      continue;
    }
    const auto key = std::make_pair(report.trial, report.attempt);
    const auto earlier = batch_last.find(key);
    const std::int64_t last = earlier != batch_last.end() ? earlier->second : trial->last_step(report.attempt);
    if (report.step <= last) {
      ignore(report, "step " + std::to_string(report.step) + " is not past the last one reported (" +
                         std::to_string(last) + ")");
      continue;
    }
    batch_last[key] = report.step;
    record.reports.push_back(
        {report.trial, report.attempt, report.step, report.value, std::move(report.metrics_json), report.elapsed_s});
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
