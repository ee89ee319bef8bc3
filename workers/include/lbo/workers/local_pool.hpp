#pragma once
// LocalPool: a fixed number of slots, each running one attempt at a time on one io_context.
// The in-process worker behind local slots, and the engine of every MPI worker rank.

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "lbo/workers/runner.hpp"

namespace lbo::workers {

class LocalPool {
 public:
  using DoneHandler = std::function<void(int slot, Outcome)>;

  /// `options.slot` and `options.resources` are ignored: each slot gets its index and its
  /// element of `slots`.
  LocalPool(boost::asio::io_context& io, const std::vector<SlotResources>& slots, RunnerOptions options);
  /// `slots` slots with default resources (unpinned, no GPU, one thread).
  LocalPool(boost::asio::io_context& io, int slots, RunnerOptions options);

  int slot_count() const { return static_cast<int>(slots_.size()); }
  int busy_count() const;

  /// The slot the next submit() takes: the first free one. Precondition: a slot is free.
  int free_slot() const;
  /// Starts `order` on free_slot() and returns that slot; `done` runs on the io_context when
  /// the attempt ends. Precondition: busy_count() < slot_count().
  /// `report` (optional) hears the attempt's intermediate reports (Runner::ReportHandler).
  int submit(WorkOrder order, DoneHandler done, Runner::ReportHandler report = {});
  /// Cancels the attempt of `trial` if one runs here.
  void cancel(std::int64_t trial);
  void cancel_all();
  /// Kills every running attempt at once (SIGKILL); outcomes are `cancelled`.
  void kill_all();

 private:
  struct Slot {
    std::unique_ptr<Runner> runner;
    std::int64_t trial = -1;
  };
  std::vector<Slot> slots_;
};

}  // namespace lbo::workers
