// Tasks that join a run while it lives: add-task requests (running and stopped runs), the
// watched folder, warm starts from other runs.

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <thread>

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/orchestrator/task_requests.hpp"
#include "lbo/orchestrator/warm_start.hpp"
#include "earlier_best.hpp"
#include "run_job.hpp"

using namespace lbo::orchestrator;
using lbo::testing::run_job;
using lbo::testing::RunOutput;
namespace fs = std::filesystem;

namespace {

std::vector<TaskAdded> tasks_added(const RunOutput& out) {
  std::vector<TaskAdded> added;
  for (const JournalRecord& r : out.journal.records) {
    if (const auto* t = std::get_if<TaskAdded>(&r)) added.push_back(*t);
  }
  return added;
}

int rows_of(const RunOutput& out, const std::string& task) {
  int n = 0;
  for (const auto& row : out.rows) n += row.at("task") == task ? 1 : 0;
  return n;
}

// One reference instant, so that files given the same age get the same modification time.
const fs::file_time_type kStartTime = fs::file_time_type::clock::now();

void touch(const fs::path& file, std::chrono::seconds age) {
  std::ofstream(file) << "x\n";
  fs::last_write_time(file, kStartTime - age);
}

}  // namespace

TEST(TaskRequestsTest, request_files_round_trip_and_bad_ones_are_named) {
  lbo::testing::ScratchDir dir;
  const fs::path first = write_task_request(dir.path(), {"year-2004", dir.path() / "d.csv", 7});
  const fs::path second = write_task_request(dir.path(), {"year-2005", std::nullopt, std::nullopt});
  std::ofstream(RunPaths(dir.path()).requests() / "zzz.request") << "{not json";
  const std::vector<PendingRequest> pending = pending_task_requests(dir.path());
  ASSERT_EQ(pending.size(), 3u);
  ASSERT_TRUE(pending[0].request.has_value());  // oldest first
  EXPECT_EQ(pending[0].request->name, "year-2004");
  EXPECT_EQ(pending[0].request->dataset, dir.path() / "d.csv");
  EXPECT_EQ(pending[0].request->budget, 7);
  EXPECT_EQ(pending[1].request->name, "year-2005");
  EXPECT_FALSE(pending[1].request->dataset.has_value());
  EXPECT_FALSE(pending[1].request->budget.has_value());
  EXPECT_FALSE(pending[2].request.has_value());
  EXPECT_NE(pending[2].error.find("unreadable request zzz.request"), std::string::npos) << pending[2].error;

  answer_task_request(pending[0], true, "task year-2004 added");
  EXPECT_FALSE(fs::exists(first));
  EXPECT_EQ(wait_for_reply(first, std::chrono::milliseconds(10)), "ok: task year-2004 added");
  EXPECT_FALSE(wait_for_reply(first, std::chrono::milliseconds(10)).has_value());  // taken once
  EXPECT_FALSE(wait_for_reply(second, std::chrono::milliseconds(50)).has_value());  // unanswered
}

// Issue 31: lbo add-task racing the run's end waited its whole 30 s for a master that had
// ended, and the next start answered into a .reply nobody read.
TEST(TaskRequestsTest, nobody_waits_for_a_master_that_ended_and_no_reply_is_left_unread) {
  lbo::testing::ScratchDir dir;
  const fs::path request = write_task_request(dir.path(), {"year-2004", std::nullopt, 3});
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(wait_for_reply(request, std::chrono::seconds(30), [] { return true; }).has_value());
  // Far below the 30 s it rules out, with room a loaded machine keeps.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(15));
  // A reply that came just before the master ended is still read.
  PendingRequest answered = pending_task_requests(dir.path()).front();
  answer_task_request(answered, true, "task year-2004 added");
  EXPECT_EQ(wait_for_reply(request, std::chrono::seconds(30), [] { return true; }), "ok: task year-2004 added");

  // A request whose writer has given up (older than the wait) or has exited on this host gets
  // no reply; it is taken all the same.
  const fs::path requests = RunPaths(dir.path()).requests();
  std::ofstream(requests / "00000000000000000001-12345.request") << R"({"name": "old"})";
  pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "%020lld-%d",
                static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                           std::chrono::system_clock::now().time_since_epoch()).count()),
                static_cast<int>(gone));
  std::ofstream(requests / (std::string(stamp) + ".request")) << R"({"name": "exited", "host": ")" << host << R"("})";
  for (const PendingRequest& r : pending_task_requests(dir.path())) answer_task_request(r, true, "added");
  EXPECT_TRUE(fs::is_empty(requests)) << "a reply nobody reads was written";
}

