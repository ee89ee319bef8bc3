#pragma once
// Tasks that join a run while it exists: `lbo add-task` and the watched folder ([schedule]
// watch). A running master owns the run, so add-task hands it a request file in
// `runs/<name>/requests/` and waits for the reply; the master polls that folder (and the
// watched one) every second, journals each new task and answers. A stopped run takes the task
// straight into its journal (see add_task_to_stopped_run).

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/jobs/objective_table.hpp"
#include "lbo/orchestrator/job_identity.hpp"

namespace lbo::orchestrator {

/// What `lbo add-task` asks for.
struct TaskRequest {
  std::string name;
  std::optional<std::filesystem::path> dataset;  ///< absolute
  std::optional<int> budget;                     ///< the run's default_budget when unset
};

/// Why `task` cannot join a run that has `tasks` and runs `command`, or empty when it can. With
/// the run's `table` (a tabulated objective), also when the table has no row of the task or,
/// under table_restrict, fewer configurations than its budget (ObjectiveTable::task_problem).
std::string task_conflict(const jobs::TaskSpec& task, const std::vector<TaskIdentity>& tasks,
                          const std::vector<std::string>& command, const jobs::ObjectiveTable* table = nullptr);

/// The TaskSpec a request makes (origin: added).
jobs::TaskSpec task_from_request(const TaskRequest& request, int default_budget);

/// A request file found in a run's requests folder.
struct PendingRequest {
  std::filesystem::path file;
  std::optional<TaskRequest> request;  ///< none when the file does not parse
  std::string error;                   ///< why it does not
  std::string host;                    ///< where the lbo add-task that wrote it runs (empty: unknown)
};

/// How long `lbo add-task` waits for a running master's reply.
inline constexpr std::chrono::seconds kReplyWait{30};

/// Writes a request file atomically; returns its path.
std::filesystem::path write_task_request(const std::filesystem::path& run_dir, const TaskRequest& request);
/// The run's waiting requests, oldest first.
std::vector<PendingRequest> pending_task_requests(const std::filesystem::path& run_dir);
/// The master's answer: writes `<request>.reply` ("ok: …" or "error: …") and removes the request.
/// No reply is written that nobody can read: when the lbo add-task that wrote the request has
/// given up (it waits kReplyWait) or has exited (on this host).
void answer_task_request(const PendingRequest& request, bool ok, const std::string& message);
/// The answer to `request_file`, once it comes (the reply is then removed); none after
/// `timeout`, or as soon as `nobody_answers()` says no master will (it ended).
std::optional<std::string> wait_for_reply(const std::filesystem::path& request_file, std::chrono::milliseconds timeout,
                                          const std::function<bool()>& nobody_answers = {});

/// The regular files of a watched folder that are no task yet.
struct WatchedFiles {
  /// Names matching the pattern: new tasks, oldest modification first, then by name.
  std::vector<std::filesystem::path> new_tasks;
  /// Names not matching it (a stray README.txt), by name: never tasks.
  std::vector<std::filesystem::path> not_matching;
};

/// The files of `folder` that are no task of `tasks` yet (by dataset path), split by whether
/// their name matches `pattern` (a glob as fnmatch(3), e.g. "*.csv"). Hidden files and names
/// ending in .tmp or .part (files still being written) are in neither list.
WatchedFiles new_watched_files(const std::filesystem::path& folder, const std::string& pattern,
                               const std::vector<jobs::TaskSpec>& tasks);

/// Journals `request` as a new task of the stopped run in `run_dir` (whose lock the caller
/// holds); `log` hears of damage repaired on the way. Throws InputError when it conflicts with
/// the run's tasks, IoError when the journal cannot be written. Returns the task added.
jobs::TaskSpec add_task_to_stopped_run(const std::filesystem::path& run_dir, const TaskRequest& request,
                                       const std::function<void(const std::string&)>& log);

}  // namespace lbo::orchestrator
