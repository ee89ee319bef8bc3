#pragma once
// What lbo compare compares, per task of one run, after each of its finished trials: the best
// feasible result so far (one objective), or the hypervolume its feasible results so far
// dominate (several: [objective] objectives). Private to report/.

#include <map>
#include <string>
#include <vector>

#include "lbo/jobs/objective.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::report {

/// By task name: the best feasible ok result among the task's first 1, 2, ... finished trials
/// (trial order), NaN until its first.
std::map<std::string, std::vector<double>> best_so_far(const orchestrator::RunState& state, const jobs::Objective& objective);

/// By task name: each feasible ok result's values (one per objective), in trial order.
std::map<std::string, std::vector<std::vector<double>>> feasible_values(const orchestrator::RunState& state);

/// By task name: the hypervolume from `reference[task]` of the feasible ok results among the
/// task's first 1, 2, ... finished trials (0 until one dominates the reference).
std::map<std::string, std::vector<double>> hypervolume_so_far(const orchestrator::RunState& state,
                                                              const std::map<std::string, std::vector<double>>& reference);

}  // namespace lbo::report
