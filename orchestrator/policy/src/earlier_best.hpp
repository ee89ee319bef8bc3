#pragma once
// A later task's first trials: what won the earlier tasks ([policy] transfer_best).
//
// On a sequence of related tasks the configuration that was best on the last task is the best
// single guess for the next one, and which model family wins carries over better than any
// fitted surface does from a few points. Evaluating the earlier tasks' incumbents first is the
// meta-learned initial design of Feurer, Springenberg and Hutter, "Initializing Bayesian
// hyperparameter optimization via meta-learning" (AAAI 2015), with the earlier tasks of the run
// as the meta-data, the most recent (the most alike, in a sequence) first.

#include <vector>

#include "lbo/jobs/space.hpp"
#include "lbo/orchestrator/policy.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

/// The best configurations of the tasks before `task`: run tasks task-1, …, 0, then the
/// warm-start tasks from the last to the first; each configuration once, at most `count`. With
/// several objectives, each group is followed by the other ends of its tasks' Pareto sets (for
/// each objective past the first, the result best in it).
std::vector<jobs::Config> earlier_bests(const RunState& state, int task, const std::vector<WarmTask>& warm,
                                        std::size_t count);

}  // namespace lbo::orchestrator