TEST(TaskRequestsTest, conflicts_are_explained) {
  lbo::testing::ScratchDir dir;
  const std::vector<TaskIdentity> tasks = {{"a", 5, "", lbo::jobs::TaskOrigin::job_file}};
  const auto conflict = [&](const std::string& name, std::optional<fs::path> dataset, int budget,
                            const std::vector<std::string>& command = {"obj"}) {
    return task_conflict(task_from_request({name, std::move(dataset), budget}, 20), tasks, command);
  };
  EXPECT_EQ(conflict("b", std::nullopt, 3), "");
  EXPECT_NE(conflict("a", std::nullopt, 3).find("the run already has a task named a"), std::string::npos);
  EXPECT_NE(conflict("a b", std::nullopt, 3).find("is not a usable task name"), std::string::npos);
  EXPECT_NE(conflict("b", dir.path() / "missing.csv", 3).find("missing.csv does not exist"), std::string::npos);
  EXPECT_NE(conflict("b", std::nullopt, 3, {"obj", "--data", "{dataset}"}).find("needs a dataset (--dataset PATH)"),
            std::string::npos);
  EXPECT_EQ(task_from_request({"b", std::nullopt, std::nullopt}, 20).budget, 20);
  EXPECT_EQ(task_from_request({"b", std::nullopt, std::nullopt}, 20).origin, lbo::jobs::TaskOrigin::added);
}

TEST(TaskRequestsTest, watched_files_come_in_order_of_arrival_without_hidden_partial_or_known_ones) {
  lbo::testing::ScratchDir dir;
  const fs::path in = dir.path() / "incoming";
  fs::create_directories(in / "sub");
  touch(in / "b.csv", std::chrono::seconds(30));
  touch(in / "a.csv", std::chrono::seconds(30));  // same time as b: by name
  touch(in / "old.csv", std::chrono::seconds(100));
  touch(in / "new.csv", std::chrono::seconds(1));
  touch(in / ".hidden.csv", std::chrono::seconds(50));
  touch(in / "copying.csv.part", std::chrono::seconds(50));
  touch(in / "copying.tmp", std::chrono::seconds(50));
  touch(in / "known.csv", std::chrono::seconds(50));
  lbo::jobs::TaskSpec known;
  known.name = "known";
  known.dataset = fs::absolute(in / "known.csv").lexically_normal();
  const std::vector<fs::path> files = new_watched_files(in, "*.csv", {known}).new_tasks;
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0].filename(), "old.csv");
  EXPECT_EQ(files[1].filename(), "a.csv");
  EXPECT_EQ(files[2].filename(), "b.csv");
  EXPECT_EQ(files[3].filename(), "new.csv");
}

TEST(TaskRequestsTest, watched_files_not_matching_the_pattern_are_no_tasks) {
  lbo::testing::ScratchDir dir;
  const fs::path in = dir.path() / "incoming";
  fs::create_directories(in);
  touch(in / "year-2006.csv", std::chrono::seconds(10));
  touch(in / "README.txt", std::chrono::seconds(20));
  touch(in / "notes.csv.bak", std::chrono::seconds(20));
  touch(in / "year-2007.parquet", std::chrono::seconds(5));
  const WatchedFiles csv = new_watched_files(in, "*.csv", {});
  ASSERT_EQ(csv.new_tasks.size(), 1u);
  EXPECT_EQ(csv.new_tasks[0].filename(), "year-2006.csv");
  ASSERT_EQ(csv.not_matching.size(), 3u);
  EXPECT_EQ(csv.not_matching[0].filename(), "README.txt");
  EXPECT_EQ(csv.not_matching[1].filename(), "notes.csv.bak");
  EXPECT_EQ(csv.not_matching[2].filename(), "year-2007.parquet");
  const WatchedFiles years = new_watched_files(in, "year-*", {});
  ASSERT_EQ(years.new_tasks.size(), 2u);
  EXPECT_EQ(years.new_tasks[0].filename(), "year-2006.csv");
  EXPECT_EQ(years.new_tasks[1].filename(), "year-2007.parquet");
}

