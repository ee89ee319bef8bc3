#include "lbo/orchestrator/journal.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "lbo/jobs/error.hpp"
#include "test_support.hpp"

using namespace lbo::orchestrator;
namespace fs = std::filesystem;

namespace {

std::vector<JournalRecord> sample_records() {
  TrialStarted started{7, 1, 2, lbo::jobs::Config{{1.0, std::nullopt, 0.25}}, "rank2:1", 1.7e9};
  lbo::workers::Outcome outcome;
  outcome.status = lbo::workers::TrialStatus::ok;
  outcome.objective = -0.125;
  outcome.steps = {0.5, 0.25};
  outcome.metrics_json = R"({"auc": 0.9})";
  outcome.duration_s = 12.5;
  TrialFinished finished{7, 2, true, outcome, "rank2:1", 1.7e9 + 12.5};
  lbo::workers::Outcome failure;
  failure.status = lbo::workers::TrialStatus::crashed;
  failure.reason = "killed by SIGSEGV";
  return {RunStarted{"0.1.0", 1.7e9, 4}, started, finished, TrialFinished{8, 1, false, failure, "local:0", 1.8e9}};
}

void expect_equal(const JournalRecord& a, const JournalRecord& b) {
  ASSERT_EQ(a.index(), b.index());
  if (const auto* x = std::get_if<RunStarted>(&a)) {
    const auto& y = std::get<RunStarted>(b);
    EXPECT_EQ(x->lbo_version, y.lbo_version);
    EXPECT_EQ(x->unix_time, y.unix_time);
    EXPECT_EQ(x->slots, y.slots);
  } else if (const auto* s = std::get_if<TrialStarted>(&a)) {
    const auto& t = std::get<TrialStarted>(b);
    EXPECT_EQ(s->trial, t.trial);
    EXPECT_EQ(s->task, t.task);
    EXPECT_EQ(s->attempt, t.attempt);
    EXPECT_EQ(s->config, t.config);
    EXPECT_EQ(s->worker, t.worker);
    EXPECT_EQ(s->unix_time, t.unix_time);
  } else {
    const auto& f = std::get<TrialFinished>(a);
    const auto& g = std::get<TrialFinished>(b);
    EXPECT_EQ(f.trial, g.trial);
    EXPECT_EQ(f.attempt, g.attempt);
    EXPECT_EQ(f.final, g.final);
    EXPECT_EQ(f.worker, g.worker);
    EXPECT_EQ(f.unix_time, g.unix_time);
    EXPECT_EQ(f.outcome.status, g.outcome.status);
    EXPECT_EQ(f.outcome.objective, g.outcome.objective);
    EXPECT_EQ(f.outcome.steps, g.outcome.steps);
    EXPECT_EQ(f.outcome.metrics_json, g.outcome.metrics_json);
    EXPECT_EQ(f.outcome.reason, g.outcome.reason);
    EXPECT_EQ(f.outcome.duration_s, g.outcome.duration_s);
  }
}

fs::path write_journal(const fs::path& dir, const std::vector<JournalRecord>& records) {
  const fs::path path = dir / "journal.lbo";
  JournalWriter writer = JournalWriter::create(path);
  for (const JournalRecord& r : records) writer.append(r);
  writer.sync();
  return path;
}

}  // namespace

TEST(JournalTest, round_trip_keeps_every_field) {
  lbo::testing::ScratchDir dir;
  const auto records = sample_records();
  const fs::path path = write_journal(dir.path(), records);
  const JournalContents read = read_journal(path);
  EXPECT_TRUE(read.warning.empty()) << read.warning;
  EXPECT_EQ(read.dropped_bytes, 0u);
  EXPECT_EQ(read.valid_bytes, fs::file_size(path));
  ASSERT_EQ(read.records.size(), records.size());
  for (std::size_t i = 0; i < records.size(); ++i) expect_equal(read.records[i], records[i]);
}

TEST(JournalTest, a_torn_last_record_is_dropped_with_a_warning) {
  lbo::testing::ScratchDir dir;
  const auto records = sample_records();
  const fs::path path = write_journal(dir.path(), records);
  const auto full = fs::file_size(path);
  const auto last = frame_record(records.back()).size();
  // Cut the last record anywhere: inside its length, its CRC or its payload.
  for (std::uintmax_t cut : {std::uintmax_t{1}, std::uintmax_t{5}, std::uintmax_t{9}, last - 1}) {
    const fs::path torn = dir.path() / ("torn-" + std::to_string(cut));
    fs::copy_file(path, torn);
    fs::resize_file(torn, full - cut);
    const JournalContents read = read_journal(torn);
    ASSERT_EQ(read.records.size(), records.size() - 1) << "cut " << cut;
    EXPECT_EQ(read.valid_bytes, full - last);
    EXPECT_EQ(read.dropped_bytes, last - cut);
    EXPECT_NE(read.warning.find("dropped " + std::to_string(last - cut) + " bytes"), std::string::npos) << read.warning;
    for (std::size_t i = 0; i + 1 < records.size(); ++i) expect_equal(read.records[i], records[i]);
  }
}

TEST(JournalTest, a_bit_flip_in_the_last_record_fails_its_checksum) {
  lbo::testing::ScratchDir dir;
  const auto records = sample_records();
  const fs::path path = write_journal(dir.path(), records);
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(-3, std::ios::end);
  char c = 0;
  f.read(&c, 1);
  f.seekp(-3, std::ios::end);
  c = static_cast<char>(c ^ 0x10);
  f.write(&c, 1);
  f.close();
  const JournalContents read = read_journal(path);
  EXPECT_EQ(read.records.size(), records.size() - 1);
  EXPECT_FALSE(read.warning.empty());
}

TEST(JournalTest, garbage_length_does_not_allocate_or_crash) {
  lbo::testing::ScratchDir dir;
  const fs::path path = write_journal(dir.path(), sample_records());
  std::ofstream(path, std::ios::app | std::ios::binary) << std::string("\xff\xff\xff\x7f\x00\x00\x00\x00junk", 12);
  const JournalContents read = read_journal(path);
  EXPECT_EQ(read.records.size(), sample_records().size());
  EXPECT_EQ(read.dropped_bytes, 12u);
}

TEST(JournalTest, not_a_journal_is_corrupt_state) {
  lbo::testing::ScratchDir dir;
  std::ofstream(dir.path() / "x.lbo") << "hello world";
  EXPECT_THROW(read_journal(dir.path() / "x.lbo"), lbo::CorruptStateError);
  EXPECT_THROW(read_journal(dir.path() / "missing.lbo"), lbo::CorruptStateError);
}

TEST(JournalTest, create_refuses_to_overwrite) {
  lbo::testing::ScratchDir dir;
  write_journal(dir.path(), {});
  EXPECT_THROW(JournalWriter::create(dir.path() / "journal.lbo"), lbo::Error);
  EXPECT_EQ(read_journal(dir.path() / "journal.lbo").records.size(), 0u);
}
