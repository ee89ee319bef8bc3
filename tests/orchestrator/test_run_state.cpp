#include "lbo/orchestrator/run_state.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

using namespace lbo::orchestrator;
using lbo::workers::Outcome;
using lbo::workers::TrialStatus;

namespace {

Outcome with(TrialStatus status, double objective) {
  Outcome o;
  o.status = status;
  o.objective = objective;
  return o;
}

}  // namespace

TEST(RunStateTest, best_follows_the_direction_and_ignores_failures) {
  lbo::testing::ScratchDir dir;
  for (const char* direction : {"maximize", "minimize"}) {
    std::string text = lbo::testing::test_job();
    text.replace(text.find("maximize"), 8, direction);
    const auto job = lbo::testing::job_from(text, dir.path());
    RunState state(job);
    const double values[] = {0.5, 0.9, 0.1, 0.7};
    for (int i = 0; i < 4; ++i) {
      state.add_trial(0, lbo::jobs::Config{{values[i]}});
      state.start_attempt(i, "local:0");
    }
    state.end_attempt(0, with(TrialStatus::ok, 0.5), "local:0", true);
    state.end_attempt(1, with(TrialStatus::ok, 0.9), "local:0", true);
    state.end_attempt(2, with(TrialStatus::ok, 0.1), "local:0", true);
    state.end_attempt(3, with(TrialStatus::failed, 100), "local:0", true);
    const bool maximize = std::string(direction) == "maximize";
    EXPECT_EQ(*state.best_objective(0), maximize ? 0.9 : 0.1) << direction;
    EXPECT_EQ(*state.tasks()[0].best_trial, maximize ? 1 : 2);
    EXPECT_EQ(state.tasks()[0].ok, 3);
    EXPECT_EQ(state.tasks()[0].finished, 4);
  }
}

TEST(RunStateTest, attempts_that_will_be_retried_do_not_count) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 1\n"), dir.path());
  RunState state(job);
  state.add_trial(0, lbo::jobs::Config{{0.5}});
  state.start_attempt(0, "local:0");
  EXPECT_EQ(state.running_count(), 1);
  state.end_attempt(0, with(TrialStatus::crashed, 0), "local:0", false);
  EXPECT_EQ(state.running_count(), 0);
  EXPECT_FALSE(state.all_budgets_done());
  EXPECT_FALSE(state.best_objective(0).has_value());
  state.start_attempt(0, "local:1");
  EXPECT_EQ(state.trial(0).attempts, 2);
  state.end_attempt(0, with(TrialStatus::ok, 2), "local:1", true);
  EXPECT_TRUE(state.all_budgets_done());
  EXPECT_EQ(state.trial(0).worker, "local:1");
  EXPECT_THROW(state.start_attempt(0, "local:0"), std::logic_error);  // finished trials do not run again
  EXPECT_THROW(state.end_attempt(0, with(TrialStatus::ok, 2), "local:0", true), std::logic_error);
}
