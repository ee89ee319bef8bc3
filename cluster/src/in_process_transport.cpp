#include "lbo/cluster/in_process_transport.hpp"

#include <set>
#include <stdexcept>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

namespace lbo::cluster {

InProcessTransport::InProcessTransport(boost::asio::io_context& io, int slots, Evaluate evaluate,
                                       CompletionHandler on_completion, std::string what)
    : io_(io),
      slots_(slots),
      evaluate_(std::move(evaluate)),
      on_completion_(std::move(on_completion)),
      resources_(what + ": " + std::to_string(slots) + " slot(s), no process") {}

WorkerSlot InProcessTransport::next_slot() const {
  std::set<int> busy;
  for (const auto& [trial, r] : running_) busy.insert(r.slot);
  int slot = 0;
  while (busy.count(slot) != 0) ++slot;
  return WorkerSlot{0, slot};
}

WorkerSlot InProcessTransport::submit(workers::WorkOrder order) {
  if (shut_down_) throw std::logic_error("InProcessTransport::submit after shutdown");
  const WorkerSlot slot = next_slot();
  running_[order.trial] = Running{order.attempt, slot.slot, false};
  workers::Outcome outcome = evaluate_(order);
  boost::asio::post(io_, [this, alive = std::weak_ptr<int>(alive_), trial = order.trial,
                           outcome = std::move(outcome)]() mutable {
    if (!alive.expired()) complete(trial, std::move(outcome));
  });
  return slot;
}

void InProcessTransport::complete(std::int64_t trial, workers::Outcome outcome) {
  const auto at = running_.find(trial);
  if (shut_down_ || at == running_.end()) return;
  const Running r = at->second;
  running_.erase(at);
  if (r.cancelled) {
    outcome = workers::Outcome{};
    outcome.status = workers::TrialStatus::cancelled;
    outcome.reason = "cancelled by lbo";
  }
  on_completion_(Completion{trial, r.attempt, WorkerSlot{0, r.slot}, std::move(outcome)});
}

void InProcessTransport::cancel(std::int64_t trial) {
  if (const auto at = running_.find(trial); at != running_.end()) at->second.cancelled = true;
}

void InProcessTransport::cancel_all() {
  for (auto& [trial, r] : running_) r.cancelled = true;
}

void InProcessTransport::shutdown() {
  shut_down_ = true;
  running_.clear();
}

}  // namespace lbo::cluster
