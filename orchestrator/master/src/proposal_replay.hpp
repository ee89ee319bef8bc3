#pragma once
// replay_proposals: a --sync run resumed after its master was killed outright (kill -9, a lost
// node, the OOM killer) goes on as that master would have. The checkpoint it resumes from holds
// the policy as it was when that checkpoint was written, but the killed master went on after
// it: at the end of each round it refitted, each fit starting from the one before, and each
// proposal left something in the policy (GP-Hedge's nominees, which the next fit rewards; the
// seeding of a task's gains). None of that is in the journal, so the resumed policy runs over the
// journal's records after the checkpoint: it refits where the killed master refitted and proposes
// every trial that master proposed, on the state as it was then, and each proposal must come out
// as the journal recorded it. Private to master/.

#include <string>

#include "lbo/orchestrator/policy.hpp"
#include "lbo/orchestrator/recovery.hpp"
#include "lbo/orchestrator/scheduler.hpp"

namespace lbo::orchestrator {

struct ReplayResult {
  int proposals = 0;     ///< proposals made again, each as the journal recorded it
  int fits = 0;          ///< fits made again
  std::string mismatch;  ///< the first proposal that came out otherwise (the replay stopped there)

  /// What the log says of it (a warning when a proposal came out otherwise); empty when the
  /// replay made nothing.
  std::string summary() const;
};

/// Replays `tail` (recover_run's, with `keep_tail`) through `policy`, which was restored from the
/// tail's checkpoint. The master's rule for its fits (Master::Loop::commit): a --sync master
/// refits when a round has ended (nothing runs) with no interrupted trial left and budget left,
/// and when a task arrives while nothing runs.
ReplayResult replay_proposals(const JournalTail& tail, Policy& policy, const Scheduler& scheduler);

}  // namespace lbo::orchestrator
