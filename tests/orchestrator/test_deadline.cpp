#include "lbo/orchestrator/deadline.hpp"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <thread>

#include "lbo/jobs/error.hpp"
#include "test_support.hpp"

using namespace lbo::orchestrator;
namespace fs = std::filesystem;

namespace {

constexpr double kNow = 1'795'000'000;            // 2026-11-18T11:06:40Z
constexpr double kAllocationEnd = 1'795'575'600;  // 2026-11-25T03:00:00Z

// Sets (or with nullptr unsets) environment variables for one test, and restores them.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::map<std::string, const char*>& vars) {
    for (const auto& [name, value] : vars) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      set(name, value);
    }
    ::tzset();
  }
  ScopedEnv(const std::string& name, const char* value) : ScopedEnv(std::map<std::string, const char*>{{name, value}}) {}
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) set(name, value ? value->c_str() : nullptr);
    ::tzset();
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  static void set(const std::string& name, const char* value) {
    if (value) {
      ::setenv(name.c_str(), value, 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
  std::map<std::string, std::optional<std::string>> saved_;
};

// None of the deadline sources, so a test sees only what it sets (CI may run under SLURM).
std::map<std::string, const char*> no_sources() {
  return {{"LBO_DEADLINE", nullptr}, {"SLURM_JOB_ID", nullptr}, {"SLURM_JOB_END_TIME", nullptr}};
}

std::string error_of(const std::string& text, const std::string& what = "--deadline") {
  try {
    parse_deadline(text, kNow, what);
  } catch (const lbo::InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << text << " was accepted";
  return "";
}

// A `squeue` on PATH that runs `script` (sh), in `dir`/bin.
std::string fake_squeue(const fs::path& dir, const std::string& script) {
  const fs::path bin = dir / "bin";
  fs::create_directories(bin);
  std::ofstream(bin / "squeue") << "#!/bin/sh\n" << script << "\n";
  fs::permissions(bin / "squeue", fs::perms::owner_all);
  return bin.string() + ":/usr/bin:/bin";
}

lbo::workers::Outcome ended(lbo::workers::TrialStatus status, double duration_s) {
  lbo::workers::Outcome o;
  o.status = status;
  o.duration_s = duration_s;
  return o;
}

lbo::workers::Outcome ok_for(double duration_s) { return ended(lbo::workers::TrialStatus::ok, duration_s); }

// Whether process `pid` runs: it exists and is not a zombie (killed, but not yet reaped by
// whichever process adopted it).
bool is_alive(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const std::size_t state = line.rfind(')') + 2;
  return state < line.size() && line[state] != 'Z' && line[state] != 'X';
}

}  // namespace

TEST(DeadlineTest, unix_seconds_and_iso_dates_in_utc_or_with_an_offset) {
  EXPECT_DOUBLE_EQ(parse_deadline("1795575600", kNow, "--deadline"), kAllocationEnd);
  EXPECT_DOUBLE_EQ(parse_deadline(" 1795575600.5 ", kNow, "--deadline"), kAllocationEnd + 0.5);
  EXPECT_DOUBLE_EQ(parse_deadline("2026-11-25T03:00:00Z", kNow, "--deadline"), kAllocationEnd);
  EXPECT_DOUBLE_EQ(parse_deadline("2026-11-25 03:00Z", kNow, "--deadline"), kAllocationEnd);
  EXPECT_DOUBLE_EQ(parse_deadline("2026-11-25T03:00:00.25Z", kNow, "--deadline"), kAllocationEnd + 0.25);
  EXPECT_DOUBLE_EQ(parse_deadline("2026-11-25T04:30:00+01:30", kNow, "--deadline"), kAllocationEnd);
  EXPECT_DOUBLE_EQ(parse_deadline("2026-11-25T04:30:00+0130", kNow, "--deadline"), kAllocationEnd);
  EXPECT_DOUBLE_EQ(parse_deadline("2026-11-24T22:00:00-05:00", kNow, "--deadline"), kAllocationEnd);
  EXPECT_EQ(format_utc(kAllocationEnd), "2026-11-25T03:00:00Z");
}

TEST(DeadlineTest, a_date_time_without_a_zone_is_local_time) {
  const ScopedEnv utc_plus_2("TZ", "LBO-2");  // POSIX: 2 hours east of UTC
  EXPECT_DOUBLE_EQ(parse_deadline("2026-11-25T05:00:00", kNow, "--deadline"), kAllocationEnd);
  EXPECT_DOUBLE_EQ(parse_deadline("2026-11-25T05:00", kNow, "--deadline"), kAllocationEnd);
}

TEST(DeadlineTest, durations_count_from_now) {
  EXPECT_DOUBLE_EQ(parse_deadline("+3600", kNow, "--deadline"), kNow + 3600);
  EXPECT_DOUBLE_EQ(parse_deadline("+2.5", kNow, "--deadline"), kNow + 2.5);
  EXPECT_DOUBLE_EQ(parse_deadline("+90m", kNow, "--deadline"), kNow + 5400);
  EXPECT_DOUBLE_EQ(parse_deadline("+2h", kNow, "--deadline"), kNow + 7200);
  EXPECT_DOUBLE_EQ(parse_deadline("+1h30m", kNow, "--deadline"), kNow + 5400);
  EXPECT_DOUBLE_EQ(parse_deadline("+1h30m15s", kNow, "--deadline"), kNow + 5415);
  EXPECT_DOUBLE_EQ(parse_deadline("+45s", kNow, "--deadline"), kNow + 45);
  EXPECT_DOUBLE_EQ(parse_deadline("+1.5h", kNow, "--deadline"), kNow + 5400);
}

TEST(DeadlineTest, bad_times_name_the_option_and_the_accepted_forms) {
  for (const char* bad : {"tomorrow", "", "+", "+90x", "+30m1h", "+1h1h", "+m", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
                          "2026-11-25", "2026-11-25T25:00Z", "2026-11-25T03:00:00+25:00", "2026-11-25T03:00:00Zjunk",
                          "2026-11-25T3:00", "-3600"}) {
    const std::string message = error_of(bad);
    EXPECT_EQ(message.rfind("--deadline " + std::string(bad) + ": ", 0), 0u) << message;
    EXPECT_NE(message.find("unix seconds"), std::string::npos) << message;
    EXPECT_NE(message.find("+1h30m"), std::string::npos) << message;
    EXPECT_NE(message.find("ends in Z or ±HH:MM"), std::string::npos) << message;
  }
  EXPECT_NE(error_of("2026-11-25").find("a date needs its time of day"), std::string::npos);
  EXPECT_NE(error_of("2026-02-30T00:00:00Z").find("no such date"), std::string::npos);
  EXPECT_EQ(error_of("soon", "LBO_DEADLINE").rfind("LBO_DEADLINE=soon: not a time; ", 0), 0u);
}

TEST(DeadlineTest, a_deadline_must_be_in_the_future) {
  EXPECT_NE(error_of("1000").find("is not in the future (1970-01-01T00:16:40Z; now is 2026-11-18T11:06:40Z)"),
            std::string::npos);
  EXPECT_NE(error_of("+0").find("is not in the future"), std::string::npos);
  EXPECT_NE(error_of("2026-11-18T11:06:40Z").find("is not in the future"), std::string::npos);
}

TEST(DeadlineTest, the_option_comes_before_lbo_deadline_before_slurm) {
  auto env = no_sources();
  env["LBO_DEADLINE"] = "+2h";
  env["SLURM_JOB_ID"] = "4242";
  env["SLURM_JOB_END_TIME"] = "1795575600";
  const ScopedEnv scoped(env);
  const DeadlineSearch by_option = find_deadline("+1h", kNow);
  ASSERT_TRUE(by_option.deadline);
  EXPECT_DOUBLE_EQ(by_option.deadline->unix_time, kNow + 3600);
  EXPECT_EQ(by_option.deadline->source, "--deadline");
  const DeadlineSearch by_variable = find_deadline(std::nullopt, kNow);
  ASSERT_TRUE(by_variable.deadline);
  EXPECT_DOUBLE_EQ(by_variable.deadline->unix_time, kNow + 7200);
  EXPECT_EQ(by_variable.deadline->source, "LBO_DEADLINE");
  {
    const ScopedEnv unset("LBO_DEADLINE", "");  // empty: unset
    const DeadlineSearch by_slurm = find_deadline(std::nullopt, kNow);
    ASSERT_TRUE(by_slurm.deadline);
    EXPECT_DOUBLE_EQ(by_slurm.deadline->unix_time, kAllocationEnd);
    EXPECT_EQ(by_slurm.deadline->source, "SLURM_JOB_END_TIME");
    EXPECT_TRUE(by_slurm.warnings.empty());
  }
  const ScopedEnv bad("LBO_DEADLINE", "someday");
  try {
    find_deadline(std::nullopt, kNow);
    FAIL() << "a bad LBO_DEADLINE was accepted";
  } catch (const lbo::InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("LBO_DEADLINE=someday: not a time;", 0), 0u) << e.what();
  }
}

TEST(DeadlineTest, outside_slurm_there_is_no_deadline) {
  auto env = no_sources();
  env["SLURM_JOB_END_TIME"] = "1795575600";  // without a job id: not this process's job
  const ScopedEnv scoped(env);
  const DeadlineSearch found = find_deadline(std::nullopt, kNow);
  EXPECT_FALSE(found.deadline);
  EXPECT_TRUE(found.warnings.empty());
  EXPECT_TRUE(found.notes.empty());
}

TEST(DeadlineTest, squeue_gives_the_end_in_local_time) {
  lbo::testing::ScratchDir dir;
  auto env = no_sources();
  env["SLURM_JOB_ID"] = "4242";
  env["TZ"] = "LBO-2";
  // Answers only the question lbo should ask.
  const std::string path = fake_squeue(
      dir.path(), R"([ "$*" = "-h -j 4242 -o %e" ] || { echo "unexpected arguments: $*" >&2; exit 1; }
echo 2026-11-25T05:00:00)");
  env["PATH"] = path.c_str();
  const ScopedEnv scoped(env);
  const DeadlineSearch found = find_deadline(std::nullopt, kNow);
  ASSERT_TRUE(found.deadline) << (found.warnings.empty() ? "" : found.warnings.front());
  EXPECT_DOUBLE_EQ(found.deadline->unix_time, kAllocationEnd);
  EXPECT_EQ(found.deadline->source, "squeue");
}

TEST(DeadlineTest, a_bad_slurm_job_end_time_falls_back_to_squeue) {
  lbo::testing::ScratchDir dir;
  auto env = no_sources();
  env["SLURM_JOB_ID"] = "4242";
  env["SLURM_JOB_END_TIME"] = "later";
  const std::string path = fake_squeue(dir.path(), "echo 2026-11-25T03:00:00");
  env["PATH"] = path.c_str();
  env["TZ"] = "UTC0";
  const ScopedEnv scoped(env);
  const DeadlineSearch found = find_deadline(std::nullopt, kNow);
  ASSERT_TRUE(found.deadline);
  EXPECT_EQ(found.deadline->source, "squeue");
  ASSERT_EQ(found.warnings.size(), 1u);
  EXPECT_EQ(found.warnings[0], "SLURM_JOB_END_TIME=later is not unix seconds; asking squeue");
}

TEST(DeadlineTest, a_job_without_an_end_time_has_no_deadline) {
  lbo::testing::ScratchDir dir;
  for (const char* none : {"N/A", "Unknown", "NONE"}) {
    auto env = no_sources();
    env["SLURM_JOB_ID"] = "4242";
    const std::string path = fake_squeue(dir.path(), std::string("echo ") + none);
    env["PATH"] = path.c_str();
    const ScopedEnv scoped(env);
    const DeadlineSearch found = find_deadline(std::nullopt, kNow);
    EXPECT_FALSE(found.deadline) << none;
    EXPECT_TRUE(found.warnings.empty()) << none;
    ASSERT_EQ(found.notes.size(), 1u) << none;
    EXPECT_EQ(found.notes[0], "SLURM job 4242 has no end time (squeue -h -j 4242 -o %e: " + std::string(none) + "): no deadline");
  }
}

TEST(DeadlineTest, a_hanging_squeue_is_given_up_on_within_its_timeout) {
  lbo::testing::ScratchDir dir;
  auto env = no_sources();
  env["SLURM_JOB_ID"] = "4242";
  // The script's child holds the pipe open too: the whole process group must go.
  const fs::path child_pid = dir.path() / "child.pid";
  const std::string path = fake_squeue(dir.path(), "echo thinking; sleep 30 & echo $! > " + child_pid.string() +
                                                       "; wait; echo 2026-11-25T03:00:00");
  env["PATH"] = path.c_str();
  const ScopedEnv scoped(env);
  const DeadlineSearch found = find_deadline(std::nullopt, kNow, std::chrono::milliseconds(300));
  const std::string pid = lbo::testing::read_text(child_pid);
  ASSERT_FALSE(pid.empty());
  // SIGKILL is delivered asynchronously: on a loaded machine the child may take a moment to go.
  bool alive = is_alive(std::stoi(pid));
  for (int i = 0; i < 200 && alive; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    alive = is_alive(std::stoi(pid));
  }
  EXPECT_FALSE(alive) << "squeue's child still runs 2 s after the timeout";
  EXPECT_FALSE(found.deadline);
  ASSERT_EQ(found.warnings.size(), 1u);
  EXPECT_EQ(found.warnings[0].rfind("squeue -h -j 4242 -o %e gave no answer within 300 ms (it said \"thinking\"): no "
                                    "deadline",
                                    0),
            0u)
      << found.warnings[0];
}

TEST(DeadlineTest, a_missing_or_failing_squeue_is_a_warning) {
  lbo::testing::ScratchDir dir;
  auto env = no_sources();
  env["SLURM_JOB_ID"] = "4242";
  const std::string empty = (dir.path() / "empty").string();
  fs::create_directories(empty);
  env["PATH"] = empty.c_str();
  {
    const ScopedEnv scoped(env);
    const DeadlineSearch found = find_deadline(std::nullopt, kNow);
    EXPECT_FALSE(found.deadline);
    ASSERT_EQ(found.warnings.size(), 1u);
    EXPECT_NE(found.warnings[0].find("cannot start squeue: No such file or directory"), std::string::npos) << found.warnings[0];
  }
  const std::string failing =
      fake_squeue(dir.path(), "echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1");
  env["PATH"] = failing.c_str();
  {
    const ScopedEnv scoped(env);
    const DeadlineSearch found = find_deadline(std::nullopt, kNow);
    EXPECT_FALSE(found.deadline);
    ASSERT_EQ(found.warnings.size(), 1u);
    EXPECT_NE(found.warnings[0].find("exited with status 1 (it said \"slurm_load_jobs error: Invalid job id specified\")"),
              std::string::npos)
        << found.warnings[0];
  }
  const std::string garbage = fake_squeue(dir.path(), "echo soon");
  env["PATH"] = garbage.c_str();
  {
    const ScopedEnv scoped(env);
    const DeadlineSearch found = find_deadline(std::nullopt, kNow);
    EXPECT_FALSE(found.deadline);
    ASSERT_EQ(found.warnings.size(), 1u);
    EXPECT_NE(found.warnings[0].find("\"soon\" is not an end time"), std::string::npos) << found.warnings[0];
  }
}

TEST(TrialDurationsTest, the_estimate_is_the_nearest_rank_90th_percentile) {
  const auto p90 = [](int n) {
    std::vector<double> v;
    for (int i = n; i >= 1; --i) v.push_back(i);  // n, n-1, ..., 1
    return TrialDurations::percentile_90(v);
  };
  // ⌈0.9 n⌉-th smallest of 1..n.
  EXPECT_EQ(p90(1), 1);
  EXPECT_EQ(p90(2), 2);
  EXPECT_EQ(p90(3), 3);
  EXPECT_EQ(p90(9), 9);
  EXPECT_EQ(p90(10), 9);
  EXPECT_EQ(p90(11), 10);
  EXPECT_EQ(p90(20), 18);
  EXPECT_EQ(p90(50), 45);
}

TEST(TrialDurationsTest, each_task_keeps_its_last_50_and_the_others_pool) {
  TrialDurations durations;
  EXPECT_FALSE(durations.estimate(0));
  durations.add(0, ok_for(4));
  ASSERT_TRUE(durations.estimate(0));
  EXPECT_EQ(durations.estimate(0)->seconds, 4);
  EXPECT_EQ(durations.estimate(0)->basis, "1 trial");
  durations.add(0, ended(lbo::workers::TrialStatus::failed, 7));
  durations.add(0, ended(lbo::workers::TrialStatus::timeout, 5));
  EXPECT_EQ(durations.estimate(0)->seconds, 7);
  EXPECT_EQ(durations.estimate(0)->basis, "longest of 3 trials");
  // Attempts lbo stopped say nothing of the objective's time.
  durations.add(0, ended(lbo::workers::TrialStatus::cancelled, 100));
  durations.add(0, ended(lbo::workers::TrialStatus::lbo_error, 100));
  EXPECT_EQ(durations.estimate(0)->seconds, 7);
  // A task with none of its own: the pool.
  ASSERT_TRUE(durations.estimate(3));
  EXPECT_EQ(durations.estimate(3)->seconds, 7);
  EXPECT_EQ(durations.estimate(3)->basis, "longest of 3 trials of all tasks");
  // 1..60 on task 1: its window holds 11..60, whose 45th smallest is 55.
  for (int i = 1; i <= 60; ++i) durations.add(1, ended(lbo::workers::TrialStatus::crashed, i));
  EXPECT_EQ(durations.estimate(1)->seconds, 55);
  EXPECT_EQ(durations.estimate(1)->basis, "90th percentile of 50 trials");
  EXPECT_EQ(durations.estimate(0)->seconds, 7);
  EXPECT_EQ(durations.estimate(3)->seconds, 55);  // the pool's last 50 are task 1's too
}

TEST(TrialDurationsTest, a_resumed_run_starts_from_the_attempts_its_state_holds) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(
      lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 9\n[[tasks]]\nname = \"b\"\nbudget = 9\n"), dir.path());
  RunState state = lbo::testing::started_state(job);
  const auto finish = [&](std::int64_t id, const lbo::workers::Outcome& outcome, double when, bool final) {
    const Trial& t = state.trial(id);
    state.apply(TrialFinished{id, t.attempts, final, outcome, "local:0", when, t.task, t.config, t.proposed_by, ""});
  };
  for (int i = 0; i < 5; ++i) lbo::testing::start_trial(state, 0, lbo::jobs::Config{{0.5}});
  finish(0, ok_for(3), 100, true);
  finish(1, ended(lbo::workers::TrialStatus::failed, 8), 101, false);  // a retry waits: its attempt counts
  finish(2, ended(lbo::workers::TrialStatus::cancelled, 50), 102, false);  // interrupted: does not count
  finish(3, ok_for(2), 99, true);
  // Trial 4 still runs.
  const TrialDurations durations(state);
  ASSERT_TRUE(durations.estimate(0));
  EXPECT_EQ(durations.estimate(0)->seconds, 8);
  EXPECT_EQ(durations.estimate(0)->basis, "longest of 3 trials");
  EXPECT_EQ(durations.estimate(1)->basis, "longest of 3 trials of all tasks");
}

