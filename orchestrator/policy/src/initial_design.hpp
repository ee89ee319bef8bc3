#pragma once
// InitialDesign: a task's first trials, before its acquisition means anything. The earlier
// tasks' best configurations (transfer_best), then random points whose categoricals are
// balanced over the task's trials; initial_random of them, or LiBO's forced exploration.
// Private to policy/.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lbo/jobs/encoding.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/policy.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

class FailureModel;
class TableRows;

class InitialDesign {
 public:
  /// `warm_start`: the earlier runs' tasks (kept by reference: the policy's).
  InitialDesign(const jobs::JobSpec& job, const std::vector<WarmTask>& warm_start);

  /// The design `task` starts with: initial_random trials, or LiBO's ceil(sqrt(budget)/s^¼)
  /// for the s-th task of the model (warm-start tasks first); earlier tasks' bests first.
  int size(const RunState& state, int task) const;
  /// Whether `task` is still in its design.
  bool open(const RunState& state, int task) const { return state.tasks()[task].created < size(state, task); }
  /// How many of `task`'s first trials are earlier tasks' bests: [policy] transfer_best, or
  /// unset, the model's (lbo, ablr: 2), with lbo half the earlier tasks' distinct bests when
  /// that is more.
  std::size_t transfer_best(const RunState& state, int task) const;
  /// The next earlier best `task` has not taken (in [policy] transfer_best_choice's order), while
  /// its first transfer_best trials are handed out; else none. With `failures`, a best the failure model
  /// gives less than kLikelyEnough to succeed on `task` is passed over (said in *note).
  std::optional<jobs::Config> earlier_best(const RunState& state, int task, FailureModel* failures = nullptr,
                                           std::string* note = nullptr) const;
  /// A random point of `task`'s design, seeded by the trial (a row it has not taken, when the
  /// table restricts proposals). With a failure model that has learned something, a draw is
  /// kept when its probability of success is at least kLikelyEnough (drawn again up to
  /// kDesignDraws times, then the likeliest draw), so the design spreads over where trials
  /// succeed; *note says so.
  jobs::Config point(const RunState& state, int task, std::int64_t trial, FailureModel* failures = nullptr,
                     std::string* note = nullptr) const;
  static constexpr double kLikelyEnough = 0.5;
  static constexpr int kDesignDraws = 32;

 private:
  /// [policy] transfer_best as written; unset, the model's (lbo, ablr: 2; the others 0).
  std::size_t least_bests() const;
  /// Whether the count grows with the earlier tasks (transfer_best unset, with lbo).
  bool grows() const;
  /// The first `count` earlier bests in transfer_best_choice's order, and whether that is the
  /// portfolio's (with "portfolio" and too few earlier results to score it, the recent order).
  struct ChosenBests {
    std::vector<jobs::Config> bests;
    bool in_portfolio_order = false;
  };
  ChosenBests chosen_bests(const RunState& state, int task, std::size_t count) const;

  const jobs::JobSpec& job_;
  const std::vector<WarmTask>& warm_start_;
  std::shared_ptr<const TableRows> rows_;  ///< a table that restricts proposals; else null
  jobs::Encoder encoder_;
  /// A task's portfolio order, with the earlier tasks' finished trials it was scored on: it is
  /// asked at every proposal while the task takes its bests (master thread only).
  struct Portfolio {
    std::int64_t finished = -1;
    std::optional<std::vector<jobs::Config>> bests;  ///< none: too few results to score
  };
  mutable std::map<int, Portfolio> portfolios_;
};

}  // namespace lbo::orchestrator
