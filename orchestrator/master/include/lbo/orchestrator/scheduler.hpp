#pragma once
// Scheduler: which attempt a free slot runs next. A function of the run's state (its queues
// live in RunState) and the policy; the master journals the attempt, applies the record and
// only then starts it.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/policy.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

/// One attempt to start: another attempt of an existing trial, or the first of a new one.
struct NextAttempt {
  std::int64_t trial = 0;
  int task = 0;
  int attempt = 1;
  jobs::Config config;
  ProposalSource proposed_by = ProposalSource::unrecorded;
  std::string proposal_note;
};

/// TaskFilter (run_state.hpp): whether a trial of a task may start now.

/// The paused trial to promote now (to its next rung), among the tasks the filter allows.
using PromotionSource = std::function<std::optional<std::int64_t>(const RunState& state, const TaskFilter& allowed)>;

class Scheduler {
 public:
  explicit Scheduler(const jobs::JobSpec& job, PromotionSource promotions = {})
      : job_(&job), promotions_(std::move(promotions)) {}

  /// A trial that was interrupted (a stop, or lbo's own error), else one waiting for a retry,
  /// else a paused trial that `promotions` promotes (ASHA promotes before it starts anything
  /// new), else a new trial of an open task (the first [schedule] concurrent_tasks tasks, in job order,
  /// with budget left to hand out) proposed by `policy` and checked against the space. With
  /// `interrupted_only`, only the first kind (a --sync run finishes its interrupted round before
  /// proposing). Tasks `may_start` refuses are skipped: their queued trials stay queued, and
  /// the policy is not asked for them (a proposal has side effects: Hedge draws, the model's
  /// pending points), nor does a later task open in their place (task order is what lifelong
  /// transfer learns from). nullopt when nothing is left to hand out.
  std::optional<NextAttempt> next(const RunState& state, Policy& policy, bool interrupted_only = false,
                                  const TaskFilter& may_start = {}) const;
  /// next()'s last kind alone: a new trial of an open task, proposed by `policy` and checked.
  std::optional<NextAttempt> propose(const RunState& state, Policy& policy, const TaskFilter& may_start = {}) const;

 private:
  const jobs::JobSpec* job_;  // its tasks grow as tasks are added
  PromotionSource promotions_;
};

}  // namespace lbo::orchestrator
