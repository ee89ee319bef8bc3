#include "stop_control.hpp"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>

#include <boost/asio/post.hpp>

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/master.hpp"
#include "lbo/orchestrator/run_outputs.hpp"
#include "lbo/orchestrator/stop_signals.hpp"

namespace asio = boost::asio;

namespace lbo::orchestrator {

// The stop signals held while lbo starts (stop_signals.hpp), before StopControl listens.
namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGUSR1, SIGHUP};

volatile std::sig_atomic_t held = 0;

extern "C" void hold_signal(int signal_number) {
  if (held == 0) held = signal_number;
}

}  // namespace

void hold_stop_signals() {
  struct sigaction action {};
  action.sa_handler = hold_signal;
  sigemptyset(&action.sa_mask);
  for (const int s : kStopSignals) ::sigaction(s, &action, nullptr);
}

int held_stop_signal() { return held; }

void release_stop_signals() {
  for (const int s : kStopSignals) ::signal(s, SIG_DFL);
  if (held != 0) ::raise(held);
}

namespace {

// Clamped to 100 years: a nanosecond count overflows past 292.
std::chrono::steady_clock::duration seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::min(s, 100.0 * 365 * 86'400)));
}

}  // namespace

StopControl::StopControl(asio::io_context& io, cluster::Transport& transport, Console& console, double grace_s,
                         Hooks hooks)
    : transport_(transport),
      console_(console),
      grace_s_(grace_s),
      hooks_(std::move(hooks)),
      signals_(io, SIGINT, SIGTERM, SIGUSR1),
      grace_timer_(io),
      deadline_timer_(io),
      idle_timer_(io) {
  // A closed terminal or ssh session stops the run like any other stop signal.
  signals_.add(SIGHUP);
}

void StopControl::listen() {
  signals_.async_wait([this](const boost::system::error_code& ec, int signal_number) {
    if (!ec) on_signal(signal_number);
  });
}

void StopControl::on_signal(int signal_number) {
  ++signals_received_;
  const std::string name = "SIG" + std::string(sigabbrev_np(signal_number));
  if (signals_received_ == 1) {
    if (exit_code_ == kExitDone) exit_code_ = kExitResumable;
    // mpirun forwards SIGTERM and SIGINT to every rank, and a worker rank that gets one cancels
    // its trials at once: the grace period is only sure for SIGUSR1 and SIGHUP.
    const bool ranks_too = (signal_number == SIGTERM || signal_number == SIGINT) && transport_.remote();
    begin("received " + name, ranks_too ? " unless the worker ranks got " + name + " too (mpirun forwards it to every rank, "
                                                                                   "which then cancels its trials at once; "
                                                                                   "send mpirun SIGUSR1 for a grace period)"
                                        : std::string());
  } else if (signals_received_ == 2) {
    console_.log("received " + name + " again: cancelling the running trials");
    grace_timer_.cancel();
    transport_.cancel_all();
  } else {
    console_.log("received " + name + " a third time: killing the running trials");
    transport_.shutdown();
    hooks_.finish();
    return;
  }
  listen();
  hooks_.check_done();
}

void StopControl::stop_resumable(const std::string& why) {
  if (stopping_) return;
  if (exit_code_ == kExitDone) exit_code_ = kExitResumable;
  begin(why);
}

void StopControl::halt(const std::string& what, int error_number) {
  if (io_failed_) return;
  io_failed_ = true;
  const bool may_pass = IoError::may_pass(error_number);
  if (exit_code_ == kExitDone || !may_pass) exit_code_ = may_pass ? kExitResumable : kExitError;
  console_.log("lbo's own I/O failed: " + what);
  begin(may_pass ? "stopping until that is fixed (the same command then resumes the run)" : "stopping");
}

void StopControl::begin(const std::string& why, const std::string& grace_note) {
  if (stopping_) return;
  stopping_ = true;
  // A launcher may kill the master during the grace period (mpirun SIGKILLs its ranks soon
  // after forwarding SIGTERM): from this checkpoint on the run is resumable, so say so now.
  if (hooks_.checkpoint_now() && exit_code_ == kExitResumable) hooks_.write_status(std::to_string(kExitResumable));
  if (const int running = transport_.busy_count(); running > 0) {
    console_.log(why + ": no new trials; " + std::to_string(running) + " running trial(s) have " + format_objective(grace_s_) +
                 " s to finish" + grace_note + " (signal again to cancel them now)");
  } else {
    console_.log(why + ": no new trials; none is running");
  }
  grace_timer_.expires_after(seconds(grace_s_));
  grace_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || cancelled_) return;
    if (transport_.busy_count() > 0) console_.log("grace period over: cancelling the running trials");
    transport_.cancel_all();
  });
  asio::post(grace_timer_.get_executor(), [this] { hooks_.check_done(); });
}

void StopControl::watch_deadline(const DeadlinePlanner& planner, std::function<double()> clock) {
  deadline_timer_.expires_after(seconds(std::max(0.0, planner.cutoff() - clock())));
  deadline_timer_.async_wait([this, &planner, clock](const boost::system::error_code& ec) {
    if (ec || cancelled_) return;
    // A steady clock and the wall clock drift apart (NTP): wait for the rest.
    if (clock() < planner.cutoff()) {
      watch_deadline(planner, clock);
      return;
    }
    stop_resumable(planner.cutoff_reached());
  });
}

void StopControl::wait_idle(double idle_s, const std::string& waiting_for) {
  idle_ = true;
  console_.log("every task is done; waiting up to " + format_objective(idle_s) + " s for a new one (" + waiting_for + ")");
  idle_timer_.expires_after(seconds(idle_s));
  idle_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || cancelled_ || !idle_) return;
    console_.log("no new task came: exiting");
    hooks_.finish();
  });
}

void StopControl::new_task() {
  idle_timer_.cancel();
  idle_ = false;
}

void StopControl::cancel() {
  cancelled_ = true;
  signals_.cancel();
  for (boost::asio::steady_timer* t : {&grace_timer_, &deadline_timer_, &idle_timer_}) t->cancel();
}

}  // namespace lbo::orchestrator
