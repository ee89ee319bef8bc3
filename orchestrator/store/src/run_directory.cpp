#include "lbo/orchestrator/run_directory.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>
#include <utility>

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/files.hpp"

namespace fs = std::filesystem;

namespace lbo::orchestrator {

namespace {

// How often open() starts over when another lbo changed the folder under it (a concurrent
// --fresh or start); each round trip is a few system calls.
constexpr int kOpenAttempts = 8;

std::string stamp(std::time_t when) {
  std::tm local{};
  localtime_r(&when, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &local);
  return text;
}

// A name beside `base` that nothing holds yet: "<base><separator><time>[-2, -3, ...]".
fs::path unused_name(const std::string& base, const std::string& separator, std::time_t when) {
  fs::path candidate = base + separator + stamp(when);
  std::error_code ec;
  for (int n = 2; fs::exists(candidate, ec); ++n) candidate = base + separator + stamp(when) + "-" + std::to_string(n);
  return candidate;
}

std::time_t now() { return std::chrono::system_clock::to_time_t(std::chrono::system_clock::now()); }

std::string lock_text(const RunPaths& run) {
  std::ifstream in(run.lock());
  std::string holder;
  std::getline(in, holder);
  return holder;
}

// The line a master that ended adds under its own in the lock file: the next run then knows
// its predecessor stopped on its own (a signal, the end, an error), not by kill -9 or a crash.
constexpr std::string_view kEndedLine = "ended";

bool lock_ended(const RunPaths& run) {
  std::ifstream in(run.lock());
  std::string line;
  std::getline(in, line);
  return std::getline(in, line) && line == kEndedLine;
}

std::string holder_or_unknown(const RunPaths& run) {
  const std::string holder = lock_text(run);
  return holder.empty() ? "another lbo" : holder;
}

// What the lock file of a run that lbo uses without its lock ends with.
constexpr std::string_view kNoLockMark = " (--no-lock)";

void write_holder(int fd, const fs::path& lock, bool locked) {
  char host[256] = "?";
  ::gethostname(host, sizeof host - 1);
  const std::string text =
      "pid " + std::to_string(::getpid()) + " on " + host + (locked ? "" : std::string(kNoLockMark)) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) < 0) {
    throw IoError(lock.string() + ": cannot write the run lock: " + std::strerror(errno), errno);
  }
}

bool is_empty_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::is_empty(dir, ec);
}

enum class Lock : std::uint8_t { taken, held_by_another, folder_changed };

// A filesystem without file locks: not "held by a running lbo", and not a reason to give up
// silently either. `folder`: the run directory, or the run root a new one goes in.
InputError locks_unsupported_error(const fs::path& folder, const fs::path& lock, int error_number) {
  return InputError(lock.string() + ": cannot lock the run directory: " + std::strerror(error_number) +
                    ": the filesystem of " + folder.string() + " does not support file locks (Lustre or NFS without "
                    "lockd?); choose a --run-root on a filesystem that does, or pass --no-lock if no other lbo uses "
                    "this run directory at the same time");
}

// Whether flock on a folder failed because this filesystem locks files only (NFS emulates flock
// with POSIX locks, which need a descriptor open for writing): the lock file then guards alone.
bool folder_lock_unsupported(int error_number) {
  return locks_unsupported(error_number) || error_number == EBADF || error_number == EINVAL || error_number == EISDIR;
}

bool same_file(int fd, const fs::path& path) {
  struct stat opened {}, named {};
  return ::fstat(fd, &opened) == 0 && ::stat(path.c_str(), &named) == 0 && opened.st_ino == named.st_ino &&
         opened.st_dev == named.st_dev;
}

