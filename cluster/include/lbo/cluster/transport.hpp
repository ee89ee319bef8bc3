#pragma once
// Transport: where work orders run. One interface over local slots in this process
// (LocalTransport), MPI worker ranks (mpi.hpp), evaluation in this process (InProcessTransport)
// and a simulation on a virtual clock (SimulatedTransport). All deliver completions as calls on
// the master's io_context thread, so the master needs no locks.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lbo/workers/work_order.hpp"

namespace lbo::cluster {

/// Where an attempt runs: rank 0 means a local slot of this process; slot -1 means not known
/// yet (an MPI worker picks its slot when the order arrives).
struct WorkerSlot {
  int rank = 0;
  int slot = 0;
};
/// "local:1", "rank2:0", or "rank2" while the slot is unknown, as in results.csv.
std::string to_string(WorkerSlot worker);
/// The inverse of to_string: nothing for text it does not write (an older or damaged record).
std::optional<WorkerSlot> parse_worker_slot(std::string_view text);

struct Completion {
  std::int64_t trial = 0;
  int attempt = 1;
  WorkerSlot worker;
  workers::Outcome outcome;
};

class Transport {
 public:
  using CompletionHandler = std::function<void(Completion)>;
  /// Intermediate reports of running attempts, in the order they were read, a batch at a time
  /// (at most one call per turn of the master's event loop locally, one per message under MPI).
  using ReportHandler = std::function<void(std::vector<workers::TrialReport>)>;

  virtual ~Transport() = default;

  /// Attempts that can run at once.
  virtual int slot_count() const = 0;
  /// Where the slots run and what each has (cores, GPUs, threads), and anything that differs
  /// from what the job asked for: lines for the log.
  virtual std::vector<std::string> resources() const = 0;
  /// Attempts submitted and not yet completed.
  virtual int busy_count() const = 0;
  /// Where the next submit() sends its order (the master journals an attempt before it
  /// starts). Precondition: busy_count() < slot_count().
  virtual WorkerSlot next_slot() const = 0;
  /// Sends `order` to next_slot(). Precondition: busy_count() < slot_count().
  virtual WorkerSlot submit(workers::WorkOrder order) = 0;
  /// Stops the attempt of `trial` wherever it runs; its completion (`cancelled`) still arrives.
  virtual void cancel(std::int64_t trial) = 0;
  /// Cancels every running attempt.
  virtual void cancel_all() = 0;
  /// Releases the workers: running attempts are killed and no completion arrives after this.
  virtual void shutdown() = 0;
  /// Where reports go from now on; without a handler they are dropped (as by a transport that
  /// does not read them).
  virtual void on_reports(ReportHandler handler) { (void)handler; }
  /// Whether the slots live in other processes (MPI worker ranks), which a launcher signals
  /// too: a stop signal may reach them as well as this one.
  virtual bool remote() const { return false; }

  /// Whether attempts complete on a virtual clock (simulated_transport.hpp) rather than when
  /// something real ends; the master's loop then drives the two calls below.
  virtual bool simulated() const { return false; }
  /// A simulated transport posts the completions due by now; with `jump`, when none is due, it
  /// first moves its clock to the next one. Whether it posted any.
  virtual bool deliver_completions(bool jump) {
    (void)jump;
    return false;
  }
  /// A simulated transport's virtual seconds until its next completion (<= 0: due); none when
  /// nothing runs.
  virtual std::optional<double> next_completion_in() const { return std::nullopt; }
};

}  // namespace lbo::cluster
