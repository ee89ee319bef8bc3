#include "lbo/orchestrator/results_csv.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>

#include "lbo/jobs/error.hpp"
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
            "trial,task,status,objective,attempts,duration_s,worker,x,kind,k,proposed_by,proposal_note,started,finished,rank,"
            "slot,reason,cores,gpus,last_step,clock\n");
  RunState state = lbo::testing::started_state(job);
  lbo::testing::start_trial(state, 0, lbo::jobs::Config{{0.5, 0.0, std::nullopt}}, "local:1", ProposalSource::initial);
  lbo::testing::end_attempt(state, 0, ok(0.1, 1.23456), "local:1");
  EXPECT_EQ(ResultsCsv::row(job, state, state.trial(0)), "0,a,ok,0.1,1,1.235,local:1,0.5,\"a,b\",,initial,,,,0,1,,,,,real\n");
  lbo::testing::start_trial(state, 0, lbo::jobs::Config{{0.25, 1.0, 7.0}}, "rank2:0", ProposalSource::random_fallback,
                            "no fit, yet");
  lbo::workers::Outcome failed;
  failed.status = lbo::workers::TrialStatus::timeout;
  failed.objective = 99;  // not reported: only ok trials have an objective
  failed.cores = "4-7,12";  // what its slot had
  failed.gpus = "GPU-a,GPU-b";
  lbo::testing::end_attempt(state, 1, failed, "rank2:0");
  EXPECT_EQ(ResultsCsv::row(job, state, state.trial(1)),
            "1,a,timeout,,1,0.000,rank2:0,0.25,plain,7,random-fallback,\"no fit, yet\",,,2,0,,\"4-7,12\",\"GPU-a,GPU-b\",,real\n");
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
    csv.append(state, state.trial(i));
  }
  csv.flush();
  const std::string appended = lbo::testing::read_text(dir.path() / "results.csv");
  EXPECT_LT(appended.find("\n2,"), appended.find("\n0,"));
  csv.rewrite(state);
  const std::string sorted = lbo::testing::read_text(dir.path() / "results.csv");
  EXPECT_EQ(sorted, ResultsCsv::header(job) + ResultsCsv::row(job, state, state.trial(0)) +
                        ResultsCsv::row(job, state, state.trial(2)));
  // Appending goes on after a rewrite.
  lbo::testing::end_attempt(state, 1, ok(1, 0));
  csv.append(state, state.trial(1));
  csv.flush();
  EXPECT_EQ(lbo::testing::read_text(dir.path() / "results.csv"), sorted + ResultsCsv::row(job, state, state.trial(1)));
}

TEST(ResultsCsvTest, times_are_iso8601_utc_with_milliseconds) {
  EXPECT_EQ(iso8601_utc(0), "");
  EXPECT_EQ(iso8601_utc(1764000000.25), "2025-11-24T16:00:00.250Z");
  EXPECT_EQ(iso8601_utc(951782400.0), "2000-02-29T00:00:00.000Z");
  EXPECT_EQ(iso8601_utc(1764000000.9996), "2025-11-24T16:00:01.000Z");  // rounds into the next second
}

TEST(ResultsCsvTest, the_last_attempt_gives_times_place_and_reason) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  RunState state = lbo::testing::started_state(job);
  const lbo::jobs::Config config{{0.5}};
  state.apply(TrialStarted{0, 0, 1, config, "rank3", 1764000000.0, ProposalSource::initial, ""});
  lbo::workers::Outcome failed;
  failed.status = lbo::workers::TrialStatus::failed;
  failed.reason = "exit status 3; stderr: boom";
  state.apply(TrialFinished{0, 1, false, failed, "rank3:2", 1764000001.5, 0, config, ProposalSource::initial, ""});
  // The retry runs elsewhere and fails again: its times, place and reason are the row's.
  state.apply(TrialStarted{0, 0, 2, config, "local:1", 1764000002.0, ProposalSource::initial, ""});
  failed.reason = "exit status 4";
  state.apply(TrialFinished{0, 2, true, failed, "local:1", 1764000004.125, 0, config, ProposalSource::initial, ""});
  EXPECT_EQ(ResultsCsv::row(job, state, state.trial(0)),
            "0,a,failed,,2,0.000,local:1,0.5,initial,,2025-11-24T16:00:02.000Z,2025-11-24T16:00:04.125Z,0,1,exit status 4,,,,real\n");
  // An MPI attempt whose slot was never reported, of a journal with damaged worker names.
  state.apply(TrialStarted{1, 0, 1, config, "rank3", 1764000005.0, ProposalSource::model, ""});
  state.apply(TrialFinished{1, 1, true, ok(0.5, 1), "rank3", 0, 0, config, ProposalSource::model, ""});
  EXPECT_EQ(ResultsCsv::row(job, state, state.trial(1)), "1,a,ok,0.5,1,1.000,rank3,0.5,model,,2025-11-24T16:00:05.000Z,,3,,,,,,real\n");
  state.apply(TrialStarted{2, 0, 1, config, "node7", 0, ProposalSource::model, ""});
  state.apply(TrialFinished{2, 1, true, ok(0.5, 1), "node7", 0, 0, config, ProposalSource::model, ""});
  EXPECT_EQ(ResultsCsv::row(job, state, state.trial(2)), "2,a,ok,0.5,1,1.000,node7,0.5,model,,,,,,,,,,real\n");
}

