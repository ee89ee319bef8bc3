#pragma once
// Stop signals (SIGINT, SIGTERM, SIGUSR1, SIGHUP) that arrive before the master listens.

namespace lbo::orchestrator {

/// From the start of main on, a stop signal is held rather than acted on by its default action
/// (which ends lbo with 128 + the signal, no checkpoint and no resume line, and ends a requeue
/// chain that waits for 75): parsing, recovery and the master's setup take milliseconds to
/// seconds, and the master then acts on the first signal held as on any other.
void hold_stop_signals();

/// The first stop signal held since hold_stop_signals (0: none).
int held_stop_signal();

/// Back to the default actions, for commands that do not stop gracefully (status, report,
/// ...): a signal held meanwhile is raised again, and acts as it would have.
void release_stop_signals();

}  // namespace lbo::orchestrator
