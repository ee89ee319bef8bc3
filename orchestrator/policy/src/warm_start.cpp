#include "lbo/orchestrator/warm_start.hpp"

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/job_identity.hpp"
#include "lbo/orchestrator/recovery.hpp"
#include "lbo/orchestrator/run_directory.hpp"

namespace lbo::orchestrator {

std::vector<WarmTask> load_warm_start(const jobs::JobSpec& job) {
  std::vector<WarmTask> tasks;
  const JobIdentity ours = JobIdentity::of(job);
  for (std::size_t i = 0; i < job.policy.warm_start.size(); ++i) {
    const std::filesystem::path& dir = job.policy.warm_start[i];
    const std::string where = job.policy.warm_start_places[i] + ": " + dir.string();
    if (!RunPaths(dir).holds_run()) {
      throw InputError(where + ": not a run directory (no " + RunPaths(dir).journal().filename().string() + " in it)");
    }
    RecoveredRun run;
    try {
      run = recover_run(dir);
    } catch (const std::exception& e) {
      throw InputError(where + ": cannot read the run: " + e.what());
    }
    if (run.empty()) continue;  // a run stopped before its first record has no finished task
    const RunState& state = run.state;
    const std::vector<std::string> why = state.job().space_differences(ours);
    if (!why.empty()) {
      std::string message = where + ": its space differs from this job's, so its trials cannot teach this one:";
      for (const std::string& w : why) message += "\n  " + w;
      throw InputError(message);
    }
    // A task counts once it is done (its budget used), with its ok trials; failed ones stay out.
    for (std::size_t task = 0; task < state.tasks().size(); ++task) {
      const TaskIdentity& identity = state.job().tasks[task];
      if (!state.task_done(static_cast<int>(task)) || state.tasks()[task].ok == 0) continue;
      WarmTask w;
      for (const std::int64_t id : state.task_trials(static_cast<int>(task))) {
        const Trial& t = state.trial(id);
        if (!t.finished || t.outcome.status != workers::TrialStatus::ok) continue;
        w.configs.push_back(t.config);
        w.objectives.push_back(t.outcome.objective);
      }
      w.source = dir.string() + ":" + identity.name;
      w.direction = state.job().direction;
      tasks.push_back(std::move(w));
    }
  }
  return tasks;
}

}  // namespace lbo::orchestrator
