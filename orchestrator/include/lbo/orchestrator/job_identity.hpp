#pragma once
// JobIdentity: what a run's results mean — the space, the objective, its direction and the
// tasks. Saved with the run; a job file that changes it cannot continue the run.

#include <cstdint>
#include <string>
#include <vector>

#include "lbo/jobs/job_spec.hpp"

namespace lbo::orchestrator {

struct TaskIdentity {
  std::string name;
  int budget = 1;
  std::string dataset;  ///< absolute, or empty

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(name, budget, dataset);
  }
};

struct JobIdentity {
  std::vector<jobs::ParamSpec> space;
  jobs::Direction direction = jobs::Direction::maximize;
  std::vector<std::string> command;
  std::vector<TaskIdentity> tasks;

  static JobIdentity of(const jobs::JobSpec& job);

  /// Why `newer` cannot continue a run made under this identity, one line each; empty when it
  /// can. Tasks may be appended and budgets changed; nothing else.
  std::vector<std::string> incompatibilities(const JobIdentity& newer) const;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(space, direction, command, tasks);
  }
};

}  // namespace lbo::orchestrator
