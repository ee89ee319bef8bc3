#pragma once
// The work order of a trial's next attempt, and what the master checks of its outcome (private
// to master/).

#include <string>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/orchestrator/run_state.hpp"
#include "lbo/workers/work_order.hpp"

namespace lbo::orchestrator {

/// What a worker needs to run `trial`'s newest attempt: the command with its placeholders
/// expanded, the trial's folder and parameters, LBO_TASK, LBO_DATASET and LBO_TRIAL_ID, the
/// timeout and kill grace. `task`: the trial's task.
workers::WorkOrder work_order(const jobs::JobSpec& job, const jobs::TaskSpec& task, const RunPaths& run, const Trial& trial);

/// A stepwise objective's ok result that does not report `stepwise` step values becomes a
/// failure, with the reason (0: not stepwise, nothing to check).
void check_steps(int stepwise, workers::Outcome& outcome);
/// An ok outcome whose metrics lack a value [[constraints]] limits (or hold one that is not a
/// finite number) becomes a failed attempt saying which and how to report it.
void check_constraint_values(const std::vector<jobs::Constraint>& constraints, workers::Outcome& outcome);

/// The record of `trial`'s attempt that ended with `outcome` on `worker`: final when ok or out
/// of `retries`; a cancelled attempt and lbo's own error run again first and are never final.
/// Why the run halts when lbo could not start the attempt `finished` records (lbo_error).
std::string lbo_error_message(const TrialFinished& finished);

TrialFinished finished_record(const Trial& trial, int attempt, const workers::Outcome& outcome, const std::string& worker,
                              double unix_time, int retries);

}  // namespace lbo::orchestrator