// The run lock is two flocks, both released by the kernel when the holder dies (so a crashed run
// never leaves a stale lock behind): one on the run folder itself, which no cleanup of a "stale
// lock file" can take away (issue 31: with the lock file deleted, a second master resumed a live
// run beside the first), and one on the lock file, which older lbo versions and people read.
// Both are checked to still be the folder's: a concurrent --fresh may have moved the folder
// between the open and the flock. Without `locking.take`, only opens the lock file (whose text
// names this process).
Lock try_lock(const RunPaths& run, LockFds& out, const LockOptions& locking, const fs::path& folder) {
  LockFds fds;  // closes both on every way out but the last
  if (locking.take) {
    fds.folder = ::open(run.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fds.folder < 0) {
      if (errno == ENOENT) return Lock::folder_changed;
      throw IoError(run.path().string() + ": cannot open the run directory: " + std::strerror(errno), errno);
    }
    if (locking.flock(fds.folder, LOCK_EX | LOCK_NB) != 0) {
      const int error_number = errno;
      if (error_number == EWOULDBLOCK || error_number == EINTR) return Lock::held_by_another;
      if (!folder_lock_unsupported(error_number)) {
        throw IoError(run.path().string() + ": cannot lock the run directory: " + std::strerror(error_number),
                      error_number);
      }
      fds.reset_folder();
    }
  }
  const fs::path lock = run.lock();
  fds.file = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fds.file < 0) {
    if (errno == ENOENT) return Lock::folder_changed;
    throw IoError(lock.string() + ": cannot open the run lock: " + system_reason(errno), errno);
  }
  if (locking.take && locking.flock(fds.file, LOCK_EX | LOCK_NB) != 0) {
    const int error_number = errno;
    if (error_number == EWOULDBLOCK || error_number == EINTR) return Lock::held_by_another;
    if (locks_unsupported(error_number)) throw locks_unsupported_error(folder, lock, error_number);
    throw IoError(lock.string() + ": cannot lock the run directory: " + std::strerror(error_number), error_number);
  }
  if (!same_file(fds.file, lock) || (fds.folder >= 0 && !same_file(fds.folder, run.path()))) {
    return Lock::folder_changed;
  }
  out = std::move(fds);
  return Lock::taken;
}

// A new run folder at `dir`, built whole beside it (trials/, job.toml, the lock taken) and then
// renamed into place, so no other lbo ever sees it half made or unlocked. Returns the lock's
// descriptors, or none when another lbo made a run there first.
std::optional<LockFds> create_locked(const fs::path& dir, const jobs::JobSpec& job, const LockOptions& locking) {
  // Hidden, so a staging folder that a kill leaves behind is not mistaken for a run.
  const RunPaths staging(
      unused_name((dir.parent_path() / ("." + dir.filename().string())).string(), ".new-" + std::to_string(::getpid()) + "-", now()));
  std::error_code ec;
  fs::create_directories(staging.trials(), ec);
  if (ec) throw IoError("cannot create " + staging.path().string() + ": " + ec.message(), ec.value());
  LockFds fds;
  try {
    if (try_lock(staging, fds, locking, dir.parent_path()) != Lock::taken) {
      throw Error(staging.lock().string() + ": cannot lock a new folder");
    }
    write_holder(fds.file, staging.lock(), locking.take);
    write_file_atomically(staging.job_file(), job.source_text, Durability::synced);
  } catch (...) {
    fds = LockFds();
    fs::remove_all(staging.path(), ec);
    throw;
  }
  // rename(2) replaces an empty folder and refuses a non-empty one: a run made there meanwhile.
  // The folder's lock moves with it (a flock belongs to the folder, not to its name).
  if (::rename(staging.path().c_str(), dir.c_str()) != 0) {
    const int error_number = errno;
    fds = LockFds();
    fs::remove_all(staging.path(), ec);
    if (error_number == ENOTEMPTY || error_number == EEXIST) return std::nullopt;
    throw IoError("cannot create " + dir.string() + ": " + std::strerror(error_number), error_number);
  }
  sync_directory(dir.parent_path());
  return fds;
}

}  // namespace

bool locks_unsupported(int error_number) {
  return error_number == ENOLCK || error_number == EOPNOTSUPP || error_number == ENOTSUP || error_number == ENOSYS;
}

std::uint64_t RunPaths::checkpoint_sequence(const fs::path& file) {
  const std::string name = file.filename().string();
  constexpr std::string_view prefix = "checkpoint.", suffix = ".lbo";
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return 0;
  }
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.size() > 19 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stoull(digits);
}

fs::path RunPaths::damaged_copy(const fs::path& file, std::time_t when) const {
  return unused_name((dir_ / file.filename()).string(), ".damaged-", when);
}

bool RunPaths::holds_run() const {
  std::error_code ec;
  return fs::exists(journal(), ec);
}

