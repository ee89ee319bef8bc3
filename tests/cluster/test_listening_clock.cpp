#include "listening_clock.hpp"

#include <gtest/gtest.h>

using lbo::cluster::detail::ListeningClock;
using namespace std::chrono_literals;

namespace {

constexpr auto kTick = 100ms;  // a tenth of a 1 s rank timeout

}  // namespace

TEST(ListeningClockTest, runs_with_the_steady_clock_while_the_ticks_come) {
  const auto t0 = ListeningClock::Clock::time_point{} + 1h;
  ListeningClock clock(2 * kTick, t0);
  for (int i = 1; i <= 30; ++i) clock.tick(t0 + i * kTick);
  EXPECT_EQ(clock.at(t0 + 30 * kTick), 30 * kTick);
  EXPECT_EQ(clock.at(t0 + 30 * kTick + 50ms), 30 * kTick + 50ms);
}

// A master stopped for 5 rank timeouts (SIGSTOP) comes back with the same silence it left with,
// plus at most two ticks: every rank has the rest of the timeout to be heard.
TEST(ListeningClockTest, a_listener_that_was_not_running_counts_at_most_two_ticks_of_the_gap) {
  const auto t0 = ListeningClock::Clock::time_point{} + 1h;
  ListeningClock clock(2 * kTick, t0);
  clock.tick(t0 + kTick);
  const auto heard = clock.at(t0 + kTick);  // a rank's last message before the stop
  const auto resumed = t0 + kTick + 5s;
  clock.tick(resumed);
  EXPECT_EQ(clock.at(resumed) - heard, 2 * kTick);
  EXPECT_LT(clock.at(resumed) - heard, 1s);  // not lost on a 1 s timeout
  // A rank that stays silent after the resume is taken for lost a timeout later, as usual.
  auto now = resumed;
  while (clock.at(now) - heard <= 1s) {
    now += kTick;
    clock.tick(now);
  }
  EXPECT_EQ(now - resumed, 9 * kTick);
}

TEST(ListeningClockTest, a_time_before_the_last_tick_does_not_go_back) {
  const auto t0 = ListeningClock::Clock::time_point{} + 1h;
  ListeningClock clock(2 * kTick, t0);
  clock.tick(t0 + kTick);
  EXPECT_EQ(clock.at(t0), kTick);
  clock.tick(t0);
  EXPECT_EQ(clock.at(t0 + kTick), kTick);
}
