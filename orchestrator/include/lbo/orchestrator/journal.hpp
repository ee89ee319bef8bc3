#pragma once
// The journal (`runs/<name>/journal.lbo`): an append-only log of what happened, the run's
// ground truth. A finished trial counts as committed once its record is fsynced.
//
// File: the 8-byte header "LBOJ" + u32 format version (little endian), then records, each
// u32 payload length, u32 CRC-32 of the payload, payload (cereal portable binary of one
// JournalRecord). A torn or corrupt tail is detected by length and CRC and dropped.

#include <cstdint>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include "lbo/jobs/space.hpp"
#include "lbo/orchestrator/job_identity.hpp"
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

/// An attempt of a trial is handed to a worker; attempt 1 also creates the trial.
struct TrialStarted {
  std::int64_t trial = 0;
  int task = 0;
  int attempt = 1;
  jobs::Config config;
  std::string worker;
  double unix_time = 0;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(trial, task, attempt, config, worker, unix_time);
  }
};

/// An attempt ended. `final`: no retry follows and the trial counts against its budget.
struct TrialFinished {
  std::int64_t trial = 0;
  int attempt = 1;
  bool final = true;
  workers::Outcome outcome;
  std::string worker;
  double unix_time = 0;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(trial, attempt, final, outcome, worker, unix_time);
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

// New record types go at the end: a record's type is its index here.
using JournalRecord = std::variant<RunStarted, TrialStarted, TrialFinished, TaskAdded>;

class JournalWriter {
 public:
  /// Creates a new journal at `path`; throws lbo::Error if it exists or cannot be written.
  static JournalWriter create(const std::filesystem::path& path);
  /// Continues the journal at `path` after its first `valid_bytes` (what read_journal kept);
  /// a torn tail beyond them is cut off first, so new records follow intact ones.
  static JournalWriter open_existing(const std::filesystem::path& path, std::uint64_t valid_bytes);

  JournalWriter(JournalWriter&& other) noexcept;
  JournalWriter& operator=(JournalWriter&& other) noexcept;
  ~JournalWriter();

  /// Appends one record with a single write(2): in the page cache, not yet durable.
  void append(const JournalRecord& record);
  /// Makes every appended record durable (fdatasync); one call covers a batch of appends.
  void sync();
  std::uint64_t size_bytes() const { return size_; }

 private:
  explicit JournalWriter(int fd, std::uint64_t size) : fd_(fd), size_(size) {}
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

struct JournalContents {
  std::vector<JournalRecord> records;
  std::vector<std::uint64_t> ends;  ///< byte offset just past each record
  std::uint64_t valid_bytes = 0;    ///< header and every record read
  std::uint64_t dropped_bytes = 0;  ///< a torn or corrupt tail after them
  std::string warning;              ///< says what was dropped, or empty
};

/// Reads every intact record from byte `from` on (a record boundary, such as a checkpoint's
/// journal_bytes; 0 for all). Throws CorruptStateError when the file is not a journal.
JournalContents read_journal(const std::filesystem::path& path, std::uint64_t from = 0);

/// The framed bytes of one record (exposed for tests that tear or corrupt a journal).
std::string frame_record(const JournalRecord& record);

}  // namespace lbo::orchestrator
