// Ledger: a record counts once the journal holds it; it is applied to the run state before any
// listener hears of it; when lbo's own I/O fails, only an attempt's end is applied anyway.

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <variant>
#include <vector>

#include "lbo/orchestrator/ledger.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace lbo::orchestrator;

namespace {

// What a listener saw: each record's kind, and the trials the state held when it heard of it.
struct Heard : Ledger::Listener {
  std::vector<std::size_t> kinds;
  std::vector<std::int64_t> trials;
  std::vector<bool> finished;  // trial 0's, when it existed
  void applied(const JournalRecord& record, const RunState& state) override {
    kinds.push_back(record.index());
    trials.push_back(state.next_trial_id());
    finished.push_back(state.next_trial_id() > 0 && state.trial(0).finished);
  }
};

// A ledger on a new journal in a scratch folder, its RunStarted recorded, a listener heard
// everything, and each of lbo's own I/O failures kept by its errno.
struct OpenLedger {
  lbo::testing::ScratchDir dir;
  lbo::jobs::JobSpec job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  fs::path path = dir.path() / "journal.lbo";
  JournalWriter journal = JournalWriter::create(path);
  RunState state;
  std::vector<int> errors;
  Ledger ledger{journal, state, [this](const lbo::IoError& e) { errors.push_back(e.error_number()); }};
  Heard heard;

  OpenLedger() {
    ledger.listen(heard);
    ledger.open({"test", 0, 1, JobIdentity::of(job)});
  }
};

TrialStarted started(std::int64_t id) { return TrialStarted{id, 0, 1, lbo::jobs::Config{{1.0}}, "local:0", 0}; }

TrialFinished finished(std::int64_t id) {
  lbo::workers::Outcome ok;
  ok.status = lbo::workers::TrialStatus::ok;
  ok.objective = 0.5;
  return TrialFinished{id, 1, true, ok, "local:0", 1};
}

}  // namespace

TEST(LedgerTest, a_record_is_journaled_then_applied_then_heard) {
  OpenLedger open;
  auto& [dir, job, path, journal, state, errors, ledger, heard] = open;
  EXPECT_TRUE(ledger.record(started(0)));
  EXPECT_TRUE(ledger.record(finished(0), Ledger::Write::synced));
  ledger.commit();
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(heard.kinds, (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(heard.trials, (std::vector<std::int64_t>{0, 1, 1})) << "each applied before it was heard";
  EXPECT_EQ(heard.finished, (std::vector<bool>{false, false, true}));
  EXPECT_EQ(read_journal(path).records.size(), 3u);
  EXPECT_TRUE(state.trial(0).finished);
}

TEST(LedgerTest, when_the_journal_cannot_take_a_record_only_an_attempts_end_counts) {
  OpenLedger open;
  auto& [dir, job, path, journal, state, errors, ledger, heard] = open;
  ASSERT_TRUE(ledger.record(started(0)));
  ledger.commit();
  // The file size limit stands in for a full disk.
  ::signal(SIGXFSZ, SIG_IGN);
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  rlimit limit = old;
  limit.rlim_cur = static_cast<rlim_t>(fs::file_size(path));
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  const bool second_started = ledger.record(started(1));
  const bool first_finished = ledger.record(finished(0));
  const bool task_added = ledger.record(TaskAdded{{"later"}, 2}, Ledger::Write::synced);
  ::setrlimit(RLIMIT_FSIZE, &old);
  EXPECT_FALSE(second_started);
  EXPECT_FALSE(first_finished);
  EXPECT_FALSE(task_added);
  EXPECT_EQ(errors, (std::vector<int>{EFBIG, EFBIG, EFBIG}));
  EXPECT_EQ(state.next_trial_id(), 1) << "a start the journal lacks did not count";
  EXPECT_TRUE(state.trial(0).finished) << "an attempt's end counts even so";
  EXPECT_EQ(state.job().tasks.size(), job.tasks.size()) << "a task the journal lacks did not count";
  EXPECT_EQ(heard.kinds, (std::vector<std::size_t>{0, 1, 2})) << "the listeners heard what counted, no more";
  EXPECT_EQ(read_journal(path).records.size(), 2u);
}
