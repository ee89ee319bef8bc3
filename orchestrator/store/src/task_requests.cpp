#include "lbo/orchestrator/task_requests.hpp"

#include <fnmatch.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "lbo/jobs/error.hpp"
#include "lbo/jobs/protocol.hpp"
#include "lbo/orchestrator/files.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "lbo/orchestrator/recovery.hpp"
#include "lbo/orchestrator/run_directory.hpp"

namespace fs = std::filesystem;

namespace lbo::orchestrator {

namespace {

constexpr const char* kRequestSuffix = ".request";
constexpr const char* kReplySuffix = ".reply";

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

fs::path reply_path(const fs::path& request_file) { return request_file.string() + kReplySuffix; }

std::string host_name() {
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  return host;
}

// Whether the lbo add-task that wrote `r` may still wait for its reply. Its name is
// "<nanoseconds since the epoch>-<pid>.request" (write_task_request).
bool requester_may_wait(const PendingRequest& r) {
  const std::string name = r.file.filename().string();
  long long written_ns = 0;
  int pid = 0;
  if (std::sscanf(name.c_str(), "%lld-%d", &written_ns, &pid) != 2) return true;
  const double age_s = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() -
                       static_cast<double>(written_ns) * 1e-9;
  if (age_s > static_cast<double>(kReplyWait.count()) + 5) return false;
  if (!r.host.empty() && r.host == host_name() && pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) return false;
  return true;
}

}  // namespace

std::string task_conflict(const jobs::TaskSpec& task, const std::vector<TaskIdentity>& tasks,
                          const std::vector<std::string>& command, const jobs::ObjectiveTable* table) {
  if (!jobs::is_valid_name(task.name)) {
    return "\"" + task.name + "\" is not a usable task name; use letters, digits, '.', '_' and '-'";
  }
  const auto same = std::find_if(tasks.begin(), tasks.end(), [&](const TaskIdentity& t) { return t.name == task.name; });
  if (same != tasks.end()) return "the run already has a task named " + task.name + " (task names must be unique)";
  if (task.budget < 1) return "budget must be >= 1";
  if (task.dataset) {
    std::error_code ec;
    if (!fs::exists(*task.dataset, ec)) return "dataset " + task.dataset->string() + " does not exist";
  } else if (std::any_of(command.begin(), command.end(), [](const std::string& a) { return jobs::uses_placeholder(a, "dataset"); })) {
    return "objective.command uses {dataset}, so the task needs a dataset (--dataset PATH)";
  }
  if (table != nullptr) return table->task_problem(task.name, task.budget);
  return {};
}

jobs::TaskSpec task_from_request(const TaskRequest& request, int default_budget) {
  jobs::TaskSpec task;
  task.name = request.name;
  task.dataset = request.dataset;
  task.budget = request.budget.value_or(default_budget);
  task.origin = jobs::TaskOrigin::added;
  return task;
}

fs::path write_task_request(const fs::path& run_dir, const TaskRequest& request) {
  const fs::path dir = RunPaths(run_dir).requests();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("cannot create " + dir.string() + ": " + ec.message());
  nlohmann::json j;
  j["name"] = request.name;
  j["host"] = host_name();
  if (request.dataset) j["dataset"] = request.dataset->string();
  if (request.budget) j["budget"] = *request.budget;
  // Names sort by creation: nanoseconds since the epoch, then the pid.
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "%020lld-%d", static_cast<long long>(std::chrono::nanoseconds(now).count()),
                static_cast<int>(::getpid()));
  const fs::path file = dir / (std::string(stamp) + kRequestSuffix);
  write_file_atomically(file, j.dump() + "\n", Durability::cached);
  return file;
}

