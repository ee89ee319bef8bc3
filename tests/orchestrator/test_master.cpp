#include "lbo/orchestrator/master.hpp"

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>

#include "lbo/cluster/simulated_transport.hpp"
#include "lbo/orchestrator/recovery.hpp"
#include "lbo/app/status.hpp"
#include "once_per_turn.hpp"
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

// Local slots that check, as each attempt is handed to a slot, that the journal already holds
// its start: a resume then always knows the attempt may be running.
class JournalFirstTransport final : public lbo::cluster::Transport {
 public:
  JournalFirstTransport(boost::asio::io_context& io, int slots, CompletionHandler done, fs::path journal, int& checked)
      : inner_(io, slots, std::move(done)), journal_(std::move(journal)), checked_(checked) {}
  int slot_count() const override { return inner_.slot_count(); }
  std::vector<std::string> resources() const override { return inner_.resources(); }
  int busy_count() const override { return inner_.busy_count(); }
  lbo::cluster::WorkerSlot next_slot() const override { return inner_.next_slot(); }
  lbo::cluster::WorkerSlot submit(lbo::workers::WorkOrder order) override {
    const std::string slot = lbo::cluster::to_string(next_slot());
    const JournalContents journal = read_journal(journal_);
    const bool recorded = std::any_of(journal.records.begin(), journal.records.end(), [&](const JournalRecord& r) {
      const auto* s = std::get_if<TrialStarted>(&r);
      return s != nullptr && s->trial == order.trial && s->attempt == order.attempt && s->worker == slot;
    });
    EXPECT_TRUE(recorded) << "trial " << order.trial << " attempt " << order.attempt << " starts unjournaled";
    EXPECT_FALSE(fs::exists(fs::path(order.workdir) / "stdout") && order.attempt == 1) << "its process ran before";
    ++checked_;
    return inner_.submit(std::move(order));
  }
  void cancel(std::int64_t trial) override { inner_.cancel(trial); }
  void cancel_all() override { inner_.cancel_all(); }
  void shutdown() override { inner_.shutdown(); }

 private:
  lbo::cluster::LocalTransport inner_;
  fs::path journal_;
  int& checked_;
};

}  // namespace

// Finding 5: the master started the objective before it journaled the attempt, so a kill -9
// in between left a process the resume did not know of.
TEST(MasterTest, every_attempt_is_journaled_before_its_process_starts) {
  lbo::testing::ScratchDir dir;
  int checked = 0;
  const fs::path journal = dir.path() / "runs" / "t" / "journal.lbo";
  const RunOutput out = run_job(
      lbo::testing::test_job(R"(outcome = { type = "categorical", choices = ["ok", "fail"] })",
                             "[[tasks]]\nname = \"a\"\nbudget = 12\n", "retries = 1"),
      dir, 2, {}, {}, [&](boost::asio::io_context& io, lbo::cluster::Transport::CompletionHandler done) {
        return std::make_unique<JournalFirstTransport>(io, 2, std::move(done), journal, checked);
      });
  EXPECT_EQ(out.exit_code, kExitDone) << out.log;
  int attempts = 0;
  for (const Row& row : out.rows) attempts += std::stoi(row.at("attempts"));
  EXPECT_EQ(checked, attempts);
  EXPECT_GT(attempts, 12) << "the seed should fail some first attempts, so retries are checked too";
}

// Slots freed together are refilled once every result that came with them is applied, so the
// proposals see the whole wave. Four simulated slots whose trials all take 10 virtual seconds:
// each wave's four results are journaled before the next four starts (before: a result, a
// start, a result, a start, each proposal from one more result).
TEST(MasterTest, a_wave_of_results_is_applied_before_its_slots_are_refilled) {
  lbo::testing::ScratchDir dir;
  // The real part of the virtual clock stands still: the clock moves only by jumps to a due
  // completion, so every wave ends at one virtual second whatever the machine's load.
  auto clock = std::make_shared<lbo::cluster::VirtualClock>(1.0e9, [] { return 0.0; });
  const RunOutput out = run_job(
      lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 12\n"), dir, 4, {}, {},
      [clock](boost::asio::io_context& io, lbo::cluster::Transport::CompletionHandler done) {
        return std::make_unique<lbo::cluster::SimulatedTransport>(
            io, clock, 4,
            [](const lbo::workers::WorkOrder& order) {
              lbo::workers::Outcome outcome;
              outcome.status = lbo::workers::TrialStatus::ok;
              outcome.objective = static_cast<double>(order.trial);
              return lbo::cluster::SimulatedAttempt{outcome, 10.0};
            },
            std::move(done), "10 s");
      });
  ASSERT_EQ(out.exit_code, kExitDone) << out.log;
  std::string order;
  for (const JournalRecord& r : out.journal.records) {
    if (std::holds_alternative<TrialStarted>(r)) order += 'S';
    if (std::holds_alternative<TrialFinished>(r)) order += 'F';
  }
  EXPECT_EQ(order, "SSSSFFFFSSSSFFFFSSSSFFFF");
  EXPECT_EQ(out.rows.size(), 12u);
}

