#pragma once
// Checkpoints (`runs/<name>/checkpoint.<n>.lbo`): the master's whole state at one moment, so a
// resume reads one file and the journal records after it, not the whole history.
//
// File: "LBOC", u32 format version, u64 payload length, u32 CRC-32 of the payload (all little
// endian), then the payload: cereal portable binary of a Checkpoint. Written to a temporary
// file, fsynced, renamed, the folder fsynced; the newest two are kept.

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "lbo/orchestrator/job_identity.hpp"
#include "lbo/orchestrator/policy_state.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

struct Checkpoint {
  std::uint64_t sequence = 0;  ///< n of checkpoint.<n>.lbo
  double unix_time = 0;
  JobIdentity job;
  std::vector<Trial> trials;
  std::vector<std::int64_t> retries;      ///< failed trials waiting for another attempt, in order
  std::vector<std::int64_t> interrupted;  ///< stopped by the last stop, to run again first
  std::uint64_t journal_bytes = 0;        ///< the journal prefix this state includes
  PolicyState policy;
  bool round_handed_out = true;  ///< RunState::round_handed_out (v2; older ones: true)

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t version) {
    archive(sequence, unix_time, job, trials, retries, interrupted, journal_bytes, policy);
    if (version >= 2) archive(round_handed_out);
  }
};

/// The file bytes of `checkpoint`.
std::string encode_checkpoint(const Checkpoint& checkpoint);
/// Throws CorruptStateError (naming `file`) when the bytes are truncated, fail the checksum or
/// do not decode.
Checkpoint decode_checkpoint(std::string_view bytes, const std::filesystem::path& file);

/// Atomically and durably writes checkpoint `sequence`, then removes those older than its predecessor.
void write_checkpoint_file(const std::filesystem::path& run_dir, std::uint64_t sequence, const std::string& bytes);

struct CheckpointSearch {
  std::optional<Checkpoint> checkpoint;  ///< the newest that is intact
  std::filesystem::path file;
  std::uint64_t newest_sequence = 0;     ///< the highest n on disk, intact or not
  std::vector<std::string> warnings;     ///< damaged checkpoints skipped
};
CheckpointSearch load_newest_checkpoint(const std::filesystem::path& run_dir);

/// Encodes and writes checkpoints on a thread of its own, so the master's event loop neither
/// encodes nor waits on the disk for a periodic checkpoint: it only copies its state.
class CheckpointWriter {
 public:
  explicit CheckpointWriter(std::filesystem::path run_dir);
  /// Finishes a write under way.
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  /// Starts writing in the background; false, and nothing done, while a write is under way.
  bool write_async(Checkpoint checkpoint);
  /// Waits for any background write, then writes on this thread. Throws lbo::Error.
  void write_now(const Checkpoint& checkpoint);
  /// The failure of the last background write, once.
  std::optional<std::string> take_error();

 private:
  void loop();

  std::filesystem::path run_dir_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::optional<Checkpoint> job_;  // guarded
  bool writing_ = false;                                       // guarded
  bool stopping_ = false;                                      // guarded
  std::optional<std::string> error_;                           // guarded
  std::thread thread_;
};

}  // namespace lbo::orchestrator
