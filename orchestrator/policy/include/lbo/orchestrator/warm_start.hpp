#pragma once
// [policy] warm_start: the finished tasks of other run directories, read as earlier tasks.

#include <vector>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/policy.hpp"

namespace lbo::orchestrator {

/// The finished tasks (every trial of the budget done) of each run `job` names in
/// [policy] warm_start, run by run in the order listed, each run's tasks in its order; only
/// successful trials. Read-only: a run may be running meanwhile. Throws InputError naming the
/// job file and the key when a run cannot be read or its space differs from the job's.
std::vector<WarmTask> load_warm_start(const jobs::JobSpec& job);

}  // namespace lbo::orchestrator
