#pragma once
// Ledger: the one way a run's history grows. record() journals a record, applies it to the run
// state and tells the parts that listen, so the state is always what the journal holds and every
// part hears of a record once it counts (libEnsemble's manager is the only writer of its
// history; Optuna's journal storage applies each log entry with one small function per kind).
// The master owns it; Attempts and Fidelity record through it.

#include <functional>
#include <vector>

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

class Ledger {
 public:
  /// A part that acts on records once they are applied (the run's outputs).
  class Listener {
   public:
    virtual ~Listener() = default;
    virtual void applied(const JournalRecord& record, const RunState& state) = 0;
  };

  /// How far a record is written before it counts: appended (the page cache outlives an lbo
  /// killed outright; the next commit fsyncs it) or fsynced.
  enum class Write { appended, synced };

  /// `failed`: lbo's own I/O failed (the run halts). The references outlive this.
  Ledger(JournalWriter& journal, RunState& state, std::function<void(const IoError&)> failed);

  /// Journals `record`, applies it to the state, then tells the listeners; whether the journal
  /// took it. When it cannot, `failed` is told, and only an attempt's end (TrialFinished) is
  /// applied even so: its process has ended either way, and the final checkpoint may still keep
  /// it. A start, reports or a task that the journal did not take do not count.
  bool record(const JournalRecord& record, Write write = Write::appended);
  /// The run's first record (RunStarted), fsynced: nothing runs yet, so a journal that cannot
  /// take it throws IoError to the caller.
  void open(const RunStarted& started);
  /// One fsync for the records appended since the last (the master's commit); `failed` is told
  /// when it fails.
  void commit();

  void listen(Listener& listener) { listeners_.push_back(&listener); }
  const RunState& state() const { return state_; }

 private:
  void apply(const JournalRecord& record);

  JournalWriter& journal_;
  RunState& state_;
  std::function<void(const IoError&)> failed_;
  std::vector<Listener*> listeners_;
};

}  // namespace lbo::orchestrator
