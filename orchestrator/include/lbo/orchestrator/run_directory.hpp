#pragma once
// The run directory `<run-root>/<name>/`: frozen job, journal, results, trial folders, lock.

#include <cstdint>
#include <filesystem>
#include <string>

#include "lbo/jobs/job_spec.hpp"

namespace lbo::orchestrator {

class RunDirectory {
 public:
  /// Creates `<run_root>/<job.name>/` for a new run, takes its lock and freezes the job file
  /// into it. When the folder already holds a run: with `fresh`, it is renamed aside with a
  /// timestamp suffix (never deleted) unless a live run holds it; otherwise InputError.
  static RunDirectory create(const std::filesystem::path& run_root, const jobs::JobSpec& job, bool fresh);

  RunDirectory(RunDirectory&& other) noexcept;
  RunDirectory& operator=(RunDirectory&&) = delete;
  ~RunDirectory();

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path journal() const { return path_ / "journal.lbo"; }
  std::filesystem::path results_csv() const { return path_ / "results.csv"; }
  std::filesystem::path trial_dir(std::int64_t trial) const { return path_ / "trials" / std::to_string(trial); }
  /// Where the previous run was moved by `fresh`, or empty.
  const std::filesystem::path& moved_aside() const { return moved_aside_; }

 private:
  RunDirectory(std::filesystem::path path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}
  std::filesystem::path path_;
  std::filesystem::path moved_aside_;
  int lock_fd_ = -1;
};

}  // namespace lbo::orchestrator
