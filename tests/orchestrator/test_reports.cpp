// Intermediate reports through the master: the objective's `lbo:report` lines are checked,
// journaled, kept in the state and written to reports.csv; bad ones are logged and ignored.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "lbo/orchestrator/recovery.hpp"
#include "run_job.hpp"
#include "trial_reports.hpp"

namespace fs = std::filesystem;
using namespace lbo::orchestrator;
using lbo::testing::Row;
using lbo::testing::RunOutput;
using lbo::testing::run_job;

namespace {

// The test objective with its arguments, reporting as they say.
std::string reporting_job(const std::string& arguments, const std::string& extra_space = "", int budget = 6) {
  std::string job = lbo::testing::test_job(extra_space, "[[tasks]]\nname = \"a\"\nbudget = " + std::to_string(budget) + "\n");
  const std::string command_end = "\"]\ndirection";
  job.replace(job.find(command_end), command_end.size(), "\", " + arguments + "]\ndirection");
  return job;
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST(ReportsTest, every_report_is_journaled_kept_in_the_state_and_written_to_reports_csv) {
  lbo::testing::ScratchDir dir;
  const RunOutput out = run_job(reporting_job(R"("--reports", "4", "--report-ms", "5")"), dir, 2);
  ASSERT_EQ(out.exit_code, kExitDone) << out.log;
  ASSERT_EQ(out.rows.size(), 6u);
  std::map<std::string, double> objective;
  for (const Row& row : out.rows) objective[row.at("trial")] = std::stod(row.at("objective"));

  const std::vector<Row> reports = lbo::testing::read_csv(out.run_dir / "reports.csv");
  ASSERT_EQ(reports.size(), 24u);
  std::map<std::string, int> last_step;
  for (const Row& r : reports) {
    const int step = std::stoi(r.at("step"));
    EXPECT_EQ(step, last_step[r.at("trial")] + 1) << "each trial's steps in order, none lost or repeated";
    last_step[r.at("trial")] = step;
    EXPECT_EQ(r.at("attempt"), "1");
    EXPECT_EQ(r.at("task"), "a");
    EXPECT_NEAR(std::stod(r.at("value")), objective.at(r.at("trial")) * step / 4, 1e-12);
    EXPECT_EQ(r.at("metrics"), "{\"s\":" + std::to_string(step) + "}");
    EXPECT_GT(std::stod(r.at("elapsed_s")), 0);
    EXPECT_EQ(r.at("time").size(), 24u) << r.at("time");
  }

  int records = 0, reported = 0;
  for (const JournalRecord& record : out.journal.records) {
    if (const auto* batch = std::get_if<TrialsReported>(&record)) {
      ++records;
      reported += static_cast<int>(batch->reports.size());
    }
  }
  EXPECT_EQ(reported, 24);
  EXPECT_GE(records, 1);
  const RecoveredRun recovered = recover_run(out.run_dir);
  for (const Trial& t : recovered.state.trials()) {
    ASSERT_EQ(t.reports.size(), 4u) << "trial " << t.id;
    EXPECT_EQ(t.last_step(1), 4);
    EXPECT_NEAR(t.reports.back().value, t.outcome.objective, 1e-12);
  }
}

// Step 1 again after step 2, step 2 again, a NaN and a line that is no JSON: each is logged with
// its trial and ignored (at most three lines per attempt), the run goes on, and the good steps
// (2 and 3) stay.
TEST(ReportsTest, bad_reports_are_logged_with_the_trial_and_ignored) {
  lbo::testing::ScratchDir dir;
  const RunOutput out =
      run_job(reporting_job(R"("--sleep-ms", "1")", R"(outcome = { type = "categorical", choices = ["bad-reports"] })", 3),
              dir, 2);
  ASSERT_EQ(out.exit_code, kExitDone) << out.log;
  ASSERT_EQ(out.rows.size(), 3u);
  for (const Row& row : out.rows) EXPECT_EQ(row.at("status"), "ok");
  EXPECT_NE(out.log.find("trial 0 attempt 1: a report is ignored: step 1 is not past the last one reported (2)"),
            std::string::npos)
      << out.log;
  EXPECT_NE(out.log.find("trial 0 attempt 1: a report is ignored: step 2 is not past the last one reported (2)"),
            std::string::npos);
  EXPECT_NE(out.log.find("trial 0 attempt 1: a report is ignored: the report holds NaN or Infinity"), std::string::npos);
  EXPECT_EQ(out.log.find("trial 0 attempt 1: a report is ignored: the report is not valid JSON"), std::string::npos)
      << "the fourth bad report of an attempt is not logged";
  EXPECT_EQ(count_of(out.log, "further ignored reports of this attempt are not logged"), 3);
  const std::vector<Row> reports = lbo::testing::read_csv(out.run_dir / "reports.csv");
  ASSERT_EQ(reports.size(), 6u);
  for (std::size_t i = 0; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].at("step"), i % 2 == 0 ? "2" : "3");
    EXPECT_EQ(reports[i].at("value"), i % 2 == 0 ? "1" : "2");
  }
}

