#include "lbo/orchestrator/run_directory.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <utility>

#include "lbo/jobs/error.hpp"

namespace fs = std::filesystem;

namespace lbo::orchestrator {

namespace {

constexpr const char* kLockFile = "lock";

// Takes the run lock (flock: released by the kernel when the holder dies, so a crashed run
// never leaves a stale lock behind). Returns the descriptor, or -1 when a live run holds it.
int try_lock(const fs::path& dir) {
  const fs::path lock = dir / kLockFile;
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(lock.string() + ": cannot open the run lock: " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string lock_text(const fs::path& dir) {
  std::ifstream in(dir / kLockFile);
  std::string holder;
  std::getline(in, holder);
  return holder;
}

std::string holder_or_unknown(const fs::path& dir) {
  const std::string holder = lock_text(dir);
  return holder.empty() ? "another lbo" : holder;
}

void write_holder(int fd) {
  char host[256] = "?";
  ::gethostname(host, sizeof host - 1);
  const std::string text = "pid " + std::to_string(::getpid()) + " on " + host + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) < 0) {
    throw Error(std::string("cannot write the run lock: ") + std::strerror(errno));
  }
}

bool is_empty_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::is_empty(dir, ec);
}

fs::path aside_name(const fs::path& dir) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
  fs::path candidate = dir.string() + "." + stamp;
  for (int n = 2; fs::exists(candidate); ++n) candidate = dir.string() + "." + stamp + "-" + std::to_string(n);
  return candidate;
}

}  // namespace

RunDirectory RunDirectory::open(const fs::path& run_root, const jobs::JobSpec& job, bool fresh) {
  const fs::path dir = fs::absolute(run_root) / job.name;
  fs::path moved_aside;
  std::error_code ec;
  bool resume = false;
  if (fs::exists(dir, ec) && !is_empty_dir(dir)) {
    if (!fs::is_directory(dir, ec)) throw InputError(dir.string() + " exists and is not a run directory");
    const int probe = try_lock(dir);
    if (probe < 0) throw InputError(dir.string() + " is in use by a running lbo (" + holder_or_unknown(dir) + ")");
    ::close(probe);
    const bool has_run = fs::exists(dir / "journal.lbo", ec);
    if (fresh) {
      moved_aside = aside_name(dir);
      fs::rename(dir, moved_aside, ec);
      if (ec) throw Error("cannot move " + dir.string() + " aside: " + ec.message());
    } else if (has_run) {
      resume = true;
    } else {
      // A failed start leaves only job.toml and the lock; anything else is not ours to overwrite.
      for (const auto& entry : fs::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        const bool ours = name == "job.toml" || name == kLockFile || (name == "trials" && is_empty_dir(entry.path()));
        if (!ours) {
          throw InputError(dir.string() + " holds files but no run (no journal.lbo); pass --fresh to move it aside "
                           "and start a new run, or choose another --run-root");
        }
      }
    }
  }
  fs::create_directories(dir / "trials", ec);
  if (ec) throw Error("cannot create " + dir.string() + ": " + ec.message());
  const std::string previous_holder = lock_text(dir);
  const int lock_fd = try_lock(dir);
  if (lock_fd < 0) throw InputError(dir.string() + " is in use by a running lbo (" + holder_or_unknown(dir) + ")");
  RunDirectory run(dir, lock_fd);
  run.moved_aside_ = moved_aside;
  run.resuming_ = resume;
  // flock is released by the kernel when its holder dies: a name left in the file is stale.
  if (resume) run.stale_holder_ = previous_holder;
  write_holder(lock_fd);
  if (!resume) run.freeze_job(job.source_text);
  return run;
}

RunDirectory RunDirectory::create(const fs::path& run_root, const jobs::JobSpec& job, bool fresh) {
  const fs::path dir = fs::absolute(run_root) / job.name;
  std::error_code ec;
  if (!fresh && fs::exists(dir / "journal.lbo", ec)) {
    throw InputError(dir.string() + " holds an earlier run; pass --fresh to move it aside and start a new run, "
                     "or choose another --run-root");
  }
  return open(run_root, job, fresh);
}

std::optional<RunDirectory> RunDirectory::lock_existing(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir / "journal.lbo", ec)) throw InputError(dir.string() + ": not a run directory (no journal.lbo)");
  const int fd = try_lock(dir);
  if (fd < 0) return std::nullopt;
  // The lock file keeps naming the run's last master: this holder is brief (lbo add-task).
  RunDirectory run(fs::absolute(dir), fd);
  run.resuming_ = true;
  return run;
}

void RunDirectory::freeze_job(const std::string& text) const {
  const fs::path target = path_ / "job.toml", temporary = path_ / "job.toml.tmp";
  {
    std::ofstream frozen(temporary, std::ios::binary | std::ios::trunc);
    frozen << text;
    if (!frozen) throw Error(temporary.string() + ": cannot write");
  }
  fs::rename(temporary, target);
}

LockHolder lock_holder(const fs::path& run_dir) {
  LockHolder h;
  h.holder = lock_text(run_dir);
  const int fd = ::open((run_dir / kLockFile).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return h;
  // A shared lock we can take means no process holds the exclusive one.
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
    h.held = true;
  } else {
    ::flock(fd, LOCK_UN);
  }
  ::close(fd);
  return h;
}

RunDirectory::RunDirectory(RunDirectory&& other) noexcept
    : path_(std::move(other.path_)),
      moved_aside_(std::move(other.moved_aside_)),
      stale_holder_(std::move(other.stale_holder_)),
      resuming_(other.resuming_),
      lock_fd_(std::exchange(other.lock_fd_, -1)) {}

RunDirectory::~RunDirectory() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

}  // namespace lbo::orchestrator
