#include "lbo/orchestrator/journal.hpp"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "framing.hpp"
#include "lbo/jobs/error.hpp"
#include "test_support.hpp"

using namespace lbo::orchestrator;
namespace fs = std::filesystem;

namespace {

std::vector<JournalRecord> sample_records() {
  TrialStarted started{7, 1, 2, lbo::jobs::Config{{1.0, std::nullopt, 0.25}}, "rank2:1", 1.7e9,
                       ProposalSource::random_fallback, "no model fit has finished yet"};
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
  RunStarted run{"0.1.0", 1.7e9, 4};
  run.job.virtual_clock = true;
  run.job.constraints = {lbo::jobs::Constraint{"memory_gb", std::nullopt, 16.0}, lbo::jobs::Constraint{"ms", 0.5, 5.0}};
  return {run, started, finished, TrialFinished{8, 1, false, failure, "local:0", 1.8e9}};
}

void expect_equal(const JournalRecord& a, const JournalRecord& b) {
  ASSERT_EQ(a.index(), b.index());
  if (const auto* x = std::get_if<RunStarted>(&a)) {
    const auto& y = std::get<RunStarted>(b);
    EXPECT_EQ(x->lbo_version, y.lbo_version);
    EXPECT_EQ(x->unix_time, y.unix_time);
    EXPECT_EQ(x->slots, y.slots);
    EXPECT_EQ(x->job.virtual_clock, y.job.virtual_clock);
    EXPECT_EQ(x->job.constraints, y.job.constraints);
  } else if (const auto* s = std::get_if<TrialStarted>(&a)) {
    const auto& t = std::get<TrialStarted>(b);
    EXPECT_EQ(s->trial, t.trial);
    EXPECT_EQ(s->task, t.task);
    EXPECT_EQ(s->attempt, t.attempt);
    EXPECT_EQ(s->config, t.config);
    EXPECT_EQ(s->worker, t.worker);
    EXPECT_EQ(s->unix_time, t.unix_time);
    EXPECT_EQ(s->proposed_by, t.proposed_by);
    EXPECT_EQ(s->proposal_note, t.proposal_note);
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

fs::path journal_of(const fs::path& dir, const std::vector<JournalRecord>& records) {
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
  const fs::path path = journal_of(dir.path(), records);
  const JournalContents read = read_journal(path);
  EXPECT_TRUE(read.warnings.empty());
  EXPECT_EQ(read.torn_bytes, 0u);
  EXPECT_FALSE(read.damage_found());
  EXPECT_EQ(read.end_bytes, fs::file_size(path));
  ASSERT_EQ(read.records.size(), records.size());
  for (std::size_t i = 0; i < records.size(); ++i) expect_equal(read.records[i], records[i]);
}

TEST(JournalTest, a_result_record_carries_its_task_and_configuration) {
  lbo::testing::ScratchDir dir;
  lbo::workers::Outcome ok;
  ok.status = lbo::workers::TrialStatus::ok;
  const TrialFinished finished{3, 1, true, ok, "local:0", 5, 2, lbo::jobs::Config{{0.5, std::nullopt}}};
  const JournalContents read = read_journal(journal_of(dir.path(), {finished}));
  ASSERT_EQ(read.records.size(), 1u);
  const auto& back = std::get<TrialFinished>(read.records[0]);
  EXPECT_EQ(back.task, 2);
  EXPECT_EQ(back.config, finished.config);
}

TEST(JournalTest, a_torn_last_record_is_dropped_with_a_warning) {
  lbo::testing::ScratchDir dir;
  const auto records = sample_records();
  const fs::path path = journal_of(dir.path(), records);
  const auto full = fs::file_size(path);
  const auto last = frame_record(records.back()).size();
  // Cut the last record anywhere: inside its length, its CRC or its payload.
  for (std::uintmax_t cut : {std::uintmax_t{1}, std::uintmax_t{5}, std::uintmax_t{9}, last - 1}) {
    const fs::path torn = dir.path() / ("torn-" + std::to_string(cut));
    fs::copy_file(path, torn);
    fs::resize_file(torn, full - cut);
    const JournalContents read = read_journal(torn);
    ASSERT_EQ(read.records.size(), records.size() - 1) << "cut " << cut;
    EXPECT_EQ(read.end_bytes, full - last);
    EXPECT_EQ(read.torn_bytes, last - cut);
    EXPECT_FALSE(read.damage_found());
    ASSERT_EQ(read.warnings.size(), 1u);
    EXPECT_NE(read.warnings[0].find("dropped " + std::to_string(last - cut) + " byte"), std::string::npos) << read.warnings[0];
    for (std::size_t i = 0; i + 1 < records.size(); ++i) expect_equal(read.records[i], records[i]);
  }
}

TEST(JournalTest, a_whole_last_record_that_fails_its_checksum_is_damage_kept_in_the_file) {
  lbo::testing::ScratchDir dir;
  const auto records = sample_records();
  const fs::path path = journal_of(dir.path(), records);
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
  EXPECT_EQ(read.torn_bytes, 0u);
  ASSERT_EQ(read.damaged.size(), 1u);
  EXPECT_EQ(read.damaged[0].bytes, frame_record(records.back()).size());
  EXPECT_EQ(read.end_bytes, fs::file_size(path)) << "a complete record is not a torn write: nothing is cut";
}

TEST(JournalTest, decoding_bytes_in_memory_reads_as_the_file_does) {
  lbo::testing::ScratchDir dir;
  const auto records = sample_records();
  const fs::path path = journal_of(dir.path(), records);
  // A torn tail, and a damaged second record, so every kind of finding is compared.
  std::ofstream(path, std::ios::app | std::ios::binary) << frame_record(records[0]).substr(0, 11);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  bytes[journal_header().size() + frame_record(records[0]).size() + 12] ^= 0x20;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  const std::uint64_t second = journal_header().size() + frame_record(records[0]).size() + frame_record(records[1]).size();
  for (const std::uint64_t from : {std::uint64_t{0}, second}) {
    const JournalContents file = read_journal(path, from);
    const JournalContents memory = decode_journal(bytes, path, from);
    ASSERT_EQ(memory.records.size(), file.records.size()) << "from " << from;
    for (std::size_t i = 0; i < file.records.size(); ++i) expect_equal(memory.records[i], file.records[i]);
    EXPECT_EQ(memory.ends, file.ends);
    EXPECT_EQ(memory.from, file.from);
    EXPECT_EQ(memory.file_bytes, file.file_bytes);
    EXPECT_EQ(memory.end_bytes, file.end_bytes);
    EXPECT_EQ(memory.torn_bytes, file.torn_bytes);
    EXPECT_EQ(memory.damaged.size(), file.damaged.size());
    EXPECT_EQ(memory.warnings, file.warnings);
  }
  EXPECT_EQ(decode_journal(bytes, path).records.size(), records.size() - 1) << "the damaged record is skipped";
  EXPECT_EQ(decode_journal(bytes, path).torn_bytes, 11u);
  EXPECT_TRUE(decode_journal(bytes.substr(0, 5), path).header_torn);
}

TEST(JournalTest, an_intact_record_whose_bool_byte_is_neither_0_nor_1_does_not_decode) {
  // Found by fuzz_journal: cereal read any byte into a bool, a bool neither true nor false
  // (undefined behaviour); such a record is one this lbo cannot read.
  lbo::testing::ScratchDir dir;
  lbo::workers::Outcome ok;
  ok.status = lbo::workers::TrialStatus::ok;
  const TrialFinished finished{3, 1, true, ok, "local:0", 5};
  TrialFinished retried = finished;
  retried.final = false;
  std::string payload = frame_record(finished).substr(8);
  const std::string other = frame_record(retried).substr(8);
  ASSERT_EQ(payload.size(), other.size());
  std::vector<std::size_t> differ;
  for (std::size_t i = 0; i < payload.size(); ++i) {
    if (payload[i] != other[i]) differ.push_back(i);
  }
  ASSERT_EQ(differ.size(), 1u) << "only the byte of `final` differs";
  payload[differ[0]] = 2;
  std::string bytes = journal_header();
  detail::put_le(bytes, payload.size(), 4);
  detail::put_le(bytes, detail::crc32(payload), 4);
  bytes += payload;
  const fs::path path = dir.path() / "journal.lbo";
  std::ofstream(path, std::ios::binary) << bytes;
  try {
    read_journal(path);
    ADD_FAILURE() << "a bool byte of 2 decoded";
  } catch (const lbo::CorruptStateError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be read by this lbo"), std::string::npos) << e.what();
  }
  EXPECT_THROW(decode_journal(bytes, path), lbo::CorruptStateError);
}

TEST(JournalTest, a_size_inside_a_record_larger_than_the_record_is_refused_before_allocating) {
  // Found by fuzz_journal: cereal allocated (and zero-filled) whatever size an intact record
  // gave a string or a vector before its read failed; 2^49 strings were asked for.
  lbo::testing::ScratchDir dir;
  lbo::workers::Outcome ok;
  ok.status = lbo::workers::TrialStatus::ok;
  std::string payload = frame_record(TrialFinished{3, 1, true, ok, "local:0", 5}).substr(8);
  const std::size_t worker = payload.find("local:0");
  ASSERT_NE(worker, std::string::npos);
  ASSERT_GE(worker, 8u);
  ASSERT_EQ(detail::get_le(payload, worker - 8, 8), 7u) << "the string's size precedes it";
  std::string size;
  detail::put_le(size, std::uint64_t{1} << 26, 8);  // 64 MiB, in a record of under 100 bytes
  payload.replace(worker - 8, 8, size);
  std::string bytes = journal_header();
  detail::put_le(bytes, payload.size(), 4);
  detail::put_le(bytes, detail::crc32(payload), 4);
  bytes += payload;
  try {
    decode_journal(bytes, "journal.lbo");
    ADD_FAILURE() << "a size past the record's end decoded";
  } catch (const lbo::CorruptStateError& e) {
    EXPECT_NE(std::string(e.what()).find("a size of 67108864 where only"), std::string::npos) << e.what();
  }
}

TEST(JournalTest, garbage_length_does_not_allocate_or_crash) {
  lbo::testing::ScratchDir dir;
  const fs::path path = journal_of(dir.path(), sample_records());
  std::ofstream(path, std::ios::app | std::ios::binary) << std::string("\xff\xff\xff\x7f\x00\x00\x00\x00junk", 12);
  const JournalContents read = read_journal(path);
  EXPECT_EQ(read.records.size(), sample_records().size());
  EXPECT_EQ(read.torn_bytes, 12u);
}

TEST(JournalTest, not_a_journal_is_all_damage_and_a_missing_file_is_corrupt_state) {
  lbo::testing::ScratchDir dir;
  std::ofstream(dir.path() / "x.lbo") << "hello world";
  const JournalContents read = read_journal(dir.path() / "x.lbo");
  EXPECT_TRUE(read.header_damaged);
  EXPECT_TRUE(read.records.empty());
  EXPECT_TRUE(read.damage_found());
  EXPECT_THROW(read_journal(dir.path() / "missing.lbo"), lbo::CorruptStateError);
}

TEST(JournalTest, create_refuses_to_overwrite) {
  lbo::testing::ScratchDir dir;
  journal_of(dir.path(), {});
  EXPECT_THROW(JournalWriter::create(dir.path() / "journal.lbo"), lbo::Error);
  EXPECT_EQ(read_journal(dir.path() / "journal.lbo").records.size(), 0u);
}

namespace {

// Flips one bit of the file at `offset`.
void flip(const fs::path& path, std::uint64_t offset, char mask = 0x04) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  f.seekp(static_cast<std::streamoff>(offset));
  c = static_cast<char>(c ^ mask);
  f.write(&c, 1);
}

// Offsets where each record of `records` starts in a journal written from them.
std::vector<std::uint64_t> starts_of(const std::vector<JournalRecord>& records) {
  std::vector<std::uint64_t> starts;
  std::uint64_t at = journal_header().size();
  for (const JournalRecord& r : records) {
    starts.push_back(at);
    at += frame_record(r).size();
  }
  return starts;
}

}  // namespace

TEST(JournalTest, a_damaged_record_in_the_middle_is_skipped_and_every_record_after_it_kept) {
  lbo::testing::ScratchDir dir;
  const auto records = sample_records();
  const auto starts = starts_of(records);
  // Damage record 1 in its payload, in its CRC, and in its length (small and huge): each time
  // exactly that record is lost.
  for (const std::uint64_t at : {starts[1] + 20, starts[1] + 5, starts[1] + 0, starts[1] + 3}) {
    const fs::path path = dir.path() / ("j-" + std::to_string(at));
    {
      JournalWriter writer = JournalWriter::create(path);
      for (const JournalRecord& r : records) writer.append(r);
    }
    flip(path, at, at == starts[1] + 3 ? 0x40 : 0x04);
    const JournalContents read = read_journal(path);
    ASSERT_EQ(read.records.size(), records.size() - 1) << "damage at " << at;
    expect_equal(read.records[0], records[0]);
    for (std::size_t i = 1; i < read.records.size(); ++i) expect_equal(read.records[i], records[i + 1]);
    ASSERT_EQ(read.damaged.size(), 1u);
    EXPECT_EQ(read.damaged[0].offset, starts[1]);
    EXPECT_EQ(read.damaged[0].bytes, starts[2] - starts[1]);
    EXPECT_EQ(read.damaged[0].records_before, 1u);
    EXPECT_EQ(read.torn_bytes, 0u);
    EXPECT_EQ(read.end_bytes, fs::file_size(path));
    ASSERT_FALSE(read.warnings.empty());
    EXPECT_NE(read.warnings[0].find("at byte " + std::to_string(starts[1])), std::string::npos) << read.warnings[0];
  }
}

TEST(JournalTest, a_damaged_header_is_reported_and_the_records_after_it_read) {
  lbo::testing::ScratchDir dir;
  const auto records = sample_records();
  const fs::path path = journal_of(dir.path(), records);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.write("\0\0\0\0", 4);
  }
  const JournalContents read = read_journal(path);
  EXPECT_TRUE(read.header_damaged);
  EXPECT_TRUE(read.damaged.empty());
  ASSERT_EQ(read.records.size(), records.size());
  for (std::size_t i = 0; i < records.size(); ++i) expect_equal(read.records[i], records[i]);
}

TEST(JournalTest, an_intact_record_of_an_unknown_type_is_refused_and_nothing_changes) {
  lbo::testing::ScratchDir dir;
  const fs::path path = journal_of(dir.path(), sample_records());
  // What a newer lbo would append: a valid frame whose record type this lbo does not know.
  std::string payload("\x01\x09\x00\x00\x00newer", 10);
  std::string frame;
  for (int i = 0; i < 4; ++i) frame.push_back(static_cast<char>((payload.size() >> (8 * i)) & 0xff));
  std::uint32_t crc = 0xffffffffu;  // CRC-32 (IEEE), the journal's checksum
  for (unsigned char byte : payload) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  crc ^= 0xffffffffu;
  for (int i = 0; i < 4; ++i) frame.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  frame += payload;
  std::ofstream(path, std::ios::app | std::ios::binary) << frame;
  const std::string before = lbo::testing::read_text(path);
  try {
    read_journal(path);
    FAIL() << "read a record of an unknown type";
  } catch (const lbo::CorruptStateError& e) {
    EXPECT_NE(std::string(e.what()).find("newer lbo"), std::string::npos) << e.what();
  }
  EXPECT_EQ(lbo::testing::read_text(path), before);
}

TEST(JournalTest, resume_appends_after_damage_without_cutting_it_and_repairs_the_header_in_place) {
  lbo::testing::ScratchDir dir;
  const auto records = sample_records();
  const auto starts = starts_of(records);
  const fs::path path = journal_of(dir.path(), records);
  flip(path, starts[1] + 20);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.write("XXXX", 4);
  }
  const auto size = fs::file_size(path);
  const JournalContents read = read_journal(path);
  ASSERT_TRUE(read.header_damaged);
  ASSERT_EQ(read.damaged.size(), 1u);
  {
    JournalWriter writer = JournalWriter::resume(path, read, 0);
    EXPECT_EQ(writer.size_bytes(), size);
    writer.append(TaskAdded{TaskIdentity{"later", 3, ""}, 9});
    writer.sync();
  }
  const JournalContents again = read_journal(path);
  EXPECT_FALSE(again.header_damaged);
  EXPECT_EQ(again.damaged.size(), 1u) << "the damaged record stays where it was";
  ASSERT_EQ(again.records.size(), records.size());  // one lost, one added
  EXPECT_EQ(std::get<TaskAdded>(again.records.back()).task.name, "later");
  for (std::size_t i = 2; i < records.size(); ++i) expect_equal(again.records[i - 1], records[i]);
}

