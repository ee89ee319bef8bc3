#include "earlier_best.hpp"

#include <algorithm>
#include <limits>

namespace lbo::orchestrator {

namespace {

// The index of the best feasible objective by the warm task's own direction, or -1 when it has none.
std::ptrdiff_t best_of(const WarmTask& w) {
  std::vector<double> feasible = w.objectives;
  for (std::size_t i = 0; i < w.infeasible.size() && i < feasible.size(); ++i) {
    if (w.infeasible[i] != 0) feasible[i] = std::numeric_limits<double>::quiet_NaN();  // never the best
  }
  return jobs::Objective(w.direction).best_of(feasible);
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
  for (auto w = warm.rbegin(); w != warm.rend(); ++w) {
    if (const std::ptrdiff_t i = best_of(*w); i >= 0 && static_cast<std::size_t>(i) < w->configs.size()) {
      add(w->configs[static_cast<std::size_t>(i)]);
    }
  }
  return bests;
}

}  // namespace lbo::orchestrator
