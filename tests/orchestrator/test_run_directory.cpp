#include "lbo/orchestrator/run_directory.hpp"

#include <gtest/gtest.h>

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
  try {
    RunDirectory::create(dir.path() / "runs", job, true);
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
