#include "lbo/report/run_data.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "run_job.hpp"

using nlohmann::json;
using lbo::testing::RunOutput;
using lbo::testing::ScratchDir;

namespace {

// Two tasks of a conditional space whose "fail" choice makes the objective exit 3 (one retry),
// with metrics; `policy` and `objective_extra` vary it.
std::string report_job(const std::string& policy = "surrogate = \"random\"", const std::string& objective_extra = "",
                       const std::string& tasks = "[[tasks]]\nname = \"a\"\nbudget = 10\n[[tasks]]\nname = \"b\"\nbudget = 8\n",
                       const std::string& function = "sum") {
  return std::string("name = \"r\"\nseed = 5\n[objective]\ncommand = [\"") + LBO_TEST_OBJECTIVE + "\", \"--metrics\", \"on\", \"--function\", \"" +
         function + "\"]\ndirection = \"maximize\"\nretries = 1\n" + objective_extra + "\n[policy]\n" + policy +
         "\n[space]\nx = { type = \"float\", low = 0, high = 1 }\n"
         "outcome = { type = \"categorical\", choices = [\"ok\", \"fail\"] }\n"
         "k = { type = \"int\", low = 1, high = 5, when = { outcome = \"ok\" } }\n" + tasks;
}

std::map<std::string, lbo::testing::Row> by_trial(const RunOutput& out) {
  std::map<std::string, lbo::testing::Row> rows;
  for (const auto& r : out.rows) rows[r.at("trial")] = r;
  return rows;
}

}  // namespace

// The report's data agrees with results.csv trial by trial, and its attempts with the journal:
// failures with their reasons and retries, metrics, inactive parameters left out, places.
TEST(RunDataTest, trials_attempts_and_tasks_agree_with_the_run) {
  ScratchDir dir;
  const RunOutput out = lbo::testing::run_job(report_job(), dir, 2);
  ASSERT_EQ(out.exit_code, lbo::orchestrator::kExitDone) << out.log;
  const json data = lbo::report::run_data(out.run_dir);

  EXPECT_EQ(data["state"], "done");
  EXPECT_EQ(data["name"], "r");
  ASSERT_EQ(data["allocations"].size(), 1u);
  EXPECT_EQ(data["allocations"][0]["slots"], 2);
  EXPECT_EQ(data["job"]["surrogate"], "random");
  EXPECT_EQ(data["job"]["direction"], "maximize");
  EXPECT_EQ(data["job"]["seed"], 5);
  ASSERT_EQ(data["job"]["space"].size(), 3u);
  EXPECT_EQ(data["job"]["space"][2]["when"], "outcome = ok");
  EXPECT_EQ(data["job"]["space"][1]["choices"], json({"ok", "fail"}));
  EXPECT_EQ(data["job"]["tasks"][1]["budget"], 8);

  const auto rows = by_trial(out);
  ASSERT_EQ(data["trials"].size(), 18u);
  int failed = 0, attempts = 0;
  for (const json& t : data["trials"]) {
    const auto& row = rows.at(std::to_string(t["id"].get<int>()));
    EXPECT_EQ(t["status"], row.at("status"));
    EXPECT_EQ(t["attempts"].get<int>(), std::stoi(row.at("attempts")));
    attempts += t["attempts"].get<int>();
    EXPECT_EQ(t["rank"], 0);
    EXPECT_EQ(std::to_string(t["slot"].get<int>()), row.at("slot"));
    EXPECT_LE(t["started"].get<double>(), t["finished"].get<double>());
    if (t["config"]["outcome"] == "fail") {
      ++failed;
      EXPECT_EQ(t["status"], "failed");
      EXPECT_EQ(t["attempts"], 2);  // the retry failed too
      EXPECT_FALSE(t["config"].contains("k"));  // inactive: absent
      EXPECT_NE(t["reason"].get<std::string>().find("exit status 3"), std::string::npos) << t["reason"];
      EXPECT_EQ(row.at("reason"), t["reason"]);  // results.csv's new column holds the same
      EXPECT_FALSE(t.contains("objective"));
    } else {
      EXPECT_EQ(t["status"], "ok");
      EXPECT_TRUE(t["config"].contains("k"));
      EXPECT_DOUBLE_EQ(t["objective"].get<double>(), std::stod(row.at("objective")));
      EXPECT_DOUBLE_EQ(t["metrics"]["twice"].get<double>(), 2 * t["objective"].get<double>());
      EXPECT_EQ(row.at("metric:function"), "sum");
    }
  }
  ASSERT_GT(failed, 0) << "the seed should draw the failing choice";
  // One attempt record per attempt; the failing ones are not final but their retries are.
  ASSERT_EQ(data["attempts"].size(), static_cast<std::size_t>(attempts));
  for (const json& a : data["attempts"]) {
    EXPECT_LE(a["start"].get<double>(), a["end"].get<double>());
    EXPECT_GE(a["slot"].get<int>(), 0);
    EXPECT_LT(a["slot"].get<int>(), 2);
    if (a["status"] == "failed") {
      EXPECT_EQ(a["final"], a["attempt"] == 2);
    }
  }
  // Per task: ok count and best, as results.csv gives them.
  for (int task = 0; task < 2; ++task) {
    const json& s = data["tasks"][task];
    int ok = 0;
    double best = -INFINITY;
    for (const auto& [id, row] : rows) {
      if (row.at("task") != s["name"] || row.at("status") != "ok") continue;
      ++ok;
      best = std::max(best, std::stod(row.at("objective")));
    }
    EXPECT_EQ(s["ok"], ok);
    EXPECT_DOUBLE_EQ(s["best"].get<double>(), best);
  }
  EXPECT_TRUE(data["hedge"].empty());
  EXPECT_TRUE(data["notes"].empty()) << data["notes"];
}

