#pragma once
// Checkpointing: the whole master state, written atomically (private to master/). Periodic ones
// are encoded and written by CheckpointWriter's thread; a stop's and the end's on the master's.

#include <cstdint>
#include <functional>

#include <boost/asio/steady_timer.hpp>

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/checkpoint.hpp"
#include "lbo/orchestrator/console.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "lbo/orchestrator/policy.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

class Checkpointing {
 public:
  /// `next`: the sequence number the next checkpoint takes. The references outlive this.
  Checkpointing(boost::asio::io_context& io, const RunPaths& run, JournalWriter& journal, const RunState& state,
                Policy& policy, std::function<double()> clock, std::uint64_t next, Console& console);

  /// Syncs the journal, then writes the state: here and now (`now`), or in the background,
  /// skipped while the previous one is still being written. Throws IoError.
  void write(bool now);
  /// A stop's or the end's checkpoint. Its failure is said and does not stop the stop: the
  /// journal holds every committed result.
  bool try_now();
  /// Every `period_s`: a background checkpoint (its failure goes to `failed`), then `after`
  /// (the reports that ride on checkpoints).
  void schedule(double period_s, std::function<void(const IoError&)> failed, std::function<void()> after);
  /// No more periodic checkpoints (one whose timer has already fired is skipped too).
  void cancel() {
    cancelled_ = true;
    timer_.cancel();
  }
  /// The sequence number of the newest one written.
  std::uint64_t newest() const { return next_ - 1; }

 private:
  const RunPaths& run_;
  JournalWriter& journal_;
  const RunState& state_;
  Policy& policy_;
  std::function<double()> clock_;
  std::uint64_t next_;
  Console& console_;
  CheckpointWriter writer_;
  boost::asio::steady_timer timer_;
  bool cancelled_ = false;
};

}  // namespace lbo::orchestrator
