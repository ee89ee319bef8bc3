#include "earlier_best.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

using namespace lbo::orchestrator;
using lbo::jobs::Config;
using lbo::testing::end_attempt;
using lbo::testing::start_trial;
using lbo::testing::ok_with;

namespace {

const std::string kFourTasks =
    "[[tasks]]\nname = \"a\"\nbudget = 9\n[[tasks]]\nname = \"b\"\nbudget = 9\n"
    "[[tasks]]\nname = \"c\"\nbudget = 9\n[[tasks]]\nname = \"d\"\nbudget = 9\n";

// Trials of `task` with objective = x (the test space's one parameter); a negative value fails.
void evaluate(RunState& state, int task, std::initializer_list<double> xs) {
  for (double x : xs) {
    const std::int64_t id = start_trial(state, task, Config{{std::abs(x)}});
    lbo::workers::Outcome o = ok_with(x);
    if (x < 0) o.status = lbo::workers::TrialStatus::failed;
    end_attempt(state, id, o);
  }
}

}  // namespace

TEST(EarlierBestTest, the_most_recent_earlier_tasks_first_each_configuration_once_failures_ignored) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", kFourTasks), dir.path());
  RunState state = lbo::testing::started_state(job);
  evaluate(state, 0, {0.2, 0.4, 0.3});
  evaluate(state, 1, {0.1, -0.9});  // the failed 0.9 is no best
  evaluate(state, 2, {0.4, 0.35});  // the same best as task 0
  evaluate(state, 3, {0.8});        // a later task: not earlier than 3

  EXPECT_EQ(earlier_bests(state, 3, {}, 5), (std::vector<Config>{Config{{0.4}}, Config{{0.1}}}));
  EXPECT_EQ(earlier_bests(state, 2, {}, 5), (std::vector<Config>{Config{{0.1}}, Config{{0.4}}}));
  EXPECT_EQ(earlier_bests(state, 3, {}, 1), (std::vector<Config>{Config{{0.4}}}));
  EXPECT_TRUE(earlier_bests(state, 3, {}, 0).empty());
  EXPECT_TRUE(earlier_bests(state, 0, {}, 5).empty());
}

TEST(EarlierBestTest, warm_start_tasks_come_after_the_runs_own_by_their_own_direction) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", kFourTasks), dir.path());
  RunState state = lbo::testing::started_state(job);
  evaluate(state, 0, {0.6});
  const std::vector<WarmTask> warm = {
      {"old:first", {Config{{0.1}}, Config{{0.2}}}, {1.0, 2.0}, lbo::jobs::Direction::maximize},
      {"old:second", {Config{{0.3}}, Config{{0.5}}}, {1.0, 2.0}, lbo::jobs::Direction::minimize},
      {"old:empty", {}, {}, lbo::jobs::Direction::maximize}};
  EXPECT_EQ(earlier_bests(state, 1, warm, 5), (std::vector<Config>{Config{{0.6}}, Config{{0.3}}, Config{{0.2}}}));
  EXPECT_EQ(earlier_bests(state, 0, warm, 5), (std::vector<Config>{Config{{0.3}}, Config{{0.2}}}));
}

// An infeasible trial (outside a limit of [[constraints]]) is no earlier best, in this run or in
// a warm-start task, however good its objective.
TEST(EarlierBestTest, an_infeasible_result_is_no_earlier_best) {
  lbo::testing::ScratchDir dir;
  lbo::jobs::JobSpec job = lbo::testing::job_from(lbo::testing::test_job("", kFourTasks), dir.path());
  job.constraints = {lbo::jobs::Constraint{"mem", std::nullopt, 16.0}};
  RunState state = lbo::testing::started_state(job);
  for (const auto& [x, metrics] : std::vector<std::pair<double, const char*>>{{0.9, R"({"mem": 32})"}, {0.5, R"({"mem": 8})"}}) {
    const std::int64_t id = start_trial(state, 0, Config{{x}});
    lbo::workers::Outcome o = ok_with(x);
    o.metrics_json = metrics;
    end_attempt(state, id, o);
  }
  const std::vector<WarmTask> warm = {
      {"old:first", {Config{{0.1}}, Config{{0.2}}}, {1.0, 2.0}, lbo::jobs::Direction::maximize, {0, 1}},
      {"old:all", {Config{{0.3}}}, {1.0}, lbo::jobs::Direction::maximize, {1}}};
  EXPECT_EQ(earlier_bests(state, 1, warm, 5), (std::vector<Config>{Config{{0.5}}, Config{{0.1}}}));
}
