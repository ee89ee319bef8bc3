#include "earlier_best.hpp"

#include <gtest/gtest.h>

#include "initial_design.hpp"
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

// A warm task evaluated on x = 0, 0.1, …, 1 whose objective peaks at `peak` (maximized).
WarmTask peaked_at(double peak) {
  WarmTask w{"old:" + std::to_string(peak), {}, {}, lbo::jobs::Direction::maximize};
  for (int i = 0; i <= 10; ++i) {
    w.configs.push_back(Config{{i / 10.0}});
    w.objectives.push_back(-std::abs(i - peak * 10));
  }
  return w;
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

// Worked by hand: three earlier tasks on x = 0, 0.1, …, 1 peak at 0.4, 0.5 and 0.9 (the most
// recent), so the recent order is 0.9, 0.5, 0.4. A best's quantile on a task (0 its best, 1
// its worst, equal values sharing theirs): 0.9 stands at 0, 0.75 and 0.9 on the tasks of 0.9,
// 0.5 and 0.4 (sum 1.65); 0.5 at 0.5, 0 and 0.15 (0.65); 0.4 at 0.6, 0.15 and 0 (0.75). The
// portfolio takes 0.5 first; then 0.9 brings the cover to (0, 0, 0.15), 0.4 only to (0.5, 0, 0).
TEST(EarlierBestTest, a_portfolio_takes_the_best_that_does_best_everywhere_then_what_covers_the_rest) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", kFourTasks), dir.path());
  const RunState state = lbo::testing::started_state(job);
  const std::vector<WarmTask> warm = {peaked_at(0.4), peaked_at(0.5), peaked_at(0.9)};
  const lbo::jobs::Encoder encoder(job.space);
  EXPECT_EQ(earlier_bests(state, 0, warm, 5), (std::vector<Config>{Config{{0.9}}, Config{{0.5}}, Config{{0.4}}}));
  EXPECT_EQ(portfolio_bests(state, 0, warm, encoder), (std::vector<Config>{Config{{0.5}}, Config{{0.9}}, Config{{0.4}}}));
}

// The run's own earlier tasks count as the warm ones do, and a best is scored on a task that
// never evaluated it by the results nearest to it. Task 1 (the most recent earlier task of task
// 2) evaluated 0.9 and 0.35 (best 0.9), task 0 evaluated 0.15, 0.45 and 0.55 (best 0.45), and
// the warm task peaks at 0.5: the recent order is 0.9, 0.45, 0.5. By hand (3 nearest, weights
// 1/d²): 0.45 stands at 0.95 on task 1 (nearest 0.35, its worst), 0 on task 0 and 0.08 on the
// warm task (sum 1.03); 0.9 at 0, 0.39 and 0.75 (1.14); 0.5 at 0.88, 0.26 and 0 (1.13). 0.45
// first; then 0.9 covers task 1 (cover 0.08 in all), 0.5 does not (0.88).
TEST(EarlierBestTest, a_portfolio_scores_a_best_by_the_results_nearest_to_it) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", kFourTasks), dir.path());
  RunState state = lbo::testing::started_state(job);
  for (const auto& [x, value] : std::vector<std::pair<double, double>>{{0.15, 0.1}, {0.45, 0.9}, {0.55, 0.7}}) {
    end_attempt(state, start_trial(state, 0, Config{{x}}), ok_with(value));
  }
  for (const auto& [x, value] : std::vector<std::pair<double, double>>{{0.9, 0.8}, {0.35, 0.2}}) {
    end_attempt(state, start_trial(state, 1, Config{{x}}), ok_with(value));
  }
  const lbo::jobs::Encoder encoder(job.space);
  const std::vector<WarmTask> warm = {peaked_at(0.5)};
  EXPECT_EQ(earlier_bests(state, 2, warm, 5), (std::vector<Config>{Config{{0.9}}, Config{{0.45}}, Config{{0.5}}}));
  EXPECT_EQ(portfolio_bests(state, 2, warm, encoder), (std::vector<Config>{Config{{0.45}}, Config{{0.9}}, Config{{0.5}}}));
}

