#pragma once
// TaskArrivals: tasks that join a running run (private to master/): `lbo add-task` requests in
// the run's requests/ folder, and new files in the [schedule] watch folder. Each is checked
// against the run's tasks and handed to the loop, which journals it.

#include <functional>
#include <set>
#include <string>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/console.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

class TaskArrivals {
 public:
  /// `add` journals a task and starts it; false when lbo's own I/O failed.
  TaskArrivals(const RunPaths& run, const jobs::JobSpec& job, const RunState& state, Console& console,
               std::function<bool(const jobs::TaskSpec&)> add);

  /// Takes every waiting request (answering each) and every new watched file.
  void poll();

 private:
  void take_requests();
  void take_watched_files();

  const RunPaths& run_;
  const jobs::JobSpec& job_;
  const RunState& state_;
  Console& console_;
  std::function<bool(const jobs::TaskSpec&)> add_;
  std::set<std::string> ignored_files_;  // watched files that cannot be tasks, warned about once
};

}  // namespace lbo::orchestrator
