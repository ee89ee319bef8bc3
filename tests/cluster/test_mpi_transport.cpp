// Runs under `mpirun -n 3`: rank 0 drives the MPI transport, ranks 1 and 2 are lbo workers.

#include <unistd.h>

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>
#include <set>

#include "lbo/cluster/mpi.hpp"

using namespace lbo::cluster;
namespace fs = std::filesystem;

namespace {

MpiSession* session = nullptr;

lbo::workers::WorkOrder order(std::int64_t trial, const std::string& script) {
  lbo::workers::WorkOrder o;
  o.trial = trial;
  o.argv = {"/bin/sh", "-c", script};
  o.workdir = (fs::temp_directory_path() / ("lbo-mpi-" + std::to_string(::getpid())) / std::to_string(trial)).string();
  o.params_json = "{}";
  o.kill_grace_s = 0.2;
  return o;
}

WorkerSetup setup_with(std::optional<int> slots_per_rank) {
  WorkerSetup setup;
  setup.resources.slots = slots_per_rank;
  setup.output_limit_bytes = 1u << 20;
  return setup;
}

}  // namespace

TEST(MpiTransportTest, orders_spread_over_ranks_and_slots_and_come_back) {
  ASSERT_EQ(session->size(), 3) << "run with mpirun -n 3";
  boost::asio::io_context io;
  std::map<std::int64_t, Completion> done;
  auto transport = make_mpi_transport(io, *session, [&](Completion c) { done[c.trial] = std::move(c); },
                                       setup_with(2));
  EXPECT_EQ(transport->slot_count(), 4);
  std::map<int, int> per_rank;
  for (std::int64_t t = 0; t < 4; ++t) {
    // Every attempt waits for all four to be running, which needs two ranks × two slots.
    const WorkerSlot where = transport->submit(order(
        t, "touch ../started-$LBO_RANK-$LBO_SLOT; n=0; while [ $(ls .. | grep -c started-) -lt 4 ] && [ $n -lt 200 ]; do "
           "sleep 0.05; n=$((n+1)); done; echo \"{\\\"objective\\\": $LBO_RANK}\""));
    ++per_rank[where.rank];
  }
  EXPECT_EQ(per_rank, (std::map<int, int>{{1, 2}, {2, 2}}));
  EXPECT_EQ(transport->busy_count(), 4);
  EXPECT_THROW(transport->submit(order(9, "true")), std::logic_error);
  while (done.size() < 4) io.run_one();
  std::set<std::pair<int, int>> places;
  for (const auto& [trial, c] : done) {
    ASSERT_EQ(c.outcome.status, lbo::workers::TrialStatus::ok) << c.outcome.reason;
    EXPECT_EQ(c.outcome.objective, c.worker.rank) << "LBO_RANK must name the worker's rank";
    places.insert({c.worker.rank, c.worker.slot});
  }
  EXPECT_EQ(places.size(), 4u);
  EXPECT_EQ(transport->busy_count(), 0);

  // Cancel reaches the rank that runs the trial.
  transport->submit(order(10, "exec sleep 1000"));
  transport->submit(order(11, "echo '{\"objective\": 11}'"));
  while (done.count(11) == 0) io.run_one();
  transport->cancel(10);
  while (done.count(10) == 0) io.run_one();
  EXPECT_EQ(done[10].outcome.status, lbo::workers::TrialStatus::cancelled);

  // Shutdown with an attempt still running: the worker kills it and says bye.
  transport->submit(order(12, "exec sleep 1000"));
  transport->shutdown();
  EXPECT_TRUE(session->workers_released());
  EXPECT_EQ(done.count(12), 0u);
  fs::remove_all(fs::temp_directory_path() / ("lbo-mpi-" + std::to_string(::getpid())));
}

// Run with CUDA_VISIBLE_DEVICES=0,1,2,3 (ctest's mpi_transport_resources): both worker ranks see
// the same four devices and the same cores, and each takes its own half of both.
TEST(MpiResourcesTest, ranks_on_one_node_split_its_gpus_and_cores) {
  ASSERT_EQ(session->size(), 3) << "run with mpirun -n 3";
  ASSERT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "0,1,2,3");
  boost::asio::io_context io;
  std::map<std::int64_t, Completion> done;
  WorkerSetup setup = setup_with(2);
  setup.resources.threads_per_trial = 1;
  setup.resources.manage_threads = true;
  setup.resources.gpus_per_trial = 1;
  auto transport = make_mpi_transport(io, *session, [&](Completion c) { done[c.trial] = std::move(c); }, setup);
  ASSERT_EQ(transport->slot_count(), 4);
  const std::vector<std::string> lines = transport->resources();
  ASSERT_GE(lines.size(), 2u);
  EXPECT_NE(lines[0].find("rank 1 on "), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("GPUs 0,1 (1 per trial) from CUDA_VISIBLE_DEVICES"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("GPUs 2,3 (1 per trial)"), std::string::npos) << lines[1];
  for (std::int64_t t = 0; t < 4; ++t) {
    transport->submit(order(t, R"(touch ../started-$LBO_SLOT-$LBO_RANK; n=0
while [ $(ls .. | grep -c started-) -lt 4 ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done
cpus=$(sed -n 's/Cpus_allowed_list:\t//p' /proc/self/status)
echo "{\"objective\": 0, \"metrics\": {\"cuda\": \"$CUDA_VISIBLE_DEVICES\", \"omp\": \"$OMP_NUM_THREADS\", \"cpus\": \"$cpus\"}}")"));
  }
  while (done.size() < 4) io.run_one();
  std::map<int, std::set<std::string>> gpus_of_rank;
  std::vector<std::string> pinned;
  for (const auto& [trial, c] : done) {
    ASSERT_EQ(c.outcome.status, lbo::workers::TrialStatus::ok) << c.outcome.reason;
    const std::string metrics = c.outcome.metrics_json;
    EXPECT_NE(metrics.find("\"cuda\":\"" + c.outcome.gpus + "\""), std::string::npos) << metrics;
    EXPECT_NE(metrics.find("\"omp\":\"1\""), std::string::npos) << metrics;
    gpus_of_rank[c.worker.rank].insert(c.outcome.gpus);
    if (!c.outcome.cores.empty()) {
      EXPECT_NE(metrics.find("\"cpus\":\"" + c.outcome.cores + "\""), std::string::npos) << metrics;
      pinned.push_back(c.outcome.cores);
    }
  }
  EXPECT_EQ(gpus_of_rank[1], (std::set<std::string>{"0", "1"}));
  EXPECT_EQ(gpus_of_rank[2], (std::set<std::string>{"2", "3"}));
  // Pinned when each rank's half of the cores holds its two slots: then no two slots share one.
  EXPECT_EQ(std::set<std::string>(pinned.begin(), pinned.end()).size(), pinned.size());
  transport->shutdown();
  fs::remove_all(fs::temp_directory_path() / ("lbo-mpi-" + std::to_string(::getpid())));
}

int main(int argc, char** argv) {
  MpiSession mpi(argc, argv);
  session = &mpi;
  if (mpi.rank() > 0) return run_mpi_worker(mpi);
  ::testing::InitGoogleTest(&argc, argv);
  const int status = RUN_ALL_TESTS();
  dismiss_mpi_workers(mpi);  // no-op when a test already released them
  return status;
}
