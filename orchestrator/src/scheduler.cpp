#include "lbo/orchestrator/scheduler.hpp"

#include <algorithm>
#include <stdexcept>

namespace lbo::orchestrator {

std::optional<std::int64_t> Scheduler::next_interrupted() {
  if (interrupted_.empty()) return std::nullopt;
  const std::int64_t trial = interrupted_.front();
  interrupted_.pop_front();
  return trial;
}

std::optional<std::int64_t> Scheduler::next(RunState& state, Policy& policy) {
  if (const auto trial = next_interrupted()) return trial;
  if (!retries_.empty()) {
    const std::int64_t trial = retries_.front();
    retries_.pop_front();
    return trial;
  }
  // The open tasks: the first concurrent_tasks ones (job order) with budget left to hand out.
  const auto& tasks = state.job().tasks;
  const std::size_t concurrent = static_cast<std::size_t>(std::max(1, state.job().schedule.concurrent_tasks));
  std::vector<int> open;
  for (int t = 0; t < static_cast<int>(tasks.size()) && open.size() < concurrent; ++t) {
    if (state.tasks()[t].created < tasks[t].budget) open.push_back(t);
  }
  if (!open.empty()) {
    const std::int64_t id = static_cast<std::int64_t>(state.trials().size());
    Proposal proposal = policy.propose_among(state, open, id);
    if (std::find(open.begin(), open.end(), proposal.task) == open.end()) {
      throw std::logic_error("the policy proposed a trial for a task that is not open");
    }
    if (!state.job().space.is_valid(proposal.config)) {
      throw std::logic_error("the policy proposed a configuration outside the space");
    }
    return state.add_trial(proposal.task, std::move(proposal.config)).id;
  }
  return std::nullopt;
}

}  // namespace lbo::orchestrator
