#include "lbo/orchestrator/recovery.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <sstream>

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/app/status.hpp"
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
          TrialStarted{0, 0, 1, at(0.1), "local:0", 2, ProposalSource::initial},
          TrialStarted{1, 0, 1, at(0.2), "local:1", 2, ProposalSource::initial},
          TrialFinished{0, 1, true, outcome(TrialStatus::ok, 5.0), "local:0", 3, 0, at(0.1), ProposalSource::initial},
          TrialStarted{2, 0, 1, at(0.3), "local:0", 3, ProposalSource::model},
          TrialFinished{1, 1, true, outcome(TrialStatus::ok, 7.0), "local:1", 4, 0, at(0.2), ProposalSource::initial},
          TrialFinished{2, 1, false, outcome(TrialStatus::failed, 0, "exit status 1"), "local:0", 4, 0, at(0.3),
                        ProposalSource::model},
          TrialStarted{3, 1, 1, at(0.4), "local:1", 4, ProposalSource::model_prior},
          TrialFinished{3, 1, false, outcome(TrialStatus::cancelled, 0, "cancelled by lbo"), "local:1", 5, 1, at(0.4),
                        ProposalSource::model_prior},
          TrialStarted{4, 1, 1, at(0.5), "local:0", 5, ProposalSource::random_fallback, "no model fit has finished yet"}};
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
  const RunState& state = run.state;
  ASSERT_EQ(state.trials().size(), 5u);
  EXPECT_EQ(state.job().tasks.size(), 2u);
  EXPECT_TRUE(state.trial(0).finished);
  EXPECT_EQ(state.trial(1).outcome.objective, 7.0);
  EXPECT_EQ(state.trial(2).failed_attempts, 1);
  EXPECT_FALSE(state.trial(2).finished);
  EXPECT_EQ(state.retries(), (std::vector<std::int64_t>{2}));
  EXPECT_EQ(state.interrupted(), (std::vector<std::int64_t>{3, 4}));
  for (const Trial& t : state.trials()) EXPECT_FALSE(t.running);
  EXPECT_EQ(state.trial(4).config, at(0.5));
  EXPECT_EQ(run.next_checkpoint, 1u);
  EXPECT_EQ(run.maybe_running, (std::vector<std::int64_t>{3, 4}));
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
  c.job = partial.state.job();
  c.trials = partial.state.trials();
  c.trials[2].running = true;
  c.trials[0].worker = "from-checkpoint";
  c.journal_bytes = ends[5];
  write_checkpoint_file(dir.path(), 7, encode_checkpoint(c));
  const RecoveredRun run = recover_run(dir.path());
  ASSERT_TRUE(run.checkpoint_file);
  EXPECT_EQ(run.next_checkpoint, 8u);
  EXPECT_EQ(run.state.trial(0).worker, "from-checkpoint");
  ASSERT_EQ(run.state.trials().size(), 5u);
  EXPECT_EQ(run.state.retries(), (std::vector<std::int64_t>{2}));
  EXPECT_EQ(run.state.interrupted(), (std::vector<std::int64_t>{3, 4}));
}

TEST(RecoveryTest, a_torn_journal_tail_is_dropped_with_a_warning) {
  lbo::testing::ScratchDir dir;
  write_journal(dir.path(), history());
  const auto size = fs::file_size(dir.path() / "journal.lbo");
  fs::resize_file(dir.path() / "journal.lbo", size - 3);  // the last TrialStarted is torn
  const RecoveredRun run = recover_run(dir.path());
  ASSERT_EQ(run.warnings.size(), 1u);
  EXPECT_NE(run.warnings[0].find("journal.lbo: dropped"), std::string::npos) << run.warnings[0];
  EXPECT_EQ(run.state.trials().size(), 4u);  // trial 4 never started as far as anyone knows
  EXPECT_LT(run.journal.end_bytes, size - 3);
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
  EXPECT_NE(run.warnings.front().find("the header is damaged"), std::string::npos) << run.warnings.front();
}