TEST(LifelongRunTest, a_task_added_to_a_stopped_run_is_journaled_and_runs_on_resume) {
  lbo::testing::ScratchDir dir;
  const std::string job = lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 4\n");
  const RunOutput first = run_job(job, dir);
  ASSERT_EQ(first.exit_code, kExitDone) << first.log;
  ASSERT_EQ(first.rows.size(), 4u);
  // The run is stopped: add-task writes the journal itself (the lock is free).
  {
    std::optional<RunDirectory> locked = RunDirectory::lock_existing(first.run_dir);
    ASSERT_TRUE(locked.has_value());
    std::vector<std::string> said;
    const auto log = [&said](const std::string& line) { said.push_back(line); };
    const lbo::jobs::TaskSpec added = add_task_to_stopped_run(first.run_dir, {"later", std::nullopt, 3}, log);
    EXPECT_EQ(added.budget, 3);
    EXPECT_THROW(add_task_to_stopped_run(first.run_dir, {"later", std::nullopt, 3}, log), lbo::InputError);
    EXPECT_THROW(add_task_to_stopped_run(first.run_dir, {"a", std::nullopt, 3}, log), lbo::InputError);
    EXPECT_TRUE(said.empty()) << "an undamaged journal needs no repair";
  }
  const RecoveredRun recovered = recover_run(first.run_dir);
  ASSERT_EQ(recovered.state.job().tasks.size(), 2u);
  EXPECT_EQ(recovered.state.job().tasks[1].name, "later");
  EXPECT_EQ(recovered.state.job().tasks[1].origin, lbo::jobs::TaskOrigin::added);
  // The same job file (which does not name the new task) continues the run with it.
  const RunOutput second = run_job(job, dir);
  ASSERT_EQ(second.exit_code, kExitDone) << second.log;
  EXPECT_EQ(rows_of(second, "a"), 4);
  EXPECT_EQ(rows_of(second, "later"), 3);
  ASSERT_EQ(tasks_added(second).size(), 1u);
  EXPECT_EQ(tasks_added(second)[0].task.name, "later");
}

