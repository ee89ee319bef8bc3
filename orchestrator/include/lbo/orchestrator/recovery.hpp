#pragma once
// Recovery: a run directory read back into the master's state — the newest intact checkpoint
// plus every journal record after it. Read-only; safe while a run is active (`lbo status`).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lbo/orchestrator/checkpoint.hpp"

namespace lbo::orchestrator {

struct RecoveredRun {
  JobIdentity job;  ///< the job as the run last knew it
  std::vector<Trial> trials;
  std::vector<std::int64_t> retries;      ///< failed attempts waiting for another, in order
  std::vector<std::int64_t> interrupted;  ///< running (or cancelled) when the run stopped, by id
  PolicyState policy;                     ///< from the checkpoint; empty without one
  std::uint64_t journal_bytes = 0;        ///< intact prefix of the journal
  std::uint64_t next_checkpoint = 1;      ///< sequence for the next checkpoint written
  std::optional<std::filesystem::path> checkpoint_file;
  double checkpoint_time = 0;             ///< unix time of that checkpoint
  std::vector<std::string> warnings;      ///< damaged state skipped, naming file and what was kept
};

/// Whether `run_dir` holds a run to resume (a journal).
bool has_run_state(const std::filesystem::path& run_dir);

/// Throws CorruptStateError when neither an intact checkpoint nor a readable journal remains.
RecoveredRun recover_run(const std::filesystem::path& run_dir);

}  // namespace lbo::orchestrator
