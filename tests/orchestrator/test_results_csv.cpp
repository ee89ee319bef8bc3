#include "lbo/orchestrator/results_csv.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

using namespace lbo::orchestrator;

namespace {

lbo::workers::Outcome ok(double objective, double seconds) {
  lbo::workers::Outcome o;
  o.status = lbo::workers::TrialStatus::ok;
  o.objective = objective;
  o.duration_s = seconds;
  return o;
}

}  // namespace

TEST(ResultsCsvTest, csv_fields_are_quoted_only_when_needed) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
}

TEST(ResultsCsvTest, rows_follow_the_documented_columns) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(
      lbo::testing::test_job(R"(kind = { type = "categorical", choices = ["a,b", "plain"] }
k = { type = "int", low = 1, high = 9, when = { kind = "plain" } })"),
      dir.path());
  EXPECT_EQ(ResultsCsv::header(job),
            "trial,task,status,objective,attempts,duration_s,worker,x,kind,k,proposed_by,proposal_note\n");
  RunState state = lbo::testing::started_state(job);
  lbo::testing::start_trial(state, 0, lbo::jobs::Config{{0.5, 0.0, std::nullopt}}, "local:1", ProposalSource::initial);
  lbo::testing::end_attempt(state, 0, ok(0.1, 1.23456), "local:1");
  EXPECT_EQ(ResultsCsv::row(job, state.trial(0)), "0,a,ok,0.1,1,1.235,local:1,0.5,\"a,b\",,initial,\n");
  lbo::testing::start_trial(state, 0, lbo::jobs::Config{{0.25, 1.0, 7.0}}, "rank2:0", ProposalSource::random_fallback,
                            "no fit, yet");
  lbo::workers::Outcome failed;
  failed.status = lbo::workers::TrialStatus::timeout;
  failed.objective = 99;  // not reported: only ok trials have an objective
  lbo::testing::end_attempt(state, 1, failed, "rank2:0");
  EXPECT_EQ(ResultsCsv::row(job, state.trial(1)),
            "1,a,timeout,,1,0.000,rank2:0,0.25,plain,7,random-fallback,\"no fit, yet\"\n");
}

TEST(ResultsCsvTest, rewrite_orders_finished_trials_by_id) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  RunState state = lbo::testing::started_state(job);
  ResultsCsv csv(dir.path() / "results.csv", job);
  for (int i = 0; i < 3; ++i) {
    lbo::testing::start_trial(state, 0, lbo::jobs::Config{{0.5}});
  }
  for (int i : {2, 0}) {  // finish out of order; trial 1 is still running
    lbo::testing::end_attempt(state, i, ok(i, 0));
    csv.append(state.trial(i));
  }
  csv.flush();
  const std::string appended = lbo::testing::read_text(dir.path() / "results.csv");
  EXPECT_LT(appended.find("\n2,"), appended.find("\n0,"));
  csv.rewrite(state);
  const std::string sorted = lbo::testing::read_text(dir.path() / "results.csv");
  EXPECT_EQ(sorted, ResultsCsv::header(job) + ResultsCsv::row(job, state.trial(0)) +
                        ResultsCsv::row(job, state.trial(2)));
  // Appending goes on after a rewrite.
  lbo::testing::end_attempt(state, 1, ok(1, 0));
  csv.append(state.trial(1));
  csv.flush();
  EXPECT_EQ(lbo::testing::read_text(dir.path() / "results.csv"), sorted + ResultsCsv::row(job, state.trial(1)));
}
