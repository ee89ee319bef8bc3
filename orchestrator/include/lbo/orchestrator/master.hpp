#pragma once
// Master: the event loop that keeps every slot busy until each task's budget is spent.
// One thread does every dispatch, journal write and (under MPI) every MPI call.

#include <chrono>
#include <functional>
#include <memory>

#include "lbo/cluster/transport.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/console.hpp"
#include "lbo/orchestrator/run_directory.hpp"

namespace boost::asio {
class io_context;
}

namespace lbo::orchestrator {

struct MasterOptions {
  /// Rounds instead of a stream: fill the free slots, wait until every trial of the round has
  /// finished, refit on all results, start the next round. With a fixed seed the run is then
  /// reproducible exactly (same trials, same order, same values), whatever the slot count.
  bool sync = false;
  /// Period of progress lines when stderr is not a terminal.
  std::chrono::milliseconds progress_every{10'000};
  /// Failures logged one by one; later ones only count in the progress line.
  int failures_logged = 10;
};

/// Makes the transport that runs work orders, delivering completions on `io`.
using TransportFactory = std::function<std::unique_ptr<cluster::Transport>(
    boost::asio::io_context& io, cluster::Transport::CompletionHandler on_completion)>;

/// Exit statuses of `lbo run`.
inline constexpr int kExitDone = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitBadInput = 2;

class Master {
 public:
  Master(const jobs::JobSpec& job, RunDirectory& run_dir, TransportFactory make_transport, Console& console,
         MasterOptions options = {});
  ~Master();
  Master(const Master&) = delete;
  Master& operator=(const Master&) = delete;

  /// Runs the job to its end. Returns kExitDone when every budget is spent, 128 + signal number
  /// when SIGINT/SIGTERM stopped it (running attempts are cancelled; a second signal kills them).
  int run();

 private:
  class Loop;
  std::unique_ptr<Loop> loop_;
};

}  // namespace lbo::orchestrator