// Finding 3 without root: lbo's own failure to make a trial's folder is not the objective's.
// No trial is charged, the run stops at once (exit 1: a file where trials/ should be does not
// go away by itself), and once the folder is fixed the same run completes.
TEST(MasterTest, lbos_own_io_failure_charges_no_trial_and_stops_the_run) {
  lbo::testing::ScratchDir dir;
  const std::string job = lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 6\n");
  ASSERT_EQ(run_job(job, dir, 2).exit_code, kExitDone);
  const fs::path trials = dir.path() / "runs" / "t" / "trials";
  // A second run in the same folder (budget raised) whose trials/ is not a folder any more.
  std::string more = job;
  more.replace(more.find("budget = 6"), 10, "budget = 9");
  fs::remove_all(trials);
  std::ofstream(trials) << "not a folder";
  const RunOutput stopped = run_job(more, dir, 2);
  EXPECT_EQ(stopped.exit_code, kExitError) << stopped.log;
  // Trials 6 and 7 start together on the two slots and the launcher's two threads make their
  // folders at once, so either may be the one whose failure is logged first.
  EXPECT_TRUE(stopped.log.find("lbo's own I/O failed: trial 6 could not be started") != std::string::npos ||
              stopped.log.find("lbo's own I/O failed: trial 7 could not be started") != std::string::npos)
      << stopped.log;
  EXPECT_EQ(stopped.rows.size(), 6u) << "nothing was charged";
  const RecoveredRun recovered = recover_run(stopped.run_dir);
  EXPECT_EQ(recovered.state.tasks()[0].finished, 6);
  for (const std::int64_t id : recovered.state.interrupted()) EXPECT_EQ(recovered.state.trial(id).failed_attempts, 0);
  EXPECT_FALSE(recovered.state.interrupted().empty());
  fs::remove(trials);
  fs::create_directories(trials);
  const RunOutput resumed = run_job(more, dir, 2);
  EXPECT_EQ(resumed.exit_code, kExitDone) << resumed.log;
  ASSERT_EQ(resumed.rows.size(), 9u);
  for (const Row& row : resumed.rows) EXPECT_EQ(row.at("status"), "ok");
}

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
    EXPECT_EQ(row.at("proposed_by"), "random");  // the job asks for random search
    EXPECT_TRUE(fs::exists(out.run_dir / "trials" / row.at("trial") / "params.json"));
  }
  EXPECT_EQ(per_task["a"], 5);
  EXPECT_EQ(per_task["b"], 7);
  EXPECT_TRUE(out.journal.warnings.empty());
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
  // Issue 18: the retry was dispatched before the failure was logged, which then named the
  // retry's number ("attempt 2 ... retrying" for a first attempt). retries = 2: attempts 1 and 2
  // are retried, attempt 3 is final.
  std::istringstream lines(out.log);
  int first_retried = 0;
  for (std::string line; std::getline(lines, line);) {
    const std::size_t at = line.find(") attempt ");
    if (at == std::string::npos) continue;
    const int attempt = std::stoi(line.substr(at + 10));
    const bool retrying = line.find("; retrying") != std::string::npos;
    EXPECT_EQ(retrying, attempt < 3) << line;
    first_retried += attempt == 1 && retrying;
  }
  EXPECT_GT(first_retried, 0) << out.log;
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

// Sends `signal_number` to this process after `delay`.
std::thread signal_later(int signal_number, std::chrono::milliseconds delay) {
  return std::thread([=] {
    std::this_thread::sleep_for(delay);
    ::kill(::getpid(), signal_number);
  });
}

// Sends `signal_number` to this process once `results` lists `rows` trials (at most 60 s).

