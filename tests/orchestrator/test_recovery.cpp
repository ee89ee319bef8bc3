#include "lbo/orchestrator/recovery.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "lbo/orchestrator/status.hpp"
#include "test_support.hpp"

using namespace lbo::orchestrator;
namespace fs = std::filesystem;
using lbo::workers::TrialStatus;

namespace {

lbo::workers::Outcome outcome(TrialStatus status, double objective = 0, const std::string& reason = "") {
  lbo::workers::Outcome o;
  o.status = status;
  o.objective = objective;
  o.reason = reason;
  return o;
}

JobIdentity two_tasks() {
  JobIdentity id;
  id.space = {lbo::jobs::ParamSpec{.name = "x", .low = 0, .high = 1}};
  id.direction = lbo::jobs::Direction::maximize;
  id.command = {"objective"};
  id.tasks = {{"a", 3, ""}, {"b", 2, ""}};
  return id;
}

lbo::jobs::Config at(double x) { return lbo::jobs::Config{{x}}; }

// A history: trials 0 and 1 ok, trial 2 failed once (waiting for a retry), trial 3 cancelled by
// a stop, trial 4 running when the run died.
std::vector<JournalRecord> history() {
  return {RunStarted{"0.1.0", 1.0, 2, two_tasks()},
          TrialStarted{0, 0, 1, at(0.1), "local:0", 2},
          TrialStarted{1, 0, 1, at(0.2), "local:1", 2},
          TrialFinished{0, 1, true, outcome(TrialStatus::ok, 5.0), "local:0", 3},
          TrialStarted{2, 0, 1, at(0.3), "local:0", 3},
          TrialFinished{1, 1, true, outcome(TrialStatus::ok, 7.0), "local:1", 4},
          TrialFinished{2, 1, false, outcome(TrialStatus::failed, 0, "exit status 1"), "local:0", 4},
          TrialStarted{3, 1, 1, at(0.4), "local:1", 4},
          TrialFinished{3, 1, false, outcome(TrialStatus::cancelled, 0, "cancelled by lbo"), "local:1", 5},
          TrialStarted{4, 1, 1, at(0.5), "local:0", 5}};
}

std::vector<std::uint64_t> write_journal(const fs::path& dir, const std::vector<JournalRecord>& records) {
  JournalWriter writer = JournalWriter::create(dir / "journal.lbo");
  std::vector<std::uint64_t> ends;
  for (const JournalRecord& r : records) {
    writer.append(r);
    ends.push_back(writer.size_bytes());
  }
  writer.sync();
  return ends;
}

}  // namespace

