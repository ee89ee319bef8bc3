#pragma once
// What the master makes of intermediate reports (private to master/): each is checked against
// its trial in the state, the good ones of a batch become one TrialsReported record, and what
// is ignored is said in the log with the trial and why.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lbo/orchestrator/journal.hpp"
#include "lbo/orchestrator/run_state.hpp"
#include "lbo/workers/work_order.hpp"

namespace lbo::orchestrator {

class ReportIntake {
 public:
  using Log = std::function<void(const std::string&)>;
  explicit ReportIntake(Log log) : log_(std::move(log)) {}

  /// The record of the reports of `batch` that `state` accepts, in their order; nothing when
  /// none is. A report is ignored (and logged) when the line was no report, its trial does not
  /// run that attempt any more (it ended, or was stopped), or its step is not past the
  /// attempt's last one. At most kLoggedPerAttempt lines are logged for one attempt.
  std::optional<TrialsReported> accept(const RunState& state, std::vector<workers::TrialReport> batch, double unix_time);

  static constexpr int kLoggedPerAttempt = 3;

 private:
  void ignore(const workers::TrialReport& report, const std::string& why);

  Log log_;
  std::map<std::pair<std::int64_t, int>, int> ignored_;  // per (trial, attempt): reports ignored
};

}  // namespace lbo::orchestrator
