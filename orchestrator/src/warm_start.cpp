#include "lbo/orchestrator/warm_start.hpp"

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/job_identity.hpp"
#include "lbo/orchestrator/recovery.hpp"

namespace lbo::orchestrator {

std::vector<WarmTask> load_warm_start(const jobs::JobSpec& job) {
  std::vector<WarmTask> tasks;
  const JobIdentity ours = JobIdentity::of(job);
  for (std::size_t i = 0; i < job.policy.warm_start.size(); ++i) {
    const std::filesystem::path& dir = job.policy.warm_start[i];
    const std::string where = job.job_file.string() + ": policy.warm_start[" + std::to_string(i) + "]: " + dir.string();
    RecoveredRun run;
    try {
      run = recover_run(dir);
    } catch (const std::exception& e) {
      throw InputError(where + ": cannot read the run: " + e.what());
    }
    const std::vector<std::string> why = run.job.space_differences(ours);
    if (!why.empty()) {
      std::string message = where + ": its space differs from this job's, so its trials cannot teach this one:";
      for (const std::string& w : why) message += "\n  " + w;
      throw InputError(message);
    }
    std::vector<WarmTask> of_run(run.job.tasks.size());
    std::vector<int> finished(run.job.tasks.size(), 0);
    for (const Trial& t : run.trials) {
      if (!t.finished || t.task < 0 || t.task >= static_cast<int>(of_run.size())) continue;
      ++finished[static_cast<std::size_t>(t.task)];
      if (t.outcome.status != workers::TrialStatus::ok) continue;
      WarmTask& w = of_run[static_cast<std::size_t>(t.task)];
      w.configs.push_back(t.config);
      w.objectives.push_back(t.outcome.objective);
    }
    for (std::size_t t = 0; t < of_run.size(); ++t) {
      if (finished[t] < run.job.tasks[t].budget || of_run[t].configs.empty()) continue;
      of_run[t].source = dir.string() + ":" + run.job.tasks[t].name;
      of_run[t].direction = run.job.direction;
      tasks.push_back(std::move(of_run[t]));
    }
  }
  return tasks;
}

}  // namespace lbo::orchestrator
