#include "lbo/orchestrator/master.hpp"

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "run_job.hpp"

using lbo::testing::Row;
using lbo::testing::RunOutput;
using lbo::testing::run_job;

using namespace lbo::orchestrator;
namespace fs = std::filesystem;

namespace {

int count_finals(const JournalContents& journal) {
  int finals = 0;
  for (const JournalRecord& r : journal.records) {
    if (const auto* f = std::get_if<TrialFinished>(&r)) finals += f->final ? 1 : 0;
  }
  return finals;
}

// Processes whose working directory lies under `dir` (objectives run in their trial folder).
int processes_under(const fs::path& dir) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::error_code ec;
    const fs::path cwd = fs::read_symlink(entry.path() / "cwd", ec);
    if (!ec && cwd.string().rfind(dir.string(), 0) == 0) ++count;
  }
  return count;
}

}  // namespace

TEST(MasterTest, every_trial_appears_once_with_budget_rows_per_task) {
  lbo::testing::ScratchDir dir;
  const RunOutput out = run_job(
      lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 5\n[[tasks]]\nname = \"b\"\nbudget = 7\n"), dir, 3);
  EXPECT_EQ(out.exit_code, kExitDone) << out.log;
  ASSERT_EQ(out.rows.size(), 12u);
  std::map<std::string, int> per_task;
  for (std::size_t i = 0; i < out.rows.size(); ++i) {
    const Row& row = out.rows[i];
    EXPECT_EQ(row.at("trial"), std::to_string(i));  // sorted, each id once
    ++per_task[row.at("task")];
    EXPECT_EQ(row.at("status"), "ok");
    EXPECT_EQ(row.at("attempts"), "1");
    // The test objective returns the sum of its numeric parameters: here x itself.
    EXPECT_DOUBLE_EQ(std::stod(row.at("objective")), std::stod(row.at("x")));
    EXPECT_EQ(row.at("worker").rfind("local:", 0), 0u);
    EXPECT_TRUE(fs::exists(out.run_dir / "trials" / row.at("trial") / "params.json"));
  }
  EXPECT_EQ(per_task["a"], 5);
  EXPECT_EQ(per_task["b"], 7);
  EXPECT_TRUE(out.journal.warning.empty());
  EXPECT_TRUE(std::holds_alternative<RunStarted>(out.journal.records.front()));
  EXPECT_EQ(count_finals(out.journal), 12);
  EXPECT_NE(out.log.find("task a done: 5/5 ok"), std::string::npos) << out.log;
}

TEST(MasterTest, failed_attempts_are_retried_then_recorded_with_their_status) {
  lbo::testing::ScratchDir dir;
  const RunOutput out = run_job(
      lbo::testing::test_job(R"(outcome = { type = "categorical", choices = ["ok", "fail", "crash", "garbage", "nan"] })",
                             "[[tasks]]\nname = \"a\"\nbudget = 30\n", "retries = 2"),
      dir);
  EXPECT_EQ(out.exit_code, kExitDone) << out.log;
  ASSERT_EQ(out.rows.size(), 30u);
  const std::map<std::string, std::string> expected_status = {
      {"ok", "ok"}, {"fail", "failed"}, {"crash", "crashed"}, {"garbage", "failed"}, {"nan", "failed"}};
  std::map<std::string, int> seen;
  for (const Row& row : out.rows) {
    const std::string& outcome = row.at("outcome");
    ++seen[outcome];
    EXPECT_EQ(row.at("status"), expected_status.at(outcome)) << "trial " << row.at("trial");
    EXPECT_EQ(row.at("attempts"), outcome == "ok" ? "1" : "3");
    EXPECT_EQ(row.at("objective").empty(), outcome != "ok");
    const fs::path trial = out.run_dir / "trials" / row.at("trial");
    EXPECT_EQ(fs::exists(trial / "stdout.2"), outcome != "ok");  // earlier attempts' output kept
  }
  EXPECT_GE(seen.size(), 4u) << "the seed should draw most outcomes in 30 trials";
  EXPECT_EQ(count_finals(out.journal), 30);
  EXPECT_NE(out.log.find("retrying"), std::string::npos) << out.log;
}

TEST(MasterTest, hanging_objectives_time_out_and_the_run_still_ends) {
  lbo::testing::ScratchDir dir;
  const RunOutput out = run_job(
      lbo::testing::test_job(R"(outcome = { type = "categorical", choices = ["hang"] })",
                             "[[tasks]]\nname = \"a\"\nbudget = 3\n", "timeout_s = 0.3\nkill_grace_s = 0.2"),
      dir);
  EXPECT_EQ(out.exit_code, kExitDone) << out.log;
  ASSERT_EQ(out.rows.size(), 3u);
  for (const Row& row : out.rows) EXPECT_EQ(row.at("status"), "timeout");
  EXPECT_EQ(processes_under(dir.path()), 0);
}

TEST(MasterTest, more_slots_than_trials) {
  lbo::testing::ScratchDir dir;
  const RunOutput out = run_job(lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 2\n"), dir, 8);
  EXPECT_EQ(out.exit_code, kExitDone);
  EXPECT_EQ(out.rows.size(), 2u);
}

TEST(MasterTest, sigterm_stops_dispatching_and_cancels_running_trials) {
  lbo::testing::ScratchDir dir;
  std::thread stopper([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    ::kill(::getpid(), SIGTERM);
  });
  const RunOutput out = run_job(
      lbo::testing::test_job(R"(outcome = { type = "categorical", choices = ["hang"] })",
                             "[[tasks]]\nname = \"a\"\nbudget = 50\n", "kill_grace_s = 0.2"),
      dir);
  stopper.join();
  EXPECT_EQ(out.exit_code, 128 + SIGTERM);
  EXPECT_TRUE(out.rows.empty());  // nothing finished: cancelled attempts are not results
  EXPECT_EQ(count_finals(out.journal), 0);
  EXPECT_EQ(processes_under(dir.path()), 0);
  EXPECT_NE(out.log.find("received SIGTERM"), std::string::npos) << out.log;
}