namespace {

struct PlannerFixture {
  lbo::testing::ScratchDir dir;
  lbo::jobs::JobSpec job;
  RunState state;
  std::vector<std::string> log;

  explicit PlannerFixture(const std::string& objective_extra = "") {
    job = lbo::testing::job_from("grace_s = 60\n" + lbo::testing::test_job("",
                                                                            "[[tasks]]\nname = \"a\"\nbudget = 9\n"
                                                                            "[[tasks]]\nname = \"b\"\nbudget = 9\n",
                                                                            objective_extra),
                                 dir.path());
    state = lbo::testing::started_state(job);
  }
  DeadlinePlanner planner() {
    return DeadlinePlanner(Deadline{kAllocationEnd, "SLURM_JOB_END_TIME"}, job, state,
                           [this](const std::string& line) { log.push_back(line); });
  }
};

}  // namespace

TEST(DeadlinePlannerTest, a_trial_fits_when_it_ends_by_the_deadline_less_grace_s) {
  PlannerFixture f;
  DeadlinePlanner planner = f.planner();
  EXPECT_EQ(planner.start_line(), "allocation ends 2026-11-25T03:00:00Z (SLURM_JOB_END_TIME); trials that cannot finish by "
                                  "then less grace_s 60 s are not started");
  EXPECT_DOUBLE_EQ(planner.cutoff(), kAllocationEnd - 60);
  for (double d : {300.0, 340.0, 120.0}) planner.record(1, ok_for(d));
  // Task b's trials take 340 s: one started 400 s before the deadline ends exactly at its cut-off.
  const double boundary = kAllocationEnd - 60 - 340;
  EXPECT_TRUE(planner.may_start(1, boundary));
  EXPECT_TRUE(f.log.empty()) << "a task that fits from the start says nothing";
  EXPECT_FALSE(planner.may_start(1, boundary + 0.5));
  EXPECT_FALSE(planner.may_start(1, boundary + 1));
  EXPECT_FALSE(planner.may_start(1, boundary + 2));
  ASSERT_EQ(f.log.size(), 1u) << "once per change, not per call";
  EXPECT_EQ(f.log[0], "task b: not starting trials: a trial takes ~340 s (longest of 3 trials), 340 s left before the "
                      "deadline 2026-11-25T03:00:00Z less grace_s 60");
  // Task a has none of its own: the pool says 340 s too.
  EXPECT_FALSE(planner.may_start(0, boundary + 130));
  ASSERT_EQ(f.log.size(), 2u);
  EXPECT_EQ(f.log[1], "task a: not starting trials: a trial takes ~340 s (longest of 3 trials of all tasks), 210 s left "
                      "before the deadline 2026-11-25T03:00:00Z less grace_s 60");
  // Shorter trials of its own bring task a back.
  for (int i = 0; i < 10; ++i) planner.record(0, ok_for(i < 9 ? 100 : 1000));
  EXPECT_TRUE(planner.may_start(0, boundary + 130));
  ASSERT_EQ(f.log.size(), 3u);
  EXPECT_EQ(f.log[2], "task a: starting trials: a trial takes ~100 s (90th percentile of 10 trials), 210 s left before the "
                      "deadline 2026-11-25T03:00:00Z less grace_s 60");
  EXPECT_EQ(planner.nothing_fits(kAllocationEnd - 160),
            "stopping for the deadline: no trial can finish in the 100 s left before the deadline 2026-11-25T03:00:00Z "
            "(SLURM_JOB_END_TIME) less grace_s 60");
  EXPECT_EQ(planner.cutoff_reached(),
            "stopping for the deadline: grace_s (60 s) before the allocation ends at 2026-11-25T03:00:00Z "
            "(SLURM_JOB_END_TIME)");
}

