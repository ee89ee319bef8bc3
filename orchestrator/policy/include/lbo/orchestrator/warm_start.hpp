#pragma once
// [policy] warm_start: the finished tasks of other run directories, read as earlier tasks.

#include <cstddef>
#include <string>
#include <vector>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/policy.hpp"

namespace lbo::orchestrator {

/// The finished tasks (every trial of the budget done) of each run `job` names in
/// [policy] warm_start, run by run in the order listed, each run's tasks in its order; only
/// successful trials. Read-only: a run may be running meanwhile. Throws InputError naming the
/// job file and the key when a run cannot be read or its space differs from the job's. `notes`
/// (when given) hears what was left out and why: a CSV file's rows without a finite objective
/// (with their lines) or that failed, a run's unfinished tasks; and a task so large that every
/// fit of the model takes long ([policy] max_fit_results unset).
std::vector<WarmTask> load_warm_start(const jobs::JobSpec& job, std::vector<std::string>* notes = nullptr);

/// A warm-start task this many rows long, with [policy] max_fit_results unset, gets a note:
/// each fit of the model takes all of them (a GP's fit is cubic in them).
inline constexpr std::size_t kLargeWarmTask = 2000;

}  // namespace lbo::orchestrator
