#include "lbo/orchestrator/scheduler.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

using namespace lbo::orchestrator;

namespace {

const std::string kTasksAB = "[[tasks]]\nname = \"a\"\nbudget = 2\n[[tasks]]\nname = \"b\"\nbudget = 3\n";

// Proposes a fixed configuration, valid or not.
class FixedPolicy final : public Policy {
 public:
  explicit FixedPolicy(lbo::jobs::Config config) : config_(std::move(config)) {}
  lbo::jobs::Config propose(const RunState&, int, std::int64_t) override { return config_; }

 private:
  lbo::jobs::Config config_;
};

// Starts the attempt the scheduler asks for, as the master does after journaling it.
void start(RunState& state, const NextAttempt& next) {
  state.apply(TrialStarted{next.trial, next.task, next.attempt, next.config, "local:0", 0});
}

// Proposes a fixed valid configuration, and remembers which open tasks it was asked about.
class RecordingPolicy final : public Policy {
 public:
  lbo::jobs::Config propose(const RunState&, int, std::int64_t) override { return lbo::jobs::Config{{0.5}}; }
  Proposal propose_among(const RunState& state, const std::vector<int>& open, std::int64_t trial) override {
    asked.push_back(open);
    return {open.back(), propose(state, open.back(), trial), ProposalSource::model, {}};
  }
  std::vector<std::vector<int>> asked;
};

lbo::workers::Outcome ended_with(lbo::workers::TrialStatus status) {
  lbo::workers::Outcome o;
  o.status = status;
  return o;
}

}  // namespace

TEST(SchedulerTest, tasks_take_slots_in_file_order_until_their_budget_is_handed_out) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", kTasksAB), dir.path());
  RunState state = lbo::testing::started_state(job);
  auto policy = make_policy(job);
  const Scheduler scheduler(job);
  std::vector<int> task_of;
  while (const auto next = scheduler.next(state, *policy)) {
    EXPECT_EQ(next->trial, state.next_trial_id());
    EXPECT_EQ(next->attempt, 1);
    task_of.push_back(next->task);
    start(state, *next);
  }
  EXPECT_EQ(task_of, (std::vector<int>{0, 0, 1, 1, 1}));
  EXPECT_EQ(state.trials().size(), 5u);
}

TEST(SchedulerTest, retries_go_first_as_the_next_attempt_of_the_same_configuration) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", kTasksAB), dir.path());
  RunState state = lbo::testing::started_state(job);
  auto policy = make_policy(job);
  const Scheduler scheduler(job);
  start(state, *scheduler.next(state, *policy));
  lbo::testing::end_attempt(state, 0, ended_with(lbo::workers::TrialStatus::failed), "local:0", false);
  const auto retry = scheduler.next(state, *policy);
  ASSERT_TRUE(retry);
  EXPECT_EQ(retry->trial, 0);
  EXPECT_EQ(retry->attempt, 2);
  EXPECT_EQ(retry->config, state.trial(0).config);
  start(state, *retry);
  EXPECT_EQ(scheduler.next(state, *policy)->trial, 1);
}

TEST(SchedulerTest, random_proposals_depend_on_seed_and_trial_only) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", kTasksAB), dir.path());
  const RunState a = lbo::testing::started_state(job), b = lbo::testing::started_state(job);
  auto policy = make_policy(job);
  EXPECT_EQ(policy->propose(a, 0, 4), policy->propose(b, 1, 4));
  EXPECT_FALSE(policy->propose(a, 0, 4) == policy->propose(a, 0, 5));
}

TEST(SchedulerTest, an_invalid_proposal_is_refused_before_dispatch) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  const RunState state = lbo::testing::started_state(job);
  FixedPolicy out_of_bounds(lbo::jobs::Config{{1.5}});
  EXPECT_THROW(Scheduler(job).next(state, out_of_bounds), std::logic_error);
}

TEST(SchedulerTest, interrupted_trials_run_before_retries_and_new_trials) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", kTasksAB), dir.path());
  RunState state = lbo::testing::started_state(job);
  auto policy = make_policy(job);
  const Scheduler scheduler(job);
  for (int i = 0; i < 3; ++i) start(state, *scheduler.next(state, *policy));
  lbo::testing::end_attempt(state, 0, ended_with(lbo::workers::TrialStatus::failed), "local:0", false);
  lbo::testing::end_attempt(state, 2, ended_with(lbo::workers::TrialStatus::cancelled), "local:0", false);
  EXPECT_EQ(scheduler.next(state, *policy, true)->trial, 2);
  start(state, *scheduler.next(state, *policy));
  EXPECT_FALSE(scheduler.next(state, *policy, true)) << "only interrupted trials, and none is left";
  const auto retry = scheduler.next(state, *policy);
  EXPECT_EQ(retry->trial, 0);
  start(state, *retry);
  EXPECT_EQ(scheduler.next(state, *policy)->trial, 3);  // a new trial
}

// The deadline: a task whose trials would not finish in time gets no proposal (a proposal has
// side effects), a later task does not open in its place, and its queued trials wait.
TEST(SchedulerTest, a_task_the_filter_refuses_is_not_proposed_for_and_its_queued_trials_wait) {
  lbo::testing::ScratchDir dir;
  const std::string tasks = "[[tasks]]\nname = \"a\"\nbudget = 5\n[[tasks]]\nname = \"b\"\nbudget = 5\n"
                            "[[tasks]]\nname = \"c\"\nbudget = 5\n";
  const auto one_open = lbo::testing::job_from(lbo::testing::test_job("", tasks), dir.path());
  const auto two_open = lbo::testing::job_from(lbo::testing::test_job("", "[schedule]\nconcurrent_tasks = 2\n" + tasks), dir.path());
  bool a_fits = false;
  const TaskFilter filter = [&](int task) { return task != 0 || a_fits; };
  {
    RunState state = lbo::testing::started_state(one_open);
    RecordingPolicy policy;
    EXPECT_FALSE(Scheduler(one_open).next(state, policy, false, filter)) << "task b opened in a's place";
    EXPECT_TRUE(policy.asked.empty()) << "a proposal was made for a task that will not start";
  }
  RunState state = lbo::testing::started_state(two_open);
  RecordingPolicy policy;
  const Scheduler scheduler(two_open);
  const auto b = scheduler.next(state, policy, false, filter);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->task, 1);
  EXPECT_EQ(policy.asked, (std::vector<std::vector<int>>{{1}}));
  start(state, *b);
  // Two trials of a: one fails (a retry), one is cancelled (interrupted).
  a_fits = true;
  start(state, *scheduler.next(state, policy, false, [](int task) { return task == 0; }));
  start(state, *scheduler.next(state, policy, false, [](int task) { return task == 0; }));
  ASSERT_EQ(state.trial(1).task, 0);
  ASSERT_EQ(state.trial(2).task, 0);
  lbo::testing::end_attempt(state, 1, ended_with(lbo::workers::TrialStatus::failed), "local:0", false);
  lbo::testing::end_attempt(state, 2, ended_with(lbo::workers::TrialStatus::cancelled), "local:0", false);
  a_fits = false;
  EXPECT_FALSE(scheduler.next(state, policy, true, filter)) << "only interrupted ones, and a's may not start";
  const auto next = scheduler.next(state, policy, false, filter);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->task, 1);
  EXPECT_EQ(next->attempt, 1) << "a new trial of b, not a's retry";
  EXPECT_EQ(state.retries(), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(state.interrupted(), (std::vector<std::int64_t>{2}));
  a_fits = true;
  const auto again = scheduler.next(state, policy, false, filter);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->trial, 2);
  EXPECT_EQ(again->attempt, 2);
}
