#pragma once
// JobIdentity: what a run's results mean — the space, the objective, its direction and the
// tasks. Saved with the run; a job file that changes it cannot continue the run.

#include <cstdint>
#include <string>
#include <memory>
#include <vector>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/jobs/objective_table.hpp"

namespace lbo::orchestrator {

struct TaskIdentity {
  std::string name;
  int budget = 1;
  std::string dataset;  ///< absolute, or empty
  jobs::TaskOrigin origin = jobs::TaskOrigin::job_file;
  std::int64_t budget_steps = 0;  ///< jobs::TaskSpec::budget_steps

  static TaskIdentity of(const jobs::TaskSpec& task);
  jobs::TaskSpec spec() const;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t version) {
    archive(name, budget, dataset);
    if (version >= 2) archive(origin);  // version 1: every task came from the job file
    if (version >= 3) archive(budget_steps);
  }
};

struct JobIdentity {
  std::vector<jobs::ParamSpec> space;
  jobs::Direction direction = jobs::Direction::maximize;
  std::vector<std::string> command;
  std::vector<TaskIdentity> tasks;
  /// A simulated run ([workers] simulate, --simulate): its times are virtual (format version 2).
  bool virtual_clock = false;
  /// [[constraints]] (format version 3). A job file may change them on resume: every trial is
  /// judged by the run's newest.
  std::vector<jobs::Constraint> constraints;
  /// [objective] objectives (format version 4); empty: the single "objective" in `direction`.
  std::vector<jobs::Objective> objectives;

  /// Every objective of the run (the single "objective" when `objectives` is empty).
  jobs::Objectives all_objectives() const {
    return objectives.empty() ? jobs::Objectives({jobs::Objective(direction)}) : jobs::Objectives(objectives);
  }

  static JobIdentity of(const jobs::JobSpec& job);

  /// A tabulated objective's table, read again from the file and columns `command` names
  /// (add-task checks a new task against it); null for a command. Throws InputError when the
  /// file can no longer be read against the space.
  std::shared_ptr<const jobs::ObjectiveTable> table() const;

  /// How `newer`'s space differs from this one (parameters, their encoding, their order), one
  /// line each: empty when a configuration means the same under both.
  std::vector<std::string> space_differences(const JobIdentity& newer) const;
  /// Why `newer` (a job file) cannot continue a run made under this identity, one line each;
  /// empty when it can. The job file may append tasks and change budgets; the tasks it had keep
  /// their order and dataset. Tasks added at runtime (add-task, watch) need not be in it.
  std::vector<std::string> incompatibilities(const JobIdentity& newer) const;
  /// The tasks a resumed run goes on with: this run's, in order, with the budgets `file` gives
  /// them, then the tasks `file` adds. Call when incompatibilities(of(file)) is empty.
  std::vector<jobs::TaskSpec> merged_tasks(const jobs::JobSpec& file) const;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t version) {
    archive(space, direction, command, tasks);
    if (version >= 2) archive(virtual_clock);
    if (version >= 3) archive(constraints);
    if (version >= 4) archive(objectives);
  }
};

}  // namespace lbo::orchestrator