TEST(JournalTest, resume_cuts_only_a_torn_tail_and_extends_a_journal_shorter_than_its_checkpoint) {
  lbo::testing::ScratchDir dir;
  const auto records = sample_records();
  const fs::path path = journal_of(dir.path(), records);
  const auto size = fs::file_size(path);
  std::ofstream(path, std::ios::app | std::ios::binary) << std::string("\x40\x00\x00\x00torn", 8);
  {
    JournalWriter writer = JournalWriter::resume(path, read_journal(path), 0);
    EXPECT_EQ(writer.size_bytes(), size);
  }
  EXPECT_EQ(fs::file_size(path), size);
  // A checkpoint that covers more than the file holds: new records go after its offset.
  {
    JournalWriter writer = JournalWriter::resume(path, read_journal(path), size + 100);
    writer.append(TaskAdded{TaskIdentity{"after", 1, ""}, 1});
  }
  const JournalContents tail = read_journal(path, size + 100);
  ASSERT_EQ(tail.records.size(), 1u);
  EXPECT_EQ(std::get<TaskAdded>(tail.records[0]).task.name, "after");
  const JournalContents all = read_journal(path);
  EXPECT_EQ(all.records.size(), records.size() + 1);
  ASSERT_EQ(all.damaged.size(), 1u);
  EXPECT_TRUE(all.damaged[0].zeros);
}

