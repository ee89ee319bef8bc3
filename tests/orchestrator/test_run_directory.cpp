#include "lbo/orchestrator/run_directory.hpp"

#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <chrono>
#include <fstream>
#include <optional>
#include <thread>

#include "lbo/jobs/error.hpp"
#include "test_support.hpp"

using namespace lbo::orchestrator;
namespace fs = std::filesystem;

TEST(RunDirectoryTest, a_new_run_freezes_the_job_and_holds_the_lock) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  const RunDirectory run = RunDirectory::create(dir.path() / "runs", job, false);
  EXPECT_EQ(run.path(), dir.path() / "runs" / "t");
  EXPECT_EQ(lbo::testing::read_text(run.path() / "job.toml"), job.source_text);
  EXPECT_TRUE(fs::is_directory(run.path() / "trials"));
  EXPECT_NE(lbo::testing::read_text(run.path() / "lock").find("pid " + std::to_string(::getpid())), std::string::npos);
  EXPECT_EQ(run.trial_dir(12), run.path() / "trials" / "12");
}

TEST(RunDirectoryTest, an_earlier_run_is_kept_unless_fresh_moves_it_aside) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  { RunDirectory first = RunDirectory::create(dir.path() / "runs", job, false); }
  std::ofstream(dir.path() / "runs" / "t" / "marker") << "first run";
  try {
    RunDirectory::create(dir.path() / "runs", job, false);
    FAIL() << "an earlier run was overwritten";
  } catch (const lbo::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--fresh"), std::string::npos) << e.what();
  }
  const RunDirectory second = RunDirectory::create(dir.path() / "runs", job, true);
  ASSERT_FALSE(second.moved_aside().empty());
  EXPECT_EQ(lbo::testing::read_text(second.moved_aside() / "marker"), "first run");
  EXPECT_FALSE(fs::exists(second.path() / "marker"));
  EXPECT_EQ(second.moved_aside().parent_path(), dir.path() / "runs");
  EXPECT_EQ(second.moved_aside().filename().string().rfind("t.", 0), 0u);
}

TEST(RunDirectoryTest, a_live_run_is_never_moved) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  const RunDirectory live = RunDirectory::create(dir.path() / "runs", job, false);
  LockOptions quick;
  quick.wait_s = 0.1;
  try {
    RunDirectory::create(dir.path() / "runs", job, true, quick);
    FAIL() << "a live run was moved aside";
  } catch (const lbo::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("in use by a running lbo (pid " + std::to_string(::getpid())),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::exists(live.path() / "job.toml"));
}

TEST(RunDirectoryTest, a_folder_with_a_journal_is_resumed_and_its_lock_taken_over) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  {
    const RunDirectory first = RunDirectory::open(dir.path() / "runs", job, false);
    EXPECT_FALSE(first.resuming());
    std::ofstream(first.journal()) << "x";
    const LockHolder live = lock_holder(first.path());
    EXPECT_TRUE(live.held);
    EXPECT_NE(live.holder.find("pid " + std::to_string(::getpid())), std::string::npos);
  }
  // The first holder is gone (its flock released); its name is still in the file.
  std::ofstream(dir.path() / "runs" / "t" / "lock") << "pid 999999 on oldhost\n";
  EXPECT_FALSE(lock_holder(dir.path() / "runs" / "t").held);
  const RunDirectory again = RunDirectory::open(dir.path() / "runs", job, false);
  EXPECT_TRUE(again.resuming());
  EXPECT_EQ(again.stale_lock_holder(), "pid 999999 on oldhost");
}

// Issue 18: every resume after a clean exit said "took over the lock of ..., which no longer
// runs", which reads like a crash. A master that lets the folder go says it ended.
TEST(RunDirectoryTest, a_holder_that_ended_is_not_stale_and_one_that_was_killed_is) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  const fs::path run_dir = dir.path() / "runs" / "t";
  std::string me;
  {
    const RunDirectory first = RunDirectory::open(dir.path() / "runs", job, false);
    std::ofstream(first.journal()) << "x";
    me = lbo::testing::read_text(first.lock());
    EXPECT_FALSE(lock_holder(run_dir).ended);
  }
  EXPECT_EQ(lbo::testing::read_text(run_dir / "lock"), me + "ended\n");
  const LockHolder after = lock_holder(run_dir);
  EXPECT_FALSE(after.held);
  EXPECT_TRUE(after.ended);
  EXPECT_EQ(after.holder + "\n", me);
  {
    const RunDirectory again = RunDirectory::open(dir.path() / "runs", job, false);
    EXPECT_TRUE(again.resuming());
    EXPECT_TRUE(again.stale_lock_holder().empty()) << again.stale_lock_holder();
    EXPECT_EQ(lbo::testing::read_text(again.lock()), me);  // its own name, not yet ended
  }
  EXPECT_EQ(lbo::testing::read_text(run_dir / "lock"), me + "ended\n");
  // A master killed outright leaves only its name; lbo add-task's brief hold adds nothing.
  std::ofstream(run_dir / "lock") << "pid 999999 on oldhost\n";
  { const auto brief = RunDirectory::lock_existing(run_dir); }
  EXPECT_EQ(lbo::testing::read_text(run_dir / "lock"), "pid 999999 on oldhost\n");
  EXPECT_FALSE(lock_holder(run_dir).ended);
  const RunDirectory third = RunDirectory::open(dir.path() / "runs", job, false);
  EXPECT_EQ(third.stale_lock_holder(), "pid 999999 on oldhost");
}