RunDirectory RunDirectory::open(const fs::path& run_root, const jobs::JobSpec& job, bool fresh, const LockOptions& locking) {
  const fs::path dir = fs::absolute(run_root) / job.name;
  const RunPaths paths(dir);
  std::error_code ec;
  fs::create_directories(dir.parent_path(), ec);
  if (ec) throw IoError("cannot create " + dir.parent_path().string() + ": " + ec.message(), ec.value());
  fs::path moved_aside;
  for (int attempt = 0; attempt < kOpenAttempts; ++attempt) {
    if (!fs::exists(dir, ec) || is_empty_dir(dir)) {
      std::optional<LockFds> fds = create_locked(dir, job, locking);
      if (!fds) continue;  // another lbo made a run there first: look at it again
      RunDirectory run(dir, std::move(*fds), locking.take);
      run.moved_aside_ = moved_aside;
      run.wrote_holder_ = true;
      return run;
    }
    if (!fs::is_directory(dir, ec)) throw InputError(dir.string() + " exists and is not a run directory");
    LockFds fds;
    Lock got = try_lock(paths, fds, locking, dir);
    // lbo add-task holds a stopped run's lock for a few milliseconds: a start that meets it
    // waits that out rather than end a requeue chain with "in use" (exit 2).
    for (const auto give_up = std::chrono::steady_clock::now() + std::chrono::duration<double>(locking.wait_s);
         got == Lock::held_by_another && std::chrono::steady_clock::now() < give_up;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      got = try_lock(paths, fds, locking, dir);
    }
    switch (got) {
      case Lock::held_by_another:
        throw InputError(dir.string() + " is in use by a running lbo (" + holder_or_unknown(paths) + ")");
      case Lock::folder_changed:
        continue;
      case Lock::taken:
        break;
    }
    RunDirectory run(dir, std::move(fds), locking.take);  // closes the lock on every way out
    if (fresh && moved_aside.empty()) {
      // Under the lock: no other lbo can be using or moving this folder now. The lock moves
      // with it and is released when `run` closes it.
      moved_aside = unused_name(dir.string(), ".", now());
      if (::rename(dir.c_str(), moved_aside.c_str()) != 0) {
        throw IoError("cannot move " + dir.string() + " aside: " + std::strerror(errno), errno);
      }
      continue;
    }
    run.moved_aside_ = moved_aside;
    if (paths.holds_run()) {
      // flock is released by the kernel when its holder dies: a name left in the file is stale.
      // A master that ended said so (~RunDirectory); one that did not was killed or lost.
      if (locking.take && !lock_ended(paths)) run.stale_holder_ = lock_text(paths);
      run.resuming_ = true;
      write_holder(run.lock_.file, paths.lock(), locking.take);
      run.wrote_holder_ = true;
      return run;
    }
    // A start that failed before its journal existed leaves job.toml, the lock and trials/;
    // anything else is not ours to overwrite.
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      const bool ours = entry.path() == paths.job_file() || entry.path() == paths.lock() ||
                        (entry.path() == paths.trials() && is_empty_dir(entry.path()));
      if (!ours) {
        throw InputError(dir.string() + " holds files but no run (no " + paths.journal().filename().string() +
                         "); pass --fresh to move it aside and start a new run, or choose another --run-root");
      }
    }
    fs::create_directories(paths.trials(), ec);
    if (ec) throw IoError("cannot create " + paths.trials().string() + ": " + ec.message(), ec.value());
    write_holder(run.lock_.file, paths.lock(), locking.take);
    run.wrote_holder_ = true;
    run.freeze_job(job.source_text);
    return run;
  }
  throw InputError(dir.string() + " keeps changing under this lbo (other lbo processes are starting runs there); "
                   "try again, or choose another --run-root");
}

RunDirectory RunDirectory::create(const fs::path& run_root, const jobs::JobSpec& job, bool fresh, const LockOptions& locking) {
  const RunPaths paths(fs::absolute(run_root) / job.name);
  if (!fresh && paths.holds_run()) {
    throw InputError(paths.path().string() + " holds an earlier run; pass --fresh to move it aside and start a new run, "
                     "or choose another --run-root");
  }
  return open(run_root, job, fresh, locking);
}

std::optional<RunDirectory> RunDirectory::lock_existing(const fs::path& dir, const LockOptions& locking) {
  const RunPaths paths(fs::absolute(dir));
  for (int attempt = 0; attempt < kOpenAttempts; ++attempt) {
    if (!paths.holds_run()) {
      throw InputError(dir.string() + ": not a run directory (no " + paths.journal().filename().string() + ")");
    }
    LockFds fds;
    switch (try_lock(paths, fds, locking, paths.path())) {
      case Lock::held_by_another:
        return std::nullopt;
      case Lock::folder_changed:
        continue;
      case Lock::taken: {
        // The lock file keeps naming the run's last master: this holder is brief (lbo add-task).
        RunDirectory run(paths.path(), std::move(fds), locking.take);
        run.resuming_ = true;
        return run;
      }
    }
  }
  throw InputError(dir.string() + " keeps changing under this lbo; try again");
}