TEST(JournalTest, an_append_cut_short_by_the_disk_leaves_no_partial_record) {
  lbo::testing::ScratchDir dir;
  const auto records = sample_records();
  const fs::path path = journal_of(dir.path(), {records[0]});
  const auto size = fs::file_size(path);
  // The file size limit stands in for a full disk: the write stops part way, then fails.
  ::signal(SIGXFSZ, SIG_IGN);
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  rlimit limit = old;
  limit.rlim_cur = static_cast<rlim_t>(size + 10);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  {
    JournalWriter writer = JournalWriter::resume(path, read_journal(path), 0);
    try {
      writer.append(records[2]);
      FAIL() << "a write past the limit succeeded";
    } catch (const lbo::IoError& e) {
      EXPECT_EQ(e.error_number(), EFBIG);
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    }
    EXPECT_EQ(writer.size_bytes(), size);
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  EXPECT_EQ(fs::file_size(path), size) << "the partial record was cut back";
  const JournalContents read = read_journal(path);
  EXPECT_EQ(read.records.size(), 1u);
  EXPECT_TRUE(read.warnings.empty());
}

namespace {

void set_version_field(const fs::path& path, std::uint32_t version) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(4);
  for (int i = 0; i < 4; ++i) f.put(static_cast<char>((version >> (8 * i)) & 0xff));
}

}  // namespace