TEST(ResultsCsvTest, a_new_metric_name_adds_a_column_and_rewrites) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  RunState state = lbo::testing::started_state(job);
  ResultsCsv csv(dir.path() / "results.csv", job);
  const auto finish = [&](const char* metrics) {
    const std::int64_t id = lbo::testing::start_trial(state, 0, lbo::jobs::Config{{0.5}});
    lbo::workers::Outcome o = ok(1, 0);
    o.metrics_json = metrics;
    lbo::testing::end_attempt(state, id, o);
    csv.append(state, state.trial(id));
    csv.flush();
  };
  finish("{}");
  finish(R"({"auc": 0.9, "note": "a,b"})");
  finish(R"({"auc": 0.8})");
  finish(R"({"fit_s": 2, "nested": {"k": [1, 2]}, "none": null})");
  const std::string text = lbo::testing::read_text(dir.path() / "results.csv");
  const std::string common = "1,0.000,local:0,0.5,model,,,,0,0,,,,,real";
  EXPECT_EQ(text, "trial,task,status,objective,attempts,duration_s,worker,x,proposed_by,proposal_note,started,finished,"
                  "rank,slot,reason,cores,gpus,last_step,clock,metric:auc,metric:fit_s,metric:nested,metric:none,metric:note\n"
                  "0,a,ok,1," + common + ",,,,,\n"
                  "1,a,ok,1," + common + ",0.9,,,,\"a,b\"\n"
                  "2,a,ok,1," + common + ",0.8,,,,\n"
                  "3,a,ok,1," + common + ",,2,\"{\"\"k\"\":[1,2]}\",,\n");
  // Damage in a journal could hand over text that is not an object: no metric, no crash.
  lbo::workers::Outcome broken = ok(1, 0);
  broken.metrics_json = "[1";
  const std::int64_t id = lbo::testing::start_trial(state, 0, lbo::jobs::Config{{0.5}});
  lbo::testing::end_attempt(state, id, broken);
  csv.append(state, state.trial(id));
  csv.flush();
  EXPECT_EQ(lbo::testing::read_text(dir.path() / "results.csv"), text + "4,a,ok,1," + common + ",,,,,\n");
}

// Trials that end in one turn are committed together; when the first brings a new column, the
// rewrite holds the others too, and they are not appended after it again (a table objective's
// trials all end at once, each with its metrics).
TEST(ResultsCsvTest, a_new_column_in_a_commit_of_several_trials_writes_each_row_once) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  RunState state = lbo::testing::started_state(job);
  ResultsCsv csv(dir.path() / "results.csv", job);
  std::vector<const Trial*> batch;
  for (const char* metrics : {R"({"auc": 0.9})", R"({"auc": 0.8})", "{}"}) {
    const std::int64_t id = lbo::testing::start_trial(state, 0, lbo::jobs::Config{{0.5}});
    lbo::workers::Outcome o = ok(1, 0);
    o.metrics_json = metrics;
    lbo::testing::end_attempt(state, id, o);
  }
  for (std::int64_t id = 0; id < 3; ++id) batch.push_back(&state.trial(id));
  csv.append(state, batch);
  csv.flush();
  const std::string text = lbo::testing::read_text(dir.path() / "results.csv");
  const std::string common = "1,0.000,local:0,0.5,model,,,,0,0,,,,,real";
  EXPECT_EQ(text, ResultsCsv::header(job, {"auc"}) + "0,a,ok,1," + common + ",0.9\n1,a,ok,1," + common + ",0.8\n" +
                      "2,a,ok,1," + common + ",\n");
}

