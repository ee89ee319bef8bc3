#pragma once
// Scheduler: which trial a free slot runs next.

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "lbo/orchestrator/policy.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

class Scheduler {
 public:
  Scheduler() = default;
  /// Continues a recovered run: `interrupted` trials first, then `retries`.
  Scheduler(const std::vector<std::int64_t>& interrupted, const std::vector<std::int64_t>& retries)
      : interrupted_(interrupted.begin(), interrupted.end()), retries_(retries.begin(), retries.end()) {}

  /// The trial to start next: a trial a stop interrupted, else one waiting for a retry, else a
  /// new trial of an open task (the first [schedule] concurrent_tasks tasks, in job order, with
  /// budget left to hand out), proposed by `policy` and checked against the space. nullopt when nothing is left to hand out.
  std::optional<std::int64_t> next(RunState& state, Policy& policy);
  /// Only an interrupted trial (a --sync run finishes its interrupted round before proposing).
  std::optional<std::int64_t> next_interrupted();

  /// `trial` failed and has attempts left: it runs again before any new trial.
  void retry(std::int64_t trial) { retries_.push_back(trial); }
  /// `trial` was cancelled (a stop, or its worker terminated): it runs again first.
  void interrupted(std::int64_t trial) { interrupted_.push_back(trial); }

  bool has_interrupted() const { return !interrupted_.empty(); }
  std::vector<std::int64_t> retries() const { return {retries_.begin(), retries_.end()}; }
  std::vector<std::int64_t> interrupted() const { return {interrupted_.begin(), interrupted_.end()}; }

 private:
  std::deque<std::int64_t> interrupted_;
  std::deque<std::int64_t> retries_;
};

}  // namespace lbo::orchestrator