// Issue 31: a flipped bit in the version field of a journal whose checkpoint covers every
// record ("format 3 is not supported") made the run unresumable. The first record, read as
// format 1, says the header is damaged; every single-bit flip of the field reads so.
TEST(JournalTest, a_flipped_bit_in_the_version_field_is_damage_even_when_a_checkpoint_covers_every_record) {
  lbo::testing::ScratchDir dir;
  const auto records = sample_records();
  const fs::path path = journal_of(dir.path(), records);
  const std::uint64_t end = fs::file_size(path);
  for (int bit = 0; bit < 32; ++bit) {
    set_version_field(path, 1u ^ (1u << bit));
    for (const std::uint64_t from : {std::uint64_t{0}, end}) {
      const JournalContents read = read_journal(path, from);
      EXPECT_TRUE(read.header_damaged) << "bit " << bit << " from " << from;
      EXPECT_EQ(read.records.size(), from == 0 ? records.size() : 0u);
      ASSERT_FALSE(read.warnings.empty());
      EXPECT_NE(read.warnings.front().find("the header is damaged"), std::string::npos) << read.warnings.front();
      const std::string bytes = lbo::testing::read_text(path);
      EXPECT_TRUE(decode_journal(bytes, path, from).header_damaged);
    }
  }
  // Resuming rewrites the header in place.
  set_version_field(path, 3);
  JournalWriter writer = JournalWriter::resume(path, read_journal(path, end), end);
  EXPECT_FALSE(read_journal(path).header_damaged);
}

