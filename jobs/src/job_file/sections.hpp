#pragma once
// One reader per table of a job file (private to jobs/); parse_job calls them in order.

#include <toml++/toml.h>

#include "lbo/jobs/job_spec.hpp"
#include "reader.hpp"

namespace lbo::jobs::job_file {

/// name, seed, checkpoint_every_s, grace_s.
void read_top(Reader& r, const toml::table& root, JobSpec& job);
/// [objective]: the command (checked to run), direction, timeouts, retries, stepwise.
void read_objective(Reader& r, const toml::table& t, JobSpec& job);
/// [objective] objectives: several named objectives, each with its direction (read_objective
/// calls it last).
void read_objectives(Reader& r, const toml::table& t, ObjectiveSpec& o);
/// [policy]: surrogate, acquisition and their settings, warm start.
void read_policy(Reader& r, const toml::table& t, JobSpec& job);
/// [workers]: slots, threads and GPUs per trial, rank timeout.
void read_workers(Reader& r, const toml::table& t, JobSpec& job);
/// [schedule]: watched folder, default budget, concurrent tasks, idle timeout.
void read_schedule(Reader& r, const toml::table& t, JobSpec& job);
/// [early_stopping]: the rule, its steps and rungs (after [objective]: not with stepwise).
void read_early_stopping(Reader& r, const toml::table& t, JobSpec& job);
/// [space]: parameters in the file's order, with their conditions.
void read_space(Reader& r, const toml::table& space, JobSpec& job);
/// [[constraints]] (after [objective]): the limits on the result's metrics.
void read_constraints(Reader& r, const toml::table& root, JobSpec& job);
/// [[tasks]] (after [objective] and [schedule], which decide what a task needs).
void read_tasks(Reader& r, const toml::table& root, JobSpec& job);
/// [objective] table: the file read against the space, with a row for every task (last).
void read_table(Reader& r, const toml::table& root, JobSpec& job);
/// workers.simulate against the objective (jobs::simulation_problem); after read_table.
void check_simulation(Reader& r, const toml::table& root, const JobSpec& job);

}  // namespace lbo::jobs::job_file