TEST(MasterTest, a_stop_signal_cancels_after_the_grace_period_checkpoints_and_exits_75) {
  lbo::testing::ScratchDir dir;
  std::thread stopper = signal_later(SIGTERM, std::chrono::milliseconds(700));
  const auto t0 = std::chrono::steady_clock::now();
  const RunOutput out = run_job(
      "grace_s = 0.5\n" + lbo::testing::test_job(R"(outcome = { type = "categorical", choices = ["hang"] })",
                                                 "[[tasks]]\nname = \"a\"\nbudget = 50\n", "kill_grace_s = 0.2"),
      dir);
  stopper.join();
  EXPECT_EQ(out.exit_code, kExitResumable);
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.2);  // 0.7 + grace
  EXPECT_TRUE(out.rows.empty());  // nothing finished: cancelled attempts are not results
  EXPECT_EQ(count_finals(out.journal), 0);
  EXPECT_EQ(processes_under(dir.path()), 0);
  EXPECT_NE(out.log.find("received SIGTERM: no new trials; 2 running trial(s) have 0.5 s to finish"), std::string::npos)
      << out.log;
  EXPECT_NE(out.log.find("grace period over: cancelling the running trials"), std::string::npos) << out.log;
  const RecoveredRun recovered = recover_run(out.run_dir);
  ASSERT_TRUE(recovered.checkpoint_file);
  EXPECT_EQ(recovered.state.interrupted(), (std::vector<std::int64_t>{0, 1}));
}

TEST(MasterTest, trials_that_finish_within_the_grace_period_count) {
  lbo::testing::ScratchDir dir;
  std::thread stopper = signal_later(SIGUSR1, std::chrono::milliseconds(300));
  const RunOutput out = run_job(
      "grace_s = 5\n" + lbo::testing::test_job("sleep_ms = { type = \"int\", low = 600, high = 800 }",
                                               "[[tasks]]\nname = \"a\"\nbudget = 50\n"),
      dir);
  stopper.join();
  EXPECT_EQ(out.exit_code, kExitResumable);
  EXPECT_EQ(out.rows.size(), 2u);  // both running trials finished in their grace period
  EXPECT_NE(out.log.find("received SIGUSR1"), std::string::npos) << out.log;
}

TEST(MasterTest, a_stopped_run_resumes_to_exactly_its_budgets) {
  lbo::testing::ScratchDir dir;
  const std::string job = "grace_s = 0\n" + lbo::testing::test_job("sleep_ms = { type = \"int\", low = 50, high = 150 }",
                                                                     "[[tasks]]\nname = \"a\"\nbudget = 20\n[[tasks]]\nname = \"b\"\nbudget = 10\n",
                                                                     "", "surrogate = \"gp\"\ninitial_random = 3");
  std::thread stopper = lbo::testing::signal_after_rows(SIGTERM, dir.path() / "runs" / "t" / "results.csv", 8);
  const RunOutput first = run_job(job, dir, 3);
  stopper.join();
  ASSERT_EQ(first.exit_code, kExitResumable);
  const std::size_t committed = first.rows.size();
  EXPECT_GT(committed, 0u);
  EXPECT_LT(committed, 30u);
  const RunOutput second = run_job(job, dir, 2);  // fewer slots this time
  EXPECT_EQ(second.exit_code, kExitDone) << second.log;
  EXPECT_NE(second.log.find("resuming run t"), std::string::npos) << second.log;
  // Issue 18: the end line counted the earlier invocation's trials against this one's time.
  EXPECT_NE(second.log.find("done: " + std::to_string(30 - committed) + " trials finished in "), std::string::npos)
      << second.log;
  EXPECT_NE(second.log.find(" (30 in all, with earlier runs)"), std::string::npos) << second.log;
  ASSERT_EQ(second.rows.size(), 30u);
  std::map<std::string, int> per_task;
  for (std::size_t i = 0; i < second.rows.size(); ++i) {
    EXPECT_EQ(second.rows[i].at("trial"), std::to_string(i));
    ++per_task[second.rows[i].at("task")];
  }
  EXPECT_EQ(per_task["a"], 20);
  EXPECT_EQ(per_task["b"], 10);
  // Each task's initial design (3 trials, and more while the first results are still running:
  // nothing to fit yet), then the model's proposals (an interim GP's while a fit is late, as on a
  // loaded machine, with a note that says so); never a random fallback.
  std::map<std::string, std::map<std::string, int>> proposed;
  for (const Row& row : second.rows) {
    ++proposed[row.at("task")][row.at("proposed_by")];
    if (row.at("proposed_by") != "interim-gp") {
      EXPECT_TRUE(row.at("proposal_note").empty()) << row.at("trial");
    }
  }
  for (const std::string task : {"a", "b"}) {
    EXPECT_GE(proposed[task]["initial"], 3) << task;
    EXPECT_LE(proposed[task]["initial"], 5) << task << ": with 3 slots, 3 results come by the 6th trial";
    EXPECT_GT(proposed[task]["model"], 0) << task;
    EXPECT_EQ(proposed[task]["initial"] + proposed[task]["model"] + proposed[task]["interim-gp"], per_task[task]) << task;
  }
  // Every result committed before the stop is still there, unchanged.
  for (const Row& row : first.rows) EXPECT_EQ(second.rows[std::stoul(row.at("trial"))].at("objective"), row.at("objective"));
  // Resuming a finished run does nothing and says so.
  const RunOutput third = run_job(job, dir, 2);
  EXPECT_EQ(third.exit_code, kExitDone);
  EXPECT_EQ(third.rows.size(), 30u);
}