void RunDirectory::freeze_job(const std::string& text) const {
  write_file_atomically(job_file(), text, Durability::synced);
}

LockHolder lock_holder(const fs::path& run_dir, const LockOptions& locking) {
  const RunPaths paths(run_dir);
  LockHolder h;
  h.holder = lock_text(paths);
  h.ended = lock_ended(paths);
  // The folder's own lock first: it holds even when the lock file was removed under a live run.
  if (const int folder = ::open(run_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); folder >= 0) {
    if (locking.flock(folder, LOCK_SH | LOCK_NB) != 0) {
      h.held = errno == EWOULDBLOCK || errno == EINTR;
    } else {
      locking.flock(folder, LOCK_UN);
    }
    ::close(folder);
    if (h.held) return h;
  }
  const int fd = ::open(paths.lock().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return h;
  // A shared lock we can take means no process holds the exclusive one.
  if (locking.flock(fd, LOCK_SH | LOCK_NB) != 0) {
    const int error_number = errno;
    if (locks_unsupported(error_number)) {
      h.unknown_why = "the filesystem of " + run_dir.string() + " does not support file locks: " + std::strerror(error_number);
    } else {
      h.held = true;
    }
  } else {
    locking.flock(fd, LOCK_UN);
    const std::string_view holder = h.holder;
    if (holder.size() > kNoLockMark.size() && holder.substr(holder.size() - kNoLockMark.size()) == kNoLockMark) {
      h.unknown_why = "the last lbo, " + h.holder.substr(0, holder.size() - kNoLockMark.size()) +
                      ", ran with --no-lock";
    }
  }
  ::close(fd);
  return h;
}

LockFds::LockFds(LockFds&& other) noexcept
    : folder(std::exchange(other.folder, -1)), file(std::exchange(other.file, -1)) {}

LockFds& LockFds::operator=(LockFds&& other) noexcept {
  if (this != &other) {
    reset_folder();
    if (file >= 0) ::close(file);
    folder = std::exchange(other.folder, -1);
    file = std::exchange(other.file, -1);
  }
  return *this;
}

LockFds::~LockFds() {
  reset_folder();
  if (file >= 0) ::close(file);
}

void LockFds::reset_folder() {
  if (folder >= 0) ::close(folder);
  folder = -1;
}

RunDirectory::RunDirectory(RunDirectory&& other) noexcept
    : RunPaths(std::move(other)),
      moved_aside_(std::move(other.moved_aside_)),
      stale_holder_(std::move(other.stale_holder_)),
      resuming_(other.resuming_),
      locked_(other.locked_),
      wrote_holder_(other.wrote_holder_),
      lock_(std::move(other.lock_)) {}

std::string RunDirectory::keep_lock_file() {
  if (!wrote_holder_ || lock_.file < 0 || same_file(lock_.file, lock())) return "";
  const std::string what = lock().string() + " was removed or replaced while this lbo holds the run";
  const int fd = ::open(lock().c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return what + ", and cannot be written again: " + system_reason(errno);
  if (locked_ && ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error_number = errno;
    ::close(fd);
    return what + ", and another process holds the new one (" + std::strerror(error_number) + ")" +
           (lock_.folder >= 0 ? std::string("; the run folder's own lock still keeps other lbo processes out")
                              : std::string("; this filesystem cannot lock folders, so another lbo may be using the run: "
                                            "stop one of them"));
  }
  try {
    write_holder(fd, lock(), locked_);
  } catch (const IoError& e) {
    ::close(fd);
    return what + ", and cannot be written again: " + e.what();
  }
  ::close(lock_.file);
  lock_.file = fd;
  return what + "; lbo wrote it again" +
         (lock_.folder >= 0 ? std::string(" (the run folder's own lock kept other lbo processes out meanwhile)")
                            : std::string(" (this filesystem cannot lock folders: do not remove the lock file of a live "
                                          "run)"));
}

RunDirectory::~RunDirectory() {
  if (lock_.file < 0) return;
  if (wrote_holder_) {
    // Best effort: without the line the next run only says its predecessor did not end.
    struct stat file {};
    const std::string line = std::string(kEndedLine) + "\n";
    if (::fstat(lock_.file, &file) == 0 && ::pwrite(lock_.file, line.data(), line.size(), file.st_size) < 0) {
      // nothing to do: the lock is released all the same when the descriptor closes
    }
  }
}

}  // namespace lbo::orchestrator