// GP-Hedge and Hedge across open tasks: hedge.csv's draws reach the report; a stepwise
// objective's steps too; lbo's usage and the similarity come from tasks.csv.
TEST(RunDataTest, hedge_draws_steps_usage_and_similarity) {
  ScratchDir dir;
  std::string job = report_job("surrogate = \"lbo\"\nacquisition = \"hedge\"\ninitial_random = 3\ncandidates = 128", "stepwise = 3",
                               "[[tasks]]\nname = \"a\"\nbudget = 8\n[[tasks]]\nname = \"b\"\nbudget = 8\n[schedule]\nconcurrent_tasks = 2\n",
                               "steps");
  job.replace(job.find("\"fail\"]"), 7, "\"fine\"]");  // no failures: the model gets every result
  const RunOutput out = lbo::testing::run_job(
      job, dir, 1, [] {
        lbo::orchestrator::MasterOptions o;
        o.sync = true;
        return o;
      }());
  ASSERT_EQ(out.exit_code, lbo::orchestrator::kExitDone) << out.log;
  const json data = lbo::report::run_data(out.run_dir);
  EXPECT_EQ(data["job"]["stepwise"], 3);
  for (const json& t : data["trials"]) {
    if (t["status"] == "ok") {
      EXPECT_EQ(t["steps"].size(), 3u);
    }
  }
  std::set<std::string> kinds;
  for (const json& d : data["hedge"]) {
    kinds.insert(d["over"]);
    double total = 0;
    for (const json& p : d["probabilities"]) total += p.get<double>();
    EXPECT_NEAR(total, 1.0, 1e-5);
    ASSERT_TRUE(d.contains("chosen"));
    EXPECT_LT(d["chosen"].get<std::size_t>(), d["options"].size());
    if (d["over"] == "acquisition") {
      EXPECT_EQ(d["options"], json({"ucb", "ei", "pi"}));
      EXPECT_TRUE(d["task_name"].get<std::string>().find("/step_") != std::string::npos) << d;
    }
  }
  EXPECT_TRUE(kinds.count("acquisition"));
  EXPECT_TRUE(kinds.count("tasks"));
  for (const json& task : data["tasks"]) {
    ASSERT_TRUE(task.contains("usage")) << task;
    for (const json& q : task["usage"]) {
      EXPECT_GE(q.get<double>(), 0.0);
      EXPECT_LE(q.get<double>(), 1.0);
    }
    ASSERT_EQ(task["similarity"].size(), 2u);
  }
  EXPECT_NEAR(data["tasks"][0]["similarity"][0].get<double>(), 1.0, 1e-9);
}

