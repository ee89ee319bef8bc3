#pragma once
// The run directory `<run-root>/<name>/`: frozen job, journal, checkpoints, results, trial
// folders, lock. RunPaths is the one place that names its files; RunDirectory is one locked
// for this process.

#include <sys/file.h>

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "lbo/jobs/job_spec.hpp"

namespace lbo::orchestrator {

/// Where each file of a run directory lives. Nothing is touched on disk.
class RunPaths {
 public:
  explicit RunPaths(std::filesystem::path dir) : dir_(std::move(dir)) {}

  const std::filesystem::path& path() const { return dir_; }
  std::filesystem::path journal() const { return dir_ / "journal.lbo"; }
  std::filesystem::path checkpoint(std::uint64_t sequence) const {
    return dir_ / ("checkpoint." + std::to_string(sequence) + ".lbo");
  }
  /// n of a "checkpoint.<n>.lbo" file name, or 0 for any other name.
  static std::uint64_t checkpoint_sequence(const std::filesystem::path& file);
  std::filesystem::path job_file() const { return dir_ / "job.toml"; }
  std::filesystem::path lock() const { return dir_ / "lock"; }
  std::filesystem::path results_csv() const { return dir_ / "results.csv"; }
  std::filesystem::path tasks_csv() const { return dir_ / "tasks.csv"; }
  std::filesystem::path hedge_csv() const { return dir_ / "hedge.csv"; }
  std::filesystem::path reports_csv() const { return dir_ / "reports.csv"; }
  std::filesystem::path report_html() const { return dir_ / "report.html"; }
  std::filesystem::path trials() const { return dir_ / "trials"; }
  std::filesystem::path trial_dir(std::int64_t trial) const { return trials() / std::to_string(trial); }
  /// `lbo add-task` requests to a running master, and its replies.
  std::filesystem::path requests() const { return dir_ / "requests"; }
  /// Where a damaged `file` of this folder is kept before lbo repairs it: "<file>.damaged-<time>",
  /// never an existing name.
  std::filesystem::path damaged_copy(const std::filesystem::path& file, std::time_t when) const;

  /// Whether the folder holds a run (a journal).
  bool holds_run() const;

 private:
  std::filesystem::path dir_;
};

/// How a run directory is locked against a second lbo.
struct LockOptions {
  /// false (`--no-lock`): no lock is taken, for a filesystem without file locks; the user's
  /// promise that no other lbo uses the directory meanwhile. The lock file still names this
  /// process, marked "(--no-lock)".
  bool take = true;
  /// flock(2). Tests put here a function that fails as a filesystem without locks does.
  std::function<int(int fd, int operation)> flock = ::flock;
  /// How long `RunDirectory::open` waits for a lock another process holds before it refuses
  /// the folder: lbo add-task holds a stopped run's lock for a few milliseconds.
  double wait_s = 3;
};

/// The descriptors of a run's lock, closed with it: the run folder itself (flocked, so that no
/// removal of a "stale" lock file lets a second lbo in; -1 without a lock, or where the
/// filesystem locks files only) and its lock file (flocked too; the file people and older lbo
/// versions read).
struct LockFds {
  int folder = -1;
  int file = -1;
  LockFds() = default;
  LockFds(LockFds&& other) noexcept;
  LockFds& operator=(LockFds&& other) noexcept;
  LockFds(const LockFds&) = delete;
  LockFds& operator=(const LockFds&) = delete;
  ~LockFds();
  void reset_folder();
};

/// Whether `error_number` from flock means the filesystem does not support file locks (Lustre
/// mounted without flock, NFS without lockd), rather than a lock held by another process.
bool locks_unsupported(int error_number);

class RunDirectory : public RunPaths {
 public:
  /// `<run_root>/<job.name>/`, locked for this process. A folder that holds a run (a journal)
  /// is resumed, or with `fresh` renamed aside with a timestamp suffix (never deleted) and
  /// started anew: the move happens under the old run's lock, and the new folder appears whole
  /// and locked (built beside it, then renamed into place), so two lbo processes never move or
  /// share each other's live run. A live run's folder is refused (InputError), as is a folder
  /// with other content that is not a run. A new run gets the job frozen into job.toml. A
  /// filesystem that does not support file locks is an InputError naming it and `--no-lock`.
  static RunDirectory open(const std::filesystem::path& run_root, const jobs::JobSpec& job, bool fresh,
                           const LockOptions& locking = {});
  /// The same for a new run only: an existing run is refused unless `fresh` (tests, benchmarks).
  static RunDirectory create(const std::filesystem::path& run_root, const jobs::JobSpec& job, bool fresh,
                             const LockOptions& locking = {});

  /// An existing run (a journal) locked for this process, or none while a live run holds it.
  static std::optional<RunDirectory> lock_existing(const std::filesystem::path& dir, const LockOptions& locking = {});

  RunDirectory(RunDirectory&& other) noexcept;
  RunDirectory& operator=(RunDirectory&&) = delete;
  ~RunDirectory();

  /// Whether this process holds the run's lock (false with --no-lock).
  bool locked() const { return locked_; }
  /// Whether the lock holds on the run folder itself too (false where the filesystem locks only
  /// files, such as NFS: removing the lock file of a live run then lets a second lbo in).
  bool folder_locked() const { return lock_.folder >= 0; }
  /// When the lock file is no longer the one this process holds (someone removed a "stale
  /// lock"), writes it again, locked and naming this process, and says what happened; empty
  /// when nothing was amiss. A master calls it every second.
  std::string keep_lock_file();
  /// Whether the folder held a run to continue.
  bool resuming() const { return resuming_; }
  /// Where the previous run was moved by `fresh`, or empty.
  const std::filesystem::path& moved_aside() const { return moved_aside_; }
  /// The holder of a lock this process took over from a process that no longer runs and did not
  /// end (killed, or its machine lost), or empty. A master that ended, by a signal, its end or
  /// an error, adds a line "ended" under its name in the lock file when it lets the folder go.
  const std::string& stale_lock_holder() const { return stale_holder_; }
  /// Replaces job.toml with `text` atomically and durably (a resumed run whose job file gained
  /// tasks).
  void freeze_job(const std::string& text) const;

 private:
  RunDirectory(std::filesystem::path path, LockFds lock, bool locked)
      : RunPaths(std::move(path)), locked_(locked), lock_(std::move(lock)) {}
  std::filesystem::path moved_aside_;
  std::string stale_holder_;
  bool resuming_ = false;
  bool locked_ = true;
  bool wrote_holder_ = false;  // the lock file names this process (not lbo add-task's brief hold)
  LockFds lock_;
};

/// Who holds the lock of a run folder: "pid N on host", and whether that process still holds it.
struct LockHolder {
  std::string holder;  ///< as written in the lock file; empty when there is none
  bool held = false;   ///< a live process holds the lock now
  bool ended = false;  ///< the holder ended on its own (a signal, its end, an error): not killed
  /// Why lbo cannot tell whether a live lbo uses the folder (held is then false): the
  /// filesystem does not support file locks, or the last lbo ran with --no-lock. Empty when it
  /// can tell.
  std::string unknown_why;
};
LockHolder lock_holder(const std::filesystem::path& run_dir, const LockOptions& locking = {});

}  // namespace lbo::orchestrator
