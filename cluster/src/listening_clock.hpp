#pragma once
// Silence measured on the listener's own running time (private to cluster/).

#include <algorithm>
#include <chrono>

namespace lbo::cluster::detail {

/// The time a listener (the master judging its worker ranks, or a worker rank judging the
/// master) was running and listening: it advances with the steady clock while the listener's
/// periodic tick keeps coming, and by at most `max_gap` across a gap between two ticks. A
/// listener that was itself not running (SIGSTOP, a suspended job, a swapped node, a handler
/// that held its thread) cannot tell others silent for that time: on wall time, every worker
/// rank was taken for lost after the master was stopped for a few rank timeouts (issue 31).
class ListeningClock {
 public:
  using Clock = std::chrono::steady_clock;

  /// `max_gap`: the most one gap between ticks counts (a few tick periods).
  ListeningClock(Clock::duration max_gap, Clock::time_point now) : max_gap_(max_gap), last_tick_(now) {}

  /// The listening time at `now` (not before the last tick).
  Clock::duration at(Clock::time_point now) const {
    return listened_ + std::clamp(now - last_tick_, Clock::duration::zero(), max_gap_);
  }

  /// The listener's periodic tick: the time since the last one counts, up to `max_gap`.
  void tick(Clock::time_point now) {
    listened_ = at(now);
    last_tick_ = std::max(last_tick_, now);
  }

 private:
  Clock::duration max_gap_;
  Clock::duration listened_{};
  Clock::time_point last_tick_;
};

}  // namespace lbo::cluster::detail