// With fewer than two earlier tasks that have two results, or fewer than two bests, there is
// nothing to cover: no portfolio (the design keeps the recent order, and its note says so).
TEST(EarlierBestTest, a_portfolio_of_one_scored_task_keeps_the_recent_order) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", kFourTasks), dir.path());
  const RunState state = lbo::testing::started_state(job);
  const lbo::jobs::Encoder encoder(job.space);
  const WarmTask one_result{"old:one", {Config{{0.2}}}, {1.0}, lbo::jobs::Direction::maximize};
  EXPECT_FALSE(portfolio_bests(state, 0, {peaked_at(0.5), one_result}, encoder).has_value());
  EXPECT_FALSE(portfolio_bests(state, 0, {peaked_at(0.5)}, encoder).has_value());
  EXPECT_TRUE(portfolio_bests(state, 0, {peaked_at(0.5), peaked_at(0.2)}, encoder).has_value());
}

// With the portfolio chosen and nothing to cover, the design hands the bests out in the recent
// order, and the trial's note says that it is not the portfolio's.
TEST(EarlierBestTest, a_design_without_a_portfolio_says_its_order_is_the_recent_one) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(
      lbo::testing::test_job("", kFourTasks, "", "surrogate = \"lbo\"\ntransfer_best = 2\ntransfer_best_choice = \"portfolio\""),
      dir.path());
  RunState state = lbo::testing::started_state(job);
  const WarmTask one_result{"old:one", {Config{{0.2}}}, {1.0}, lbo::jobs::Direction::maximize};
  const std::vector<WarmTask> warm = {peaked_at(0.5), one_result};
  const InitialDesign design(job, warm);
  std::string note;
  const std::optional<Config> a = design.earlier_best(state, 0, nullptr, &note);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(*a, Config{{0.2}});
  EXPECT_EQ(note, "earlier best 1 of 2 in recent order: too few earlier results to score a portfolio");
}

// [policy] transfer_best_choice = "portfolio" (the default): the design hands the bests out in
// portfolio order (the warm tasks of the first test), "recent" in the recent order.
TEST(EarlierBestTest, the_design_hands_out_the_bests_in_the_chosen_order) {
  lbo::testing::ScratchDir dir;
  const std::vector<WarmTask> warm = {peaked_at(0.4), peaked_at(0.5), peaked_at(0.9)};
  for (const auto& [choice, first, second] :
       std::vector<std::tuple<std::string, double, double>>{{"portfolio", 0.5, 0.9}, {"recent", 0.9, 0.5}}) {
    SCOPED_TRACE(choice);
    const auto job = lbo::testing::job_from(
        lbo::testing::test_job("", kFourTasks, "", "surrogate = \"lbo\"\ntransfer_best = 2\ntransfer_best_choice = \"" + choice + "\""),
        dir.path());
    RunState state = lbo::testing::started_state(job);
    const InitialDesign design(job, warm);
    const std::optional<Config> a = design.earlier_best(state, 0);
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(*a, Config{{first}});
    end_attempt(state, start_trial(state, 0, *a, "local:0", ProposalSource::earlier_best), ok_with(0.5));
    std::string note;
    const std::optional<Config> b = design.earlier_best(state, 0, nullptr, &note);
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(*b, Config{{second}});
    // The trial's proposal note says which choice made it (results.csv, the log).
    EXPECT_EQ(note, choice == "portfolio" ? "earlier best 2 of 2 in portfolio order (transfer_best_choice)" : "");
    end_attempt(state, start_trial(state, 0, *b, "local:0", ProposalSource::earlier_best), ok_with(0.5));
    EXPECT_FALSE(design.earlier_best(state, 0).has_value());  // transfer_best = 2 handed out
  }
}
