// The simulated transport's event queue on a virtual clock whose real part is injected here:
// completions in order of their due time, ties together in submission order, none before it
// is due unless the clock jumps, the master's real time counted on the clock, a cancel due at
// once, slots reused lowest first; and the durations a job names.

#include "lbo/cluster/simulated_transport.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <cmath>
#include <map>
#include <vector>

using namespace lbo::cluster;
using lbo::jobs::SimulatedDuration;

namespace {

lbo::workers::WorkOrder simulated_order(std::int64_t trial, int attempt = 1) {
  lbo::workers::WorkOrder order;
  order.trial = trial;
  order.attempt = attempt;
  return order;
}

// A real clock the test moves by hand.
struct FakeReal {
  double seconds = 100;
  VirtualClock::RealSeconds source() {
    return [this] { return seconds; };
  }
};

// Each trial's duration from the map, its id as the objective.
struct Fixture {
  boost::asio::io_context io;
  FakeReal real;
  std::shared_ptr<VirtualClock> clock = std::make_shared<VirtualClock>(1000.0, real.source());
  std::map<std::int64_t, double> durations;
  std::vector<Completion> done;
  std::vector<double> done_at;  // the clock when each completion was handed over
  SimulatedTransport transport{io, clock, 3,
                               [this](const lbo::workers::WorkOrder& order) {
                                 lbo::workers::Outcome outcome;
                                 outcome.status = lbo::workers::TrialStatus::ok;
                                 outcome.objective = static_cast<double>(order.trial);
                                 return SimulatedAttempt{outcome, durations.at(order.trial)};
                               },
                               [this](Completion c) {
                                 done.push_back(std::move(c));
                                 done_at.push_back(clock->now());
                               },
                               "fixed"};

  // What one jump hands over.
  std::vector<std::int64_t> jump() {
    const std::size_t before = done.size();
    transport.deliver_completions(true);
    io.poll();
    io.restart();
    std::vector<std::int64_t> trials;
    for (std::size_t i = before; i < done.size(); ++i) trials.push_back(done[i].trial);
    return trials;
  }
};

}  // namespace

TEST(VirtualClockTest, runs_with_the_real_clock_and_jumps_only_forward) {
  FakeReal real;
  VirtualClock clock(5000.0, real.source());
  EXPECT_DOUBLE_EQ(clock.now(), 5000.0);
  real.seconds += 2.5;
  EXPECT_DOUBLE_EQ(clock.now(), 5002.5);
  clock.advance_to(5100.0);
  EXPECT_DOUBLE_EQ(clock.now(), 5100.0);
  EXPECT_DOUBLE_EQ(clock.jumped_s(), 97.5);
  clock.advance_to(5050.0);  // behind: nothing
  EXPECT_DOUBLE_EQ(clock.now(), 5100.0);
  real.seconds += 1;
  EXPECT_DOUBLE_EQ(clock.now(), 5101.0);
  EXPECT_DOUBLE_EQ(clock.real_elapsed_s(), 3.5);
}

TEST(SimulatedTransportTest, completions_come_in_order_of_their_due_time_and_ties_together_in_submission_order) {
  Fixture f;
  f.durations = {{1, 30.0}, {2, 10.0}, {3, 30.0}};
  EXPECT_EQ(f.transport.submit(simulated_order(1)).slot, 0);
  EXPECT_EQ(f.transport.submit(simulated_order(2)).slot, 1);
  EXPECT_EQ(f.transport.submit(simulated_order(3)).slot, 2);
  EXPECT_TRUE(f.transport.simulated());
  EXPECT_EQ(f.transport.resources(),
            (std::vector<std::string>{"simulated: 3 virtual slot(s) on a virtual clock, durations fixed, no process"}));
  // Nothing is due yet, and nothing comes without a jump.
  EXPECT_FALSE(f.transport.deliver_completions(false));
  ASSERT_TRUE(f.transport.next_completion_in().has_value());
  EXPECT_DOUBLE_EQ(*f.transport.next_completion_in(), 10.0);
  EXPECT_EQ(f.jump(), (std::vector<std::int64_t>{2}));
  EXPECT_DOUBLE_EQ(f.done_at.back(), 1010.0);
  EXPECT_DOUBLE_EQ(f.done.back().outcome.duration_s, 10.0);
  EXPECT_EQ(f.transport.busy_count(), 2);
  // Trials 1 and 3 are due at the same time: one hand-over, in the order they were submitted.
  EXPECT_EQ(f.jump(), (std::vector<std::int64_t>{1, 3}));
  EXPECT_DOUBLE_EQ(f.done_at.back(), 1030.0);
  EXPECT_EQ(f.done[1].worker.slot, 0);
  EXPECT_EQ(f.done[2].worker.slot, 2);
  EXPECT_EQ(f.transport.busy_count(), 0);
  EXPECT_FALSE(f.transport.next_completion_in().has_value());
  EXPECT_FALSE(f.transport.deliver_completions(true)) << "nothing runs: no jump";
  EXPECT_DOUBLE_EQ(f.clock->now(), 1030.0);
}

