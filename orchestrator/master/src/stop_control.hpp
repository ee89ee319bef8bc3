#pragma once
// StopControl: how a run stops (private to master/). A stop signal, the deadline, lbo's own
// I/O failing, or a transport with no slot left: no new trials, a checkpoint, and the running
// trials get grace_s to finish before they are cancelled. A second signal cancels them at once,
// a third kills them.

#include <functional>
#include <memory>
#include <string>

#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "lbo/cluster/transport.hpp"
#include "lbo/orchestrator/console.hpp"
#include "lbo/orchestrator/deadline.hpp"

namespace lbo::orchestrator {

class StopControl {
 public:
  /// What a stop does to the rest of the loop.
  struct Hooks {
    std::function<bool()> checkpoint_now;                  ///< writes a checkpoint; false if it failed
    std::function<void(const std::string&)> write_status;  ///< LBO_STATUS_FILE
    std::function<void()> check_done;                      ///< the loop ends once nothing runs
    std::function<void()> finish;                          ///< ends the loop now
  };

  /// `transport` is the loop's (it outlives this): the stop cancels and shuts down its attempts.
  StopControl(boost::asio::io_context& io, cluster::Transport& transport, Console& console, double grace_s, Hooks hooks);

  /// Listens for SIGINT, SIGTERM, SIGUSR1 and SIGHUP.
  void listen();
  /// First signal: stop (exit 75). Second: cancel the running trials now. Third: kill them.
  void on_signal(int signal_number);
  /// Stops for `why` with exit 75 unless an error was set (the deadline, no slot left).
  void stop_resumable(const std::string& why);
  /// lbo's own I/O failed: nothing is charged to a trial for it, and the run stops rather than
  /// burn its budget; exit 75 when the condition may pass (a full disk, a read-only remount, a
  /// quota), so the same command resumes, else 1.
  void halt(const std::string& what, int error_number);
  /// The deadline: at its cutoff (less grace_s) the usual stop begins, so the run is never
  /// killed half-way by the end of its allocation. `clock`: Unix seconds now.
  void watch_deadline(const DeadlinePlanner& planner, std::function<double()> clock);
  /// Every task is done: waits `idle_s` for a new one (add-task, watch; `waiting_for` says
  /// where from), then ends the loop. new_task() ends the wait.
  void wait_idle(double idle_s, const std::string& waiting_for);
  void new_task();
  bool idle() const { return idle_; }
  /// Stops listening and waiting (the loop is ending).
  void cancel();

  bool stopping() const { return stopping_; }
  int exit_code() const { return exit_code_; }

 private:
  // No new trials, a checkpoint, and the running ones get grace_s to finish before they are
  // cancelled. The first cause says why; later ones add nothing. `grace_note` qualifies the
  // grace period in the log.
  void begin(const std::string& why, const std::string& grace_note = {});

  cluster::Transport& transport_;
  Console& console_;
  double grace_s_;
  Hooks hooks_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer grace_timer_, deadline_timer_, idle_timer_;
  bool idle_ = false;
  int signals_received_ = 0;
  bool cancelled_ = false;
  bool stopping_ = false;
  bool io_failed_ = false;
  int exit_code_ = 0;
};

}  // namespace lbo::orchestrator