namespace {

// Overwrites `bytes` of the file at `offset`.
void overwrite(const fs::path& path, std::uint64_t offset, const std::string& bytes) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void flip_bit(const fs::path& path, std::uint64_t offset, int bit) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  f.seekp(static_cast<std::streamoff>(offset));
  c = static_cast<char>(c ^ (1 << bit));
  f.write(&c, 1);
}

std::vector<std::string> quiet;
const auto ignore_log = [](const std::string& line) { quiet.push_back(line); };

// Damaged copies kept beside the journal.
std::vector<fs::path> damaged_copies(const fs::path& dir) {
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("journal.lbo.damaged-", 0) == 0) found.push_back(e.path());
  }
  return found;
}

}  // namespace

// Finding 1: a damaged header with a checkpoint present used to truncate the journal to 0 bytes
// and append records without a header, so every later commit was unreadable.
TEST(RecoveryTest, a_damaged_header_is_repaired_in_place_and_later_commits_stay_readable) {
  lbo::testing::ScratchDir dir;
  std::vector<JournalRecord> records = history();
  const std::vector<std::uint64_t> ends = write_journal(dir.path(), records);
  fs::create_directories(dir.path() / "partial");
  write_journal(dir.path() / "partial", {records.begin(), records.begin() + 6});
  Checkpoint c;
  c.sequence = 1;
  const RecoveredRun partial = recover_run(dir.path() / "partial");
  c.job = partial.state.job();
  c.trials = partial.state.trials();
  c.journal_bytes = ends[5];
  write_checkpoint_file(dir.path(), 1, encode_checkpoint(c));
  const fs::path journal = dir.path() / "journal.lbo";
  const auto size = fs::file_size(journal);
  overwrite(journal, 0, std::string(4, '\0'));

  RecoveredRun run = recover_run(dir.path());
  EXPECT_EQ(run.state.trials().size(), 5u) << "the records after the checkpoint were read";
  EXPECT_EQ(run.state.interrupted(), (std::vector<std::int64_t>{3, 4}));
  {
    JournalWriter writer = continue_journal(RunPaths(dir.path()), run, ignore_log);
    EXPECT_EQ(writer.size_bytes(), size) << "nothing was cut";
    writer.append(TrialStarted{3, 1, 2, at(0.4), "local:0", 9});
    writer.append(TrialFinished{3, 2, true, outcome(TrialStatus::ok, 11.0), "local:0", 10, 1, at(0.4)});
    writer.sync();
  }
  const std::vector<fs::path> copies = damaged_copies(dir.path());
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(lbo::testing::read_text(copies[0]).substr(0, 4), std::string("\0\0\0\0", 4));
  EXPECT_EQ(fs::file_size(copies[0]), size);
  // Killed again now: the commit made after the damage is there.
  const RecoveredRun again = recover_run(dir.path());
  EXPECT_TRUE(again.state.trial(3).finished);
  EXPECT_EQ(again.state.trial(3).outcome.objective, 11.0);
  EXPECT_EQ(again.state.interrupted(), (std::vector<std::int64_t>{4}));
  EXPECT_FALSE(read_journal(journal).header_damaged);
}