// reports.csv is a report, not state: a resumed run rebuilds it from the journal, so rows an lbo
// killed outright had not written yet (here: the whole file) come back, and the new ones follow.
TEST(ReportsTest, a_resumed_run_rebuilds_reports_csv_from_the_journal) {
  lbo::testing::ScratchDir dir;
  const std::string job = reporting_job(R"("--reports", "3")", "", 4);
  ASSERT_EQ(run_job(job, dir, 2).exit_code, kExitDone);
  const fs::path csv = dir.path() / "runs" / "t" / "reports.csv";
  const std::string first = lbo::testing::read_text(csv);
  fs::remove(csv);
  std::string more = job;
  more.replace(more.find("budget = 4"), 10, "budget = 6");
  const RunOutput resumed = run_job(more, dir, 2);
  ASSERT_EQ(resumed.exit_code, kExitDone) << resumed.log;
  const std::string whole = lbo::testing::read_text(csv);
  EXPECT_EQ(whole.substr(0, first.size()), first) << "the earlier rows, as they were";
  EXPECT_EQ(lbo::testing::read_csv(csv).size(), 18u);
}

namespace {

lbo::workers::TrialReport report_of(std::int64_t trial, int attempt, std::int64_t step, double value) {
  lbo::workers::TrialReport r;
  r.trial = trial;
  r.attempt = attempt;
  r.step = step;
  r.value = value;
  return r;
}

}  // namespace

// The intake's rules against a state worked by hand: a trial that runs attempt 2 takes
// attempt 2's reports only, steps must grow within the batch as against the state, and an
// ended trial's late report is ignored.
TEST(ReportIntakeTest, only_the_running_attempts_growing_steps_are_accepted) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  RunState state = lbo::testing::started_state(job);
  const std::int64_t a = lbo::testing::start_trial(state, 0, {{0.1}});
  const std::int64_t b = lbo::testing::start_trial(state, 0, {{0.2}});
  lbo::workers::Outcome failed;
  failed.status = lbo::workers::TrialStatus::failed;
  lbo::testing::end_attempt(state, a, failed, "local:0", false);
  lbo::testing::start_again(state, a);
  state.apply(TrialsReported{{{a, 2, 1, 0.5, "{}", 0.1}}, 0});
  std::vector<std::string> log;
  ReportIntake intake([&](const std::string& line) { log.push_back(line); });
  const std::optional<TrialsReported> record =
      intake.accept(state,
                    {report_of(a, 1, 5, 0.1),   // the failed attempt's
                     report_of(a, 2, 1, 0.2),   // not past step 1 of the state
                     report_of(a, 2, 3, 0.3),   // accepted
                     report_of(a, 2, 2, 0.4),   // not past step 3 of this batch
                     report_of(b, 1, 1, 0.5),   // accepted
                     report_of(7, 1, 1, 0.6)},  // no such trial
                    42.0);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->unix_time, 42.0);
  ASSERT_EQ(record->reports.size(), 2u);
  EXPECT_EQ(record->reports[0].trial, a);
  EXPECT_EQ(record->reports[0].step, 3);
  EXPECT_EQ(record->reports[1].trial, b);
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0], "trial 0 attempt 1: a report is ignored: it arrived after the attempt ended");
  EXPECT_EQ(log[1], "trial 0 attempt 2: a report is ignored: step 1 is not past the last one reported (1)");
  EXPECT_EQ(log[2], "trial 0 attempt 2: a report is ignored: step 2 is not past the last one reported (3)");
  EXPECT_EQ(log[3], "trial 7 attempt 1: a report is ignored: it arrived after the attempt ended");
  state.apply(*record);
  EXPECT_EQ(state.trial(a).last_step(2), 3);
  EXPECT_EQ(state.trial(a).last_step(1), 0);
  lbo::testing::end_attempt(state, b, lbo::testing::ok_with(1));
  EXPECT_FALSE(intake.accept(state, {report_of(b, 1, 2, 0.7)}, 43.0)) << "a report after the trial ended";
}