// With several objectives each row says whether its trial is in its task's Pareto set now. A
// result that joins no front, or joins it without taking a member off, is appended; one that
// dominates a member rewrites the file (that member's row changes). Either way the file is what
// a rewrite from the state writes.
TEST(ResultsCsvTest, with_several_objectives_the_file_is_rewritten_only_when_a_member_leaves_the_pareto_set) {
  lbo::testing::ScratchDir dir;
  lbo::jobs::JobSpec job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  using lbo::jobs::Direction;
  job.objective.several = {lbo::jobs::Objective(Direction::maximize, "auc"), lbo::jobs::Objective(Direction::minimize, "s")};
  job.objective.reference = {std::nan(""), std::nan("")};
  RunState state = lbo::testing::started_state(job);
  const auto path = dir.path() / "results.csv";
  ResultsCsv csv(path, job);
  const auto inode = [&]() -> ino_t {  // a rewrite renames a new file into place
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
  };
  const auto finish = [&](double auc, double s) {
    const std::int64_t id = lbo::testing::start_trial(state, 0, lbo::jobs::Config{{auc}});
    lbo::workers::Outcome o = ok(auc, 0);
    o.values = {auc, s};
    lbo::testing::end_attempt(state, id, o);
    const auto before = inode();
    csv.append(state, state.trial(id));
    csv.flush();
    std::string whole = ResultsCsv::header(job);
    for (const Trial& t : state.trials()) whole += ResultsCsv::row(job, state, t);
    EXPECT_EQ(lbo::testing::read_text(path), whole) << "after trial " << id;
    return before != inode();
  };
  EXPECT_TRUE(finish(0.8, 10)) << "the first write";
  EXPECT_FALSE(finish(0.7, 20)) << "dominated: appended";
  EXPECT_FALSE(finish(0.6, 5)) << "joins the set beside 0: appended";
  EXPECT_TRUE(finish(0.9, 4)) << "dominates 0 and 2: rewritten";
  EXPECT_EQ(state.tasks()[0].pareto, (std::vector<std::int64_t>{3}));
}

// A resumed master is killed at any moment: until its first rewrite the file it found stays as
// it was (it used to be truncated to its header when the outputs were made, so a kill -9 before
// the rewrite left a results.csv without its committed rows), and the rewrite replaces it whole.
TEST(ResultsCsvTest, the_file_found_stays_whole_until_the_first_rewrite) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  RunState state = lbo::testing::started_state(job);
  const auto path = dir.path() / "results.csv";
  lbo::testing::start_trial(state, 0, lbo::jobs::Config{{0.5}});
  lbo::testing::end_attempt(state, 0, ok(0.25, 0));
  const std::string earlier = ResultsCsv::header(job) + ResultsCsv::row(job, state, state.trial(0));
  lbo::testing::write_text(path, earlier);
  ResultsCsv csv(path, job);
  EXPECT_EQ(lbo::testing::read_text(path), earlier);
  lbo::testing::start_trial(state, 0, lbo::jobs::Config{{0.75}});
  lbo::testing::end_attempt(state, 1, ok(0.5, 0));
  csv.append(state, state.trial(1));  // the first write: the whole file, from the state
  csv.flush();
  EXPECT_EQ(lbo::testing::read_text(path), earlier + ResultsCsv::row(job, state, state.trial(1)));
}

TEST(ResultsCsvTest, a_link_at_the_file_is_refused_before_anything_is_written) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  lbo::testing::write_text(dir.path() / "victim", "not lbo's");
  std::filesystem::create_symlink(dir.path() / "victim", dir.path() / "results.csv");
  EXPECT_THROW(ResultsCsv csv(dir.path() / "results.csv", job), lbo::IoError);
  EXPECT_EQ(lbo::testing::read_text(dir.path() / "victim"), "not lbo's");
}