TEST(LifelongRunTest, a_running_master_takes_requests_and_watched_files_then_waits_for_more) {
  lbo::testing::ScratchDir dir;
  fs::create_directories(dir.path() / "incoming");
  // Slow trials, so the run is still going when the requests come; then it idles up to 2 s.
  const std::string job = lbo::testing::test_job(
      "sleep_ms = { type = \"int\", low = 150, high = 200 }\n", "[[tasks]]\nname = \"a\"\nbudget = 4\n", "",
      "surrogate = \"random\"\n[schedule]\nwatch = \"incoming\"\ndefault_budget = 2\nidle_timeout_s = 2");
  RunOutput out;
  std::thread master([&] { out = run_job(job, dir); });
  const fs::path run_dir = dir.path() / "runs" / "t";
  // Wait for the run to exist and hold its lock.
  for (int i = 0; i < 100 && !lock_holder(run_dir).held; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(lock_holder(run_dir).held);
  const fs::path request = write_task_request(run_dir, {"added", std::nullopt, 3});
  const std::optional<std::string> reply = wait_for_reply(request, std::chrono::seconds(10));
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(*reply, "ok: task added added to the running run t with a budget of 3 trials");
  const fs::path duplicate = write_task_request(run_dir, {"added", std::nullopt, 3});
  const std::optional<std::string> refused = wait_for_reply(duplicate, std::chrono::seconds(10));
  ASSERT_TRUE(refused.has_value());
  EXPECT_NE(refused->find("error: cannot add task added: the run already has a task named added"), std::string::npos)
      << *refused;
  std::ofstream(dir.path() / "incoming" / "README.txt") << "notes\n";  // not *.csv: no task
  std::ofstream(dir.path() / "incoming" / "year-2005.csv") << "x\n";
  master.join();
  ASSERT_EQ(out.exit_code, kExitDone) << out.log;
  EXPECT_EQ(rows_of(out, "a"), 4);
  EXPECT_EQ(rows_of(out, "added"), 3);
  EXPECT_EQ(rows_of(out, "year-2005"), 2);  // default_budget
  const std::vector<TaskAdded> added = tasks_added(out);
  ASSERT_EQ(added.size(), 2u);
  EXPECT_EQ(added[0].task.origin, lbo::jobs::TaskOrigin::added);
  EXPECT_EQ(added[1].task.origin, lbo::jobs::TaskOrigin::watched);
  EXPECT_EQ(added[1].task.dataset, (dir.path() / "incoming" / "year-2005.csv").string());
  EXPECT_NE(out.log.find("task year-2005 added (watch), budget 2"), std::string::npos) << out.log;
  EXPECT_NE(out.log.find("no new task came: exiting"), std::string::npos) << out.log;
  // Said once, though the folder is polled every second while the run idles.
  const std::string skipped = "README.txt skipped: its name does not match [schedule] watch_pattern \"*.csv\"";
  const std::size_t first = out.log.find(skipped);
  EXPECT_NE(first, std::string::npos) << out.log;
  EXPECT_EQ(out.log.find(skipped, first + 1), std::string::npos) << out.log;
}

TEST(LifelongRunTest, warm_start_reads_the_finished_tasks_of_other_runs_with_the_same_space) {
  lbo::testing::ScratchDir dir;
  const std::string older = lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 3\n[[tasks]]\nname = \"b\"\nbudget = 2\n");
  ASSERT_EQ(run_job(older, dir, 2, {}, dir.path() / "older").exit_code, kExitDone);
  std::string newer = lbo::testing::test_job("", "[[tasks]]\nname = \"c\"\nbudget = 2\n", "",
                                             "surrogate = \"random\"\nwarm_start = [\"older/t\"]");
  const lbo::jobs::JobSpec job = lbo::testing::job_from(newer, dir.path());
  const std::vector<WarmTask> warm = load_warm_start(job);
  ASSERT_EQ(warm.size(), 2u);
  EXPECT_EQ(warm[0].source, (dir.path() / "older" / "t").string() + ":a");
  EXPECT_EQ(warm[0].configs.size(), 3u);
  EXPECT_EQ(warm[1].configs.size(), 2u);
  EXPECT_EQ(warm[0].direction, lbo::jobs::Direction::maximize);
  // A run over another space cannot teach this one.
  const std::string other_space = lbo::testing::test_job("y = { type = \"int\", low = 0, high = 3 }\n", "[[tasks]]\nname = \"c\"\nbudget = 2\n", "",
                                                         "surrogate = \"random\"\nwarm_start = [\"older/t\"]");
  try {
    load_warm_start(lbo::testing::job_from(other_space, dir.path()));
    ADD_FAILURE() << "a warm start over another space was accepted";
  } catch (const lbo::InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("policy.warm_start[0]: " + (dir.path() / "older" / "t").string() +
                           ": its space differs from this job's"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("space.y: new parameter"), std::string::npos) << message;
  }
  // A folder without a run is named with the place in the job file that asks for it.
  const std::string missing = lbo::testing::test_job("", "[[tasks]]\nname = \"c\"\nbudget = 2\n", "",
                                                     "surrogate = \"random\"\nwarm_start = [\"nowhere\"]");
  try {
    load_warm_start(lbo::testing::job_from(missing, dir.path()));
    ADD_FAILURE() << "a warm start from a folder without a run was accepted";
  } catch (const lbo::InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("job.toml:"), std::string::npos) << message;
    EXPECT_NE(message.find(": policy.warm_start[0]: " + (dir.path() / "nowhere").string() +
                           ": not a run directory (no journal.lbo in it)"),
              std::string::npos)
        << message;
  }
}