// Finding 2: one flipped bit in a middle record used to cut every record after it, and their
// committed trials ran again.
TEST(RecoveryTest, a_flipped_bit_in_a_middle_record_loses_that_record_only_and_nothing_is_cut) {
  lbo::testing::ScratchDir dir;
  std::vector<JournalRecord> records = history();
  records.emplace_back(std::in_place_type<TrialFinished>, 4, 1, true, outcome(TrialStatus::ok, 9.0), "local:0", 6, 1, at(0.5));
  const std::vector<std::uint64_t> ends = write_journal(dir.path(), records);
  const fs::path journal = dir.path() / "journal.lbo";
  const auto size = fs::file_size(journal);
  // Record 2 (TrialStarted of trial 1) loses a bit in its payload.
  flip_bit(journal, ends[1] + 20, 3);

  RecoveredRun run = recover_run(dir.path());
  const RunState& state = run.state;
  // Trial 1's result record carries its task and configuration: nothing of it is lost.
  ASSERT_EQ(state.trials().size(), 5u);
  EXPECT_TRUE(state.trial(1).finished);
  EXPECT_EQ(state.trial(1).config, at(0.2));
  EXPECT_EQ(state.trial(1).outcome.objective, 7.0);
  EXPECT_EQ(state.trial(1).proposed_by, ProposalSource::initial);
  EXPECT_EQ(state.tasks()[0].proposed_by(ProposalSource::initial), 2);
  EXPECT_TRUE(state.trial(4).finished) << "the records after the damage are kept";
  EXPECT_EQ(state.retries(), (std::vector<std::int64_t>{2}));
  EXPECT_EQ(state.interrupted(), (std::vector<std::int64_t>{3}));
  const std::string warnings = [&] {
    std::string all;
    for (const std::string& w : run.warnings) all += w + "\n";
    return all;
  }();
  EXPECT_NE(warnings.find("at byte " + std::to_string(ends[1])), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("trial 1: the record that started it is lost; rebuilt from its result"), std::string::npos)
      << warnings;
  {
    JournalWriter writer = continue_journal(RunPaths(dir.path()), run, ignore_log);
    EXPECT_EQ(writer.size_bytes(), size);
  }
  EXPECT_EQ(fs::file_size(journal), size) << "the damaged record and everything after it stay";
  EXPECT_EQ(damaged_copies(dir.path()).size(), 1u);
}

TEST(RecoveryTest, a_lost_result_record_makes_its_trial_run_again_and_says_so) {
  lbo::testing::ScratchDir dir;
  const std::vector<std::uint64_t> ends = write_journal(dir.path(), history());
  // Record 6 is trial 2's failed attempt (a retry was due); record 3 trial 0's ok result.
  flip_bit(dir.path() / "journal.lbo", ends[2] + 30, 1);
  const RecoveredRun run = recover_run(dir.path());
  EXPECT_FALSE(run.state.trial(0).finished);
  EXPECT_EQ(run.state.interrupted(), (std::vector<std::int64_t>{0, 3, 4}));
  std::string all;
  for (const std::string& w : run.warnings) all += w + "\n";
  EXPECT_NE(all.find("trial(s) 0 started before the damaged bytes and have no result after them"), std::string::npos)
      << all;
}

// Finding 6: killed in its first milliseconds, a run left a journal with only its header, and
// the same command then failed ("the journal names no job").
TEST(RecoveryTest, a_journal_without_records_is_an_empty_run_not_an_error) {
  lbo::testing::ScratchDir dir;
  for (const std::string& content : {journal_header(), journal_header().substr(0, 3), std::string()}) {
    std::ofstream(dir.path() / "journal.lbo", std::ios::binary | std::ios::trunc) << content;
    const RecoveredRun run = recover_run(dir.path());
    EXPECT_TRUE(run.empty()) << content.size() << " bytes";
    EXPECT_TRUE(run.warnings.empty());
    {
      JournalWriter writer = continue_journal(RunPaths(dir.path()), run, ignore_log);
      writer.append(RunStarted{"0.1.0", 1.0, 2, two_tasks()});
    }
    const RecoveredRun started = recover_run(dir.path());
    EXPECT_FALSE(started.empty());
    EXPECT_EQ(started.state.job().tasks.size(), 2u);
  }
}

