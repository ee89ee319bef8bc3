#pragma once
// A later task's first trials: what won the earlier tasks ([policy] transfer_best).
//
// On a sequence of related tasks the configuration that was best on the last task is the best
// single guess for the next one, and which model family wins carries over better than any
// fitted surface does from a few points. Evaluating the earlier tasks' incumbents first is the
// meta-learned initial design of Feurer, Springenberg and Hutter, "Initializing Bayesian
// hyperparameter optimization via meta-learning" (AAAI 2015), with the earlier tasks of the run
// as the meta-data. Which of them, in which order: by default a portfolio that covers the
// earlier tasks (portfolio_bests), since where tasks are unlike the last task's best is a poor
// guess (bench/README.md, decision transfer-best-portfolio); or the most recent first.

#include <optional>
#include <vector>

#include "lbo/jobs/encoding.hpp"
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

/// Every earlier best (earlier_bests' list, whole) in portfolio order ([policy]
/// transfer_best_choice = "portfolio"): first the best that does best on the earlier tasks
/// together, then each time the one that most improves the chosen ones' cover, where a set
/// covers a task by its best member there. A best's standing on a task is its quantile among
/// the task's feasible results (0 the best, 1 the worst), read from the task's results nearest
/// to it in the encoded space (the 3 nearest, inverse-distance weighted; a result at the best
/// itself decides alone). Scored by the first objective. Greedy forward selection, as Wistuba,
/// Schilling and Schmidt-Thieme (ICDM 2015) and Pfisterer et al. ("Learning multiple defaults",
/// 2018) choose initial designs and defaults, with the nearest results standing in for a shared
/// grid: the earlier tasks rarely evaluated the same configurations. Ties keep the recent
/// order. Nothing when there is nothing to cover: fewer than two earlier bests, or fewer than
/// two earlier tasks with two feasible results (the caller keeps the recent order, and says so).
std::optional<std::vector<jobs::Config>> portfolio_bests(const RunState& state, int task,
                                                         const std::vector<WarmTask>& warm,
                                                         const jobs::Encoder& encoder);

}  // namespace lbo::orchestrator