// [policy] warm_start also takes CSV files of evaluations made elsewhere: a run's own results.csv
// teaches what its run directory does; Optuna's trials_dataframe columns (value, params_x,
// state) work too; failures stay out; a row outside the space is named with its line.
TEST(LifelongRunTest, warm_start_reads_csv_files_of_earlier_evaluations_checked_against_the_space) {
  lbo::testing::ScratchDir dir;
  const std::string older = lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 3\n[[tasks]]\nname = \"b\"\nbudget = 2\n");
  ASSERT_EQ(run_job(older, dir, 2, {}, dir.path() / "older").exit_code, kExitDone);
  const auto warm_from = [&](const std::string& entry) {
    return load_warm_start(lbo::testing::job_from(
        lbo::testing::test_job("", "[[tasks]]\nname = \"c\"\nbudget = 2\n", "", "surrogate = \"random\"\nwarm_start = [\"" + entry + "\"]"),
        dir.path()));
  };
  const std::vector<WarmTask> run = warm_from("older/t");
  const std::vector<WarmTask> csv = warm_from("older/t/results.csv");
  ASSERT_EQ(csv.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(csv[i].source, (dir.path() / "older" / "t" / "results.csv").string() + (i == 0 ? ":a" : ":b"));
    EXPECT_EQ(csv[i].configs, run[i].configs);
    EXPECT_EQ(csv[i].objectives, run[i].objectives);
  }

  lbo::testing::write_text(dir.path() / "optuna.csv",
                           "number,value,params_x,state\n0,0.5,0.25,COMPLETE\n1,,0.5,FAIL\n2,0.1,0.75,PRUNED\n3,0.9,1,COMPLETE\n");
  const std::vector<WarmTask> optuna = warm_from("optuna.csv");
  ASSERT_EQ(optuna.size(), 1u);
  EXPECT_EQ(optuna[0].source, (dir.path() / "optuna.csv").string() + ":optuna");
  EXPECT_EQ(optuna[0].configs, (std::vector<lbo::jobs::Config>{{{0.25}}, {{1.0}}}));
  EXPECT_EQ(optuna[0].objectives, (std::vector<double>{0.5, 0.9}));
  EXPECT_EQ(optuna[0].direction, lbo::jobs::Direction::maximize);

  // An earlier run's results.csv with [[constraints]]: its infeasible column marks the rows
  // outside that run's limits (1; 0 or empty: within), none of which is a best to start from.
  lbo::testing::write_text(dir.path() / "limited.csv",
                           "task,x,objective,infeasible\nq,0.2,5,1\nq,0.4,3,0\nq,0.6,4,\nq,0.8,9,1\n");
  const std::vector<WarmTask> limited = warm_from("limited.csv");
  ASSERT_EQ(limited.size(), 1u);
  EXPECT_EQ(limited[0].objectives, (std::vector<double>{5, 3, 4, 9}));
  EXPECT_EQ(limited[0].infeasible, (std::vector<char>{1, 0, 0, 1}));
  const lbo::jobs::JobSpec fresh = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  const RunState empty = lbo::testing::started_state(fresh);
  EXPECT_EQ(earlier_bests(empty, 0, limited, 1), (std::vector<lbo::jobs::Config>{{{0.6}}})) << "4, the best feasible, not 9 or 5";

  const auto error_of = [&](const std::string& entry) -> std::string {
    try {
      warm_from(entry);
    } catch (const lbo::InputError& e) {
      return e.what();
    }
    ADD_FAILURE() << entry << " was accepted";
    return "";
  };
  lbo::testing::write_text(dir.path() / "wide.csv", "task,x,objective\nq,0.5,1\nq,1.5,2\nq,x,3\n");
  const std::string wide = error_of("wide.csv");
  EXPECT_NE(wide.find(": policy.warm_start[0]: " + (dir.path() / "wide.csv").string() + ": 2 problem(s) in its rows:\n"
                      "  wide.csv:3: x: 1.5 is above high = 1; fix the row or widen the space, or leave the row out\n"
                      "  wide.csv:4: x: \"x\" is not a number; fix the row"),
            std::string::npos)
      << wide;
  EXPECT_EQ(wide.find((dir.path() / "job.toml").string() + ":9:15: "), 0u) << wide;
  lbo::testing::write_text(dir.path() / "narrow.csv", "task,y,score\nq,1,2\n");
  EXPECT_NE(error_of("narrow.csv").find("narrow.csv:1: no column for x, objective (or value)"), std::string::npos)
      << error_of("narrow.csv");
  EXPECT_NE(error_of("absent.csv").find("not a run directory"), std::string::npos);

  // What is left out is said: rows without a finite objective (no status column: taken for
  // failed evaluations), with their lines; failed rows; a task too large for every fit.
  lbo::testing::write_text(dir.path() / "gaps.csv", "task,x,objective\nq,0.1,1\nq,0.2,abc\nq,0.3,nan\nq,0.4,inf\nq,0.5,2\n");
  std::vector<std::string> notes;
  const auto gaps = load_warm_start(
      lbo::testing::job_from(lbo::testing::test_job("", "[[tasks]]\nname = \"c\"\nbudget = 2\n", "",
                                                    "surrogate = \"random\"\nwarm_start = [\"gaps.csv\", \"optuna.csv\"]"),
                             dir.path()),
      &notes);
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].objectives, (std::vector<double>{1, 2}));
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("gaps.csv: 3 row(s) left out: their objective is no finite number"), std::string::npos) << notes[0];
  for (const char* line : {"gaps.csv:3: objective \"abc\"", "gaps.csv:4: objective \"nan\"", "gaps.csv:5: objective \"inf\""}) {
    EXPECT_NE(notes[0].find(line), std::string::npos) << notes[0];
  }
  EXPECT_NE(notes[1].find("optuna.csv: 2 row(s) left out: their status is not a success"), std::string::npos) << notes[1];
  std::string big = "task,x,objective\n";
  for (std::size_t i = 0; i < kLargeWarmTask; ++i) big += "q," + std::to_string(static_cast<double>(i) / kLargeWarmTask) + ",1\n";
  lbo::testing::write_text(dir.path() / "big.csv", big);
  notes.clear();
  load_warm_start(lbo::testing::job_from(lbo::testing::test_job("", "[[tasks]]\nname = \"c\"\nbudget = 2\n", "",
                                                                "surrogate = \"random\"\nwarm_start = [\"big.csv\"]"),
                                         dir.path()),
                  &notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("big.csv:q has 2000 rows: every fit of the model takes all of them"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("[policy] max_fit_results = 2000"), std::string::npos) << notes[0];
}

