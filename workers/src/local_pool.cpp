#include "lbo/workers/local_pool.hpp"

#include <algorithm>
#include <stdexcept>

namespace lbo::workers {

LocalPool::LocalPool(boost::asio::io_context& io, const std::vector<SlotResources>& slots, RunnerOptions options) {
  if (slots.empty()) throw std::invalid_argument("LocalPool needs at least one slot");
  slots_.resize(slots.size());
  for (std::size_t i = 0; i < slots.size(); ++i) {
    RunnerOptions slot_options = options;
    slot_options.slot = static_cast<int>(i);
    slot_options.resources = slots[i];
    slots_[i].runner = std::make_unique<Runner>(io, slot_options);
  }
}

LocalPool::LocalPool(boost::asio::io_context& io, int slots, RunnerOptions options)
    : LocalPool(io, std::vector<SlotResources>(static_cast<std::size_t>(std::max(slots, 0))), std::move(options)) {}

int LocalPool::busy_count() const {
  int busy = 0;
  for (const Slot& s : slots_) busy += s.runner->busy() ? 1 : 0;
  return busy;
}

int LocalPool::free_slot() const {
  for (int i = 0; i < slot_count(); ++i) {
    if (!slots_[i].runner->busy()) return i;
  }
  throw std::logic_error("LocalPool: every slot is busy");
}

int LocalPool::submit(WorkOrder order, DoneHandler done, Runner::ReportHandler report) {
  const int i = free_slot();
  Slot& slot = slots_[i];
  slot.trial = order.trial;
  slot.runner->start(std::move(order), [this, i, done = std::move(done)](Outcome outcome) {
    slots_[i].trial = -1;
    done(i, std::move(outcome));
  }, std::move(report));
  return i;
}

void LocalPool::cancel(std::int64_t trial) {
  for (Slot& s : slots_) {
    if (s.trial == trial) s.runner->cancel();
  }
}

void LocalPool::cancel_all() {
  for (Slot& s : slots_) s.runner->cancel();
}

void LocalPool::kill_all() {
  for (Slot& s : slots_) s.runner->kill();
}

}  // namespace lbo::workers
