#include "checkpoint_folders.hpp"

#include <cstdio>
#include <filesystem>
#include <system_error>

namespace fs = std::filesystem;

namespace lbo::orchestrator {

namespace {

// The bytes of the regular files under `folder` (what removing it frees).
std::uintmax_t bytes_under(const fs::path& folder) {
  std::uintmax_t bytes = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) bytes += it->file_size(size_ec);
  }
  return bytes;
}

std::string size_text(std::uintmax_t bytes) {
  char text[32];
  if (bytes >= (1ull << 30)) {
    std::snprintf(text, sizeof text, "%.1f GB", static_cast<double>(bytes) / (1ull << 30));
  } else if (bytes >= (1ull << 20)) {
    std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / (1ull << 20));
  } else {
    std::snprintf(text, sizeof text, "%.1f kB", static_cast<double>(bytes) / 1024.0);
  }
  return text;
}

}  // namespace

CheckpointFolders::CheckpointFolders(const jobs::JobSpec& job, const RunPaths& run, std::function<void(const std::string&)> log)
    : run_(run), log_(std::move(log)) {
  if (job.early_stopping && job.early_stopping->mode == jobs::StoppingMode::promotion) {
    promoting_ = true;
    keep_ = job.early_stopping->keep_checkpoints;
  }
}

void CheckpointFolders::tidy(const RunState& state) {
  if (!promoting_ || keep_ == jobs::EarlyStoppingSpec::KeepCheckpoints::all) return;
  const std::vector<TaskProgress>& tasks = state.tasks();
  if (tidied_at_.size() < tasks.size()) tidied_at_.resize(tasks.size(), -1);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    // A done task whose budget grew (the job file, add-task) runs again: tidied again once done.
    if (!state.task_done(static_cast<int>(i)) || tidied_at_[i] == tasks[i].finished) continue;
    tidied_at_[i] = tasks[i].finished;
    tidy_task(state, static_cast<int>(i));
  }
}

void CheckpointFolders::tidy_task(const RunState& state, int task) {
  const std::optional<std::int64_t> best = state.tasks().at(static_cast<std::size_t>(task)).best_trial;
  const bool keep_best = keep_ == jobs::EarlyStoppingSpec::KeepCheckpoints::best;
  int removed = 0;
  std::uintmax_t bytes = 0;
  for (const Trial& t : state.trials()) {
    if (t.task != task || (keep_best && best && t.id == *best)) continue;
    const fs::path folder = run_.trial_dir(t.id) / "checkpoint";
    std::error_code ec;
    if (fs::symlink_status(folder, ec).type() != fs::file_type::directory) continue;  // none, or not lbo's to follow
    const std::uintmax_t size = bytes_under(folder);
    fs::remove_all(folder, ec);
    if (ec) {
      log_("warning: cannot remove " + folder.string() + " (trial " + std::to_string(t.id) + "'s checkpoints): " +
           ec.message() + "; the run goes on");
      continue;
    }
    ++removed;
    bytes += size;
  }
  if (removed == 0) return;
  const std::string& name = state.job().tasks.at(static_cast<std::size_t>(task)).name;
  std::string kept = keep_best && best ? ", kept trial " + std::to_string(*best) + "'s (the task's best)" : "";
  log_("task " + name + ": removed the checkpoint folders of " + std::to_string(removed) + " trial(s) that cannot resume (" +
       size_text(bytes) + ")" + kept + "; [early_stopping] keep_checkpoints = \"all\" keeps them");
}

}  // namespace lbo::orchestrator
