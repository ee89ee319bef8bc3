#pragma once
// Scheduler: which trial a free slot runs next.

#include <cstdint>
#include <deque>
#include <optional>

#include "lbo/orchestrator/policy.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

class Scheduler {
 public:
  /// The trial to start next: a trial waiting for a retry first, else a new trial of the first
  /// task (in file order) with budget left to hand out, proposed by `policy` and checked
  /// against the space. nullopt when nothing is left to hand out.
  std::optional<std::int64_t> next(RunState& state, Policy& policy);
  /// `trial` failed and has attempts left: it runs again before any new trial.
  void retry(std::int64_t trial) { retries_.push_back(trial); }
  bool has_retries() const { return !retries_.empty(); }

 private:
  std::deque<std::int64_t> retries_;
};

}  // namespace lbo::orchestrator
