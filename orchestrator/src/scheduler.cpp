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

std::optional<NextAttempt> Scheduler::next(const RunState& state, Policy& policy, bool interrupted_only) const {
  if (!state.interrupted().empty()) return again(state, state.interrupted().front());
  if (interrupted_only) return std::nullopt;
  if (!state.retries().empty()) return again(state, state.retries().front());
  // The open tasks: the first concurrent_tasks ones (job order) with budget left to hand out.
  const auto& tasks = job_->tasks;
  const std::size_t concurrent = static_cast<std::size_t>(std::max(1, job_->schedule.concurrent_tasks));
  std::vector<int> open;
  for (int t = 0; t < static_cast<int>(tasks.size()) && t < static_cast<int>(state.tasks().size()) && open.size() < concurrent; ++t) {
    if (state.tasks()[t].created < tasks[t].budget) open.push_back(t);
  }
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