// A damaged or foreign journal may hold reports the master would not have accepted: the state
// keeps what it can place and says what it could not.
TEST(ReportIntakeTest, the_state_notes_reports_it_cannot_place) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  RunState state = lbo::testing::started_state(job);
  const std::int64_t a = lbo::testing::start_trial(state, 0, {{0.1}});
  state.apply(TrialsReported{{{a, 1, 2, 0.5, "{}", 0}, {a, 1, 2, 0.6, "{}", 0}, {9, 1, 1, 0.7, "{}", 0}}, 0});
  ASSERT_EQ(state.trial(a).reports.size(), 1u);
  EXPECT_EQ(state.trial(a).reports[0].value, 0.5);
  ASSERT_EQ(state.anomalies().size(), 2u);
  EXPECT_NE(state.anomalies()[0].find("trial 0: attempt 1 reports step 2 again"), std::string::npos);
  EXPECT_NE(state.anomalies()[1].find("trial 9: a report (step 1) for a trial no intact record started"), std::string::npos);
}

// An objective reports on until the stop reaches it: those reports are ignored, and only the
// first three of the run are logged.
TEST(ReportIntakeTest, reports_after_a_stop_are_ignored_and_the_first_three_logged) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  RunState state = lbo::testing::started_state(job);
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(lbo::testing::start_trial(state, 0, {{0.1 * i}}));
    lbo::workers::Outcome stopped;
    stopped.status = lbo::workers::TrialStatus::stopped;
    stopped.last_step = 1;
    lbo::testing::end_attempt(state, ids.back(), stopped);
  }
  std::vector<std::string> log;
  ReportIntake intake([&](const std::string& line) { log.push_back(line); });
  for (const std::int64_t id : ids) EXPECT_FALSE(intake.accept(state, {report_of(id, 1, 2, 0.5)}, 1.0));
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0], "trial 0: a report (step 2) is ignored: it arrived after the trial was stopped");
  EXPECT_EQ(log[2], "trial 2: a report (step 2) is ignored: it arrived after the trial was stopped (further such reports are "
                    "not logged)");
}

TEST(ReportIntakeTest, a_trial_keeps_at_most_ten_thousand_reports) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  RunState state = lbo::testing::started_state(job);
  const std::int64_t id = lbo::testing::start_trial(state, 0, {{0.1}});
  TrialsReported many;
  for (std::int64_t step = 1; step < static_cast<std::int64_t>(ReportIntake::kMaxReportsPerTrial); ++step) {
    many.reports.push_back({id, 1, step, 0.5, "{}", 0});
  }
  state.apply(many);
  std::vector<std::string> log;
  ReportIntake intake([&](const std::string& line) { log.push_back(line); });
  const std::optional<TrialsReported> record =
      intake.accept(state, {report_of(id, 1, 10'000, 0.6), report_of(id, 1, 10'001, 0.7)}, 1.0);
  ASSERT_TRUE(record);
  ASSERT_EQ(record->reports.size(), 1u);
  EXPECT_EQ(record->reports[0].step, 10'000);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("the trial has made 10000 reports, the most lbo keeps for one trial"), std::string::npos) << log[0];
}