namespace {

// Branin on 3 slots with --sync, a deterministic objective taking 40-60 ms: `policy` and `tasks`
// (TOML) complete the job.
std::string exact_job(const std::string& policy, const std::string& tasks, int seed) {
  return "grace_s = 0\nname = \"exact\"\nseed = " + std::to_string(seed) + "\n[objective]\ncommand = [\"" +
         std::string(LBO_TEST_OBJECTIVE) + "\", \"--function\", \"branin\"]\ndirection = \"minimize\"\n[policy]\n" + policy +
         "\n[space]\nx1 = { type = \"float\", low = -5, high = 10 }\nx2 = { type = \"float\", low = 0, high = 15 }\n"
         "sleep_ms = { type = \"int\", low = 40, high = 60 }\n" + tasks;
}

// Runs `job` whole under <dir>/whole, and again under <dir>/stopped interrupted by SIGINT once
// `stop_after` trials are in results.csv and then resumed: the resumed run must have proposed
// exactly what the whole one did. Returns the whole run.
RunOutput expect_exact_resume(const std::string& job, const lbo::testing::ScratchDir& dir, std::size_t stop_after) {
  MasterOptions sync;
  sync.sync = true;
  RunOutput whole = run_job(job, dir, 3, sync, dir.path() / "whole");
  EXPECT_EQ(whole.exit_code, kExitDone) << whole.log;
  std::thread stopper = lbo::testing::signal_after_rows(SIGINT, dir.path() / "stopped" / "exact" / "results.csv", stop_after);
  const RunOutput part = run_job(job, dir, 3, sync, dir.path() / "stopped");
  stopper.join();
  EXPECT_EQ(part.exit_code, kExitResumable) << part.log;
  EXPECT_LT(part.rows.size(), whole.rows.size());
  const RunOutput rest = run_job(job, dir, 3, sync, dir.path() / "stopped");
  EXPECT_EQ(rest.exit_code, kExitDone) << rest.log;
  EXPECT_EQ(rest.rows.size(), whole.rows.size());
  for (std::size_t i = 0; i < whole.rows.size() && i < rest.rows.size(); ++i) {
    for (const char* column : {"trial", "task", "x1", "x2", "objective"}) {
      EXPECT_EQ(rest.rows[i].at(column), whole.rows[i].at(column)) << "trial " << i << " " << column;
    }
  }
  return whole;
}

}  // namespace

TEST(MasterTest, a_sync_run_stopped_and_resumed_proposes_what_an_unstopped_one_does) {
  lbo::testing::ScratchDir dir;
  // GP-Hedge, so its random draws count; the stop lands mid-round.
  const RunOutput whole = expect_exact_resume(
      exact_job("surrogate = \"gp\"\nacquisition = \"hedge\"\ninitial_random = 3", "[[tasks]]\nname = \"b\"\nbudget = 24\n", 21),
      dir, 10);
  EXPECT_EQ(whole.rows.size(), 24u);
}

namespace {

// The master's clock a million seconds ahead of this machine's: a master that read the
// system clock instead would find its deadline long past and start nothing.
double shifted_clock() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() + 1e6;
}