std::vector<PendingRequest> pending_task_requests(const fs::path& run_dir) {
  std::vector<PendingRequest> pending;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(RunPaths(run_dir).requests(), ec)) {
    const std::string name = entry.path().filename().string();
    if (!ends_with(name, kRequestSuffix)) continue;
    PendingRequest p;
    p.file = entry.path();
    try {
      std::ifstream in(p.file);
      const nlohmann::json j = nlohmann::json::parse(in);
      TaskRequest r;
      r.name = j.at("name").get<std::string>();
      if (j.contains("dataset")) r.dataset = fs::path(j.at("dataset").get<std::string>());
      if (j.contains("budget")) r.budget = j.at("budget").get<int>();
      if (j.contains("host") && j.at("host").is_string()) p.host = j.at("host").get<std::string>();
      p.request = std::move(r);
    } catch (const std::exception& e) {
      p.error = "unreadable request " + name + ": " + e.what();
    }
    pending.push_back(std::move(p));
  }
  std::sort(pending.begin(), pending.end(), [](const auto& a, const auto& b) { return a.file < b.file; });
  return pending;
}

void answer_task_request(const PendingRequest& request, bool ok, const std::string& message) {
  if (requester_may_wait(request)) {
    write_file_atomically(reply_path(request.file), std::string(ok ? "ok: " : "error: ") + message + "\n",
                          Durability::cached);
  }
  std::error_code ec;
  fs::remove(request.file, ec);
}

std::optional<std::string> wait_for_reply(const fs::path& request_file, std::chrono::milliseconds timeout,
                                          const std::function<bool()>& nobody_answers) {
  const fs::path reply = reply_path(request_file);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (bool last_look = false;; last_look = nobody_answers && nobody_answers()) {
    std::error_code ec;
    if (fs::exists(reply, ec)) {
      std::ifstream in(reply);
      std::string line;
      std::getline(in, line);
      in.close();
      fs::remove(reply, ec);
      return line;
    }
    // The master may answer and then end between two looks: one more look after it ended.
    if (last_look || std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

WatchedFiles new_watched_files(const fs::path& folder, const std::string& pattern, const std::vector<jobs::TaskSpec>& tasks) {
  struct Found {
    fs::file_time_type modified;
    fs::path path;
  };
  std::vector<Found> found;
  WatchedFiles files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.front() == '.' || ends_with(name, ".tmp") || ends_with(name, ".part")) continue;
    std::error_code entry_ec;
    if (!entry.is_regular_file(entry_ec)) continue;
    const fs::path path = fs::absolute(entry.path()).lexically_normal();
    const bool known = std::any_of(tasks.begin(), tasks.end(), [&](const jobs::TaskSpec& t) { return t.dataset == path; });
    if (known) continue;
    // fnmatch is POSIX's glob over one name ('*', '?', [...], as the shell): no need for our own.
    if (::fnmatch(pattern.c_str(), name.c_str(), 0) != 0) {
      files.not_matching.push_back(path);
      continue;
    }
    found.push_back({entry.last_write_time(entry_ec), path});
  }
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return a.modified != b.modified ? a.modified < b.modified : a.path < b.path;
  });
  for (Found& f : found) files.new_tasks.push_back(std::move(f.path));
  std::sort(files.not_matching.begin(), files.not_matching.end());
  return files;
}

jobs::TaskSpec add_task_to_stopped_run(const fs::path& run_dir, const TaskRequest& request,
                                       const std::function<void(const std::string&)>& log) {
  const RunPaths paths(run_dir);
  const RecoveredRun run = recover_run(run_dir);
  if (run.empty()) {
    throw InputError(run_dir.string() + ": the run has not started yet (its journal holds no record); `lbo run` its "
                     "job file first");
  }
  std::string frozen;
  {
    std::ifstream in(paths.job_file(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    frozen = text.str();
  }
  const jobs::TaskSpec task = task_from_request(request, jobs::default_budget_in(frozen).value_or(jobs::ScheduleSpec{}.default_budget));
  const std::shared_ptr<const jobs::ObjectiveTable> table = run.state.job().table();
  if (const std::string why = task_conflict(task, run.state.job().tasks, run.state.job().command, table.get()); !why.empty()) {
    throw InputError(run_dir.string() + ": cannot add task " + task.name + ": " + why);
  }
  JournalWriter journal = continue_journal(paths, run, log);
  journal.append(TaskAdded{TaskIdentity::of(task),
                           std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count()});
  journal.sync();
  return task;
}

}  // namespace lbo::orchestrator
