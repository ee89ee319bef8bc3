#pragma once
// The journal (`runs/<name>/journal.lbo`): an append-only log of what happened, the run's
// ground truth. A finished trial counts as committed once its record is fsynced.
//
// File: the 8-byte header "LBOJ" + u32 format version (little endian), then records, each
// u32 payload length, u32 CRC-32 of the payload, payload (cereal portable binary of one
// JournalRecord). Each record stands alone: a damaged one is skipped and the ones after it are
// read; only an incomplete last record (a torn write) is ever cut off.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "lbo/jobs/space.hpp"
#include "lbo/orchestrator/job_identity.hpp"
#include "lbo/orchestrator/proposal.hpp"
#include "lbo/workers/work_order.hpp"

namespace lbo::orchestrator {

/// A run (or a resumed part of one) begins, under this job.
struct RunStarted {
  std::string lbo_version;
  double unix_time = 0;
  int slots = 0;
  JobIdentity job;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(lbo_version, unix_time, slots, job);
  }
};

/// An attempt of a trial is handed to a worker; attempt 1 also creates the trial, and says how
/// its configuration was chosen (format version 2).
struct TrialStarted {
  std::int64_t trial = 0;
  int task = 0;
  int attempt = 1;
  jobs::Config config;
  std::string worker;
  double unix_time = 0;
  ProposalSource proposed_by = ProposalSource::unrecorded;
  std::string proposal_note;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t version) {
    archive(trial, task, attempt, config, worker, unix_time);
    if (version >= 2) archive(proposed_by, proposal_note);
  }
};

/// An attempt ended. `final`: no retry follows and the trial counts against its budget. The
/// trial's task, configuration and how it was proposed come along (format version 2), so a
/// committed result stands whole even when the records that started its trial are damaged.
struct TrialFinished {
  std::int64_t trial = 0;
  int attempt = 1;
  bool final = true;
  workers::Outcome outcome;
  std::string worker;
  double unix_time = 0;
  int task = -1;  ///< -1 in records from before version 2
  jobs::Config config;
  ProposalSource proposed_by = ProposalSource::unrecorded;
  std::string proposal_note;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t version) {
    archive(trial, attempt, final, outcome, worker, unix_time);
    if (version >= 2) archive(task, config, proposed_by, proposal_note);
  }
};

/// A task joins the run (`lbo add-task`, or a new file in the watched folder).
struct TaskAdded {
  TaskIdentity task;
  double unix_time = 0;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(task, unix_time);
  }
};

/// One intermediate report of a running attempt, as the master accepted it. It repeats
/// workers::TrialReport field for field on purpose: that is the workers' message, free to change
/// with them; this is a persisted record, read by every later lbo (its own cereal version).
struct ReportedStep {
  std::int64_t trial = 0;
  int attempt = 1;
  std::int64_t step = 0;
  double value = 0;
  std::string metrics_json = "{}";
  double elapsed_s = 0;  ///< since the attempt started, on its worker
  double read_unix = 0;  ///< when its worker read it, by the worker's clock (0: unknown, version 1)

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t version) {
    archive(trial, attempt, step, value, metrics_json, elapsed_s);
    if (version >= 2) archive(read_unix);
  }
};

/// Intermediate reports that arrived together (one batch of a transport), each checked against
/// its trial: running that attempt, a finite value, a step past the attempt's last one.
struct TrialsReported {
  std::vector<ReportedStep> reports;
  double unix_time = 0;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(reports, unix_time);
  }
};

// New record types go at the end: a record's type is its index here.
using JournalRecord = std::variant<RunStarted, TrialStarted, TrialFinished, TaskAdded, TrialsReported>;

/// A stretch of the journal that holds no intact record: read past, never cut off.
struct JournalGap {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  std::size_t records_before = 0;  ///< intact records read before it
  bool zeros = false;              ///< only zero bytes (left by a crash, or by a repair)
};

struct JournalContents {
  std::vector<JournalRecord> records;
  std::vector<std::uint64_t> ends;  ///< byte offset just past each record
  std::uint64_t from = 0;           ///< where reading started
  std::uint64_t file_bytes = 0;     ///< the file's size
  std::uint64_t end_bytes = 0;      ///< where the next record goes: the file less a torn tail
  bool header_damaged = false;      ///< not lbo's header; the records after it were read anyway
  bool header_torn = false;         ///< empty, or a header cut short: a journal without records
  std::vector<JournalGap> damaged;  ///< stretches skipped between records (their records are lost)
  std::uint64_t torn_bytes = 0;     ///< an incomplete last record (a write cut short), dropped
  std::vector<std::string> warnings;  ///< what was skipped or dropped, naming file and offsets

  /// Whether anything but a torn tail was found: the file is kept aside before it is continued.
  bool damage_found() const { return header_damaged || !damaged.empty(); }
};

/// Reads every intact record from byte `from` on (a record boundary, such as a checkpoint's
/// journal_bytes; 0 for all). A damaged record is skipped and reading resumes at the next
/// intact one (each has its own length and CRC; a damaged length is passed by scanning for the
/// next valid frame); only an incomplete last record counts as a torn tail. A damaged header is
/// reported and the records after it are read as format 1. Throws CorruptStateError when the
/// file cannot be read, or holds an intact record this lbo cannot decode (a newer lbo's): such
/// a journal must not be continued by this lbo.
JournalContents read_journal(const std::filesystem::path& path, std::uint64_t from = 0);
/// As read_journal, for the bytes of a whole journal file already in memory (`path` names it in
/// messages). read_journal reads only the header and the part from `from` on, then decodes as this.
JournalContents decode_journal(std::string_view bytes, const std::filesystem::path& path, std::uint64_t from = 0);

class JournalWriter {
 public:
  /// Creates a new journal at `path` (header written and fsynced, the folder too); throws
  /// lbo::Error if it exists, IoError if it cannot be written.
  static JournalWriter create(const std::filesystem::path& path);
  /// Continues the journal `read` describes, without destroying any intact record: a torn tail
  /// is cut, a damaged or torn header rewritten in place (the records keep their offsets), and a
  /// file shorter than `min_bytes` (the offset a checkpoint covers) is extended with zeros, so
  /// every record appended lands after what that checkpoint holds. Keep a copy of a damaged
  /// journal before calling this. Throws IoError.
  static JournalWriter resume(const std::filesystem::path& path, const JournalContents& read, std::uint64_t min_bytes);

  JournalWriter(JournalWriter&& other) noexcept;
  JournalWriter& operator=(JournalWriter&& other) noexcept;
  ~JournalWriter();

  /// Appends one record: in the page cache, not yet durable, but it survives the death of this
  /// process. Throws IoError (disk full, read-only, ...); the file is then cut back to where it
  /// was, so no partial record stays in front of later ones.
  void append(const JournalRecord& record);
  /// Makes every appended record durable (fdatasync); one call covers a batch. Throws IoError.
  void sync();
  std::uint64_t size_bytes() const { return size_; }

 private:
  JournalWriter(std::filesystem::path path, int fd, std::uint64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}
  void write_at(std::uint64_t offset, const std::string& bytes, const char* what);
  std::filesystem::path path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

/// The framed bytes of one record (exposed for tests that tear or corrupt a journal).
std::string frame_record(const JournalRecord& record);
/// The journal's 8-byte header.
std::string journal_header();

}  // namespace lbo::orchestrator
