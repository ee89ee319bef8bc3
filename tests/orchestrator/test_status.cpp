#include "lbo/app/status.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "run_job.hpp"

using namespace lbo::orchestrator;

// Issue 16 §5: on a filesystem without file locks, a stopped run read as "running".
TEST(StatusTest, a_folder_whose_lock_cannot_be_probed_is_in_an_unknown_state) {
  lbo::testing::ScratchDir dir;
  const lbo::testing::RunOutput out = lbo::testing::run_job(lbo::testing::test_job(), dir, 2);
  ASSERT_EQ(out.exit_code, kExitDone) << out.log;
  const std::string before = status_report(out.run_dir);
  EXPECT_NE(before.find("state: not running (last held by pid "), std::string::npos) << before;
  EXPECT_NE(before.find(", which ended)\n"), std::string::npos) << before;
  LockOptions without_locks;
  without_locks.flock = [](int, int) {
    errno = ENOLCK;
    return -1;
  };
  const std::string report = status_report(out.run_dir, without_locks);
  EXPECT_NE(report.find("state: unknown (the filesystem of " + out.run_dir.string() + " does not support file locks: " +
                        std::strerror(ENOLCK) + "; lbo cannot tell whether a live lbo uses the folder)\n"),
            std::string::npos)
      << report;
  EXPECT_EQ(report.find("state: running"), std::string::npos) << report;
  EXPECT_NE(report.find("unfinished"), std::string::npos) << report;
}
