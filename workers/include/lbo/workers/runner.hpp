#pragma once
// Runner: one attempt of the objective as a child process, driven by an Asio io_context.

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lbo/workers/resources.hpp"
#include "lbo/workers/work_order.hpp"

namespace boost::asio {
class io_context;
}

namespace lbo::workers {

struct RunnerOptions {
  int rank = 0;  ///< LBO_RANK: MPI rank of the worker, 0 on local slots
  int slot = 0;  ///< LBO_SLOT: slot within the worker
  std::size_t output_limit_bytes = 10u << 20;  ///< per stream; the rest is dropped with a marker
  double drain_timeout_s = 2;  ///< wait for pipes held open by escaped descendants after exit
  /// The slot's cores, GPUs and threads: its trials are pinned to the cores, see the GPUs in
  /// CUDA_VISIBLE_DEVICES/ROCR_VISIBLE_DEVICES, and get LBO_THREADS, LBO_GPUS (and, when
  /// managed, OMP_NUM_THREADS, MKL_NUM_THREADS, OPENBLAS_NUM_THREADS).
  SlotResources resources;
};

/// Kills what an earlier attempt in `workdir` left running on this host (an lbo killed outright
/// cannot reap its objectives): every process group holding a process whose environment has
/// LBO_WORKDIR=<workdir>, read from /proc. Waits up to 2 s for them to go; returns how many
/// groups it killed.
int kill_leftovers(const std::string& workdir);
/// The same for every workdir under `folder` (a run's trials/): all that an lbo killed outright
/// left of any of its trials on this host.
int kill_leftovers_under(const std::string& folder);
/// Kills what an attempt that has ended left outside its process group (a daemon that called
/// setsid): every process group holding a process whose environment has
/// LBO_ATTEMPT_ID=<attempt_id>, which is unique to one attempt on its host, so a later attempt
/// of the same trial is spared. Does not wait for them to go; returns how many groups it
/// signalled.
int kill_escaped(const std::string& attempt_id);
/// The same for several ended attempts in one look at /proc; how many groups for each.
std::vector<int> kill_escaped(const std::vector<std::string>& attempt_ids);
/// lbo looks for what each ended attempt left outside its process group on a thread of its own,
/// so that its event loop does not wait for the scan. Before lbo exits it waits up to
/// `timeout_s` for those looks to be done (the last attempts' daemons would outlive it
/// otherwise) and returns how many ended attempts were not looked at in that time.
std::size_t finish_escaped_sweeps(double timeout_s);

/// Runs one attempt at a time: posix_spawn in its own process group, stdout/stderr streamed
/// to capped files, a timeout that kills the whole group, the result read per the protocol.
/// Everything happens on the io_context's thread; every failure becomes an Outcome.
class Runner {
 public:
  using DoneHandler = std::function<void(Outcome)>;
  /// Hears each intermediate report (a `lbo:report` line of stdout) as it is read, on the
  /// io_context, before `done`.
  using ReportHandler = std::function<void(TrialReport)>;

  Runner(boost::asio::io_context& io, RunnerOptions options);
  /// Kills a running child's process group and reaps it.
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  /// Starts `order`. `done` runs exactly once, on the io_context, never inside start().
  /// Precondition: !busy().
  void start(WorkOrder order, DoneHandler done, ReportHandler report = {});
  /// Stops the running attempt: SIGTERM to its group, SIGKILL after its grace period.
  /// Its outcome is `cancelled`. No effect when idle.
  void cancel();
  /// As cancel(), but SIGKILL at once (for a worker that is itself being terminated).
  void kill();
  bool busy() const;

 private:
  class Attempt;
  boost::asio::io_context& io_;
  RunnerOptions options_;
  std::shared_ptr<Attempt> current_;
};

}  // namespace lbo::workers
