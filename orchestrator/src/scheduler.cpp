#include "lbo/orchestrator/scheduler.hpp"

#include <stdexcept>

namespace lbo::orchestrator {

std::optional<std::int64_t> Scheduler::next(RunState& state, Policy& policy) {
  if (!retries_.empty()) {
    const std::int64_t trial = retries_.front();
    retries_.pop_front();
    return trial;
  }
  const auto& tasks = state.job().tasks;
  for (int t = 0; t < static_cast<int>(tasks.size()); ++t) {
    if (state.tasks()[t].created >= tasks[t].budget) continue;
    const std::int64_t id = static_cast<std::int64_t>(state.trials().size());
    jobs::Config config = policy.propose(state, t, id);
    if (!state.job().space.is_valid(config)) {
      throw std::logic_error("the policy proposed a configuration outside the space");
    }
    return state.add_trial(t, std::move(config)).id;
  }
  return std::nullopt;
}

}  // namespace lbo::orchestrator
