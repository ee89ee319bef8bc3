#include "lbo/orchestrator/stop_signals.hpp"

#include <signal.h>

#include <csignal>

namespace lbo::orchestrator {

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

}  // namespace lbo::orchestrator
