#include "lbo/workers/local_pool.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
using namespace lbo::workers;

namespace {

class LocalPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lbo-pool-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  WorkOrder order(std::int64_t trial, const std::string& script) {
    WorkOrder o;
    o.trial = trial;
    o.argv = {"/bin/sh", "-c", script};
    o.workdir = (dir_ / std::to_string(trial)).string();
    o.params_json = "{}";
    return o;
  }
  fs::path dir_;
};

}  // namespace

TEST_F(LocalPoolTest, slots_run_concurrently_with_their_own_slot_numbers) {
  boost::asio::io_context io;
  LocalPool pool(io, 3, {});
  std::map<std::int64_t, int> slot_of;
  std::map<std::int64_t, Outcome> outcomes;
  // Each trial waits until all three have started: they can only finish if they run at once.
  const std::string script = "echo $LBO_SLOT > \"../slot-$LBO_SLOT\"; n=0; while [ $(ls .. | grep -c slot-) -lt 3 ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n+1)); done; echo \"{\\\"objective\\\": $n}\"";
  for (std::int64_t t = 0; t < 3; ++t) {
    const int slot = pool.submit(order(t, script), [&, t](int s, Outcome o) {
      slot_of[t] = s;
      outcomes[t] = std::move(o);
    });
    EXPECT_EQ(slot, static_cast<int>(t));
  }
  EXPECT_EQ(pool.busy_count(), 3);
  EXPECT_THROW(pool.submit(order(9, "true"), [](int, Outcome) {}), std::logic_error);
  io.run();
  EXPECT_EQ(pool.busy_count(), 0);
  std::set<int> slots;
  for (const auto& [t, o] : outcomes) {
    ASSERT_EQ(o.status, TrialStatus::ok) << o.reason;
    EXPECT_LT(o.objective, 100) << "trial " << t << " never saw the others running";
    slots.insert(slot_of[t]);
  }
  EXPECT_EQ(slots, (std::set<int>{0, 1, 2}));
}

TEST_F(LocalPoolTest, a_freed_slot_takes_the_next_order_from_the_handler) {
  boost::asio::io_context io;
  LocalPool pool(io, 1, {});
  int finished = 0;
  std::function<void(int, Outcome)> next = [&](int, Outcome o) {
    EXPECT_EQ(o.status, TrialStatus::ok) << o.reason;
    if (++finished < 5) pool.submit(order(finished, "echo '{\"objective\": 1}'"), next);
  };
  pool.submit(order(0, "echo '{\"objective\": 1}'"), next);
  io.run();
  EXPECT_EQ(finished, 5);
}

TEST_F(LocalPoolTest, cancel_targets_one_trial) {
  boost::asio::io_context io;
  LocalPool pool(io, 2, {});
  std::map<std::int64_t, TrialStatus> status;
  pool.submit(order(1, "exec sleep 1000"), [&](int, Outcome o) { status[1] = o.status; });
  pool.submit(order(2, "sleep 0.3; echo '{\"objective\": 2}'"), [&](int, Outcome o) { status[2] = o.status; });
  io.run_for(std::chrono::milliseconds(100));
  pool.cancel(1);
  io.run();
  EXPECT_EQ(status[1], TrialStatus::cancelled);
  EXPECT_EQ(status[2], TrialStatus::ok);
}