TEST(SimulatedTransportTest, the_masters_real_time_is_on_the_clock_and_what_falls_due_meanwhile_comes_without_a_jump) {
  Fixture f;
  f.durations = {{1, 5.0}, {2, 20.0}};
  f.transport.submit(simulated_order(1));
  f.real.seconds += 3;  // the master proposes for 3 s: trial 2 starts 3 s later
  f.transport.submit(simulated_order(2));
  f.real.seconds += 4;  // and works on for 4 s more: trial 1 fell due at 1005
  EXPECT_DOUBLE_EQ(*f.transport.next_completion_in(), -2.0);
  EXPECT_TRUE(f.transport.deliver_completions(false));
  f.io.poll();
  f.io.restart();
  ASSERT_EQ(f.done.size(), 1u);
  EXPECT_EQ(f.done[0].trial, 1);
  EXPECT_DOUBLE_EQ(f.done_at[0], 1007.0) << "handed over when the master came round, not when it fell due";
  EXPECT_DOUBLE_EQ(f.clock->jumped_s(), 0.0);
  // Trial 2 is due at 1003 + 20: the jump covers only what the master did not spend.
  EXPECT_EQ(f.jump(), (std::vector<std::int64_t>{2}));
  EXPECT_DOUBLE_EQ(f.done_at[1], 1023.0);
  EXPECT_DOUBLE_EQ(f.clock->jumped_s(), 16.0);
}

TEST(SimulatedTransportTest, a_cancel_is_due_at_once_and_the_lowest_free_slot_is_used_next) {
  Fixture f;
  f.durations = {{1, 100.0}, {2, 50.0}, {3, 60.0}, {4, 1.0}};
  f.transport.submit(simulated_order(1));
  f.transport.submit(simulated_order(2));
  f.transport.submit(simulated_order(3));
  f.transport.cancel(1);
  f.transport.cancel(1);  // twice: still one completion
  EXPECT_TRUE(f.transport.deliver_completions(false)) << "a cancel is due now";
  f.io.poll();
  f.io.restart();
  ASSERT_EQ(f.done.size(), 1u);
  EXPECT_EQ(f.done[0].trial, 1);
  EXPECT_EQ(f.done[0].outcome.status, lbo::workers::TrialStatus::cancelled);
  EXPECT_EQ(f.transport.next_slot().slot, 0);
  EXPECT_EQ(f.transport.submit(simulated_order(4)).slot, 0);
  EXPECT_EQ(f.jump(), (std::vector<std::int64_t>{4}));
  EXPECT_EQ(f.jump(), (std::vector<std::int64_t>{2}));
  EXPECT_EQ(f.transport.next_slot().slot, 0);
  f.transport.cancel_all();
  EXPECT_EQ(f.jump(), (std::vector<std::int64_t>{3}));
  EXPECT_EQ(f.done.back().outcome.status, lbo::workers::TrialStatus::cancelled);
  EXPECT_DOUBLE_EQ(f.clock->now(), 1050.0) << "the cancel did not wait for trial 3's end at 1060";
}

TEST(SimulatedTransportTest, nothing_completes_after_shutdown) {
  Fixture f;
  f.durations = {{1, 1.0}, {2, 2.0}};
  f.transport.submit(simulated_order(1));
  f.transport.deliver_completions(true);  // posted, not yet run
  f.transport.submit(simulated_order(2));
  f.transport.shutdown();
  EXPECT_EQ(f.transport.busy_count(), 0);
  EXPECT_FALSE(f.transport.deliver_completions(true));
  f.io.poll();
  EXPECT_TRUE(f.done.empty());
}

TEST(SimulatedDurationTest, a_table_row_gives_its_time_and_a_distribution_the_same_draw_for_the_same_attempt) {
  const SimulatedDuration table{};
  EXPECT_DOUBLE_EQ(simulated_duration_s(table, 42.0, 1, 7, 1), 42.0);
  EXPECT_DOUBLE_EQ(simulated_duration_s(table, std::nullopt, 1, 7, 1), 0.0);
  EXPECT_DOUBLE_EQ(simulated_duration_s({SimulatedDuration::Kind::fixed, 600, 0}, 42.0, 1, 7, 1), 600.0);
  const SimulatedDuration uniform{SimulatedDuration::Kind::uniform, 300, 900};
  const double a = simulated_duration_s(uniform, std::nullopt, 1, 7, 1);
  EXPECT_DOUBLE_EQ(simulated_duration_s(uniform, std::nullopt, 1, 7, 1), a);
  EXPECT_NE(simulated_duration_s(uniform, std::nullopt, 1, 7, 2), a) << "another attempt draws anew";
  EXPECT_NE(simulated_duration_s(uniform, std::nullopt, 2, 7, 1), a) << "another seed draws anew";
  // Sample means against the closed forms: uniform (a+b)/2, exponential its mean, lognormal
  // exp(mu + sigma²/2); 20,000 draws put each within a few standard errors.
  const auto mean = [](const SimulatedDuration& d) {
    double sum = 0;
    for (int t = 0; t < 20'000; ++t) {
      const double s = simulated_duration_s(d, std::nullopt, 3, t, 1);
      EXPECT_GE(s, 0.0);
      sum += s;
    }
    return sum / 20'000;
  };
  EXPECT_NEAR(mean(uniform), 600.0, 4 * (600 / std::sqrt(12.0)) / std::sqrt(20'000.0));
  EXPECT_NEAR(mean({SimulatedDuration::Kind::exponential, 600, 0}), 600.0, 4 * 600 / std::sqrt(20'000.0));
  const double mu = 6.0, sigma = 0.5;
  const double lognormal_mean = std::exp(mu + sigma * sigma / 2);
  const double lognormal_sd = lognormal_mean * std::sqrt(std::exp(sigma * sigma) - 1);
  EXPECT_NEAR(mean({SimulatedDuration::Kind::lognormal, mu, sigma}), lognormal_mean, 4 * lognormal_sd / std::sqrt(20'000.0));
}
