#include "lbo/cluster/local_transport.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <set>

using namespace lbo::cluster;
namespace fs = std::filesystem;

TEST(TransportTest, worker_names) {
  EXPECT_EQ(to_string(WorkerSlot{0, 3}), "local:3");
  EXPECT_EQ(to_string(WorkerSlot{2, 1}), "rank2:1");
  EXPECT_EQ(to_string(WorkerSlot{2, -1}), "rank2");
}

TEST(TransportTest, worker_names_parse_back) {
  for (const WorkerSlot w : {WorkerSlot{0, 3}, WorkerSlot{2, 1}, WorkerSlot{2, -1}, WorkerSlot{17, 12}}) {
    const auto back = lbo::cluster::parse_worker_slot(to_string(w));
    ASSERT_TRUE(back) << to_string(w);
    EXPECT_EQ(back->rank, w.rank);
    EXPECT_EQ(back->slot, w.slot);
  }
  for (const char* bad : {"", "local:", "local:x", "rank0:1", "rank:1", "rank2:", "rank2:-1", "node3", "local:1x"}) {
    EXPECT_FALSE(lbo::cluster::parse_worker_slot(bad)) << bad;
  }
}

TEST(LocalTransportTest, completions_name_trial_attempt_and_slot) {
  const fs::path dir = fs::temp_directory_path() / ("lbo-local-transport-" + std::to_string(::getpid()));
  boost::asio::io_context io;
  std::vector<Completion> done;
  LocalTransport transport(io, 2, [&](Completion c) { done.push_back(std::move(c)); });
  EXPECT_EQ(transport.slot_count(), 2);
  for (int trial : {4, 5}) {
    lbo::workers::WorkOrder order;
    order.trial = trial;
    order.attempt = trial - 2;
    order.argv = {"/bin/sh", "-c", "echo \"{\\\"objective\\\": $LBO_TRIAL_ID}\""};
    order.env = {{"LBO_TRIAL_ID", std::to_string(trial)}};
    order.workdir = (dir / std::to_string(trial)).string();
    const WorkerSlot where = transport.submit(order);
    EXPECT_EQ(where.rank, 0);
  }
  EXPECT_EQ(transport.busy_count(), 2);
  io.run();
  EXPECT_EQ(transport.busy_count(), 0);
  ASSERT_EQ(done.size(), 2u);
  std::set<int> slots;
  for (const Completion& c : done) {
    EXPECT_EQ(c.outcome.status, lbo::workers::TrialStatus::ok) << c.outcome.reason;
    EXPECT_EQ(c.outcome.objective, static_cast<double>(c.trial));
    EXPECT_EQ(c.attempt, c.trial - 2);
    slots.insert(c.worker.slot);
  }
  EXPECT_EQ(slots, (std::set<int>{0, 1}));
  transport.shutdown();
  EXPECT_THROW(transport.submit(lbo::workers::WorkOrder{}), std::logic_error);
  fs::remove_all(dir);
}