TEST(DeadlinePlannerTest, before_any_trial_has_ended_the_timeout_is_the_estimate) {
  PlannerFixture f("timeout_s = 500");
  DeadlinePlanner planner = f.planner();
  ASSERT_TRUE(planner.estimate(0));
  EXPECT_EQ(planner.estimate(0)->seconds, 500);
  EXPECT_TRUE(planner.may_start(0, kAllocationEnd - 560));
  EXPECT_FALSE(planner.may_start(0, kAllocationEnd - 559));
  ASSERT_EQ(f.log.size(), 1u);
  EXPECT_EQ(f.log[0], "task a: not starting trials: a trial takes ~500 s (the objective's timeout_s), 499 s left before the "
                      "deadline 2026-11-25T03:00:00Z less grace_s 60");
  planner.record(0, ok_for(20));
  EXPECT_EQ(planner.estimate(0)->seconds, 20);
}

TEST(DeadlinePlannerTest, with_nothing_to_estimate_from_trials_start_and_the_log_says_so_once) {
  PlannerFixture f;
  DeadlinePlanner planner = f.planner();
  EXPECT_FALSE(planner.estimate(0));
  EXPECT_TRUE(planner.may_start(0, kAllocationEnd - 61));
  EXPECT_TRUE(planner.may_start(1, kAllocationEnd - 61));
  EXPECT_TRUE(planner.may_start(0, kAllocationEnd - 61));
  ASSERT_EQ(f.log.size(), 1u);
  EXPECT_EQ(f.log[0], "deadline: no trial has ended yet and the objective has no timeout_s, so nothing tells how long a "
                      "trial takes: trials start until one has ended");
  // From the cut-off on, none starts.
  EXPECT_FALSE(planner.may_start(0, kAllocationEnd - 60));
  ASSERT_EQ(f.log.size(), 2u);
  EXPECT_EQ(f.log[1], "task a: not starting trials: 0 s left before the deadline 2026-11-25T03:00:00Z less grace_s 60");
}

TEST(DeadlinePlannerTest, a_resumed_run_knows_its_earlier_trials_durations) {
  PlannerFixture f;
  for (int i = 0; i < 3; ++i) {
    const std::int64_t id = lbo::testing::start_trial(f.state, 0, lbo::jobs::Config{{0.5}});
    const Trial& t = f.state.trial(id);
    f.state.apply(TrialFinished{id, 1, true, ok_for(30.0 + i), "local:0", kNow + i, t.task, t.config, t.proposed_by, ""});
  }
  DeadlinePlanner planner = f.planner();
  ASSERT_TRUE(planner.estimate(0));
  EXPECT_EQ(planner.estimate(0)->seconds, 32);
}
