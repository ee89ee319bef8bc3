#pragma once
// Recovery: a run directory read back into the master's state — the newest intact checkpoint
// plus every journal record after it, applied to a RunState as the live master applied them.
// Read-only; safe while a run is active (`lbo status`).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lbo/orchestrator/checkpoint.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

/// The part of a run a --sync resume replays (recover_run with `keep_tail`): the state the
/// checkpoint held (or the run before its first record, without one) and every journal record
/// after it, in order.
struct JournalTail {
  RunState start;
  std::vector<JournalRecord> records;
};

struct RecoveredRun {
  RunState state;                    ///< running attempts already turned into interrupted trials
  PolicyState policy;                ///< from the checkpoint; empty without one
  JournalContents journal;           ///< what reading the journal found (its records are in `state`)
  std::uint64_t checkpoint_bytes = 0;  ///< journal bytes the checkpoint covers (0 without one)
  std::uint64_t next_checkpoint = 1;   ///< sequence for the next checkpoint written
  std::optional<std::filesystem::path> checkpoint_file;
  double checkpoint_time = 0;          ///< unix time of that checkpoint
  std::vector<std::string> warnings;   ///< damage met, naming the file, what was kept and what was lost
  /// Trials whose objective an lbo killed outright may have left running: each interrupted or
  /// lost trial. A resume kills what is left of them on its host before anything else.
  std::vector<std::int64_t> maybe_running;
  /// With `keep_tail`: what the state was built from.
  std::optional<JournalTail> tail;

  /// A start killed before its first record (a journal holding only its header): the same
  /// command starts the run afresh in the same folder.
  bool empty() const { return !state.has_job() && state.trials().empty(); }
};

/// Whether `run_dir` holds a run to resume (a journal).
bool has_run_state(const std::filesystem::path& run_dir);

/// `job_file`: the job the resuming command was given, used (with a warning) when damage left no
/// record of the run's own job. `keep_tail`: keep the checkpoint's state and the records after it
/// (RecoveredRun::tail). Throws CorruptStateError when neither an intact checkpoint nor a
/// readable journal remains, or when the journal was written by a newer lbo.
RecoveredRun recover_run(const std::filesystem::path& run_dir, const JobIdentity* job_file = nullptr,
                         bool keep_tail = false);

/// Opens the journal of a recovered run for appending: a damaged journal is first copied aside
/// (`journal.lbo.damaged-<time>`, never deleted), then continued without losing an intact record
/// (JournalWriter::resume). `log` hears what was kept and repaired. Throws IoError.
JournalWriter continue_journal(const RunPaths& run, const RecoveredRun& recovered,
                               const std::function<void(const std::string&)>& log);

}  // namespace lbo::orchestrator
