#include "lbo/orchestrator/scheduler.hpp"

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
