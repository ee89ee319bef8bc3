#pragma once
// Attempts (private to master/): an attempt's way through the run. Dispatched: journaled
// (TrialStarted, before its process exists), its work order made, submitted to a slot. Ended:
// its completion checked, journaled and applied (TrialFinished), or only its slot freed when
// early stopping ended it first, or held with --sync until its round decided the rungs it passed
// (fidelity.hpp). What ended in the event loop's turn waits in ended() for the master's commit
// (one fsync for them all).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lbo/cluster/transport.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/deadline.hpp"
#include "lbo/orchestrator/fidelity.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "lbo/orchestrator/ledger.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/orchestrator/run_outputs.hpp"
#include "lbo/orchestrator/run_state.hpp"
#include "lbo/orchestrator/scheduler.hpp"

namespace lbo::orchestrator {

class Attempts {
 public:
  struct Hooks {
    /// lbo itself could not run an attempt: the run stops (message, errno).
    std::function<void(const std::string&, int)> halt;
    /// An attempt's end was applied (or its early end's slot freed): a commit is due.
    std::function<void()> ended;
    /// A completion freed a slot without --sync: fill it before the commit's fsync.
    std::function<void()> slot_free;
    std::function<double()> clock;
  };

  /// Everything given outlives this; `deadline` is read at each use (it may be none). Records
  /// go through `ledger`.
  Attempts(const jobs::JobSpec& job, const RunPaths& run_dir, Ledger& ledger, Fidelity& fidelity,
           cluster::Transport& transport, std::optional<DeadlinePlanner>& deadline, bool sync,
           Hooks hooks);

  void dispatch(NextAttempt next);
  /// A slot's attempt ended (the transport's completion handler).
  void on_completion(cluster::Completion c);
  /// Journals and applies an attempt's end; with `decide_rungs`, the rungs its end decides
  /// (--sync) come next. For completions Fidelity held or interrupted.
  void complete(cluster::Completion c, bool decide_rungs = true);
  /// An attempt that early stopping ended was committed (Fidelity::Hooks::ended).
  void ended_early(std::int64_t trial, int attempt);

  /// The attempts that ended since the last call, for the commit.
  std::vector<EndedAttempt> take_ended();

 private:
  const jobs::JobSpec& job_;
  const RunPaths& run_dir_;
  Ledger& ledger_;
  const RunState& state_;
  Fidelity& fidelity_;
  cluster::Transport& transport_;
  std::optional<DeadlinePlanner>& deadline_;
  bool sync_;
  Hooks hooks_;
  std::vector<EndedAttempt> ended_;  // in this turn of the event loop
};

}  // namespace lbo::orchestrator
