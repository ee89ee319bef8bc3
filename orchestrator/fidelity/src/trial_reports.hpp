#pragma once
// What the master makes of intermediate reports (private to fidelity/): each is checked against
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
  /// The last step a trial's running attempt may report: its target rung in promotion mode.
  using Target = std::function<std::int64_t(const Trial&)>;
  /// `max_step`: a report past it is ignored (0: no limit). `one_curve` ([early_stopping] mode =
  /// "promotion"): an attempt goes on from where the trial's last one was paused, so its steps
  /// must be past the trial's last step, not only the attempt's. `target`: a report after the
  /// attempt's first at or past its target is ignored too (the attempt is paused there: what it
  /// reported after it before the pause reached it would depend on timing, and its next attempt
  /// would resume there).
  explicit ReportIntake(Log log, std::int64_t max_step = 0, bool one_curve = false, Target target = {})
      : log_(std::move(log)), max_step_(max_step), one_curve_(one_curve), target_(std::move(target)) {}

  /// The record of the reports of `batch` that `state` accepts, in their order; nothing when
  /// none is. A report is ignored (and logged) when the line was no report, its trial does not
  /// run that attempt any more (it ended, or was stopped or paused), or its step is not past
  /// the attempt's last one (with one_curve, the trial's), past max_step, or beyond kMaxReportsPerTrial. At most kLoggedPerAttempt lines are logged for one
  /// attempt, and as many in all for reports that came after their trial was stopped (an
  /// objective reports on until the stop reaches it).
  std::optional<TrialsReported> accept(const RunState& state, std::vector<workers::TrialReport> batch, double unix_time);

  static constexpr int kLoggedPerAttempt = 3;
  /// Reports kept for one trial (over its attempts): each is a journal record's part and 32
  /// bytes of every checkpoint; an objective that reports more often (a step per batch of a
  /// long run) should report every k-th step.
  static constexpr std::size_t kMaxReportsPerTrial = 10'000;

 private:
  void ignore(const workers::TrialReport& report, const std::string& why);

  Log log_;
  std::int64_t max_step_ = 0;
  bool one_curve_ = false;
  Target target_;
  int late_after_stop_ = 0;  // reports of stopped or paused attempts, over the run
  std::map<workers::AttemptKey, int> ignored_;  // per (trial, attempt): reports ignored
};

}  // namespace lbo::orchestrator