TEST(RecoveryTest, the_journal_alone_rebuilds_trials_retries_and_interrupted_ones) {
  lbo::testing::ScratchDir dir;
  write_journal(dir.path(), history());
  const RecoveredRun run = recover_run(dir.path());
  EXPECT_TRUE(run.warnings.empty());
  EXPECT_FALSE(run.checkpoint_file);
  ASSERT_EQ(run.trials.size(), 5u);
  EXPECT_EQ(run.job.tasks.size(), 2u);
  EXPECT_TRUE(run.trials[0].finished);
  EXPECT_EQ(run.trials[1].outcome.objective, 7.0);
  EXPECT_EQ(run.trials[2].failed_attempts, 1);
  EXPECT_FALSE(run.trials[2].finished);
  EXPECT_EQ(run.retries, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(run.interrupted, (std::vector<std::int64_t>{3, 4}));
  for (const Trial& t : run.trials) EXPECT_FALSE(t.running);
  EXPECT_EQ(run.trials[4].config, at(0.5));
  EXPECT_EQ(run.next_checkpoint, 1u);
}

TEST(RecoveryTest, a_checkpoint_plus_the_journal_after_it) {
  lbo::testing::ScratchDir dir;
  std::vector<JournalRecord> records = history();
  const std::vector<std::uint64_t> ends = write_journal(dir.path(), records);
  // A checkpoint taken after record 5 (trials 0–2 created, 0 and 1 done, 2 running); its
  // state differs from a replay in one visible way, so the test can tell it was used.
  fs::create_directories(dir.path() / "partial");
  write_journal(dir.path() / "partial", {records.begin(), records.begin() + 6});
  const RecoveredRun partial = recover_run(dir.path() / "partial");
  Checkpoint c;
  c.sequence = 7;
  c.job = partial.job;
  c.trials = partial.trials;
  c.trials[2].running = true;
  c.interrupted.clear();
  c.trials[0].worker = "from-checkpoint";
  c.journal_bytes = ends[5];
  write_checkpoint_file(dir.path(), 7, encode_checkpoint(c));
  const RecoveredRun run = recover_run(dir.path());
  ASSERT_TRUE(run.checkpoint_file);
  EXPECT_EQ(run.next_checkpoint, 8u);
  EXPECT_EQ(run.trials[0].worker, "from-checkpoint");
  ASSERT_EQ(run.trials.size(), 5u);
  EXPECT_EQ(run.retries, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(run.interrupted, (std::vector<std::int64_t>{3, 4}));
}

TEST(RecoveryTest, a_torn_journal_tail_is_dropped_with_a_warning) {
  lbo::testing::ScratchDir dir;
  write_journal(dir.path(), history());
  const auto size = fs::file_size(dir.path() / "journal.lbo");
  fs::resize_file(dir.path() / "journal.lbo", size - 3);  // the last TrialStarted is torn
  const RecoveredRun run = recover_run(dir.path());
  ASSERT_EQ(run.warnings.size(), 1u);
  EXPECT_NE(run.warnings[0].find("journal.lbo: dropped"), std::string::npos) << run.warnings[0];
  EXPECT_EQ(run.trials.size(), 4u);  // trial 4 never started as far as anyone knows
  EXPECT_LT(run.journal_bytes, size - 3);
}

TEST(RecoveryTest, nothing_valid_is_an_error_not_a_fresh_start) {
  lbo::testing::ScratchDir dir;
  std::ofstream(dir.path() / "journal.lbo") << "not a journal";
  try {
    recover_run(dir.path());
    FAIL() << "recovered from garbage";
  } catch (const lbo::CorruptStateError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing to resume from"), std::string::npos) << e.what();
  }
  // With an intact checkpoint the same damage is survivable.
  Checkpoint c;
  c.sequence = 1;
  c.job = two_tasks();
  write_checkpoint_file(dir.path(), 1, encode_checkpoint(c));
  const RecoveredRun run = recover_run(dir.path());
  EXPECT_TRUE(run.checkpoint_file);
  ASSERT_FALSE(run.warnings.empty());
  EXPECT_NE(run.warnings.back().find("resuming from checkpoint.1.lbo alone"), std::string::npos) << run.warnings.back();
}

TEST(RecoveryTest, status_summarizes_tasks_failures_and_the_lock) {
  lbo::testing::ScratchDir dir;
  std::vector<JournalRecord> records = history();
  records.push_back(TrialStarted{2, 0, 2, at(0.3), "local:1", 6});
  records.push_back(TrialFinished{2, 2, true, outcome(TrialStatus::failed, 0, "exit status 1"), "local:1", 7});
  write_journal(dir.path(), records);
  std::ofstream(dir.path() / "lock") << "pid 4242 on elsewhere\n";
  const std::string report = status_report(dir.path());
  EXPECT_NE(report.find("state: not running (last held by pid 4242 on elsewhere)"), std::string::npos) << report;
  EXPECT_NE(report.find("last checkpoint: none yet"), std::string::npos) << report;
  EXPECT_NE(report.find("task  origin    done/budget  ok    failed  to rerun  to 95%  networks    best (maximize)"),
            std::string::npos)
      << report;
  // Task a's ok results, in order, are 5 then 7: the second trial reached 95% of the way.
  EXPECT_NE(report.find("a     job file  3/3          2     1       0         2       -           7 (trial 1)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("b     job file  0/2          0     0       2         -       -           -"), std::string::npos) << report;
  EXPECT_NE(report.find("1 x failed: exit status 1"), std::string::npos) << report;
  EXPECT_THROW(status_report(dir.path() / "missing"), lbo::InputError);
}
