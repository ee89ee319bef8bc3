// Slots that evaluate orders with a function: completions come in a later turn of the loop, on
// the lowest free slot, a cancelled one as `cancelled`, none after shutdown.

#include "lbo/cluster/in_process_transport.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <vector>

using namespace lbo::cluster;

namespace {

lbo::workers::WorkOrder order_of(std::int64_t trial, int attempt = 1) {
  lbo::workers::WorkOrder order;
  order.trial = trial;
  order.attempt = attempt;
  return order;
}

// The trial id as the objective.
lbo::workers::Outcome by_id(const lbo::workers::WorkOrder& order) {
  lbo::workers::Outcome outcome;
  outcome.status = lbo::workers::TrialStatus::ok;
  outcome.objective = static_cast<double>(order.trial);
  return outcome;
}

}  // namespace

TEST(InProcessTransportTest, completions_come_later_on_the_lowest_free_slot_and_a_cancel_is_said) {
  boost::asio::io_context io;
  std::vector<Completion> done;
  InProcessTransport transport(io, 3, by_id, [&](Completion c) { done.push_back(std::move(c)); }, "table t.csv");
  EXPECT_EQ(transport.resources(), (std::vector<std::string>{"table t.csv: 3 slot(s), no process"}));
  EXPECT_EQ(transport.submit(order_of(7, 2)).slot, 0);
  EXPECT_EQ(transport.submit(order_of(8)).slot, 1);
  EXPECT_EQ(transport.busy_count(), 2);
  EXPECT_EQ(transport.next_slot().slot, 2);
  transport.cancel(8);
  EXPECT_TRUE(done.empty()) << "no completion inside submit";
  io.run();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].trial, 7);
  EXPECT_EQ(done[0].attempt, 2);
  EXPECT_EQ(done[0].outcome.status, lbo::workers::TrialStatus::ok);
  EXPECT_EQ(done[0].outcome.objective, 7.0);
  EXPECT_EQ(done[1].trial, 8);
  EXPECT_EQ(done[1].worker.slot, 1);
  EXPECT_EQ(done[1].outcome.status, lbo::workers::TrialStatus::cancelled);
  EXPECT_EQ(transport.busy_count(), 0);
  EXPECT_EQ(transport.next_slot().slot, 0);
}

TEST(InProcessTransportTest, nothing_completes_after_shutdown_or_once_the_transport_is_gone) {
  boost::asio::io_context io;
  int done = 0;
  {
    InProcessTransport transport(io, 2, by_id, [&](Completion) { ++done; });
    transport.submit(order_of(1));
    transport.shutdown();
    EXPECT_EQ(transport.busy_count(), 0);
    InProcessTransport gone(io, 1, by_id, [&](Completion) { ++done; });
    gone.submit(order_of(2));
  }
  io.run();
  EXPECT_EQ(done, 0);
}
