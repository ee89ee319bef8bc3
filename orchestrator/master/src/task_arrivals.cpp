#include "task_arrivals.hpp"

#include <exception>

#include "lbo/orchestrator/task_requests.hpp"

namespace lbo::orchestrator {

TaskArrivals::TaskArrivals(const RunPaths& run, const jobs::JobSpec& job, const RunState& state, Console& console,
                           std::function<bool(const jobs::TaskSpec&)> add)
    : run_(run), job_(job), state_(state), console_(console), add_(std::move(add)) {}

void TaskArrivals::poll() {
  take_requests();
  if (job_.schedule.watch) take_watched_files();
}

void TaskArrivals::take_requests() {
  std::vector<PendingRequest> requests;
  try {
    requests = pending_task_requests(run_.path());
  } catch (const std::exception& e) {
    console_.warn(std::string("cannot read task requests: ") + e.what());
  }
  for (const PendingRequest& r : requests) {
    try {
      if (!r.request) {
        answer_task_request(r, false, r.error);
        continue;
      }
      const jobs::TaskSpec task = task_from_request(*r.request, job_.schedule.default_budget);
      if (const std::string why = task_conflict(task, state_.job().tasks, job_.objective.command, job_.objective.table_data.get()); !why.empty()) {
        answer_task_request(r, false, "cannot add task " + task.name + ": " + why);
        continue;
      }
      if (!add_(task)) {
        answer_task_request(r, false, "cannot add task " + task.name + ": lbo cannot write the run's journal");
        continue;
      }
      answer_task_request(r, true, "task " + task.name + " added to the running run " + job_.name + " with a budget of " +
                                       std::to_string(task.budget) + " trials");
    } catch (const std::exception& e) {
      console_.warn("task request " + r.file.filename().string() + ": " + e.what());
    }
  }
}

void TaskArrivals::take_watched_files() {
  std::vector<jobs::TaskSpec> known;
  for (const TaskIdentity& t : state_.job().tasks) known.push_back(t.spec());
  const WatchedFiles watched = new_watched_files(*job_.schedule.watch, job_.schedule.watch_pattern, known);
  for (const std::filesystem::path& file : watched.not_matching) {
    if (ignored_files_.insert(file.string()).second) {
      console_.log("watched file " + file.string() + " skipped: its name does not match [schedule] watch_pattern \"" +
                   job_.schedule.watch_pattern + "\"");
    }
  }
  for (const std::filesystem::path& file : watched.new_tasks) {
    jobs::TaskSpec task;
    task.name = jobs::task_name_for(file);
    task.dataset = file;
    task.budget = job_.schedule.default_budget;
    task.origin = jobs::TaskOrigin::watched;
    if (const std::string why = task_conflict(task, state_.job().tasks, job_.objective.command, job_.objective.table_data.get()); !why.empty()) {
      if (ignored_files_.insert(file.string()).second) console_.warn("watched file " + file.string() + " skipped: " + why);
      continue;
    }
    add_(task);
  }
}

}  // namespace lbo::orchestrator