TEST(RunDirectoryTest, foreign_files_are_never_overwritten) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  fs::create_directories(dir.path() / "runs" / "t");
  std::ofstream(dir.path() / "runs" / "t" / "notes.txt") << "mine";
  try {
    RunDirectory::open(dir.path() / "runs", job, false);
    FAIL() << "opened a folder holding someone else's files";
  } catch (const lbo::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("holds files but no run"), std::string::npos) << e.what();
  }
  // Leftovers of a start that failed before its journal existed are fine.
  fs::remove(dir.path() / "runs" / "t" / "notes.txt");
  std::ofstream(dir.path() / "runs" / "t" / "job.toml") << "old";
  const RunDirectory run = RunDirectory::open(dir.path() / "runs", job, false);
  EXPECT_FALSE(run.resuming());
  EXPECT_EQ(lbo::testing::read_text(run.path() / "job.toml"), job.source_text);
}

namespace {

// flock as on a filesystem without file locks (Lustre mounted without flock, NFS without lockd).
LockOptions without_file_locks(int error_number) {
  LockOptions locking;
  locking.wait_s = 0;
  locking.flock = [error_number](int, int) {
    errno = error_number;
    return -1;
  };
  return locking;
}

std::string open_error(const fs::path& run_root, const lbo::jobs::JobSpec& job, const LockOptions& locking) {
  try {
    RunDirectory::open(run_root, job, false, locking);
  } catch (const lbo::InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "opened without its lock";
  return "";
}

}  // namespace

// Issue 16 §5: "held by a running lbo" was said of a filesystem that cannot lock at all.
TEST(RunDirectoryTest, a_filesystem_without_file_locks_is_named_with_the_way_out) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  for (const int error_number : {ENOLCK, EOPNOTSUPP, ENOSYS}) {
    // A new run (its folder is built beside the run root's others), then an existing one.
    const std::string message = open_error(dir.path() / "runs", job, without_file_locks(error_number));
    EXPECT_NE(message.find(": cannot lock the run directory: " + std::string(std::strerror(error_number)) +
                           ": the filesystem of " + (dir.path() / "runs").string() +
                           " does not support file locks (Lustre or NFS without lockd?)"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("pass --no-lock if no other lbo uses this run directory at the same time"), std::string::npos)
        << message;
    EXPECT_EQ(message.find("in use by a running lbo"), std::string::npos) << message;
    EXPECT_FALSE(fs::exists(dir.path() / "runs" / "t")) << "a half-made run folder was left";
  }
  { RunDirectory made = RunDirectory::open(dir.path() / "runs", job, false); }
  std::ofstream(dir.path() / "runs" / "t" / "journal.lbo") << "x";
  const std::string message = open_error(dir.path() / "runs", job, without_file_locks(ENOLCK));
  EXPECT_EQ(message.rfind((dir.path() / "runs" / "t" / "lock").string() + ": cannot lock the run directory: ", 0), 0u)
      << message;
  EXPECT_NE(message.find("the filesystem of " + (dir.path() / "runs" / "t").string() + " does not support file locks"),
            std::string::npos)
      << message;
  try {
    RunDirectory::lock_existing(dir.path() / "runs" / "t", without_file_locks(ENOLCK));
    FAIL() << "add-task took a run without its lock";
  } catch (const lbo::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--no-lock"), std::string::npos) << e.what();
  }
  // A lock another process holds is still that.
  const std::string held = open_error(dir.path() / "runs", job, without_file_locks(EWOULDBLOCK));
  EXPECT_NE(held.find("is in use by a running lbo"), std::string::npos) << held;
}

TEST(RunDirectoryTest, no_lock_opens_without_flock_and_says_so_in_the_lock_file) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  LockOptions no_lock = without_file_locks(ENOLCK);
  no_lock.take = false;
  const fs::path run_dir = dir.path() / "runs" / "t";
  {
    const RunDirectory run = RunDirectory::open(dir.path() / "runs", job, false, no_lock);
    EXPECT_FALSE(run.locked());
    EXPECT_TRUE(fs::is_directory(run.trials()));
    char host[256] = "?";
    ::gethostname(host, sizeof host - 1);
    const std::string me = "pid " + std::to_string(::getpid()) + " on " + host;
    EXPECT_EQ(lbo::testing::read_text(run.lock()), me + " (--no-lock)\n");
    // Whether it still runs cannot be told, on any filesystem.
    const LockHolder holder = lock_holder(run_dir);
    EXPECT_FALSE(holder.held);
    EXPECT_EQ(holder.unknown_why, "the last lbo, " + me + ", ran with --no-lock");
    std::ofstream(run.journal()) << "x";
  }
  const RunDirectory resumed = RunDirectory::open(dir.path() / "runs", job, false, no_lock);
  EXPECT_TRUE(resumed.resuming());
  EXPECT_TRUE(resumed.stale_lock_holder().empty());
}