TEST(RecoveryTest, a_lost_job_record_needs_the_job_file) {
  lbo::testing::ScratchDir dir;
  const std::vector<std::uint64_t> ends = write_journal(dir.path(), history());
  flip_bit(dir.path() / "journal.lbo", 8 + 20, 2);  // the RunStarted record
  EXPECT_THROW(recover_run(dir.path()), lbo::CorruptStateError);
  const JobIdentity job_file = two_tasks();
  const RecoveredRun run = recover_run(dir.path(), &job_file);
  EXPECT_EQ(run.state.trials().size(), 5u);
  EXPECT_EQ(run.state.retries(), (std::vector<std::int64_t>{2}));
}
// Issue 18: with a budget of 1e8 the fixed-width columns of lbo status ran together.
TEST(RecoveryTest, status_columns_stay_apart_with_the_largest_budget) {
  lbo::testing::ScratchDir dir;
  JobIdentity job = two_tasks();
  job.tasks = {{"a-task-with-a-long-name", 100'000'000, ""}};
  std::vector<JournalRecord> records{RunStarted{"0.1.0", 1.0, 2, job}};
  for (std::int64_t id = 0; id < 1000; ++id) {
    records.push_back(TrialStarted{id, 0, 1, at(0.001 * static_cast<double>(id)), "local:0", 2, ProposalSource::model});
    records.push_back(TrialFinished{id, 1, true, outcome(TrialStatus::ok, static_cast<double>(id)), "local:0", 3, 0,
                                    at(0.001 * static_cast<double>(id)), ProposalSource::model});
  }
  write_journal(dir.path(), records);
  const std::string report = status_report(dir.path());
  std::istringstream lines(report);
  std::vector<std::string> table;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("task ", 0) == 0 || line.rfind("a-task-with-a-long-name ", 0) == 0) table.push_back(line);
  }
  ASSERT_EQ(table.size(), 2u) << report;
  // Every column starts where its header starts, after at least two spaces.
  for (const std::string cell : {"1000/100000000", "1000", "0", "1000 model", "999 (trial 999)"}) {
    const std::size_t at = table[1].find(" " + cell + " ") != std::string::npos ? table[1].find(" " + cell + " ")
                                                                                : table[1].rfind(" " + cell);
    ASSERT_NE(at, std::string::npos) << cell << "\n" << report;
    EXPECT_EQ(table[1].substr(at - 1, 2), "  ") << cell << "\n" << report;
  }
  EXPECT_EQ(table[0].find("done/budget"), table[1].find("1000/100000000")) << report;
  EXPECT_EQ(table[0].find("ok"), table[1].find("1000", table[1].find("1000/100000000") + 14)) << report;
}