// A run directory of an older lbo (no hedge.csv, a tasks.csv without usage columns) still
// reports; what is missing is said. A second allocation shows; an attempt that a stop cut off
// reads as interrupted.
TEST(RunDataTest, an_old_or_stopped_run_reports_what_it_has_and_says_what_it_lacks) {
  ScratchDir dir;
  const std::string job = report_job("surrogate = \"lbo\"\nacquisition = \"hedge\"\ninitial_random = 3\ncandidates = 128");
  const RunOutput out = lbo::testing::run_job(job, dir, 2);
  ASSERT_EQ(out.exit_code, lbo::orchestrator::kExitDone) << out.log;
  const lbo::orchestrator::RunPaths paths(out.run_dir);
  std::filesystem::remove(paths.hedge_csv());
  std::filesystem::remove(paths.tasks_csv());
  json data = lbo::report::run_data(out.run_dir);
  EXPECT_EQ(data["trials"].size(), 18u);
  EXPECT_TRUE(data["hedge"].empty());
  const std::string notes = data["notes"].dump();
  EXPECT_NE(notes.find("no hedge.csv"), std::string::npos) << notes;
  EXPECT_NE(notes.find("no tasks.csv"), std::string::npos) << notes;
  {
    std::ofstream(paths.tasks_csv()) << "task,origin,step,budget,ok,best,best_trial,trials_to_95,networks,similarity:a,similarity:b,x,outcome,k\n"
                                        "a,job file,,10,5,1,0,1,0 1,1,0.5,0.5,ok,1\n";
  }
  data = lbo::report::run_data(out.run_dir);
  EXPECT_NE(data["notes"].dump().find("no usage columns"), std::string::npos) << data["notes"];
  EXPECT_EQ(data["tasks"][0]["similarity"], json({1.0, 0.5}));

  // A later allocation starts a trial and is killed: its attempt is interrupted, the trial
  // queued, the run stopped.
  const lbo::orchestrator::JournalContents read = lbo::orchestrator::read_journal(paths.journal());
  auto writer = lbo::orchestrator::JournalWriter::resume(paths.journal(), read, 0);
  const auto& started = std::get<lbo::orchestrator::RunStarted>(read.records.front());
  const double t0 = started.unix_time + 1000;
  writer.append(lbo::orchestrator::RunStarted{"9.9.9+test", t0, 4, started.job});
  writer.append(lbo::orchestrator::TrialStarted{18, 0, 1, lbo::jobs::Config{{0.5, 0.0, 2.0}}, "rank3", t0 + 5,
                                                lbo::orchestrator::ProposalSource::model, ""});
  writer.sync();
  data = lbo::report::run_data(out.run_dir);
  EXPECT_EQ(data["state"], "done");  // every budget was spent before; the extra trial is past it
  ASSERT_EQ(data["allocations"].size(), 2u);
  EXPECT_EQ(data["allocations"][1]["slots"], 4);
  EXPECT_EQ(data["lbo_version"], "9.9.9+test");
  const json& last = data["attempts"].back();
  EXPECT_EQ(last["trial"], 18);
  EXPECT_EQ(last["status"], "interrupted");
  EXPECT_EQ(last["rank"], 3);
  EXPECT_FALSE(last.contains("slot"));
  EXPECT_DOUBLE_EQ(last["end"].get<double>(), t0 + 5);
  EXPECT_EQ(data["trials"].back()["status"], "queued");
  EXPECT_DOUBLE_EQ(data["last_activity"].get<double>(), t0 + 5);
  // The master writing its own last report says how the run ended.
  data = lbo::report::run_data(out.run_dir, 75);
  EXPECT_EQ(data["state"], "stopped");
  EXPECT_NE(data["state_note"].get<std::string>().find("exit status 75"), std::string::npos);
}

