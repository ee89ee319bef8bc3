#pragma once
// A simulated run (`[workers] simulate = N`, `lbo run --simulate N`): N virtual slots whose
// attempts are evaluated in this process (a tabulated objective) and complete on a virtual clock,
// a discrete-event queue ordered by completion time. The virtual clock runs with the real
// (steady) clock while the master works, so its proposals and fits cost virtual time as they cost
// real time; when the master has nothing to do but wait, the clock jumps to the next completion
// (Master::Loop drives it through Transport::deliver_completions). So a run of hours passes in
// the master's real cost, and its utilization reflects that cost.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <vector>

#include "lbo/cluster/transport.hpp"
#include "lbo/jobs/job_spec.hpp"

namespace boost::asio {
class io_context;
}

namespace lbo::cluster {

/// Unix seconds of a simulated run: the real steady clock plus the time jumped over.
class VirtualClock {
 public:
  /// Seconds of a monotonic real clock (tests inject one).
  using RealSeconds = std::function<double()>;
  /// Reads `start_unix` now. The default real clock is std::chrono::steady_clock.
  explicit VirtualClock(double start_unix, RealSeconds real = {});

  double now() const;
  /// Moves the clock forward to `unix_time` (nothing when it is not ahead).
  void advance_to(double unix_time);
  /// Virtual seconds jumped over so far (the rest of now() - start passed in real time).
  double jumped_s() const { return jumped_s_; }
  /// Real seconds since construction.
  double real_elapsed_s() const { return real_() - real_start_; }

 private:
  RealSeconds real_;
  double start_unix_, real_start_;
  double jumped_s_ = 0;
};

/// What a simulated attempt yields: its outcome and how long it runs in virtual seconds.
struct SimulatedAttempt {
  workers::Outcome outcome;
  double duration_s = 0;
};

/// The virtual seconds an attempt takes under `duration`: the row's `table_time_s` for "table"
/// (0 without one: a lookup that found no row), else a draw of the distribution from a stream
/// seeded by (seed, trial, attempt), so a resumed or --sync run draws the same.
double simulated_duration_s(const jobs::SimulatedDuration& duration, std::optional<double> table_time_s,
                            std::uint64_t seed, std::int64_t trial, int attempt);

class SimulatedTransport final : public Transport {
 public:
  using Evaluate = std::function<SimulatedAttempt(const workers::WorkOrder&)>;

  /// `slots` virtual slots on `clock` (which outlives this); `what` names the durations' source
  /// for resources().
  SimulatedTransport(boost::asio::io_context& io, std::shared_ptr<VirtualClock> clock, int slots, Evaluate evaluate,
                     CompletionHandler on_completion, std::string what);

  int slot_count() const override { return slots_; }
  std::vector<std::string> resources() const override { return {resources_}; }
  int busy_count() const override { return static_cast<int>(running_.size()); }
  /// The lowest free slot.
  WorkerSlot next_slot() const override;
  /// Evaluates `order` now; it completes at now() + its duration.
  WorkerSlot submit(workers::WorkOrder order) override;
  /// Its completion (`cancelled`) is due at once.
  void cancel(std::int64_t trial) override;
  void cancel_all() override;
  void shutdown() override;

  bool simulated() const override { return true; }
  /// Posts one handler that completes every attempt due by now(), in order of completion time
  /// (ties: in order of submission); with `jump`, when none is due, the clock first moves to the
  /// earliest completion. Whether it posted one.
  bool deliver_completions(bool jump) override;
  std::optional<double> next_completion_in() const override;

 private:
  struct Event {
    double due = 0;
    std::uint64_t sequence = 0;  ///< submission order: ties complete in it
    std::int64_t trial = 0;
    bool operator>(const Event& other) const {
      return due != other.due ? due > other.due : sequence > other.sequence;
    }
  };
  struct Running {
    int attempt = 1;
    int slot = 0;
    workers::Outcome outcome;
    std::uint64_t sequence = 0;  ///< of its live event (a cancel queues a newer one)
    bool cancelled = false;
    bool delivering = false;  ///< its completion is posted
  };
  void drop_stale_events() const;  // pops events of attempts cancelled or being delivered
  void complete(const std::vector<std::int64_t>& trials);

  boost::asio::io_context& io_;
  std::shared_ptr<VirtualClock> clock_;
  int slots_;
  Evaluate evaluate_;
  CompletionHandler on_completion_;
  std::string resources_;
  std::map<std::int64_t, Running> running_;  ///< by trial, until its completion is handed over
  mutable std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;  ///< with stale ones
  std::set<int> freed_slots_;  ///< free slots below fresh_slot_
  int fresh_slot_ = 0;         ///< slots from here on were never used
  std::uint64_t next_sequence_ = 0;
  bool shut_down_ = false;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace lbo::cluster
