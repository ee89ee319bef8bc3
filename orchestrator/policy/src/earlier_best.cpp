#include "earlier_best.hpp"

#include <algorithm>
#include <limits>
#include <optional>

namespace lbo::orchestrator {

namespace {

// The warm task's feasible values: of objective `k` of this job's several (w.values), or with
// one objective its own (w.objectives); NaN where a result broke a limit, so never the best.
std::vector<double> feasible_values(const WarmTask& w, std::optional<std::size_t> k) {
  std::vector<double> feasible = w.objectives;
  if (k) {
    for (std::size_t i = 0; i < w.values.size() && i < feasible.size(); ++i) feasible[i] = w.values[i][*k];
  }
  for (std::size_t i = 0; i < w.infeasible.size() && i < feasible.size(); ++i) {
    if (w.infeasible[i] != 0) feasible[i] = std::numeric_limits<double>::quiet_NaN();
  }
  return feasible;
}

}  // namespace

std::vector<jobs::Config> earlier_bests(const RunState& state, int task, const std::vector<WarmTask>& warm,
                                        std::size_t count) {
  std::vector<jobs::Config> bests;
  const auto add = [&](const jobs::Config& c) {
    if (bests.size() < count && std::find(bests.begin(), bests.end(), c) == bests.end()) bests.push_back(c);
  };
  for (int k = std::min(task, static_cast<int>(state.tasks().size())); k-- > 0;) {
    if (const auto best = state.tasks()[static_cast<std::size_t>(k)].best_trial) add(state.trial(*best).config);
  }
  // With several objectives, then the other ends of the earlier tasks' Pareto sets: for each
  // objective past the first, the member best in it (the newest task's first).
  if (state.several_objectives()) {
    const jobs::Objectives objectives = state.job().all_objectives();
    for (int k = std::min(task, static_cast<int>(state.tasks().size())); k-- > 0;) {
      const std::vector<std::int64_t>& front = state.tasks()[static_cast<std::size_t>(k)].pareto;
      for (std::size_t i = 1; i < objectives.size() && !front.empty(); ++i) {
        std::vector<double> values;
        for (const std::int64_t id : front) values.push_back(state.values_of(state.trial(id))[i]);
        if (const std::ptrdiff_t best = objectives[i].best_of(values); best >= 0) {
          add(state.trial(front[static_cast<std::size_t>(best)]).config);
        }
      }
    }
  }
  // Earlier runs' tasks: each one's best (by the first of this job's objectives, when it has
  // several and the warm task their values), then the ends of their Pareto sets likewise.
  const jobs::Objectives objectives = state.job().all_objectives();
  const auto add_best = [&](const WarmTask& w, std::optional<std::size_t> k) {
    const jobs::Objective by = k ? objectives[*k] : jobs::Objective(w.direction);
    const std::ptrdiff_t i = by.best_of(feasible_values(w, k));
    if (i >= 0 && static_cast<std::size_t>(i) < w.configs.size()) add(w.configs[static_cast<std::size_t>(i)]);
  };
  const auto several = [&](const WarmTask& w) {
    return state.several_objectives() && w.values.size() == w.objectives.size();
  };
  for (auto w = warm.rbegin(); w != warm.rend(); ++w) {
    add_best(*w, several(*w) ? std::optional<std::size_t>(0) : std::nullopt);
  }
  for (auto w = warm.rbegin(); w != warm.rend(); ++w) {
    for (std::size_t k = 1; several(*w) && k < objectives.size(); ++k) add_best(*w, k);
  }
  return bests;
}

}  // namespace lbo::orchestrator