// A job of several objectives warm-starts from earlier runs and CSV files that measured each of
// them, found by name: a run's objectives in any order, a CSV's `objective` (the first) and
// objective:<name> columns (lbo's results.csv) or Optuna's values_<i>. A source that lacks one
// is an error that names it. The earlier tasks' bests by the first objective and the other ends
// of their fronts start a new task, never an infeasible result.
TEST(LifelongRunTest, warm_start_with_several_objectives_takes_each_by_name) {
  lbo::testing::ScratchDir dir;
  const auto several = [](std::string text, const std::string& objectives) {
    const std::string single = "\"]\ndirection = \"maximize\"\n";
    text.replace(text.find(single), single.size(), "\", \"--pareto\", \"on\"]\nobjectives = [" + objectives + "]\n");
    return text;
  };
  const std::string value_cost = R"({ name = "value", direction = "maximize" }, { name = "cost", direction = "minimize" })";
  const std::string cost_value = R"({ name = "cost", direction = "minimize" }, { name = "value", direction = "maximize" })";
  ASSERT_EQ(run_job(several(lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 4\n"), value_cost), dir, 2, {},
                    dir.path() / "older")
                .exit_code,
            kExitDone);
  ASSERT_EQ(run_job(lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 2\n"), dir, 1, {}, dir.path() / "single").exit_code,
            kExitDone);
  const auto job_of = [&](const std::string& objectives, const std::string& entry) {
    return lbo::testing::job_from(several(lbo::testing::test_job("", "[[tasks]]\nname = \"c\"\nbudget = 2\n", "",
                                                                 "surrogate = \"random\"\nwarm_start = [\"" + entry + "\"]"),
                                          objectives),
                                  dir.path());
  };
  const std::vector<WarmTask> run = load_warm_start(job_of(value_cost, "older/t"));
  ASSERT_EQ(run.size(), 1u);
  ASSERT_EQ(run[0].values.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {  // the test objective: value x, cost x²
    const double x = *run[0].configs[i].values[0];
    EXPECT_EQ(run[0].values[i], (std::vector<double>{x, x * x}));
    EXPECT_EQ(run[0].objectives[i], x);
  }
  const std::vector<WarmTask> csv = load_warm_start(job_of(value_cost, "older/t/results.csv"));
  ASSERT_EQ(csv.size(), 1u);
  EXPECT_EQ(csv[0].configs, run[0].configs);
  EXPECT_EQ(csv[0].values, run[0].values);
  const std::vector<WarmTask> swapped = load_warm_start(job_of(cost_value, "older/t"));
  ASSERT_EQ(swapped.size(), 1u);
  ASSERT_EQ(swapped[0].values.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(swapped[0].values[i], (std::vector<double>{run[0].values[i][1], run[0].values[i][0]}));
    EXPECT_EQ(swapped[0].objectives[i], run[0].values[i][1]) << "objectives holds this job's first";
  }
  EXPECT_EQ(swapped[0].direction, lbo::jobs::Direction::minimize);
  lbo::testing::write_text(dir.path() / "optuna.csv",
                           "number,values_0,values_1,params_x,state\n0,0.5,0.25,0.5,COMPLETE\n1,,,0.9,FAIL\n2,0.8,0.64,0.8,COMPLETE\n");
  const std::vector<WarmTask> optuna = load_warm_start(job_of(value_cost, "optuna.csv"));
  ASSERT_EQ(optuna.size(), 1u);
  EXPECT_EQ(optuna[0].values, (std::vector<std::vector<double>>{{0.5, 0.25}, {0.8, 0.64}}));

  const auto error_of = [&](const std::string& entry) -> std::string {
    try {
      load_warm_start(job_of(value_cost, entry));
    } catch (const lbo::InputError& e) {
      return e.what();
    }
    ADD_FAILURE() << entry << " was accepted";
    return "";
  };
  EXPECT_NE(error_of("single/t").find("single/t: its results have no value for value, cost (they have objective); a warm "
                                      "start of several objectives takes runs that measured each of them, by name"),
            std::string::npos)
      << error_of("single/t");
  lbo::testing::write_text(dir.path() / "one.csv", "task,x,objective\nq,0.5,1\n");
  EXPECT_NE(error_of("one.csv").find("one.csv:1: no column for objective:cost (or values_1)"), std::string::npos) << error_of("one.csv");
  lbo::testing::write_text(dir.path() / "gap.csv", "task,x,objective,objective:cost\nq,0.5,1,0.25\nq,0.6,2,abc\n");
  EXPECT_NE(error_of("gap.csv").find("gap.csv:3: an ok row's objective:cost \"abc\" is not a finite number"), std::string::npos)
      << error_of("gap.csv");

  WarmTask w{"w", {{{0.1}}, {{0.2}}, {{0.3}}, {{0.4}}}, {5, 9, 4, 7}, lbo::jobs::Direction::maximize};
  w.values = {{5, 1}, {9, 8}, {4, 0.5}, {7, 3}};
  w.infeasible = {0, 0, 1, 0};
  const RunState empty = lbo::testing::started_state(job_of(value_cost, "optuna.csv"));
  EXPECT_EQ(earlier_bests(empty, 0, {w}, 3), (std::vector<lbo::jobs::Config>{{{0.2}}, {{0.1}}}))
      << "9, the best value, then cost 1, the least of the feasible (0.5 broke a limit)";
}

namespace {

// A job over x ∈ [0, 1] with the test objective's `function`, one slot's worth of settings.
std::string model_job(const std::string& function, const std::string& objective_extra, const std::string& policy,
                      const std::string& tasks, const std::string& schedule = "") {
  return std::string("name = \"t\"\nseed = 5\n[objective]\ncommand = [\"") + LBO_TEST_OBJECTIVE +
         "\", \"--function\", \"" + function + "\"]\ndirection = \"maximize\"\n" + objective_extra + "\n[policy]\n" +
         policy + "\n" + schedule + "\n[space]\nx = { type = \"float\", low = 0, high = 1 }\n" + tasks;
}

std::vector<std::string> task_order(const RunOutput& out) {
  std::vector<std::pair<long, std::string>> by_id;
  for (const auto& row : out.rows) by_id.emplace_back(std::stol(row.at("trial")), row.at("task"));
  std::sort(by_id.begin(), by_id.end());
  std::vector<std::string> order;
  for (const auto& [id, task] : by_id) order.push_back(task);
  return order;
}

}  // namespace

// With concurrent_tasks = 2 both tasks are open: after their random starts, each nominates
// and the Hedge draw picks; the draw is seeded, so --sync runs repeat exactly.
TEST(HedgeAcrossTasksTest, open_tasks_interleave_by_a_seeded_draw_and_the_log_shows_the_probabilities) {
  const std::string job = model_job("sum", "", "surrogate = \"gp\"\ninitial_random = 2",
                                    "[[tasks]]\nname = \"a\"\nbudget = 8\n[[tasks]]\nname = \"b\"\nbudget = 8\n",
                                    "[schedule]\nconcurrent_tasks = 2");
  MasterOptions options;
  options.sync = true;
  lbo::testing::ScratchDir first_dir, second_dir;
  const RunOutput first = run_job(job, first_dir, 1, options);
  const RunOutput second = run_job(job, second_dir, 1, options);
  ASSERT_EQ(first.exit_code, kExitDone) << first.log;
  EXPECT_EQ(rows_of(first, "a"), 8);
  EXPECT_EQ(rows_of(first, "b"), 8);
  const std::vector<std::string> order = task_order(first);
  // Task b starts long before a is done (one task at a time would run a's 8 trials first).
  const auto first_b = std::find(order.begin(), order.end(), "b") - order.begin();
  EXPECT_LT(first_b, 4) << first.log;
  EXPECT_NE(first.log.find("hedge over open tasks: a "), std::string::npos) << first.log;
  // hedge.csv: each draw's options a and b, probabilities summing to 1, one chosen: the task of
  // the trial in results.csv.
  const std::vector<lbo::testing::Row> draws = lbo::testing::read_csv(first.run_dir / "hedge.csv");
  ASSERT_FALSE(draws.empty()) << first.log;
  std::map<std::string, double> total;
  std::map<std::string, std::string> chosen;
  for (const auto& d : draws) {
    ASSERT_EQ(d.at("over"), "tasks");
    EXPECT_TRUE(d.at("option") == "a" || d.at("option") == "b") << d.at("option");
    total[d.at("trial")] += std::stod(d.at("probability"));
    if (d.at("chosen") == "1") chosen[d.at("trial")] = d.at("option");
  }
  EXPECT_EQ(chosen.size(), total.size());
  for (const auto& [trial, p] : total) EXPECT_NEAR(p, 1.0, 1e-5) << "trial " << trial;
  for (const auto& row : first.rows) {
    if (chosen.count(row.at("trial"))) {
      EXPECT_EQ(chosen[row.at("trial")], row.at("task")) << "trial " << row.at("trial");
    }
  }
  EXPECT_EQ(order, task_order(second));
  for (std::size_t i = 0; i < first.rows.size(); ++i) EXPECT_EQ(first.rows[i].at("x"), second.rows[i].at("x"));
  // tasks.csv: both tasks, their best trial and configuration; identical tasks correlate.
  const std::vector<lbo::testing::Row> tasks = lbo::testing::read_csv(first.run_dir / "tasks.csv");
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].at("task"), "a");
  EXPECT_EQ(tasks[0].at("origin"), "job file");
  EXPECT_EQ(tasks[0].at("ok"), "8");
  EXPECT_GT(std::stod(tasks[0].at("best")), 0.8);
  EXPECT_NEAR(std::stod(tasks[0].at("best")), std::stod(tasks[0].at("x")), 1e-5);  // f(x) = x
  EXPECT_FALSE(tasks[1].at("trials_to_95").empty());
  EXPECT_GT(std::stod(tasks[0].at("similarity:b")), 0.9);
  EXPECT_DOUBLE_EQ(std::stod(tasks[1].at("similarity:b")), 1.0);
}

// A stepwise objective: every trial feeds three step models; each step's best configuration
// is found near its own optimum (0.15, 0.5, 0.85).
TEST(StepwiseTest, three_steps_with_different_optima_each_get_their_best_configuration) {
  const std::string job = model_job("steps", "stepwise = 3", "surrogate = \"gp\"\ninitial_random = 3",
                                    "[[tasks]]\nname = \"seq\"\nbudget = 18\n");
  MasterOptions options;
  options.sync = true;
  lbo::testing::ScratchDir dir;
  const RunOutput out = run_job(job, dir, 1, options);
  ASSERT_EQ(out.exit_code, kExitDone) << out.log;
  ASSERT_EQ(out.rows.size(), 18u);
  for (const auto& row : out.rows) {
    ASSERT_EQ(row.at("status"), "ok") << out.log;
    EXPECT_EQ(row.at("objective"), row.at("step_3"));  // no "objective": the last step stands in
  }
  EXPECT_NE(out.log.find("hedge over steps: seq/step_1 "), std::string::npos) << out.log;
  const std::vector<lbo::testing::Row> steps = lbo::testing::read_csv(out.run_dir / "tasks.csv");
  ASSERT_EQ(steps.size(), 3u);
  const double optima[] = {0.15, 0.5, 0.85};
  for (int s = 0; s < 3; ++s) {
    EXPECT_EQ(steps[s].at("step"), std::to_string(s + 1));
    EXPECT_NEAR(std::stod(steps[s].at("x")), optima[s], 0.06) << "step " << s + 1;
    EXPECT_GT(std::stod(steps[s].at("best")), 0.996);
  }
}

TEST(StepwiseTest, a_result_without_the_declared_steps_is_a_failed_trial_with_a_reason) {
  const std::string job = model_job("sum", "stepwise = 2", "surrogate = \"random\"", "[[tasks]]\nname = \"a\"\nbudget = 2\n");
  lbo::testing::ScratchDir dir;
  const RunOutput out = run_job(job, dir, 1);
  ASSERT_EQ(out.exit_code, kExitDone) << out.log;
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[0].at("status"), "failed");
  EXPECT_NE(out.log.find("the result reports 0 \"steps\" values; [objective] stepwise = 2 expects 2"), std::string::npos)
      << out.log;
}