MasterOptions with_deadline(double seconds_from_now) {
  MasterOptions options;
  options.clock = shifted_clock;
  options.deadline = Deadline{shifted_clock() + seconds_from_now, "--deadline"};
  return options;
}

}  // namespace

// Issue 16: trials are started while one fits before the deadline less grace_s, then the run
// stops itself (exit 75); a resume whose deadline leaves no time for a trial (by the durations
// of the first run) starts none; one with time enough completes the budget, every trial once.
// Trials take at least their sleep, 150 ms: 40 of them on 2 slots cannot end within the 2 s
// before the cut-off, and no estimate made from them is below 150 ms.
TEST(MasterTest, a_run_stops_before_its_deadline_and_a_later_one_completes_it) {
  lbo::testing::ScratchDir dir;
  const std::string job = "grace_s = 0.5\n" + lbo::testing::test_job("sleep_ms = { type = \"int\", low = 150, high = 170 }",
                                                                      "[[tasks]]\nname = \"a\"\nbudget = 40\n");
  const MasterOptions first_options = with_deadline(2.5);
  const double cutoff = first_options.deadline->unix_time - 0.5;
  const RunOutput first = run_job(job, dir, 2, first_options);
  ASSERT_EQ(first.exit_code, kExitResumable) << first.log;
  EXPECT_NE(first.log.find("allocation ends "), std::string::npos) << first.log;
  EXPECT_NE(first.log.find(" (--deadline); trials that cannot finish by then less grace_s 0.5 s are not started"),
            std::string::npos)
      << first.log;
  EXPECT_NE(first.log.find("stopping for the deadline: "), std::string::npos) << first.log;
  EXPECT_EQ(first.log.find("received SIG"), std::string::npos) << first.log;
  EXPECT_GE(first.rows.size(), 2u);
  EXPECT_LT(first.rows.size(), 40u);
  // Before any trial has ended, trials start until the cut-off; after, only those whose
  // estimate (150 ms or more) ends by it. A start is journaled a little after its check (the
  // proposal): 50 ms of the 150 allow for that.
  bool one_ended = false;
  for (const JournalRecord& r : first.journal.records) {
    if (std::holds_alternative<TrialFinished>(r)) one_ended = true;
    if (const auto* s = std::get_if<TrialStarted>(&r)) {
      EXPECT_LT(s->unix_time, cutoff) << "trial " << s->trial << " started after the cut-off";
      if (one_ended) {
        EXPECT_LE(s->unix_time + 0.1, cutoff) << "trial " << s->trial << " cannot have fitted";
      }
    }
  }

  // 0.6 s before the deadline, less grace_s 0.5: no trial of 150 ms or more fits.
  const RunOutput second = run_job(job, dir, 2, with_deadline(0.6));
  EXPECT_EQ(second.exit_code, kExitResumable) << second.log;
  EXPECT_NE(second.log.find("task a: not starting trials: a trial takes ~0."), std::string::npos) << second.log;
  EXPECT_NE(second.log.find("stopping for the deadline: no trial can finish in the "), std::string::npos) << second.log;
  EXPECT_EQ(second.rows.size(), first.rows.size());
  const auto last_start = std::find_if(second.journal.records.rbegin(), second.journal.records.rend(),
                                       [](const JournalRecord& r) { return !std::holds_alternative<TrialFinished>(r); });
  ASSERT_NE(last_start, second.journal.records.rend());
  EXPECT_TRUE(std::holds_alternative<RunStarted>(*last_start)) << "a trial started after the resume";

  const RunOutput third = run_job(job, dir, 2, with_deadline(1000));
  EXPECT_EQ(third.exit_code, kExitDone) << third.log;
  ASSERT_EQ(third.rows.size(), 40u);
  for (std::size_t i = 0; i < third.rows.size(); ++i) {
    EXPECT_EQ(third.rows[i].at("trial"), std::to_string(i));
    EXPECT_EQ(third.rows[i].at("status"), "ok");
  }
  EXPECT_EQ(count_finals(third.journal), 40);
  for (const Row& row : first.rows) EXPECT_EQ(third.rows[std::stoul(row.at("trial"))].at("objective"), row.at("objective"));
}

