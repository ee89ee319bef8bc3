#pragma once
// Master: the event loop that keeps every slot busy until each task's budget is spent.
// One thread does every dispatch, journal write and (under MPI) every MPI call.

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "lbo/cluster/transport.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/console.hpp"
#include "lbo/orchestrator/deadline.hpp"
#include "lbo/orchestrator/policy.hpp"
#include "lbo/orchestrator/recovery.hpp"
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
  /// Period of checkpoints; the job's checkpoint_every_s when unset.
  std::optional<double> checkpoint_every_s;
  /// The command that continues this run, printed when a signal stops it.
  std::string resume_command;
  /// [policy] warm_start's tasks (load_warm_start), for the model.
  std::vector<WarmTask> warm_start;
  /// OpenMP threads of the model (fit_threads()).
  int fit_threads = 1;
  /// Writes the run's report (report.html) after every periodic checkpoint (`end` false) and
  /// once the run ends (`end` true, with its exit status). A report, not state: what it throws
  /// is a warning.
  std::function<void(bool end, int exit_code)> write_report;
  /// When the allocation ends (find_deadline): no trial is started that is unlikely to finish by
  /// then less the job's grace_s (DeadlinePlanner); when nothing is running and nothing fits,
  /// and at the latest at the deadline less grace_s, the run stops as after a signal
  /// (kExitResumable). None: the run stops only on a signal.
  std::optional<Deadline> deadline;
  /// A file the master writes its exit status to: "75" as soon as a stop has written its
  /// checkpoint (a launcher may kill the master after that: the run is resumable from there),
  /// and the final status when the run ends. Empty: none. `lbo run` takes it from the
  /// LBO_STATUS_FILE environment variable, for batch scripts whose `mpirun` reports its own
  /// status instead of the master's (1 or 137 after forwarding SIGTERM).
  std::filesystem::path status_file;
  /// Unix seconds now: every time the master records (journal, checkpoints) or compares with
  /// the deadline. Its timers wait steady-clock durations computed from it. Tests inject one.
  std::function<double()> clock = [] {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  };
};

/// Makes the transport that runs work orders, delivering completions on `io`.
using TransportFactory = std::function<std::unique_ptr<cluster::Transport>(
    boost::asio::io_context& io, cluster::Transport::CompletionHandler on_completion)>;

/// Exit statuses of `lbo run`.
inline constexpr int kExitDone = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitResumable = 75;  ///< stopped by a signal or the deadline; the same command resumes (EX_TEMPFAIL)

class Master {
 public:
  /// A new run, or the continuation of `recovered` (whose job identity the caller has checked
  /// against `job`).
  Master(const jobs::JobSpec& job, RunDirectory& run_dir, TransportFactory make_transport, Console& console,
         MasterOptions options = {}, std::optional<RecoveredRun> recovered = std::nullopt);
  ~Master();
  Master(const Master&) = delete;
  Master& operator=(const Master&) = delete;

  /// Runs the job to its end: kExitDone when every budget is spent. SIGTERM, SIGINT, SIGUSR1 or
  /// SIGHUP (a closed terminal or ssh session) stop it: no new trials, a checkpoint, the running ones get the job's grace_s to finish and
  /// are then cancelled (a second signal cancels them at once, a third kills them), a final
  /// checkpoint, kExitResumable. A deadline stops it the same way (MasterOptions::deadline).
  int run();

 private:
  class Loop;
  std::unique_ptr<Loop> loop_;
};

}  // namespace lbo::orchestrator
