#include "lbo/orchestrator/step_savings.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "test_support.hpp"

using namespace lbo::orchestrator;
using lbo::workers::Outcome;
using lbo::workers::TrialStatus;

namespace {

void report(RunState& state, std::int64_t trial, std::int64_t step, double elapsed_s) {
  state.apply(TrialsReported{{{trial, state.trial(trial).attempts, step, 0.5, "{}", elapsed_s}}, 0});
}

Outcome ended_at_step(TrialStatus status, std::int64_t last_step) {
  Outcome o;
  o.status = status;
  o.objective = 0.5;
  o.last_step = last_step;
  return o;
}

}  // namespace

// Three trials of a 9-step job, by hand: trial 0 ran all 9 steps (ok), 2 s a step between its
// first and last reports; trial 1 was stopped at step 3, 4 s a step; trial 2 failed at step 2
// (not counted: a failure is no saving). Spent 9 + 3 = 12 of 2 × 9 = 18; of 2 and 4 s a step the
// upper middle is taken (4 s): 6 saved steps, about 24 s.
TEST(StepSavingsTest, steps_run_against_each_trial_run_to_max_step_by_hand) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 3\n[[tasks]]\nname = \"b\"\nbudget = 1\n"), dir.path());
  RunState state = lbo::testing::started_state(job);
  for (int i = 0; i < 3; ++i) lbo::testing::start_trial(state, 0, lbo::jobs::Config{{0.1 * i}});
  for (int s = 1; s <= 9; ++s) report(state, 0, s, 1.0 + 2.0 * (s - 1));
  for (int s = 1; s <= 3; ++s) report(state, 1, s, 3.0 + 4.0 * (s - 1));
  report(state, 2, 1, 1.0);
  report(state, 2, 2, 1.5);
  lbo::testing::end_attempt(state, 0, ended_at_step(TrialStatus::ok, 9));
  lbo::testing::end_attempt(state, 1, ended_at_step(TrialStatus::stopped, 3));
  lbo::testing::end_attempt(state, 2, ended_at_step(TrialStatus::failed, 2));
  const StepSavings s = step_savings(state, 9, 0);
  EXPECT_EQ(s.trials, 2);
  EXPECT_EQ(s.spent, 12);
  EXPECT_EQ(s.full, 18);
  EXPECT_EQ(s.saved(), 6);
  EXPECT_DOUBLE_EQ(s.seconds_per_step, 4.0) << "of 2 and 4 s a step, the upper middle (trial 2 failed: not counted)";
  EXPECT_DOUBLE_EQ(s.saved_seconds(), 24.0);
  EXPECT_EQ(describe(s, "epoch"), "12 of 18 epoch steps (33.3% saved: about 24 s of trial time)");
  EXPECT_EQ(step_savings(state, 9).spent, 12) << "every task: the same trials";
  const StepSavings none = step_savings(state, 9, 1);
  EXPECT_EQ(none.trials, 0);
  EXPECT_TRUE(std::isnan(none.seconds_per_step));
  EXPECT_EQ(describe(none, "epoch"), "");
}

// A promoted trial's attempts count from where each resumed: 3 steps, then 6 more.
TEST(StepSavingsTest, a_promoted_trials_attempts_count_from_where_each_resumed) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  RunState state = lbo::testing::started_state(job);
  lbo::testing::start_trial(state, 0, lbo::jobs::Config{{0.5}});
  for (int s = 1; s <= 3; ++s) report(state, 0, s, s);
  lbo::testing::end_attempt(state, 0, ended_at_step(TrialStatus::paused, 3), "local:0", false);
  lbo::testing::start_again(state, 0);
  for (int s = 4; s <= 9; ++s) report(state, 0, s, s - 3);
  lbo::testing::end_attempt(state, 0, ended_at_step(TrialStatus::ok, 9));
  const StepSavings s = step_savings(state, 9);
  EXPECT_EQ(s.spent, 9);
  EXPECT_EQ(s.full, 9);
  EXPECT_EQ(describe(s, "step"), "9 of 9 steps (0.0% saved)");
}
