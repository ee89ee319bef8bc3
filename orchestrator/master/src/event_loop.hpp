#pragma once
// How the master's io_context is run: to the end for real transports; for a simulated one
// (Transport::simulated), handler by handler, with its virtual clock's completions handed over
// between handlers and the clock jumped ahead when the master has nothing else to do. Private to
// orchestrator/master.

namespace boost::asio {
class io_context;
}

namespace lbo::cluster {
class Transport;
}

namespace lbo::orchestrator {

class Policy;

/// Runs `io`'s handlers until it runs out of work. With a simulated `transport`: before each
/// handler, the completions due by its clock are posted; when no handler is ready and nothing
/// simulated runs, it blocks for a real event (a timer, add-task); while `policy` fits in the
/// background, it waits for the fit in short real steps, so the fit costs virtual time as it
/// would real time; otherwise it jumps the clock to the next completion.
void run_event_loop(boost::asio::io_context& io, cluster::Transport& transport, const Policy& policy);

}  // namespace lbo::orchestrator
