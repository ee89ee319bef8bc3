#pragma once
// The run directory `<run-root>/<name>/`: frozen job, journal, results, trial folders, lock.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "lbo/jobs/job_spec.hpp"

namespace lbo::orchestrator {

class RunDirectory {
 public:
  /// `<run_root>/<job.name>/`, locked for this process. A folder that holds a run (a journal)
  /// is resumed, or with `fresh` renamed aside with a timestamp suffix (never deleted) and
  /// started anew. A live run's folder is refused (InputError), as is a folder with other
  /// content that is not a run. A new run gets the job frozen into job.toml.
  static RunDirectory open(const std::filesystem::path& run_root, const jobs::JobSpec& job, bool fresh);
  /// The same for a new run only: an existing run is refused unless `fresh` (tests, benchmarks).
  static RunDirectory create(const std::filesystem::path& run_root, const jobs::JobSpec& job, bool fresh);

  /// An existing run (a journal) locked for this process, or none while a live run holds it.
  static std::optional<RunDirectory> lock_existing(const std::filesystem::path& dir);

  RunDirectory(RunDirectory&& other) noexcept;
  RunDirectory& operator=(RunDirectory&&) = delete;
  ~RunDirectory();

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path journal() const { return path_ / "journal.lbo"; }
  std::filesystem::path results_csv() const { return path_ / "results.csv"; }
  std::filesystem::path tasks_csv() const { return path_ / "tasks.csv"; }
  std::filesystem::path trial_dir(std::int64_t trial) const { return path_ / "trials" / std::to_string(trial); }
  /// Whether the folder held a run to continue.
  bool resuming() const { return resuming_; }
  /// Where the previous run was moved by `fresh`, or empty.
  const std::filesystem::path& moved_aside() const { return moved_aside_; }
  /// The holder of a lock this process took over from a process that no longer runs, or empty.
  const std::string& stale_lock_holder() const { return stale_holder_; }
  /// Replaces job.toml with `text` atomically (a resumed run whose job file gained tasks).
  void freeze_job(const std::string& text) const;

 private:
  RunDirectory(std::filesystem::path path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}
  std::filesystem::path path_;
  std::filesystem::path moved_aside_;
  std::string stale_holder_;
  bool resuming_ = false;
  int lock_fd_ = -1;
};

/// Who holds the lock of a run folder: "pid N on host", and whether that process still holds it.
struct LockHolder {
  std::string holder;  ///< as written in the lock file; empty when there is none
  bool held = false;   ///< a live process holds the lock now
};
LockHolder lock_holder(const std::filesystem::path& run_dir);

}  // namespace lbo::orchestrator
