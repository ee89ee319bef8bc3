#include "lbo/cluster/simulated_transport.hpp"

#include <chrono>
#include <random>
#include <stdexcept>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

namespace lbo::cluster {

VirtualClock::VirtualClock(double start_unix, RealSeconds real)
    : real_(real ? std::move(real)
                 : RealSeconds([] {
                     return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
                   })),
      start_unix_(start_unix),
      real_start_(real_()) {}

double VirtualClock::now() const { return start_unix_ + (real_() - real_start_) + jumped_s_; }

void VirtualClock::advance_to(double unix_time) {
  const double ahead = unix_time - now();
  if (ahead > 0) jumped_s_ += ahead;
}

double simulated_duration_s(const jobs::SimulatedDuration& duration, std::optional<double> table_time_s,
                            std::uint64_t seed, std::int64_t trial, int attempt) {
  using Kind = jobs::SimulatedDuration::Kind;
  if (duration.kind == Kind::table) return table_time_s.value_or(0.0);
  if (duration.kind == Kind::fixed) return duration.a;
  std::seed_seq stream{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                       static_cast<std::uint32_t>(trial), static_cast<std::uint32_t>(static_cast<std::uint64_t>(trial) >> 32),
                       static_cast<std::uint32_t>(attempt), 0x5117u};
  std::mt19937_64 random(stream);
  switch (duration.kind) {
    case Kind::table: return table_time_s.value_or(0.0);
    case Kind::fixed: return duration.a;
    case Kind::uniform: return std::uniform_real_distribution<double>(duration.a, duration.b)(random);
    case Kind::lognormal: return std::lognormal_distribution<double>(duration.a, duration.b)(random);
    case Kind::exponential: return std::exponential_distribution<double>(1.0 / duration.a)(random);
  }
  return 0;
}

SimulatedTransport::SimulatedTransport(boost::asio::io_context& io, std::shared_ptr<VirtualClock> clock, int slots,
                                       Evaluate evaluate, CompletionHandler on_completion, std::string what)
    : io_(io),
      clock_(std::move(clock)),
      slots_(slots),
      evaluate_(std::move(evaluate)),
      on_completion_(std::move(on_completion)),
      resources_("simulated: " + std::to_string(slots) + " virtual slot(s) on a virtual clock, durations " +
                 std::move(what) + ", no process") {}

WorkerSlot SimulatedTransport::next_slot() const {
  return WorkerSlot{0, freed_slots_.empty() ? fresh_slot_ : *freed_slots_.begin()};
}

WorkerSlot SimulatedTransport::submit(workers::WorkOrder order) {
  if (shut_down_) throw std::logic_error("SimulatedTransport::submit after shutdown");
  const WorkerSlot slot = next_slot();
  if (!freed_slots_.empty()) {
    freed_slots_.erase(freed_slots_.begin());
  } else {
    ++fresh_slot_;
  }
  SimulatedAttempt attempt = evaluate_(order);
  attempt.outcome.duration_s = attempt.duration_s;
  const std::uint64_t sequence = next_sequence_++;
  running_[order.trial] = Running{order.attempt, slot.slot, std::move(attempt.outcome), sequence, false, false};
  events_.push(Event{clock_->now() + attempt.duration_s, sequence, order.trial});
  return slot;
}

void SimulatedTransport::cancel(std::int64_t trial) {
  const auto at = running_.find(trial);
  if (at == running_.end() || at->second.cancelled || at->second.delivering) return;
  // A newer event, due now, replaces its completion (the older one is dropped as stale).
  at->second.cancelled = true;
  at->second.sequence = next_sequence_++;
  events_.push(Event{clock_->now(), at->second.sequence, trial});
}

void SimulatedTransport::cancel_all() {
  std::vector<std::int64_t> trials;
  for (const auto& [trial, r] : running_) trials.push_back(trial);
  for (const std::int64_t trial : trials) cancel(trial);
}

void SimulatedTransport::shutdown() {
  shut_down_ = true;
  running_.clear();
  events_ = {};
}

void SimulatedTransport::drop_stale_events() const {
  while (!events_.empty()) {
    const auto at = running_.find(events_.top().trial);
    if (at != running_.end() && at->second.sequence == events_.top().sequence && !at->second.delivering) return;
    events_.pop();
  }
}

std::optional<double> SimulatedTransport::next_completion_in() const {
  drop_stale_events();
  if (events_.empty()) return std::nullopt;
  return events_.top().due - clock_->now();
}

bool SimulatedTransport::deliver_completions(bool jump) {
  if (shut_down_) return false;
  drop_stale_events();
  if (events_.empty()) return false;
  const double now = clock_->now();
  double until = now;
  if (events_.top().due > now) {
    if (!jump) return false;
    until = events_.top().due;
    clock_->advance_to(until);
  }
  std::vector<std::int64_t> due;
  while (!events_.empty() && events_.top().due <= until) {
    const Event event = events_.top();
    events_.pop();
    Running& r = running_.at(event.trial);
    r.delivering = true;
    due.push_back(event.trial);
    drop_stale_events();
  }
  boost::asio::post(io_, [this, alive = std::weak_ptr<int>(alive_), due = std::move(due)] {
    if (!alive.expired()) complete(due);
  });
  return true;
}

void SimulatedTransport::complete(const std::vector<std::int64_t>& trials) {
  for (const std::int64_t trial : trials) {
    const auto at = running_.find(trial);
    if (shut_down_ || at == running_.end()) return;
    Running r = std::move(at->second);
    running_.erase(at);
    if (r.slot == fresh_slot_ - 1) {
      --fresh_slot_;
      while (!freed_slots_.empty() && *freed_slots_.rbegin() == fresh_slot_ - 1) {
        freed_slots_.erase(std::prev(freed_slots_.end()));
        --fresh_slot_;
      }
    } else {
      freed_slots_.insert(r.slot);
    }
    if (r.cancelled) {
      r.outcome = workers::Outcome{};
      r.outcome.status = workers::TrialStatus::cancelled;
      r.outcome.reason = "cancelled by lbo";
    }
    on_completion_(Completion{trial, r.attempt, WorkerSlot{0, r.slot}, std::move(r.outcome)});
  }
}

}  // namespace lbo::cluster