// With no timeout_s and no trial ended yet, nothing tells how long a trial takes: trials start,
// and at the deadline less grace_s the usual stop begins, so no batch system has to kill them.
TEST(MasterTest, at_the_deadline_less_grace_s_the_usual_stop_begins) {
  lbo::testing::ScratchDir dir;
  const std::string job = "grace_s = 0.3\n" + lbo::testing::test_job(R"(outcome = { type = "categorical", choices = ["hang"] })",
                                                                      "[[tasks]]\nname = \"a\"\nbudget = 10\n",
                                                                      "kill_grace_s = 0.2");
  MasterOptions options = with_deadline(1.3);
  options.resume_command = "lbo run job.toml";
  const double deadline = options.deadline->unix_time;
  const RunOutput out = run_job(job, dir, 2, options);
  EXPECT_EQ(out.exit_code, kExitResumable) << out.log;
  EXPECT_GE(shifted_clock(), deadline - 0.3) << "stopped before the cut-off";
  EXPECT_NE(out.log.find("deadline: no trial has ended yet and the objective has no timeout_s"), std::string::npos) << out.log;
  EXPECT_NE(out.log.find("stopping for the deadline: grace_s (0.3 s) before the allocation ends at "), std::string::npos)
      << out.log;
  EXPECT_NE(out.log.find("no new trials; 2 running trial(s) have 0.3 s to finish"), std::string::npos) << out.log;
  EXPECT_NE(out.log.find("resume with: lbo run job.toml"), std::string::npos) << out.log;
  EXPECT_TRUE(out.rows.empty());
  EXPECT_EQ(processes_under(dir.path()), 0);
  const RecoveredRun recovered = recover_run(out.run_dir);
  EXPECT_EQ(recovered.state.interrupted(), (std::vector<std::int64_t>{0, 1}));
}

// A deadline closer than grace_s: the cut-off has passed before the first dispatch, and no
// trial starts even though nothing tells how long one takes.
TEST(MasterTest, a_run_that_starts_past_its_cut_off_starts_no_trial) {
  lbo::testing::ScratchDir dir;
  const std::string job = "grace_s = 30\n" + lbo::testing::test_job();
  const RunOutput out = run_job(job, dir, 2, with_deadline(5));
  EXPECT_EQ(out.exit_code, kExitResumable) << out.log;
  EXPECT_NE(out.log.find("task a: not starting trials: 0 s left before the deadline "), std::string::npos) << out.log;
  EXPECT_NE(out.log.find("stopping for the deadline: no trial can finish in the 0 s left before the deadline "),
            std::string::npos)
      << out.log;
  EXPECT_EQ(out.log.find("nothing tells how long a trial takes"), std::string::npos) << out.log;
  for (const JournalRecord& r : out.journal.records) EXPECT_FALSE(std::holds_alternative<TrialStarted>(r));
}

TEST(MasterTest, a_sync_libo_run_with_hedge_memory_stopped_and_resumed_proposes_what_an_unstopped_one_does) {
  lbo::testing::ScratchDir dir;
  // Two tasks: task a's forced exploration teaches META-KGL the kernel task b runs with, and
  // b's GP-Hedge starts from a's gains. The stop lands in task b, after that fit.
  const RunOutput whole = expect_exact_resume(
      exact_job("surrogate = \"libo\"\nacquisition = \"hedge\"",
                "[[tasks]]\nname = \"a\"\nbudget = 12\n[[tasks]]\nname = \"b\"\nbudget = 14\n", 5),
      dir, 16);
  ASSERT_EQ(whole.rows.size(), 26u);
  // LiBO's forced exploration is the default: ceil(√12 / 1) = 4 and ceil(√14 / 2^¼) = 4 trials.
  std::map<std::string, int> initial;
  for (const Row& row : whole.rows) initial[row.at("task")] += row.at("proposed_by") == "initial" ? 1 : 0;
  EXPECT_EQ(initial["a"], 4);
  EXPECT_EQ(initial["b"], 4);
  EXPECT_NE(whole.log.find("b: GP-Hedge gains start at hedge_memory 0.5 x a's:"), std::string::npos) << whole.log;
  // tasks.csv names the kernel each task ran with: task b's was learned from task a.
  std::ifstream tasks(dir.path() / "whole" / "exact" / "tasks.csv");
  std::string header, row_a, row_b;
  std::getline(tasks, header);
  std::getline(tasks, row_a);
  std::getline(tasks, row_b);
  EXPECT_TRUE(header.ends_with(",kernels")) << header;
  EXPECT_FALSE(row_b.ends_with(",")) << row_b;
  // b proposes from its k̂ GP, or from its plain GP once the GP switch took it, which the log says.
  if (row_b.find(",plain GP (leave-one-out log density ") != std::string::npos) {
    EXPECT_NE(whole.log.find("libo: b proposes from plain GP (leave-one-out log density "), std::string::npos) << whole.log;
  }
  // lbo status lists them too, learned from one finished task.
  const std::string status = status_report(whole.run_dir);
  EXPECT_NE(status.find("libo kernels (k̂ from the exploration of 1 finished task(s); k_full: all base kernels):\n"),
            std::string::npos)
      << status;
  EXPECT_NE(status.find("\n  a  "), std::string::npos) << status;
  EXPECT_NE(status.find("\n  b  "), std::string::npos) << status;
}