// A format a newer lbo may have written (its records do not read as format 1) is still refused,
// and nothing is changed.
TEST(JournalTest, a_newer_format_whose_records_do_not_read_is_refused) {
  lbo::testing::ScratchDir dir;
  const fs::path path = dir.path() / "journal.lbo";
  std::string bytes("LBOJ\x02\x00\x00\x00", 8);
  bytes += std::string("\x10\x00\x00\x00\xaa\xbb\xcc\xdd", 8) + std::string(16, 'z');
  std::ofstream(path, std::ios::binary) << bytes;
  for (const std::uint64_t from : {std::uint64_t{0}, std::uint64_t{bytes.size()}}) {
    try {
      read_journal(path, from);
      FAIL() << "read a journal of format 2";
    } catch (const lbo::CorruptStateError& e) {
      EXPECT_NE(std::string(e.what()).find("journal format 2 is not supported by this lbo (format 1)"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(lbo::testing::read_text(path), bytes);
}

TEST(JournalTest, a_journal_that_is_no_regular_file_is_refused_at_once) {
  lbo::testing::ScratchDir dir;
  const fs::path folder = dir.path() / "folder" / "journal.lbo";
  fs::create_directories(folder);
  const fs::path fifo = dir.path() / "journal.lbo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  for (const auto& [path, what] : {std::pair{folder, "a folder"}, std::pair{fifo, "a FIFO"}}) {
    try {
      read_journal(path);
      FAIL() << "read " << what;
    } catch (const lbo::CorruptStateError& e) {
      EXPECT_NE(std::string(e.what()).find(path.string() + " is " + what + ", not lbo's journal file"), std::string::npos)
          << e.what();
    }
  }
}