TEST(RunDataTest, a_folder_without_a_journal_is_input_error) {
  ScratchDir dir;
  EXPECT_THROW(lbo::report::run_data(dir.path()), lbo::InputError);
}

// Issue 16 §5: a run that another lbo may be using without a lock is neither running nor
// stopped as far as the report can tell.
TEST(RunDataTest, a_run_whose_lock_cannot_tell_is_in_an_unknown_state) {
  ScratchDir dir;
  lbo::orchestrator::MasterOptions options;
  // grace_s (30 s) before a deadline 1 s away: the run stops at once, its budgets unspent.
  options.deadline = lbo::orchestrator::Deadline{options.clock() + 1, "--deadline"};
  const RunOutput out = lbo::testing::run_job(report_job(), dir, 2, options);
  ASSERT_EQ(out.exit_code, lbo::orchestrator::kExitResumable) << out.log;
  EXPECT_EQ(lbo::report::run_data(out.run_dir)["state"], "stopped");
  std::ofstream(out.run_dir / "lock") << "pid 12345 on elsewhere (--no-lock)\n";
  const json data = lbo::report::run_data(out.run_dir);
  EXPECT_EQ(data["state"], "unknown");
  EXPECT_EQ(data["state_note"], "running or stopped: the last lbo, pid 12345 on elsewhere, ran with --no-lock, so lbo "
                                "cannot tell whether a live lbo uses it");
}

// A trial's intermediate reports are its curve (newest attempt: step, value, seconds, time), and a
// trial stopped early keeps its value and step apart from an objective.
TEST(RunDataTest, curves_and_stopped_trials) {
  ScratchDir dir;
  std::string job = report_job("surrogate = \"random\"", "", "[[tasks]]\nname = \"a\"\nbudget = 12\n");
  job.replace(job.find("\"--metrics\", \"on\""), 17, "\"--reports\", \"9\", \"--report-ms\", \"2\"");
  job.replace(job.find("[space]"), 7, "[early_stopping]\nrule = \"asha\"\nmax_step = 9\n[space]");
  const RunOutput out = lbo::testing::run_job(job, dir, 2);
  ASSERT_EQ(out.exit_code, lbo::orchestrator::kExitDone) << out.log;
  const nlohmann::json data = lbo::report::run_data(out.run_dir);
  const auto rows = by_trial(out);
  int stopped = 0, curves = 0;
  for (const nlohmann::json& t : data["trials"]) {
    const lbo::testing::Row& row = rows.at(std::to_string(t["id"].get<int>()));
    ASSERT_EQ(t["status"], row.at("status"));
    if (row.at("status") == "failed") {
      EXPECT_FALSE(t.contains("curve")) << "the test objective fails before it reports";
      continue;
    }
    ASSERT_TRUE(t.contains("curve")) << t.dump();
    ++curves;
    const nlohmann::json& curve = t["curve"];
    ASSERT_GE(curve.size(), 1u);
    EXPECT_EQ(curve[0][0], 1);
    EXPECT_GT(curve[0][2].get<double>(), 0);
    EXPECT_EQ(t["last_step"].get<std::int64_t>(), std::stoll(row.at("last_step")));
    if (row.at("status") == "stopped") {
      ++stopped;
      EXPECT_FALSE(t.contains("objective"));
      EXPECT_EQ(t["stopped_value"].get<double>(), std::stod(row.at("objective")));
      // Its result has no metrics: the metrics figure shows those of its last report, {"s": s}.
      ASSERT_TRUE(t.contains("metrics") && t.contains("metrics_step")) << t.dump();
      EXPECT_EQ(t["metrics_step"], t["last_step"]);
      EXPECT_EQ(t["metrics"]["s"].get<double>(), t["metrics_step"].get<double>());
    }
  }
  EXPECT_GT(stopped, 0);
  EXPECT_GT(curves, stopped);
}

