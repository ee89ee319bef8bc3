#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/master.hpp"
#include "lbo/orchestrator/recovery.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/orchestrator/task_requests.hpp"

namespace lbo::orchestrator {

int add_task_command(const AddTaskOptions& options) {
  const std::filesystem::path run_dir = std::filesystem::absolute(options.run_dir).lexically_normal();
  if (!has_run_state(run_dir)) {
    throw InputError(options.run_dir + ": not a run directory (no " + RunPaths(run_dir).journal().filename().string() + ")");
  }
  TaskRequest request;
  request.name = options.name;
  request.budget = options.budget;
  if (options.dataset) {
    request.dataset = std::filesystem::absolute(*options.dataset).lexically_normal();
    std::error_code ec;
    if (!std::filesystem::exists(*request.dataset, ec)) {
      throw InputError("--dataset " + *options.dataset + ": does not exist (looked for " + request.dataset->string() + ")");
    }
  }
  // What is wrong with it on the run as it stands is said now, running or not.
  const RecoveredRun run = recover_run(run_dir);
  if (run.empty()) {
    throw InputError(options.run_dir + ": the run has not started yet (its journal holds no record); `lbo run` its job "
                     "file first");
  }
  const JobIdentity& job = run.state.job();
  const std::shared_ptr<const jobs::ObjectiveTable> table = job.table();
  // The budget is the request's, or 1 if the master is to choose (the master checks it then).
  if (const std::string why = task_conflict(task_from_request(request, 1), job.tasks, job.command, table.get()); !why.empty()) {
    throw InputError(run_dir.string() + ": cannot add task " + request.name + ": " + why);
  }
  // Without the lock, whether a master runs cannot be told: the request file is safe either way
  // (a running master takes it, a stopped run at its next start).
  if (std::optional<RunDirectory> locked = options.no_lock ? std::nullopt : RunDirectory::lock_existing(run_dir)) {
    const jobs::TaskSpec task =
        add_task_to_stopped_run(run_dir, request, [](const std::string& line) { std::cerr << "lbo: warning: " << line << "\n"; });
    std::cout << "task " << task.name << " added to the stopped run in " << run_dir.string() << " with a budget of "
              << task.budget << " trials; `lbo run` on its job file continues with it\n";
    return kExitDone;
  }
  const std::filesystem::path file = write_task_request(run_dir, request);
  // A master that ends before it reads the request leaves it to the run's next start; lbo
  // add-task then takes the stopped run's lock and adds the task itself.
  const auto master_ended = [&] { return !options.no_lock && !lock_holder(run_dir).held; };
  std::optional<std::string> reply = wait_for_reply(file, kReplyWait, master_ended);
  if (!reply && master_ended()) {
    if (std::optional<RunDirectory> locked = RunDirectory::lock_existing(run_dir)) {
      std::error_code ec;
      if (std::filesystem::remove(file, ec)) {
        const jobs::TaskSpec task = add_task_to_stopped_run(
            run_dir, request, [](const std::string& line) { std::cerr << "lbo: warning: " << line << "\n"; });
        std::cout << "task " << task.name << " added to the stopped run in " << run_dir.string()
                  << " (its master ended before it read the request) with a budget of " << task.budget
                  << " trials; `lbo run` on its job file continues with it\n";
        return kExitDone;
      }
      reply = wait_for_reply(file, std::chrono::milliseconds(0));  // taken by the master just before it ended
    }
  }
  if (!reply) {
    std::cout << (options.no_lock ? "no running master of " + run_dir.string() + " has answered within 30 s (without the "
                                    "lock, lbo cannot tell whether one runs)"
                                  : "the running master of " + run_dir.string() + " has not answered within 30 s, or another lbo holds the run")
              << "; the request waits in " << file.string() << " and is applied when it checks, or at the run's next start\n";
    return kExitDone;
  }
  if (reply->rfind("ok: ", 0) == 0) {
    std::cout << reply->substr(4) << "\n";
    return kExitDone;
  }
  throw InputError(run_dir.string() + ": " + (reply->rfind("error: ", 0) == 0 ? reply->substr(7) : *reply));
}

}  // namespace lbo::orchestrator