TEST(RunDirectoryTest, a_lock_that_cannot_be_probed_is_unknown_not_held) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  const RunDirectory run = RunDirectory::open(dir.path() / "runs", job, false);
  const LockHolder holder = lock_holder(run.path(), without_file_locks(ENOLCK));
  EXPECT_FALSE(holder.held);
  EXPECT_EQ(holder.unknown_why,
            "the filesystem of " + run.path().string() + " does not support file locks: " + std::strerror(ENOLCK));
  // Where flock works, the same folder is held.
  const LockHolder live = lock_holder(run.path());
  EXPECT_TRUE(live.held);
  EXPECT_TRUE(live.unknown_why.empty());
}

// Issue 31: with the lock file deleted under a live run (a cleanup of "stale locks"), a second
// master took a new lock file and ran the same trials beside the first. The folder's own lock
// keeps it out, the second start creates nothing, and the live master writes the file again.
TEST(RunDirectoryTest, removing_the_lock_file_of_a_live_run_lets_no_second_lbo_in) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  LockOptions quick;
  quick.wait_s = 0.1;
  RunDirectory live = RunDirectory::open(dir.path() / "runs", job, false, quick);
  ASSERT_TRUE(live.folder_locked());
  std::ofstream(live.journal()) << "x";
  const std::string holder = lbo::testing::read_text(live.lock());
  EXPECT_EQ(live.keep_lock_file(), "");
  fs::remove(live.lock());
  EXPECT_TRUE(lock_holder(live.path()).held);
  const std::string refused = open_error(dir.path() / "runs", job, quick);
  EXPECT_NE(refused.find("is in use by a running lbo"), std::string::npos) << refused;
  EXPECT_FALSE(fs::exists(live.lock())) << "the refused start made a lock file";
  EXPECT_FALSE(RunDirectory::lock_existing(live.path(), quick).has_value()) << "lbo add-task took a live run";
  // The same with the file replaced by another (a copy put back by hand).
  std::ofstream(live.lock()) << "pid 1 on elsewhere\n";
  EXPECT_NE(open_error(dir.path() / "runs", job, quick).find("is in use by a running lbo"), std::string::npos);

  const std::string said = live.keep_lock_file();
  EXPECT_NE(said.find(live.lock().string() + " was removed or replaced while this lbo holds the run; lbo wrote it again"),
            std::string::npos)
      << said;
  EXPECT_EQ(lbo::testing::read_text(live.lock()), holder);
  EXPECT_EQ(live.keep_lock_file(), "");
  EXPECT_NE(open_error(dir.path() / "runs", job, quick).find("in use by a running lbo (" + holder.substr(0, holder.size() - 1) + ")"),
            std::string::npos);
}

// Where a folder cannot be flocked (NFS emulates flock with POSIX locks, which need a file open
// for writing), the lock file guards alone, as before, and lbo says so.
TEST(RunDirectoryTest, a_filesystem_that_locks_files_but_not_folders_keeps_the_lock_file) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  LockOptions files_only;
  files_only.wait_s = 0;
  files_only.flock = [](int fd, int operation) {
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      errno = EBADF;
      return -1;
    }
    return ::flock(fd, operation);
  };
  const RunDirectory live = RunDirectory::open(dir.path() / "runs", job, false, files_only);
  EXPECT_TRUE(live.locked());
  EXPECT_FALSE(live.folder_locked());
  std::ofstream(live.journal()) << "x";
  EXPECT_NE(open_error(dir.path() / "runs", job, files_only).find("is in use by a running lbo"), std::string::npos);
  EXPECT_TRUE(lock_holder(live.path(), files_only).held);
}

// Issue 31: `lbo run` started while `lbo add-task` held a stopped run's lock for a few
// milliseconds exited 2 ("in use"), which ends a requeue chain. It waits such a hold out.
TEST(RunDirectoryTest, a_start_waits_for_a_brief_holder) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  fs::path run_dir;
  {
    const RunDirectory first = RunDirectory::open(dir.path() / "runs", job, false);
    std::ofstream(first.journal()) << "x";
    run_dir = first.path();
  }
  std::optional<RunDirectory> brief = RunDirectory::lock_existing(run_dir);
  ASSERT_TRUE(brief.has_value());
  std::thread release([&brief] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    brief.reset();
  });
  const auto t0 = std::chrono::steady_clock::now();
  const RunDirectory resumed = RunDirectory::open(dir.path() / "runs", job, false);
  release.join();
  EXPECT_TRUE(resumed.resuming());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(250));
}