TEST(RecoveryTest, status_summarizes_tasks_failures_and_the_lock) {
  lbo::testing::ScratchDir dir;
  std::vector<JournalRecord> records = history();
  records.push_back(TrialStarted{2, 0, 2, at(0.3), "local:1", 6});
  records.push_back(TrialFinished{2, 2, true, outcome(TrialStatus::failed, 0, "exit status 1"), "local:1", 7});
  write_journal(dir.path(), records);
  std::ofstream(dir.path() / "lock") << "pid 4242 on elsewhere\n";
  const std::string report = status_report(dir.path());
  EXPECT_NE(report.find("state: not running (last held by pid 4242 on elsewhere, which stopped without ending: killed, "
                        "or its machine lost)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("last checkpoint: none yet"), std::string::npos) << report;
  EXPECT_NE(report.find("task  origin    done/budget  ok    failed  to rerun  to 95%  networks    proposed by          best (maximize)"),
            std::string::npos)
      << report;
  // Task a's ok results, in order, are 5 then 7: the second trial reached 95% of the way.
  EXPECT_NE(report.find("a     job file  3/3          2     1       0         2       -           2 initial, 1 model   7 (trial 1)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("b     job file  0/2          0     0       2         -       -           1 prior, 1 fallback  -"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("1 x failed: exit status 1"), std::string::npos) << report;
  EXPECT_THROW(status_report(dir.path() / "missing"), lbo::InputError);
}

namespace {

// A run as a live master makes it: each record appended to the journal and applied to a live
// RunState, checkpoints written along the way (the newest two kept, as the writer does).
struct SimulatedRun {
  JobIdentity job;
  std::vector<JournalRecord> records;
  std::vector<std::uint64_t> ends;  ///< offset just past each record
  std::vector<RunState> states;     ///< the live state after each record
  struct Saved {
    std::size_t records = 0;  ///< records it covers
    std::uint64_t sequence = 0;
  };
  std::vector<Saved> checkpoints;  ///< on disk, oldest first
};

SimulatedRun simulate(const fs::path& dir, std::mt19937& rng) {
  SimulatedRun run;
  run.job = two_tasks();
  run.job.tasks = {{"a", 12, ""}, {"b", 8, ""}};
  const int retries = 1, slots = 3;
  JournalWriter writer = JournalWriter::create(dir / "journal.lbo");
  RunState live;
  const auto append = [&](const JournalRecord& r) {
    writer.append(r);
    live.apply(r);
    run.records.push_back(r);
    run.ends.push_back(writer.size_bytes());
    run.states.push_back(live);
  };
  append(RunStarted{"sim", 0, slots, run.job});
  std::uint64_t sequence = 0;
  double clock = 1;
  const int steps = std::uniform_int_distribution<int>(10, 90)(rng);
  for (int step = 0; step < steps; ++step) {
    clock += 1;
    std::vector<std::int64_t> running;
    for (const Trial& t : live.trials()) {
      if (t.running) running.push_back(t.id);
    }
    const double event = std::uniform_real_distribution<double>(0, 1)(rng);
    if (event < 0.45 && static_cast<int>(running.size()) < slots) {
      // Dispatch what a scheduler would: interrupted, retry, else a new trial.
      std::optional<std::int64_t> again;
      if (!live.interrupted().empty()) again = live.interrupted().front();
      else if (!live.retries().empty()) again = live.retries().front();
      if (again) {
        const Trial& t = live.trial(*again);
        append(TrialStarted{t.id, t.task, t.attempts + 1, t.config, "local:0", clock});
      } else {
        for (int task = 0; task < static_cast<int>(live.tasks().size()); ++task) {
          if (live.tasks()[task].created >= live.job().tasks[task].budget) continue;
          const double x = std::uniform_real_distribution<double>(0, 1)(rng);
          const bool initial = live.tasks()[task].created < 3;
          append(TrialStarted{live.next_trial_id(), task, 1, at(x), "local:1", clock,
                              initial ? ProposalSource::initial : ProposalSource::model});
          break;
        }
      }
    } else if (event < 0.85 && !running.empty()) {
      const std::int64_t id = running[std::uniform_int_distribution<std::size_t>(0, running.size() - 1)(rng)];
      const Trial& t = live.trial(id);
      const double kind = std::uniform_real_distribution<double>(0, 1)(rng);
      const TrialStatus status = kind < 0.6 ? TrialStatus::ok : kind < 0.85 ? TrialStatus::failed : TrialStatus::cancelled;
      const bool final = status == TrialStatus::ok || (status == TrialStatus::failed && t.failed_attempts >= retries);
      append(TrialFinished{id, t.attempts, final, outcome(status, std::uniform_real_distribution<double>(0, 10)(rng)),
                           "local:2", clock, t.task, t.config, t.proposed_by, t.proposal_note});
    } else if (event < 0.88) {
      append(TaskAdded{TaskIdentity{"added-" + std::to_string(step), 2, ""}, clock});
    } else if (event < 0.93) {
      // A stop and a resume: the running attempts are interrupted, then a new RunStarted.
      live.stop_running();
      run.states.back() = live;
      append(RunStarted{"sim", clock, slots, live.job()});
    } else {
      writer.sync();
      Checkpoint c;
      c.sequence = ++sequence;
      c.job = live.job();
      c.trials = live.trials();
      c.retries = live.retries();
      c.interrupted = live.interrupted();
      c.journal_bytes = writer.size_bytes();
      write_checkpoint_file(dir, c.sequence, encode_checkpoint(c));
      run.checkpoints.push_back({run.records.size(), c.sequence});
      if (run.checkpoints.size() > 2) run.checkpoints.erase(run.checkpoints.begin());
    }
  }
  writer.sync();
  return run;
}

void expect_same_state(const RunState& a, const RunState& b, const std::string& where) {
  ASSERT_EQ(a.trials().size(), b.trials().size()) << where;
  for (std::size_t i = 0; i < a.trials().size(); ++i) {
    const Trial& x = a.trials()[i];
    const Trial& y = b.trials()[i];
    EXPECT_EQ(x.task, y.task) << where << " trial " << i;
    EXPECT_EQ(x.config, y.config) << where << " trial " << i;
    EXPECT_EQ(x.attempts, y.attempts) << where << " trial " << i;
    EXPECT_EQ(x.failed_attempts, y.failed_attempts) << where << " trial " << i;
    EXPECT_EQ(x.finished, y.finished) << where << " trial " << i;
    EXPECT_EQ(x.running, y.running) << where << " trial " << i;
    EXPECT_EQ(x.outcome.status, y.outcome.status) << where << " trial " << i;
    EXPECT_EQ(x.outcome.objective, y.outcome.objective) << where << " trial " << i;
    EXPECT_EQ(x.proposed_by, y.proposed_by) << where << " trial " << i;
  }
  EXPECT_EQ(a.retries(), b.retries()) << where;
  EXPECT_EQ(a.interrupted(), b.interrupted()) << where;
  ASSERT_EQ(a.tasks().size(), b.tasks().size()) << where;
  for (std::size_t t = 0; t < a.tasks().size(); ++t) {
    EXPECT_EQ(a.tasks()[t].created, b.tasks()[t].created) << where << " task " << t;
    EXPECT_EQ(a.tasks()[t].finished, b.tasks()[t].finished) << where << " task " << t;
    EXPECT_EQ(a.tasks()[t].best_trial, b.tasks()[t].best_trial) << where << " task " << t;
    EXPECT_EQ(a.tasks()[t].proposed, b.tasks()[t].proposed) << where << " task " << t;
  }
}

// The live state after the first `n` records, as a resume sees it (running attempts stopped).
RunState stopped_after(const SimulatedRun& run, std::size_t n) {
  if (n == 0) return RunState();
  RunState s = run.states[n - 1];
  s.stop_running();
  return s;
}

// Every result committed in a record still intact on disk (a final TrialFinished among the
// first `kept` records, but `damaged`) is in `state`, unchanged and not queued to run again;
// and every result `state` holds is one the run committed.
void expect_no_commit_lost(const SimulatedRun& run, const RunState& state, std::size_t kept,
                           std::optional<std::size_t> damaged, const std::string& where) {
  std::map<std::int64_t, const TrialFinished*> committed;
  for (std::size_t i = 0; i < kept; ++i) {
    const auto* f = std::get_if<TrialFinished>(&run.records[i]);
    if (f != nullptr && f->final && i != damaged) committed[f->trial] = f;
  }
  for (const auto& [id, f] : committed) {
    ASSERT_LT(id, state.next_trial_id()) << where << ": committed trial " << id << " vanished";
    const Trial& t = state.trial(id);
    EXPECT_TRUE(t.finished) << where << ": committed trial " << id << " runs again";
    EXPECT_EQ(t.outcome.objective, f->outcome.objective) << where << " trial " << id;
    EXPECT_EQ(t.config, f->config) << where << " trial " << id;
    EXPECT_EQ(t.proposed_by, f->proposed_by) << where << " trial " << id;
  }
  const RunState& last = run.states.back();
  for (const Trial& t : state.trials()) {
    if (!t.finished) continue;
    ASSERT_LT(t.id, last.next_trial_id()) << where;
    EXPECT_TRUE(last.trial(t.id).finished) << where << ": trial " << t.id << " has a result the run never committed";
    EXPECT_EQ(t.outcome.objective, last.trial(t.id).outcome.objective) << where << " trial " << t.id;
  }
}

}  // namespace

// Random event sequences (dispatch, retry, results ok/failed/cancelled, tasks added, stops and
// resumes, checkpoints), then a crash at any byte of the journal, damage to any record, a
// damaged newest checkpoint, or several of these. Recovery never loses a record still intact
// on disk, never runs a committed trial again, and equals the live state where nothing was
// damaged; continuing the damaged journal keeps all of that true.
TEST(RecoveryPropertyTest, damage_never_loses_an_intact_commit_and_a_clean_crash_recovers_the_live_state) {
  lbo::testing::ScratchDir dir;
  std::mt19937 rng(20261123);
  int cases = 0, damaged_cases = 0, lost_trials = 0;
  for (int sequence = 0; sequence < 120; ++sequence) {
    const fs::path original = dir.path() / ("run-" + std::to_string(sequence));
    fs::create_directories(original);
    const SimulatedRun run = simulate(original, rng);
    const std::uint64_t size = run.ends.back();
    for (int round = 0; round < 4; ++round, ++cases) {
      const fs::path copy = dir.path() / ("case-" + std::to_string(sequence) + "-" + std::to_string(round));
      fs::copy(original, copy);
      const fs::path journal = copy / "journal.lbo";
      const std::string where = "sequence " + std::to_string(sequence) + " round " + std::to_string(round);
      // A crash: any byte after what the newest checkpoint covers (it was synced before).
      const std::uint64_t covered = run.checkpoints.empty() ? 8 : run.ends[run.checkpoints.back().records - 1];
      const std::uint64_t cut = std::uniform_int_distribution<std::uint64_t>(covered, size)(rng);
      fs::resize_file(journal, cut);
      std::size_t kept = 0;  // records wholly before the cut
      while (kept < run.ends.size() && run.ends[kept] <= cut) ++kept;
      std::optional<std::size_t> damaged;
      if (round >= 2 && kept > 1) {
        // One bit of one record, anywhere in its frame.
        damaged = std::uniform_int_distribution<std::size_t>(1, kept - 1)(rng);
        const std::uint64_t from = run.ends[*damaged - 1], to = run.ends[*damaged];
        flip_bit(journal, std::uniform_int_distribution<std::uint64_t>(from, to - 1)(rng),
                 std::uniform_int_distribution<int>(0, 7)(rng));
        ++damaged_cases;
      }
      const bool damaged_checkpoint = round == 3 && !run.checkpoints.empty();
      if (damaged_checkpoint) {
        const fs::path newest = RunPaths(copy).checkpoint(run.checkpoints.back().sequence);
        flip_bit(newest, fs::file_size(newest) / 2, 4);
      }
      RecoveredRun recovered = recover_run(copy, &run.job);
      const bool covered_by_checkpoint =
          damaged && !damaged_checkpoint && !run.checkpoints.empty() && *damaged < run.checkpoints.back().records;
      if (!damaged || covered_by_checkpoint) {
        expect_same_state(recovered.state, stopped_after(run, kept), where + " (a clean crash)");
      }
      expect_no_commit_lost(run, recovered.state, kept, covered_by_checkpoint ? std::nullopt : damaged, where);
      for (const Trial& t : recovered.state.trials()) lost_trials += t.lost() ? 1 : 0;
      // Continuing the journal destroys nothing: a record appended now is read back with
      // everything that was intact before.
      {
        JournalWriter writer = continue_journal(RunPaths(copy), recovered, ignore_log);
        writer.append(TaskAdded{TaskIdentity{"after-the-damage", 1, ""}, 1e9});
        writer.sync();
      }
      const RecoveredRun again = recover_run(copy, &run.job);
      expect_no_commit_lost(run, again.state, kept, covered_by_checkpoint ? std::nullopt : damaged, where + " (continued)");
      EXPECT_EQ(again.state.job().tasks.back().name, "after-the-damage") << where;
      if (::testing::Test::HasFailure()) return;
      fs::remove_all(copy);
    }
    fs::remove_all(original);
  }
  EXPECT_EQ(cases, 480);
  EXPECT_GT(damaged_cases, 150);
  std::cout << cases << " cases, " << damaged_cases << " with a damaged record, " << lost_trials
            << " trials lost with every record naming them\n";
}
