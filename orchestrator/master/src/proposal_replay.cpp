#include "proposal_replay.hpp"

#include <string>
#include <variant>

namespace lbo::orchestrator {

namespace {

// Where the killed master asked for a fit, having applied `record` (see replay_proposals).
bool refits_after(const JournalRecord& record, const RunState& state, int running_before) {
  if (state.running_count() > 0 || state.all_budgets_done()) return false;
  if (std::holds_alternative<TaskAdded>(record)) return true;
  return std::holds_alternative<TrialFinished>(record) && running_before > 0 && state.interrupted().empty();
}

std::string describe(const TrialStarted& recorded, const std::optional<NextAttempt>& again, const RunState& state) {
  const auto& tasks = state.job().tasks;
  const auto name = [&](int task) {
    return task >= 0 && task < static_cast<int>(tasks.size()) ? tasks[static_cast<std::size_t>(task)].name : "?";
  };
  std::string text = "trial " + std::to_string(recorded.trial) + " (" + name(recorded.task) + ")";
  if (!again) return text + ": no task is open to propose it";
  if (again->task != recorded.task) return text + ": proposed for task " + name(again->task);
  return text + ": another configuration";
}

}  // namespace

std::string ReplayResult::summary() const {
  if (!mismatch.empty()) {
    return "--sync: replaying what the last master proposed after the checkpoint, " + mismatch +
           " came out otherwise than its journal says; the run goes on from the journal, and its proposals from here "
           "may differ from those of a run that was never stopped";
  }
  if (proposals + fits == 0) return {};
  return "--sync: the model made again the " + std::to_string(fits) + " fit(s) and " + std::to_string(proposals) +
         " proposal(s) the last master made after its checkpoint, each as its journal says; the run goes on as it would "
         "have";
}

ReplayResult replay_proposals(const JournalTail& tail, Policy& policy, const Scheduler& scheduler) {
  ReplayResult result;
  RunState state = tail.start;
  for (const JournalRecord& record : tail.records) {
    // A trial's first attempt under a new id: a proposal (only the scheduler creates trials).
    if (const auto* started = std::get_if<TrialStarted>(&record);
        started != nullptr && started->attempt == 1 && started->trial == state.next_trial_id()) {
      const std::optional<NextAttempt> again = scheduler.propose(state, policy);
      if (!again || again->task != started->task || !(again->config == started->config)) {
        result.mismatch = describe(*started, again, state);
        return result;
      }
      ++result.proposals;
    }
    const int running_before = state.running_count();
    state.apply(record);
    if (refits_after(record, state, running_before)) {
      policy.results_committed(state);
      policy.await_fit();
      ++result.fits;
    }
  }
  return result;
}

}  // namespace lbo::orchestrator