TEST(MasterTest, a_sync_jumbo_run_stopped_and_resumed_proposes_what_an_unstopped_one_does) {
  lbo::testing::ScratchDir dir;
  // Task a runs on its cold GP alone; when it finishes, the warm network learns from it and task
  // b proposes from both GPs. The stop lands in task b, after that fit.
  const RunOutput whole = expect_exact_resume(
      exact_job("surrogate = \"jumbo\"\nnetwork_width = 8\nnetwork_depth = 2",
                "[[tasks]]\nname = \"a\"\nbudget = 12\n[[tasks]]\nname = \"b\"\nbudget = 14\n", 5),
      dir, 17);
  ASSERT_EQ(whole.rows.size(), 26u);
  EXPECT_NE(whole.log.find("jumbo: no task has finished yet: proposals come from each task's cold GP alone"),
            std::string::npos)
      << whole.log;
  EXPECT_NE(whole.log.find("jumbo: the warm network learned from 1 finished task(s), 12 results; open tasks propose "
                           "from the cold GP among the warm GP's best (jumbo_threshold 0.1)"),
            std::string::npos)
      << whole.log;
  const std::string status = status_report(whole.run_dir);
  EXPECT_NE(status.find("jumbo warm network: trained on 1 finished task(s), 12 results\n"), std::string::npos) << status;
  // Each task's model at its last fit, in lbo status and tasks.csv: b's is both GPs, or its
  // cold GP alone once the switch chose it, which the log then says.
  const std::size_t list = status.find("jumbo model per task (at its last fit):\n  a ");
  ASSERT_NE(list, std::string::npos) << status;
  const std::size_t b_line = status.find("\n  b ", list);
  ASSERT_NE(b_line, std::string::npos) << status;
  const std::size_t b_start = status.find("cold GP", b_line);
  const std::string b = status.substr(b_start, status.find('\n', b_start) - b_start);
  if (b.starts_with("cold GP alone")) {
    EXPECT_NE(whole.log.find("jumbo: b proposes from cold GP alone (leave-one-out log density: cold "), std::string::npos)
        << whole.log;
  } else {
    EXPECT_EQ(b, "cold GP within the warm GP's best");
  }
  std::ifstream tasks(whole.run_dir / "tasks.csv");
  std::string header, row_a, row_b;
  std::getline(tasks, header);
  std::getline(tasks, row_a);
  std::getline(tasks, row_b);
  EXPECT_TRUE(header.ends_with(",kernels")) << header;
  EXPECT_TRUE(row_b.ends_with("," + b)) << row_b;
}

// The commit and the refill of a turn: asked for any number of times before it runs, an action
// runs once, after the handlers queued before the first ask; run early, its posted run does
// nothing, and it can be asked for again.
TEST(OncePerTurnTest, an_action_asked_for_many_times_in_a_turn_runs_once_after_the_handlers_before_it) {
  boost::asio::io_context io;
  std::string order;
  OncePerTurn refill(io, [&order] { order += 'R'; });
  boost::asio::post(io, [&order] { order += 'a'; });
  refill.ask();
  boost::asio::post(io, [&order] { order += 'b'; });
  refill.ask();
  EXPECT_TRUE(refill.asked());
  io.run();
  EXPECT_EQ(order, "aRb");
  EXPECT_FALSE(refill.asked());

  io.restart();
  order.clear();
  refill.ask();
  refill.run_if_asked();
  EXPECT_EQ(order, "R") << "run early";
  refill.run_if_asked();
  io.run();
  EXPECT_EQ(order, "R") << "neither the second call nor the posted run runs it again";
  refill.ask();
  io.restart();
  io.run();
  EXPECT_EQ(order, "RR");
}