// In promotion mode a promoted trial's curve runs over its attempts (each resumed past the last
// step of the one before), each report at its own attempt's start plus its seconds, and the
// steps where it was paused are marked.
TEST(RunDataTest, a_promoted_trials_curve_spans_its_attempts_and_marks_its_pauses) {
  ScratchDir dir;
  std::string job = report_job("surrogate = \"random\"", "", "[[tasks]]\nname = \"a\"\nbudget = 18\n");
  job.replace(job.find("\"--metrics\", \"on\""), 17, "\"--reports\", \"9\", \"--report-ms\", \"2\"");
  job.replace(job.find("[space]"), 7, "[early_stopping]\nrule = \"asha\"\nmax_step = 9\nmode = \"promotion\"\n[space]");
  const RunOutput out = lbo::testing::run_job(job, dir, 2);
  ASSERT_EQ(out.exit_code, lbo::orchestrator::kExitDone) << out.log;
  const nlohmann::json data = lbo::report::run_data(out.run_dir);
  std::map<std::int64_t, double> attempt_start;  // trial · 100 + attempt → its start
  for (const nlohmann::json& a : data["attempts"]) {
    attempt_start[a["trial"].get<std::int64_t>() * 100 + a["attempt"].get<int>()] = a["start"].get<double>();
  }
  int promoted = 0;
  for (const nlohmann::json& t : data["trials"]) {
    if (!t.contains("curve") || t["attempts"].get<int>() < 2) continue;
    ++promoted;
    const nlohmann::json& curve = t["curve"];
    EXPECT_EQ(curve[0][0], 1) << "the curve starts with the first attempt: " << t.dump();
    for (std::size_t i = 1; i < curve.size(); ++i) EXPECT_EQ(curve[i][0].get<int>(), curve[i - 1][0].get<int>() + 1) << t.dump();
    ASSERT_TRUE(t.contains("paused")) << t.dump();
    EXPECT_EQ(t["paused"].size(), static_cast<std::size_t>(t["attempts"].get<int>() - 1)) << t.dump();
    EXPECT_EQ(t["paused"][0][0], 1) << "rung 1";
    const double last_start = attempt_start.at(t["id"].get<std::int64_t>() * 100 + t["attempts"].get<int>());
    const nlohmann::json& last = curve[curve.size() - 1];
    EXPECT_DOUBLE_EQ(last[3].get<double>(), last_start + last[2].get<double>());
    EXPECT_LT(curve[0][3].get<double>(), last_start) << "the first report came in an earlier attempt";
  }
  EXPECT_GE(promoted, 2) << "half the trials fail (outcome = fail); the best third of the rest are promoted";
  // A paused attempt ended at its pause, even when its trial ended `stopped` long after (its
  // task had nothing left): its end is no later than its trial's next attempt's start, or the
  // last report of the run, and no slot is busy more than the whole run.
  for (const nlohmann::json& a : data["attempts"]) {
    const auto next = attempt_start.find(a["trial"].get<std::int64_t>() * 100 + a["attempt"].get<int>() + 1);
    if (next != attempt_start.end()) {
      EXPECT_LE(a["end"].get<double>(), next->second) << a.dump();
    }
  }
  const nlohmann::json& u = data["utilization"];
  EXPECT_LE(u["busy"].get<double>(), u["available"].get<double>() * (1 + 1e-9)) << u.dump();
  EXPECT_EQ(data["job"]["early_stopping"], "asha (promotion), step 1 to 9, eta 3");
}
