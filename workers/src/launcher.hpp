#pragma once
// The launcher: an attempt's trial folder, pipes and posix_spawn on a thread of its own (private
// to workers/). At hundreds of local slots the thread of the event loop (the master's) spent
// about 4 ms per trial here; now it proposes and commits while objectives start. Two threads per
// process, started on first use, take the launches up in the order asked (a trial's outcome
// does not depend on which of two starts first). The attempt is journaled before it is asked
// for, as before.

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "lbo/workers/runner.hpp"
#include "lbo/workers/work_order.hpp"
#include "unique_fd.hpp"

namespace lbo::workers::detail {

/// What the launcher made of one attempt: its stream files, the read ends of the child's pipes
/// and the child; or why it could not start it.
struct Launch {
  UniqueFd stdout_file, stderr_file;  ///< trials/<id>/stdout and stderr
  UniqueFd stdout_read, stderr_read;  ///< the child's stdout and stderr pipes
  pid_t pid = -1;                     ///< the child, leader of its own process group; -1: failed
  bool folder_ready = false;          ///< the trial folder and its stream files were made
  std::chrono::steady_clock::time_point began;  ///< when the launcher took it up
  std::string error;
  int error_number = 0;  ///< lbo's own failure's errno; 0 when the objective's command is at fault
  std::string path;      ///< the file or folder the error is about
};

/// A launch asked for. Its result is taken exactly once: by the attempt on its event loop, or by
/// wait_and_take() when the attempt goes away first (then the caller must end the child).
class PendingLaunch {
 public:
  /// The result, once it is ready and if no one took it; null otherwise.
  std::optional<Launch> take();
  /// Waits until the launch is done and its completion handed to the event loop; then its
  /// result, if no one took it.
  std::optional<Launch> wait_and_take();
  /// The launcher's: the result is in place, then `ready` tells the event loop, then waiters
  /// are woken (the event loop is no longer touched from the launcher's thread).
  void deliver(Launch made, const std::function<void()>& ready);

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  std::optional<Launch> result_;
  bool delivered_ = false;
};

/// Launches `order` (attempt `attempt_id`, a slot's `options`) on the launcher's thread, then
/// calls `ready` there; `ready` should post to the attempt's event loop, which then take()s.
std::shared_ptr<PendingLaunch> launch_later(WorkOrder order, RunnerOptions options, std::string attempt_id,
                                            std::function<void()> ready);

}  // namespace lbo::workers::detail
