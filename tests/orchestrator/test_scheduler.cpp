#include "lbo/orchestrator/scheduler.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

using namespace lbo::orchestrator;

namespace {

const std::string kTwoTasks = "[[tasks]]\nname = \"a\"\nbudget = 2\n[[tasks]]\nname = \"b\"\nbudget = 3\n";

// Proposes a fixed configuration, valid or not.
class FixedPolicy final : public Policy {
 public:
  explicit FixedPolicy(lbo::jobs::Config config) : config_(std::move(config)) {}
  lbo::jobs::Config propose(const RunState&, int, std::int64_t) override { return config_; }

 private:
  lbo::jobs::Config config_;
};

// A new trial of the first task with budget left, as the scheduler would create it.
void scheduler_add(RunState& state, Policy& policy) {
  Scheduler fresh;
  fresh.next(state, policy);
}

}  // namespace

TEST(SchedulerTest, tasks_take_slots_in_file_order_until_their_budget_is_handed_out) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", kTwoTasks), dir.path());
  RunState state(job);
  auto policy = make_policy(job);
  Scheduler scheduler;
  std::vector<int> task_of;
  while (const auto id = scheduler.next(state, *policy)) task_of.push_back(state.trial(*id).task);
  EXPECT_EQ(task_of, (std::vector<int>{0, 0, 1, 1, 1}));
  EXPECT_EQ(state.trials().size(), 5u);
  for (std::size_t i = 0; i < state.trials().size(); ++i) EXPECT_EQ(state.trials()[i].id, static_cast<std::int64_t>(i));
}

TEST(SchedulerTest, retries_go_first) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", kTwoTasks), dir.path());
  RunState state(job);
  auto policy = make_policy(job);
  Scheduler scheduler;
  const auto first = scheduler.next(state, *policy);
  scheduler.retry(*first);
  EXPECT_EQ(scheduler.retries(), std::vector<std::int64_t>{*first});
  EXPECT_EQ(scheduler.next(state, *policy), first);
  EXPECT_EQ(scheduler.next(state, *policy), 1);
}

TEST(SchedulerTest, random_proposals_depend_on_seed_and_trial_only) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", kTwoTasks), dir.path());
  RunState a(job), b(job);
  auto policy = make_policy(job);
  EXPECT_EQ(policy->propose(a, 0, 4), policy->propose(b, 1, 4));
  EXPECT_FALSE(policy->propose(a, 0, 4) == policy->propose(a, 0, 5));
}

TEST(SchedulerTest, an_invalid_proposal_is_refused_before_dispatch) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  RunState state(job);
  FixedPolicy out_of_bounds(lbo::jobs::Config{{1.5}});
  Scheduler scheduler;
  EXPECT_THROW(scheduler.next(state, out_of_bounds), std::logic_error);
  EXPECT_TRUE(state.trials().empty());
}

TEST(SchedulerTest, interrupted_trials_run_before_retries_and_new_trials) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", kTwoTasks), dir.path());
  RunState state(job);
  auto policy = make_policy(job);
  for (int i = 0; i < 3; ++i) scheduler_add(state, *policy);
  Scheduler scheduler({2}, {0});
  EXPECT_TRUE(scheduler.has_interrupted());
  EXPECT_EQ(scheduler.next(state, *policy), 2);
  EXPECT_EQ(scheduler.next(state, *policy), 0);
  EXPECT_EQ(scheduler.next(state, *policy), 3);  // a new trial
  scheduler.interrupted(1);
  EXPECT_EQ(scheduler.next_interrupted(), 1);
  EXPECT_FALSE(scheduler.next_interrupted().has_value());
}
