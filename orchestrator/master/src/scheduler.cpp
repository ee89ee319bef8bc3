#include "lbo/orchestrator/scheduler.hpp"

#include <algorithm>
#include <stdexcept>

namespace lbo::orchestrator {

namespace {

NextAttempt again(const RunState& state, std::int64_t id) {
  const Trial& t = state.trial(id);
  return {id, t.task, t.attempts + 1, t.config, t.proposed_by, t.proposal_note};
}

}  // namespace

std::optional<NextAttempt> Scheduler::next(const RunState& state, Policy& policy, bool interrupted_only,
                                           const TaskFilter& may_start) const {
  const auto allowed = [&](int task) { return !may_start || may_start(task); };
  for (const std::int64_t id : state.interrupted()) {
    if (allowed(state.trial(id).task)) return again(state, id);
  }
  if (interrupted_only) return std::nullopt;
  for (const std::int64_t id : state.retries()) {
    if (allowed(state.trial(id).task)) return again(state, id);
  }
  if (promotions_) {
    if (const std::optional<std::int64_t> promoted = promotions_(state, allowed)) return again(state, *promoted);
  }
  return propose(state, policy, may_start);
}

std::optional<NextAttempt> Scheduler::propose(const RunState& state, Policy& policy, const TaskFilter& may_start) const {
  const auto allowed = [&](int task) { return !may_start || may_start(task); };
  // The open tasks: the first concurrent_tasks ones (job order) with budget left to hand out.
  const std::vector<TaskIdentity>& tasks = state.job().tasks;
  const std::size_t concurrent = static_cast<std::size_t>(std::max(1, job_->schedule.concurrent_tasks));
  std::vector<int> open;
  for (int t = 0; t < static_cast<int>(tasks.size()) && t < static_cast<int>(state.tasks().size()) && open.size() < concurrent; ++t) {
    if (state.accepts_trials(t)) open.push_back(t);
  }
  std::erase_if(open, [&](int t) { return !allowed(t); });
  if (open.empty()) return std::nullopt;
  const std::int64_t id = state.next_trial_id();
  Proposal proposal = policy.propose_among(state, open, id);
  if (std::find(open.begin(), open.end(), proposal.task) == open.end()) {
    throw std::logic_error("the policy proposed a trial for a task that is not open");
  }
  if (!job_->space.is_valid(proposal.config)) throw std::logic_error("the policy proposed a configuration outside the space");
  return NextAttempt{id, proposal.task, 1, std::move(proposal.config), proposal.source, std::move(proposal.note)};
}

}  // namespace lbo::orchestrator
