// Early stopping: the rules against rung tables worked by hand, and runs that stop trials.

#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <map>
#include <string>
#include <thread>
#include <utility>

#include "curve_forecast.hpp"
#include "early_stopping.hpp"
#include "model_data.hpp"
#include "promotions.hpp"
#include "rung_table.hpp"
#include "stop_rule.hpp"
#include "lbo/app/status.hpp"
#include "lbo/orchestrator/recovery.hpp"
#include "run_job.hpp"

namespace fs = std::filesystem;
using namespace lbo::orchestrator;
using lbo::jobs::EarlyStoppingSpec;
using lbo::jobs::StoppingRule;
using lbo::testing::Row;
using lbo::testing::RunOutput;
using lbo::testing::run_job;

namespace {

EarlyStoppingSpec spec(StoppingRule rule, std::int64_t min_step, std::int64_t max_step, int eta) {
  EarlyStoppingSpec s;
  s.rule = rule;
  s.step_name = "epoch";
  s.min_step = min_step;
  s.max_step = max_step;
  s.eta = eta;
  return s;
}

// A rung table with the forecast a rule may read (over the test job's space).
struct Rungs : RungTable {
  Rungs(const EarlyStoppingSpec& s, lbo::jobs::Direction direction, std::uint64_t seed)
      : RungTable(s, direction, seed), forecast(job(), *this) {}
  operator StopRuleParts() const { return {*this, forecast}; }  // NOLINT: as the master wires them
  static const lbo::jobs::JobSpec& job() {
    static const lbo::jobs::JobSpec spec = lbo::testing::job_from(lbo::testing::test_job(), fs::temp_directory_path());
    return spec;
  }
  CurveForecast forecast;
};

// A run state of one task with `n` running trials.
class TrialsAtRungs {
 public:
  explicit TrialsAtRungs(int n) {
    job_ = lbo::testing::job_from(lbo::testing::test_job(), dir_.path());
    state = lbo::testing::started_state(job_);
    for (int i = 0; i < n; ++i) lbo::testing::start_trial(state, 0, {{0.1 * i}});
  }
  // Trial `id`'s current attempt reports `value` at `step`.
  void report(std::int64_t id, std::int64_t step, double value) {
    state.apply(TrialsReported{{{id, state.trial(id).attempts, step, value, "{}", 0.5 * static_cast<double>(step)}}, 0});
  }
  // As the master applies a stop or a pause.
  void apply(const std::vector<StopDecision>& stops) {
    for (const StopDecision& d : stops) {
      lbo::workers::Outcome o;
      o.status = d.pause ? lbo::workers::TrialStatus::paused : lbo::workers::TrialStatus::stopped;
      o.objective = d.value;
      o.last_step = d.step;
      lbo::testing::end_attempt(state, d.trial, o, "local:0", !d.pause);
    }
  }
  template <class Rule>
  std::vector<StopDecision> report_and_decide(Rule& rule, std::int64_t id, std::int64_t step, double value) {
    report(id, step, value);
    std::vector<StopDecision> stops = rule.after_reports(state, {id});
    apply(stops);
    return stops;
  }

  RunState state;

 private:
  lbo::testing::ScratchDir dir_;
  lbo::jobs::JobSpec job_;
};

}  // namespace

// Every rule the job file takes (jobs/src/stopping_rules.cpp) has its class (stop_rule.cpp's
// registry), and judges a trial at a rung: the first to reach a rung goes on under each (ASHA
// has no other value to compare with; the median rule waits for min_trials others).
TEST(StopRuleTest, every_rule_of_the_job_files_catalog_has_a_class_that_judges_at_a_rung) {
  const auto catalog = lbo::jobs::stopping_rule_catalog();
  ASSERT_GE(catalog.size(), 3u);
  for (const lbo::jobs::StoppingRuleTraits& traits : catalog) {
    SCOPED_TRACE(std::string(traits.name));
    EXPECT_EQ(lbo::jobs::traits_of(traits.rule).name, traits.name);
    EXPECT_EQ(lbo::jobs::to_string(traits.rule), traits.name);
    EarlyStoppingSpec s = spec(traits.rule, 1, 9, 3);
    if (traits.brackets) s.brackets = 2;
    const Rungs rungs(s, lbo::jobs::Direction::maximize, 1);
    const std::unique_ptr<StopRule> rule = make_stop_rule(rungs);
    ASSERT_NE(rule, nullptr);
    TrialsAtRungs table(1);
    table.report(0, 8, 0.5);  // past the first rung of either bracket
    const std::optional<RungTable::AtRung> at = rungs.at_rung(table.state.trial(0), rungs.rungs(rungs.bracket_of(0))[0]);
    ASSERT_TRUE(at.has_value());
    EXPECT_FALSE(rule->decide(table.state, table.state.trial(0), 0, *at).has_value());
  }
}

// Rungs 1 and 3 (r = 1, R = 9, η = 3). At rung 1: trial 0 (0.9) is first and goes on; trial 1
// (0.5) is below the one other value, 0.9; trial 2 (0.1) is below the 2/3 quantile of
// [0.5, 0.9], 0.5 + (2/3)(0.4) = 0.7667; trial 3 (0.6) below that of [0.1, 0.5, 0.9],
// 0.5 + (1/3)(0.4) = 0.6333; trial 4 (0.65) is above it and goes on.
TEST(EarlyStoppingTest, asha_stops_a_trial_below_the_best_third_of_its_rung) {
  TrialsAtRungs table(5);
  const Rungs rule_rungs(spec(StoppingRule::asha, 1, 9, 3), lbo::jobs::Direction::maximize, 1);
  EarlyStopping rule(rule_rungs, false);
  EXPECT_TRUE(table.report_and_decide(rule, 0, 1, 0.9).empty());
  const std::vector<StopDecision> one = table.report_and_decide(rule, 1, 1, 0.5);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].trial, 1);
  EXPECT_EQ(one[0].step, 1);
  EXPECT_EQ(one[0].value, 0.5);
  EXPECT_EQ(one[0].elapsed_s, 0.5);
  EXPECT_EQ(one[0].reason, "asha at epoch 1 (rung 1 of 2): 0.5 is worse than 0.9, the cutoff of the best 1/3 of 1 other trial(s) there");
  const std::vector<StopDecision> two = table.report_and_decide(rule, 2, 1, 0.1);
  ASSERT_EQ(two.size(), 1u);
  EXPECT_NE(two[0].reason.find("worse than 0.766667"), std::string::npos) << two[0].reason;
  const std::vector<StopDecision> three = table.report_and_decide(rule, 3, 1, 0.6);
  ASSERT_EQ(three.size(), 1u);
  EXPECT_NE(three[0].reason.find("worse than 0.633333, the cutoff of the best 1/3 of 3 other"), std::string::npos)
      << three[0].reason;
  EXPECT_TRUE(table.report_and_decide(rule, 4, 1, 0.65).empty());
  // Steps between rungs decide nothing; rung 3 compares trials 0 and 4 only.
  EXPECT_TRUE(table.report_and_decide(rule, 0, 2, 0.1).empty());
  EXPECT_TRUE(table.report_and_decide(rule, 0, 3, 0.95).empty());
  const std::vector<StopDecision> late = table.report_and_decide(rule, 4, 4, 0.7);  // past rung 3 at step 4
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].step, 4);
  EXPECT_NE(late[0].reason.find("asha at epoch 4 (rung 2 of 2)"), std::string::npos) << late[0].reason;
}

// Promotion mode, rungs 1 and 3 (r = 1, R = 9, η = 3), six trials (the task's budget is spent):
// each pauses at rung 1; the best ⌊6/3⌋ = 2 there, trials 0 (0.9) and 4 (0.65), are promoted,
// best first, and trial 3 (0.6, third) is not. Both pause again at rung 3, where ⌊2/3⌋ = 0 make
// the cut. Once nothing runs but trials headed for max_step, the best paused trials (the highest
// rung, then the best value) run there until η = 3 have: trial 0 (0.95), trial 4 (0.7), then
// trial 3 (0.6 at rung 1, so through rung 3); then the others end stopped at their rungs.
TEST(EarlyStoppingTest, promotion_pauses_at_each_rung_and_promotes_the_best_third) {
  TrialsAtRungs table(6);
  EarlyStoppingSpec s = spec(StoppingRule::asha, 1, 9, 3);
  s.mode = lbo::jobs::StoppingMode::promotion;
  const Rungs rule_rungs(s, lbo::jobs::Direction::maximize, 1);
  Promotions rule(rule_rungs);
  const auto pause = [&](std::int64_t id, std::int64_t step, double value) {
    const std::vector<StopDecision> d = table.report_and_decide(rule, id, step, value);
    EXPECT_EQ(d.size(), 1u) << "trial " << id << " at " << step;
    EXPECT_TRUE(d.empty() || d[0].pause);
  };
  const auto never_busy = [](std::int64_t) { return false; };
  const auto any_task = [](int) { return true; };
  const std::vector<double> values{0.9, 0.5, 0.1, 0.6, 0.65, 0.3};
  for (std::int64_t id = 0; id < 6; ++id) {
    EXPECT_EQ(rule_rungs.resume_step(table.state.trial(id)), 0);
    EXPECT_EQ(rule_rungs.target_step(table.state.trial(id)), 1);
    pause(id, 1, values[static_cast<std::size_t>(id)]);
    if (id == 1) {
      EXPECT_FALSE(rule.promotion(table.state, any_task, never_busy)) << "⌊2/3⌋ = 0 at rung 1";
    }
  }
  EXPECT_EQ(table.state.paused().size(), 6u);
  EXPECT_EQ(table.state.trial(4).outcome.status, lbo::workers::TrialStatus::paused);
  EXPECT_FALSE(table.state.trial(4).finished);
  // A trial whose process is still ending waits; the next best goes first.
  const auto busy_0 = [](std::int64_t id) { return id == 0; };
  EXPECT_EQ(rule.promotion(table.state, any_task, busy_0)->trial, 4);
  const std::optional<Promotion> first = rule.promotion(table.state, any_task, never_busy);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->trial, 0);
  EXPECT_EQ(first->reason, "among the best 2 of the 6 trials at epoch 1 (rung 1)");
  lbo::testing::start_again(table.state, 0);
  EXPECT_EQ(rule_rungs.resume_step(table.state.trial(0)), 1);
  EXPECT_EQ(rule_rungs.target_step(table.state.trial(0)), 3);
  EXPECT_EQ(rule.promotion(table.state, any_task, never_busy)->trial, 4);
  lbo::testing::start_again(table.state, 4);
  EXPECT_FALSE(rule.promotion(table.state, any_task, never_busy)) << "trial 3 is third of six";
  EXPECT_TRUE(rule.unpromoted(table.state).empty()) << "trials run";
  EXPECT_TRUE(table.report_and_decide(rule, 0, 2, 0.2).empty()) << "between rungs";
  pause(0, 3, 0.95);
  pause(4, 3, 0.7);
  EXPECT_EQ(table.state.trial(0).outcome.last_step, 3);
  EXPECT_EQ(table.state.trial(0).outcome.objective, 0.95);
  // Nothing runs now and no trial ran to max_step: the best paused at the highest rung goes on.
  const std::optional<Promotion> last = rule.promotion(table.state, any_task, never_busy);
  ASSERT_TRUE(last);
  EXPECT_EQ(last->trial, 0);
  EXPECT_EQ(last->reason, "run to epoch 9 at the end of its task's budget, one of its best paused trials: 0 of the task's "
                          "trials ran to epoch 9 or are running there, fewer than η = 3");
  EXPECT_TRUE(rule.unpromoted(table.state).empty()) << "trial 0 is still to run to the end";
  lbo::testing::start_again(table.state, 0);
  EXPECT_EQ(rule_rungs.resume_step(table.state.trial(0)), 3);
  EXPECT_EQ(rule_rungs.target_step(table.state.trial(0)), 9);
  // Side by side: trial 0 runs to max_step, so the next best goes there too.
  const std::optional<Promotion> second = rule.promotion(table.state, any_task, never_busy);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->trial, 4);
  EXPECT_NE(second->reason.find("1 of the task's trials ran to epoch 9 or are running there"), std::string::npos) << second->reason;
  lbo::testing::start_again(table.state, 4);
  const std::optional<Promotion> third = rule.promotion(table.state, any_task, never_busy);
  ASSERT_TRUE(third);
  EXPECT_EQ(third->trial, 3) << "rung 1's best paused one: 0.6";
  lbo::testing::start_again(table.state, 3);
  EXPECT_EQ(rule_rungs.target_step(table.state.trial(3)), 3) << "through its next rung";
  EXPECT_FALSE(rule.promotion(table.state, any_task, never_busy)) << "trial 3 runs to rung 3 first";
  EXPECT_TRUE(table.report_and_decide(rule, 0, 9, 0.97).empty()) << "max_step is no rung";
  lbo::workers::Outcome ok;
  ok.status = lbo::workers::TrialStatus::ok;
  ok.objective = 0.97;
  lbo::testing::end_attempt(table.state, 0, ok);
  ok.objective = 0.75;
  lbo::testing::end_attempt(table.state, 4, ok);
  pause(3, 3, 0.62);
  const std::optional<Promotion> fourth = rule.promotion(table.state, any_task, never_busy);
  ASSERT_TRUE(fourth);
  EXPECT_EQ(fourth->trial, 3);
  EXPECT_NE(fourth->reason.find("2 of the task's trials ran to epoch 9"), std::string::npos) << fourth->reason;
  lbo::testing::start_again(table.state, 3);
  EXPECT_EQ(rule_rungs.target_step(table.state.trial(3)), 9);
  EXPECT_FALSE(rule.promotion(table.state, any_task, never_busy)) << "three trials run in full";
  EXPECT_TRUE(rule.unpromoted(table.state).empty()) << "trial 3 runs";
  ok.objective = 0.64;
  lbo::testing::end_attempt(table.state, 3, ok);
  EXPECT_FALSE(rule.promotion(table.state, any_task, never_busy)) << "three trials ran to max_step";
  const std::vector<StopDecision> stops = rule.unpromoted(table.state);
  ASSERT_EQ(stops.size(), 3u);
  for (const StopDecision& d : stops) EXPECT_FALSE(d.pause);
  EXPECT_EQ(stops[0].trial, 1);
  EXPECT_EQ(stops[0].reason, "asha at epoch 1 (rung 1 of 2): paused at 0.5 and not promoted: not among the best 2 of the 6 "
                             "trials there when its task had nothing left to run");
  EXPECT_EQ(stops[1].trial, 2);
  EXPECT_EQ(stops[2].trial, 5);
  EXPECT_EQ(stops[2].step, 1);
  EXPECT_EQ(stops[2].value, 0.3);
}

// A master killed after it journaled a report that reached the attempt's target rung, before
// the pause: the resumed run owes that pause (Promotions::owed), at the rung the attempt was
// heading for. Run again instead, the trial would resume past its rung and head for the next
// one, promoted by no rule.
TEST(EarlyStoppingTest, an_interrupted_trial_that_had_reached_its_target_rung_is_owed_its_pause) {
  TrialsAtRungs table(3);
  EarlyStoppingSpec s = spec(StoppingRule::asha, 1, 9, 3);
  s.mode = lbo::jobs::StoppingMode::promotion;
  const Rungs rule_rungs(s, lbo::jobs::Direction::maximize, 1);
  Promotions rule(rule_rungs);
  table.report(0, 1, 0.9);  // reached rung 1; the master died before the pause
  table.report(1, 1, 0.4);
  table.report(1, 2, 0.5);  // past its rung in one batch
  // trial 2 reported nothing
  table.state.stop_running();
  const std::vector<StopDecision> owed = rule.owed(table.state);
  ASSERT_EQ(owed.size(), 2u);
  EXPECT_EQ(owed[0].trial, 0);
  EXPECT_TRUE(owed[0].pause);
  EXPECT_EQ(owed[0].step, 1);
  EXPECT_EQ(owed[0].value, 0.9);
  EXPECT_EQ(owed[1].trial, 1);
  EXPECT_EQ(owed[1].step, 1);
  EXPECT_EQ(owed[1].value, 0.4) << "its value at the rung, not at the last step it reported";
  table.apply(owed);
  EXPECT_EQ(table.state.interrupted(), std::vector<std::int64_t>{2});
  EXPECT_EQ(table.state.paused(), (std::vector<std::int64_t>{0, 1}));
  EXPECT_TRUE(rule.owed(table.state).empty()) << "paid once";
  // A promoted attempt killed at its next rung: owed the pause there, not before.
  lbo::testing::start_again(table.state, 0);
  table.report(0, 3, 0.95);
  table.state.stop_running();
  const std::vector<StopDecision> later = rule.owed(table.state);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].trial, 0);
  EXPECT_EQ(later[0].step, 3);
  EXPECT_EQ(later[0].attempt, 2);
}

TEST(EarlyStoppingTest, asha_minimizing_keeps_the_smallest_values) {
  TrialsAtRungs table(2);
  const Rungs rule_rungs(spec(StoppingRule::asha, 1, 9, 3), lbo::jobs::Direction::minimize, 1);
  EarlyStopping rule(rule_rungs, false);
  EXPECT_TRUE(table.report_and_decide(rule, 0, 1, 0.5).empty());
  EXPECT_TRUE(table.report_and_decide(rule, 1, 1, 0.2).empty()) << "0.2 beats 0.5 when minimizing";
  TrialsAtRungs worse(2);
  const Rungs rule2_rungs(spec(StoppingRule::asha, 1, 9, 3), lbo::jobs::Direction::minimize, 1);
  EarlyStopping rule2(rule2_rungs, false);
  EXPECT_TRUE(worse.report_and_decide(rule2, 0, 1, 0.2).empty());
  EXPECT_EQ(worse.report_and_decide(rule2, 1, 1, 0.5).size(), 1u);
}

// What a trial reported after the step it was stopped on (before SIGTERM reached it) depends on
// timing: it counts at no later rung.
TEST(EarlyStoppingTest, a_stopped_trial_counts_at_rungs_up_to_its_stop_step_only) {
  TrialsAtRungs table(2);
  const Rungs rule_rungs(spec(StoppingRule::asha, 1, 9, 3), lbo::jobs::Direction::maximize, 1);
  EarlyStopping rule(rule_rungs, false);
  table.report(0, 1, 0.9);
  table.report(1, 1, 0.2);
  table.report(1, 3, 0.3);  // in the same batch, before the stop
  table.apply(rule.after_reports(table.state, {0, 1, 1}));
  ASSERT_EQ(table.state.trial(1).outcome.status, lbo::workers::TrialStatus::stopped);
  EXPECT_EQ(table.state.trial(1).outcome.last_step, 1);
  EXPECT_EQ(rule_rungs.rung_values(table.state, 0, 0, 1).size(), 2u);
  const auto at_3 = rule_rungs.rung_values(table.state, 0, 0, 3);
  EXPECT_TRUE(at_3.empty());
}

// Median (min_trials = 2), rungs 2 and 4 (r = 2, R = 8, η = 2): running averages up to the
// rung of the other trials that reached it; the trial's best so far against their median.
TEST(EarlyStoppingTest, median_waits_for_min_trials_then_stops_below_the_median_of_running_averages) {
  TrialsAtRungs table(4);
  EarlyStoppingSpec s = spec(StoppingRule::median, 2, 8, 2);
  s.min_trials = 2;
  const Rungs rule_rungs(s, lbo::jobs::Direction::maximize, 1);
  EarlyStopping rule(rule_rungs, false);
  table.report(0, 1, 0.2);
  EXPECT_TRUE(table.report_and_decide(rule, 0, 2, 0.6).empty());  // average 0.4
  table.report(1, 1, 0.0);
  EXPECT_TRUE(table.report_and_decide(rule, 1, 2, 0.2).empty()) << "one other trial: fewer than min_trials";
  table.report(2, 1, 0.5);
  // Others' averages 0.4 and 0.1: median 0.25; trial 2's best 0.5 goes on even though its
  // value at the rung, 0.1, is below.
  EXPECT_TRUE(table.report_and_decide(rule, 2, 2, 0.1).empty());
  table.report(3, 1, 0.2);
  // Others' averages 0.4, 0.1, 0.3: median 0.3; trial 3's best 0.25 is below.
  const std::vector<StopDecision> stop = table.report_and_decide(rule, 3, 2, 0.25);
  ASSERT_EQ(stop.size(), 1u);
  EXPECT_EQ(stop[0].reason, "median at epoch 2 (rung 1 of 2): its best 0.25 is worse than 0.3, the median of 3 other "
                            "trial(s)' running averages there");
}

// RUSH's hurdle: trial 0 is an earlier task's best configuration, run first in the new task;
// its 0.8 at rung 1 stops trial 1 (0.75), which ASHA alone lets go on (above the 2/3 quantile
// of [0.6, 0.8], 0.7333); without transfer ASHA's cutoff decides alone.
TEST(EarlyStoppingTest, an_earlier_tasks_best_sets_the_hurdle_at_each_rung_unless_transfer_is_off) {
  for (const bool transfer : {true, false}) {
    TrialsAtRungs table(0);
    lbo::testing::start_trial(table.state, 0, {{0.5}}, "local:0", ProposalSource::earlier_best);
    lbo::testing::start_trial(table.state, 0, {{0.6}});
    lbo::testing::start_trial(table.state, 0, {{0.7}});
    EarlyStoppingSpec s = spec(StoppingRule::asha, 1, 9, 3);
    s.transfer = transfer;
    const Rungs rule_rungs(s, lbo::jobs::Direction::maximize, 1);
    EarlyStopping rule(rule_rungs, false);
    EXPECT_TRUE(table.report_and_decide(rule, 2, 1, 0.6).empty()) << "the first at the rung, before the hurdle is set";
    EXPECT_TRUE(table.report_and_decide(rule, 0, 1, 0.8).empty()) << "an earlier best meets no hurdle of its own";
    const std::vector<StopDecision> stops = table.report_and_decide(rule, 1, 1, 0.75);
    if (transfer) {
      ASSERT_EQ(stops.size(), 1u);
      EXPECT_EQ(stops[0].reason, "asha at epoch 1 (rung 1 of 2): 0.75 is worse than 0.8, the hurdle trial 0 (an earlier "
                                 "task's best configuration) set there");
    } else {
      EXPECT_TRUE(stops.empty()) << "0.75 is above ASHA's cutoff 0.7333";
    }
  }
}

// Hyperband with 3 brackets (η = 3): weights 9/3, 3/2, 1/1 of 5.5, and bracket b's rungs start
// at r·η^b: bracket 0 {1, 3}, bracket 1 {3}, bracket 2 none (every trial runs to max_step).
TEST(EarlyStoppingTest, hyperband_brackets_follow_their_weights_by_trial_id_alone) {
  EarlyStoppingSpec s = spec(StoppingRule::hyperband, 1, 9, 3);
  s.brackets = 3;
  const Rungs rule_rungs(s, lbo::jobs::Direction::maximize, 42);
  const Rungs again_rungs(s, lbo::jobs::Direction::maximize, 42);
  std::map<int, int> count;
  for (std::int64_t id = 0; id < 11000; ++id) {
    const int b = rule_rungs.bracket_of(id);
    ++count[b];
    ASSERT_EQ(b, again_rungs.bracket_of(id)) << "the same for the same id and seed";
  }
  EXPECT_NEAR(count[0] / 11000.0, 3.0 / 5.5, 0.01);
  EXPECT_NEAR(count[1] / 11000.0, 1.5 / 5.5, 0.01);
  EXPECT_NEAR(count[2] / 11000.0, 1.0 / 5.5, 0.01);
  EXPECT_EQ(s.rungs(0), (std::vector<std::int64_t>{1, 3}));
  EXPECT_EQ(s.rungs(1), (std::vector<std::int64_t>{3}));
  EXPECT_TRUE(s.rungs(2).empty());
}

// --sync: no decision at a rung until every running trial reached it; then the same decisions
// whatever the order the reports came in.
TEST(EarlyStoppingTest, sync_decides_a_rung_once_every_running_trial_reached_it_in_any_order) {
  const std::vector<std::pair<std::int64_t, double>> rung_1 = {{0, 0.9}, {1, 0.2}, {2, 0.5}, {3, 0.7}};
  std::vector<std::int64_t> order = {0, 1, 2, 3};
  std::vector<std::int64_t> first_stopped;
  do {
    TrialsAtRungs table(4);
    const Rungs rule_rungs(spec(StoppingRule::asha, 1, 9, 3), lbo::jobs::Direction::maximize, 1);
    EarlyStopping rule(rule_rungs, true);
    std::vector<StopDecision> stops;
    for (std::size_t i = 0; i < order.size(); ++i) {
      stops = table.report_and_decide(rule, order[i], 1, rung_1[static_cast<std::size_t>(order[i])].second);
      if (i + 1 < order.size()) {
        ASSERT_TRUE(stops.empty()) << "decided before every trial reached the rung";
      }
    }
    std::vector<std::int64_t> stopped;
    for (const StopDecision& d : stops) stopped.push_back(d.trial);
    // Each against the three others: 0.2 < q(0.5, 0.7, 0.9) = 0.7667, 0.5 < q(0.2, 0.7, 0.9) = 0.7667,
    // 0.7 < q(0.2, 0.5, 0.9) = 0.6333 is false, 0.9 goes on.
    EXPECT_EQ(stopped, (std::vector<std::int64_t>{1, 2}));
    if (first_stopped.empty()) first_stopped = stopped;
    EXPECT_EQ(stopped, first_stopped);
  } while (std::next_permutation(order.begin(), order.end()));
}

// --sync: a trial that ends ok before its round reached the rungs it passed is held, still
// running for the rule: it is judged at those rungs with the others (here stopped at rung 1),
// or released once they are decided without a stop; rungs past its last step do not wait for it.
TEST(EarlyStoppingTest, sync_holds_a_trial_that_ended_before_its_round_reached_its_rungs) {
  const Rungs rule_rungs(spec(StoppingRule::asha, 1, 9, 3), lbo::jobs::Direction::maximize, 1);
  {
    TrialsAtRungs table(3);
    EarlyStopping rule(rule_rungs, true);
    table.report(0, 1, 0.2), table.report(0, 3, 0.3), table.report(0, 9, 0.4);
    EXPECT_TRUE(rule.after_reports(table.state, {0}).empty());
    EXPECT_TRUE(rule.hold(table.state.trial(0)));
    EXPECT_TRUE(rule.held(0, 1));
    EXPECT_TRUE(rule.after_end(table.state).empty()) << "trials 1 and 2 have not reached rung 1";
    EXPECT_TRUE(rule.released(table.state).empty());
    EXPECT_TRUE(table.report_and_decide(rule, 1, 1, 0.9).empty());
    // 0.2 < q(0.5, 0.9) = 0.7667 and 0.5 < q(0.2, 0.9) = 0.6667: both stopped at rung 1.
    const std::vector<StopDecision> stops = table.report_and_decide(rule, 2, 1, 0.5);
    ASSERT_EQ(stops.size(), 2u);
    EXPECT_EQ(stops[0].trial, 0);
    EXPECT_EQ(stops[0].step, 1);
    EXPECT_EQ(stops[0].value, 0.2);
    EXPECT_EQ(stops[1].trial, 2);
    EXPECT_TRUE(rule.released(table.state).empty()) << "a stopped trial is not released";
    EXPECT_FALSE(rule.held(0, 1));
  }
  {
    TrialsAtRungs table(3);
    EarlyStopping rule(rule_rungs, true);
    table.report(0, 1, 0.97), table.report(0, 2, 0.98);  // ends at step 2: rung 1 only
    EXPECT_TRUE(rule.hold(table.state.trial(0)));
    EXPECT_TRUE(table.report_and_decide(rule, 1, 1, 0.95).empty());
    // 0.97 and 0.95 go on (0.95 ≥ q(0.9, 0.97) = 0.9467); 0.9 < q(0.95, 0.97) is stopped.
    const std::vector<StopDecision> stops = table.report_and_decide(rule, 2, 1, 0.9);
    ASSERT_EQ(stops.size(), 1u);
    EXPECT_EQ(stops[0].trial, 2);
    EXPECT_TRUE(rule.after_end(table.state).empty());
    EXPECT_EQ(rule.released(table.state), (std::vector<lbo::workers::AttemptKey>{{0, 1}}));
    EXPECT_FALSE(rule.held(0, 1));
    lbo::testing::end_attempt(table.state, 0, lbo::testing::ok_with(0.98));
    // Rung 3 waits for trial 1 alone, and compares it with nobody there.
    EXPECT_TRUE(table.report_and_decide(rule, 1, 3, 0.5).empty());
    // An attempt whose rungs are all decided is not held.
    table.report(1, 4, 0.6);
    EXPECT_FALSE(rule.hold(table.state.trial(1)));
  }
  // Without --sync nothing is held.
  TrialsAtRungs table(2);
  EarlyStopping rule(rule_rungs, false);
  table.report(0, 1, 0.5);
  EXPECT_FALSE(rule.hold(table.state.trial(0)));
}

// [early_stopping] model = "rungs", rungs 1 and 3 and max_step 9: each is a model task. A rung's
// takes every ended trial (ok, stopped, paused) with a report there, at its first report at or
// past the rung, up to the step a stopped trial was stopped on; max_step's takes the trials that
// finished ok, at their result. Running and failed trials enter nowhere. "last" (the default) has
// one model task of every ok, stopped or paused trial at its last value.
TEST(EarlyStoppingTest, rung_tasks_take_each_ended_trials_value_at_every_rung_it_reached) {
  TrialsAtRungs table(6);
  lbo::testing::ScratchDir dir;
  lbo::jobs::JobSpec job = lbo::testing::job_from(lbo::testing::test_job() + "[early_stopping]\nrule = \"asha\"\nstep_name = \"epoch\"\n"
                                                  "max_step = 9\nmodel = \"rungs\"\n", dir.path());
  const auto stop = [&](std::int64_t id, std::int64_t step, double value, bool pause) {
    table.apply({StopDecision{id, 1, step, value, 0, "", pause}});
  };
  table.report(0, 1, 0.2), table.report(0, 3, 0.4), table.report(0, 9, 0.6);
  lbo::testing::end_attempt(table.state, 0, lbo::testing::ok_with(0.7));
  table.report(1, 1, 0.5);
  stop(1, 1, 0.5, false);
  table.state.apply(TrialsReported{{{1, 1, 3, 0.45, "{}", 2}}, 0});  // came in after the stop
  table.report(2, 1, 0.3), table.report(2, 4, 0.35);
  stop(2, 4, 0.35, true);
  table.report(3, 1, 0.9);  // still running
  table.report(4, 1, 0.8);
  lbo::workers::Outcome failed;
  failed.status = lbo::workers::TrialStatus::failed;
  lbo::testing::end_attempt(table.state, 4, failed);

  job.policy.output_warping = lbo::jobs::OutputWarping::none;  // the values themselves (the warping: test_output_warping)
  const ModelData rungs(job, {});
  ASSERT_EQ(rungs.steps(), 3);
  EXPECT_EQ(rungs.name(table.state, 0, 1), "a/epoch_3");
  EXPECT_EQ(rungs.usable_trials(table.state, 0, 0), (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(rungs.usable_trials(table.state, 0, 1), (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(rungs.usable_trials(table.state, 0, 2), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(rungs.values(table.state, {0, 1, 2}, 0), (Eigen::Vector3d{0.2, 0.5, 0.3}));
  EXPECT_EQ(rungs.values(table.state, {0, 2}, 1), (Eigen::Vector2d{0.4, 0.35}));  // trial 2 at step 4
  EXPECT_EQ(rungs.values(table.state, {0}, 2), (Eigen::VectorXd::Constant(1, 0.7)));
  EXPECT_EQ(rungs.observations(table.state), 6);
  EXPECT_EQ(rungs.proposing_steps(table.state, 0), (std::vector<int>{2, 1, 0}));
  const FitRequest fit = rungs.training_data(table.state);
  ASSERT_EQ(fit.data.tasks.size(), 3u);
  EXPECT_EQ(fit.trials[1], (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(fit.data.tasks[1].X.rows(), 2);
  EXPECT_EQ(fit.data.tasks[1].X(1, 0), 0.2);  // trial 2's x (0.1 · 2, the unit box's [0, 1])

  // BOHB's rule proposes from the highest rung with d + 1 = 2 results: epoch 3's, until a second
  // trial finishes ok.
  job.early_stopping->model = lbo::jobs::CurveModel::highest_rung;
  const ModelData bohb(job, {});
  EXPECT_EQ(bohb.proposing_steps(table.state, 0), (std::vector<int>{1, 0}));
  lbo::testing::end_attempt(table.state, 5, lbo::testing::ok_with(0.1));
  EXPECT_EQ(bohb.proposing_steps(table.state, 0), (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(bohb.usable_trials(table.state, 0, 2), (std::vector<std::int64_t>{0, 5}));

  job.early_stopping->model = lbo::jobs::CurveModel::last;
  const ModelData last(job, {});
  ASSERT_EQ(last.steps(), 1);
  EXPECT_EQ(last.usable_trials(table.state, 0, 0), (std::vector<std::int64_t>{0, 1, 2, 5}));
  EXPECT_EQ(last.values(table.state, {0, 1, 2, 5}, 0), (Eigen::Vector4d{0.7, 0.5, 0.35, 0.1}));
  EXPECT_EQ(last.proposing_steps(table.state, 0), (std::vector<int>{0}));
}

namespace {

// The test objective reporting 9 steps (value·s/9, `report_ms` apart) on x in [0, 1], under ASHA
// with rungs 1 and 3 and max_step 8 (its step 9 is past it).
std::string asha_job(int budget, int report_ms, int seed = 3) {
  return "grace_s = 0\nname = \"es\"\nseed = " + std::to_string(seed) + "\n[objective]\ncommand = [\"" +
         std::string(LBO_TEST_OBJECTIVE) + "\", \"--reports\", \"9\", \"--report-ms\", \"" + std::to_string(report_ms) +
         "\"]\ndirection = \"maximize\"\nretries = 2\n[policy]\nsurrogate = \"gp\"\ninitial_random = 4\n"
         "[early_stopping]\nrule = \"asha\"\nstep_name = \"epoch\"\nmin_step = 1\nmax_step = 8\neta = 3\n"
         "[space]\nx = { type = \"float\", low = 0, high = 1 }\ny = { type = \"float\", low = 0, high = 1 }\n"
         "[[tasks]]\nname = \"a\"\nbudget = " + std::to_string(budget) + "\n";
}

std::map<std::string, std::map<std::string, double>> reported_values(const fs::path& run_dir) {
  std::map<std::string, std::map<std::string, double>> values;  // trial → step → value
  for (const Row& r : lbo::testing::read_csv(run_dir / "reports.csv")) values[r.at("trial")][r.at("step")] = std::stod(r.at("value"));
  return values;
}

}  // namespace

// A run stops trials at its rungs: each stopped trial's result is its value at the step it was
// stopped on, it is neither ok nor failed, never retried, and the model still proposes.
TEST(EarlyStoppingRunTest, asha_stops_trials_at_their_rungs_and_counts_them_apart) {
  lbo::testing::ScratchDir dir;
  const RunOutput out = run_job(asha_job(16, 20), dir, 2);
  ASSERT_EQ(out.exit_code, kExitDone) << out.log;
  ASSERT_EQ(out.rows.size(), 16u);
  const auto values = reported_values(out.run_dir);
  int stopped = 0, ok = 0;
  for (const Row& row : out.rows) {
    const std::string& trial = row.at("trial");
    EXPECT_EQ(row.at("attempts"), "1") << "a stop is never retried";
    if (row.at("status") == "stopped") {
      ++stopped;
      // Judged at rung 1 or 3 (its reason says which), at its value there; last_step counts the
      // steps it ran, reports that came before the stop reached it too.
      const std::string prefix = "stopped early: asha at epoch ";
      ASSERT_EQ(row.at("reason").rfind(prefix, 0), 0u) << row.at("reason");
      const std::string judged = row.at("reason").substr(prefix.size(), row.at("reason").find(' ', prefix.size()) - prefix.size());
      EXPECT_TRUE(judged == "1" || judged == "3") << row.at("reason");
      EXPECT_EQ(std::stod(row.at("objective")), values.at(trial).at(judged)) << trial;
      EXPECT_GE(std::stoi(row.at("last_step")), std::stoi(judged));
      EXPECT_TRUE(values.at(trial).count(row.at("last_step"))) << "a step it reported";
    } else {
      ++ok;
      EXPECT_EQ(row.at("status"), "ok") << row.at("reason");
      EXPECT_EQ(row.at("last_step"), "8") << "step 9 is past max_step and ignored";
    }
  }
  EXPECT_GT(stopped, 0);
  EXPECT_GT(ok, 0);
  EXPECT_NE(out.log.find("task a done: " + std::to_string(ok) + "/16 ok, " + std::to_string(stopped) + " stopped early"),
            std::string::npos)
      << out.log;
  EXPECT_NE(out.log.find("a report is ignored: step 9 is past [early_stopping] max_step (8)"), std::string::npos);
  const RecoveredRun recovered = recover_run(out.run_dir);
  EXPECT_EQ(recovered.state.tasks()[0].stopped, stopped);
  EXPECT_EQ(recovered.state.tasks()[0].ok, ok);
  EXPECT_EQ(recovered.state.tasks()[0].failed(), 0);
  EXPECT_EQ(out.rows[static_cast<std::size_t>(*recovered.state.tasks()[0].best_trial)].at("status"), "ok");
  // lbo status counts them in a column of their own.
  const std::string status = status_report(out.run_dir);
  std::istringstream lines(status);
  std::vector<std::vector<std::string>> table;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("task ") && !line.starts_with("a ")) continue;
    std::istringstream words(line);
    table.emplace_back(std::istream_iterator<std::string>(words), std::istream_iterator<std::string>());
  }
  ASSERT_EQ(table.size(), 2u) << status;
  EXPECT_EQ(std::vector<std::string>(table[0].begin() + 3, table[0].begin() + 6),
            (std::vector<std::string>{"ok", "failed", "stopped"}));
  EXPECT_EQ(std::vector<std::string>(table[1].begin() + 4, table[1].begin() + 7),
            (std::vector<std::string>{std::to_string(ok), "0", std::to_string(stopped)}));  // "a", "job", "file", "16/16"
  EXPECT_EQ(status.find("failures by reason"), std::string::npos) << "a stop is no failure";
  int model = 0;
  for (const Row& row : out.rows) model += row.at("proposed_by") == "model" ? 1 : 0;
  EXPECT_GT(model, 0) << "stopped trials feed the model as other results do";
}

// Two objectives (the test objective's "value", maximized, and "cost", minimized), its reports
// value·s/9: early stopping goes by the objective [early_stopping] objective names, the first by
// default. Stopped by "value", a trial's report was below the cutoff and its value stands in
// the objective column; stopped by "cost", above it, in the objective:cost column.
TEST(EarlyStoppingRunTest, with_two_objectives_the_rungs_rank_by_the_objective_early_stopping_names) {
  for (const std::string by : {"", "cost"}) {
    SCOPED_TRACE("early_stopping.objective = " + by);
    lbo::testing::ScratchDir dir;
    std::string job = asha_job(14, 20);
    const std::string single = "direction = \"maximize\"\n", command = "\"--reports\"";
    job.replace(job.find(single), single.size(),
                "objectives = [{ name = \"value\", direction = \"maximize\" }, { name = \"cost\", direction = \"minimize\" }]\n");
    job.replace(job.find(command), command.size(), "\"--pareto\", \"on\", \"--reports\"");
    if (!by.empty()) job.replace(job.find("[early_stopping]\n"), 17, "[early_stopping]\nobjective = \"" + by + "\"\n");
    const RunOutput out = run_job(job, dir, 2);
    ASSERT_EQ(out.exit_code, kExitDone) << out.log;
    const auto values = reported_values(out.run_dir);
    int stopped = 0, strict = 0;
    for (const Row& row : out.rows) {
      if (row.at("status") != "stopped") continue;
      ++stopped;
      // "asha at epoch 1 (rung 1 of 2): 0.31 is worse than 0.52, the cutoff ..."
      const std::string& reason = row.at("reason");
      const std::size_t colon = reason.find("): "), worse = reason.find(" is worse than ");
      ASSERT_NE(worse, std::string::npos) << reason;
      const double mine = std::stod(reason.substr(colon + 3, worse - colon - 3));
      const double cutoff = std::stod(reason.substr(worse + 15));
      const std::string judged = reason.substr(std::string("stopped early: asha at epoch ").size(), 1);
      const double reported = values.at(row.at("trial")).at(judged);  // the reason gives 6 digits
      EXPECT_NEAR(mine, reported, 1e-5 * std::abs(reported)) << reason;
      // Both as the reason rounds them (6 digits; rounding keeps their order, not a strict one):
      // a trial equal to the cutoff's trial is stopped too.
      strict += mine != cutoff ? 1 : 0;
      if (by.empty()) {
        EXPECT_LE(mine, cutoff) << reason;
        EXPECT_EQ(std::stod(row.at("objective")), reported);
        EXPECT_EQ(row.at("objective:cost"), "");
      } else {
        EXPECT_GE(mine, cutoff) << reason;
        EXPECT_EQ(row.at("objective"), "") << "a report of cost is no value";
        EXPECT_EQ(std::stod(row.at("objective:cost")), reported);
      }
    }
    EXPECT_GT(strict, 0) << "no stop that tells the direction";
  }
}

namespace {

void expect_same_trials(const RunOutput& a, const RunOutput& b, const std::string& what) {
  ASSERT_EQ(a.rows.size(), b.rows.size()) << what;
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    // Not last_step: the steps a stopped trial ran before the stop reached it depend on timing
    // (its reason names the step it was judged at).
    for (const char* column : {"trial", "x", "y", "status", "objective", "reason"}) {
      EXPECT_EQ(a.rows[i].at(column), b.rows[i].at(column)) << what << ": trial " << i << " " << column;
    }
  }
}

// --sync with early stopping: two runs of `job` on 3 slots give the same trials, statuses,
// steps and results, and a run stopped by SIGINT once its `file` has `rows` rows and resumed ends
// as the uninterrupted one (a machine under load makes the reports of a round arrive in any
// order). The uninterrupted run's output (its run directory is gone: `when_done` reads it).
RunOutput expect_sync_runs_alike(const std::string& job, const std::string& file, std::size_t rows,
                                  const std::function<void(const RunOutput&)>& when_stopped = {},
                                  const std::function<void(const RunOutput&)>& when_done = {},
                                  std::chrono::milliseconds delay = std::chrono::milliseconds(0)) {
  lbo::testing::ScratchDir dir;
  MasterOptions sync;
  sync.sync = true;
  const RunOutput whole = run_job(job, dir, 3, sync, dir.path() / "whole");
  EXPECT_EQ(whole.exit_code, kExitDone) << whole.log;
  if (when_done) when_done(whole);
  const RunOutput again = run_job(job, dir, 3, sync, dir.path() / "again");
  EXPECT_EQ(again.exit_code, kExitDone) << again.log;
  expect_same_trials(whole, again, "a second --sync run");
  std::thread stopper = lbo::testing::signal_after_rows(SIGINT, dir.path() / "stopped" / "es" / file, rows, delay);
  const RunOutput part = run_job(job, dir, 3, sync, dir.path() / "stopped");
  stopper.join();
  EXPECT_EQ(part.exit_code, kExitResumable) << part.log;
  EXPECT_LT(part.rows.size(), whole.rows.size());
  if (when_stopped) when_stopped(part);
  const RunOutput rest = run_job(job, dir, 3, sync, dir.path() / "stopped");
  EXPECT_EQ(rest.exit_code, kExitDone) << rest.log;
  expect_same_trials(whole, rest, "stopped and resumed");
  return whole;
}

}  // namespace

TEST(EarlyStoppingRunTest, a_sync_run_is_reproducible_and_resumes_to_the_same_trials_and_stops) {
  const RunOutput whole = expect_sync_runs_alike(asha_job(15, 15, 5), "results.csv", 7);
  int stopped = 0;
  for (const Row& row : whole.rows) stopped += row.at("status") == "stopped" ? 1 : 0;
  EXPECT_GT(stopped, 0) << whole.log;
}

// The predictive rule's decisions are functions of the journal too: its forecasts refit on the
// curves that ended, in id order, so a --sync run stopped and resumed (its forecasts rebuilt from
// the replayed state) stops the same trials at the same steps as one that ran through, and each
// stop's forecast is the same number.
TEST(EarlyStoppingRunTest, a_sync_predictive_run_is_reproducible_and_resumes_to_the_same_stops) {
  std::string job = asha_job(24, 15, 5);
  job.replace(job.find("rule = \"asha\""), 13, "rule = \"predictive\"");
  const RunOutput whole = expect_sync_runs_alike(job, "results.csv", 12);
  int stopped = 0;
  for (const Row& row : whole.rows) {
    if (row.at("status") != "stopped") continue;
    ++stopped;
    EXPECT_NE(row.at("reason").find("predictive at epoch "), std::string::npos) << row.at("reason");
    EXPECT_NE(row.at("reason").find("its forecast at epoch 8 is "), std::string::npos) << row.at("reason");
  }
  EXPECT_GT(stopped, 0) << whole.log;
}

// --sync, with trials that end in the order of their values (the lowest first, before the others
// reach rung 1, as trials of very different lengths do, or a loaded machine's late spawns):
// the first round's lowest is judged at rung 1 with the others all the same, and stopped there
// (its value < the cutoff of two higher ones), in every run. A stop 100 ms after it reported its
// 8 steps (it waits for the others; about 200 ms before they report, on an idle machine) commits
// none of the round's results: the resumed run runs the round again and ends as the
// uninterrupted one.
TEST(EarlyStoppingRunTest, a_sync_round_judges_a_trial_that_ended_before_the_others_reached_a_rung) {
  std::string job = asha_job(6, 10, 5);
  const std::string report_ms = "\"--report-ms\", \"10\"";
  job.insert(job.find(report_ms) + report_ms.size(), ", \"--sleep-ms-per-value\", \"600\"");
  std::map<std::string, std::string> whole_status;  // trial → status in the uninterrupted run
  const auto lowest_of_the_first_round = [&](const RunOutput& out) {
    for (const Row& row : out.rows) whole_status[row.at("trial")] = row.at("status");
    ASSERT_EQ(out.rows.size(), 6u) << out.log;
    const auto values = reported_values(out.run_dir);
    std::vector<std::pair<double, std::size_t>> at_rung_1;
    for (std::size_t i = 0; i < 3; ++i) at_rung_1.emplace_back(values.at(std::to_string(i)).at("1"), i);
    std::sort(at_rung_1.begin(), at_rung_1.end());
    ASSERT_LT(at_rung_1[0].first, at_rung_1[1].first);
    const Row& lowest = out.rows[at_rung_1[0].second];
    EXPECT_EQ(lowest.at("status"), "stopped") << lowest.at("reason") << "\n" << out.log;
    // It ended long before the others: its own reports went on to step 8, which last_step
    // says (the steps it ran), while the reason names the rung it was judged at.
    EXPECT_EQ(values.at(lowest.at("trial")).count("8"), 1u);
    EXPECT_EQ(lowest.at("last_step"), "8");
    EXPECT_NE(lowest.at("reason").find("at epoch 1 (rung 1"), std::string::npos) << lowest.at("reason");
  };
  const auto as_in_the_whole_run = [&](const RunOutput& part) {
    for (const Row& row : part.rows) EXPECT_EQ(row.at("status"), whole_status.at(row.at("trial"))) << part.log;
  };
  expect_sync_runs_alike(job, "reports.csv", 8, as_in_the_whole_run, lowest_of_the_first_round, std::chrono::milliseconds(100));
}

// model = "rungs" with lbo over two tasks: the model learns at epochs 1, 3 and 8 and proposes at
// 8 (at a lower rung while 8 has nothing to learn from, and says so); tasks.csv has a row per
// task; a --sync run is reproducible and resumes exactly.
TEST(EarlyStoppingRunTest, a_model_over_the_rungs_proposes_at_max_step_reproducibly) {
  std::string job = asha_job(10, 10, 5);
  job.replace(job.find("surrogate = \"gp\""), 16, "surrogate = \"lbo\"");
  job.insert(job.find("[space]"), "model = \"rungs\"\n");
  job += "[[tasks]]\nname = \"b\"\nbudget = 10\n";
  // One row per task (its max_step model task), not one per rung.
  const auto tasks_csv = [](const RunOutput& whole) {
    const std::vector<Row> tasks = lbo::testing::read_csv(whole.run_dir / "tasks.csv");
    ASSERT_EQ(tasks.size(), 2u);
    EXPECT_EQ(tasks[0].at("task"), "a");
    EXPECT_EQ(tasks[1].at("task"), "b");
    EXPECT_EQ(tasks[1].at("step"), "");
  };

  const RunOutput whole = expect_sync_runs_alike(job, "results.csv", 8, {}, tasks_csv);
  ASSERT_EQ(whole.rows.size(), 20u);
  int model = 0;
  for (const Row& row : whole.rows) model += row.at("proposed_by") == "model" ? 1 : 0;
  EXPECT_GT(model, 0) << whole.log;
  EXPECT_NE(whole.log.find("task a proposes from the model's a/epoch_"), std::string::npos) << whole.log;
  EXPECT_NE(whole.log.find("task b proposes from the model's b/epoch_8"), std::string::npos) << whole.log;
}

namespace {

std::string promotion_job(int budget, int report_ms, int seed = 3) {
  std::string job = asha_job(budget, report_ms, seed);
  const std::string eta = "eta = 3\n";
  return job.insert(job.find(eta) + eta.size(), "mode = \"promotion\"\n");
}

// reports.csv's steps of each trial, over its attempts: trial → [(attempt, step)].
std::map<std::string, std::vector<std::pair<int, int>>> reported_steps(const fs::path& run_dir) {
  std::map<std::string, std::vector<std::pair<int, int>>> steps;
  for (const Row& r : lbo::testing::read_csv(run_dir / "reports.csv")) {
    steps[r.at("trial")].emplace_back(std::stoi(r.at("attempt")), std::stoi(r.at("step")));
  }
  return steps;
}

}  // namespace

// Promotion mode on two slots (rungs 1 and 3, max_step 8, η = 3, 12 trials): every trial pauses
// at rung 1; at least the best ⌊12/3⌋ = 4 there are promoted and resume from their checkpoint
// folder (the objective fails if its folder lost the step), their attempts making one curve;
// at least one runs to max_step; the others end stopped at the rung they waited at, their
// value there their result. Pauses are no failures and use no retry.
TEST(EarlyStoppingRunTest, promotion_resumes_the_best_from_their_checkpoints_and_stops_the_rest) {
  lbo::testing::ScratchDir dir;
  const RunOutput out = run_job(promotion_job(12, 5), dir, 2);
  ASSERT_EQ(out.exit_code, kExitDone) << out.log;
  ASSERT_EQ(out.rows.size(), 12u);
  const auto values = reported_values(out.run_dir);
  const auto steps = reported_steps(out.run_dir);
  int promoted = 0, ok = 0;
  for (const Row& row : out.rows) {
    const std::string& trial = row.at("trial");
    const int attempts = std::stoi(row.at("attempts"));
    promoted += attempts > 1 ? 1 : 0;
    // One curve: every attempt goes on at the step after the last one its trial reported.
    const std::vector<std::pair<int, int>>& curve = steps.at(trial);
    for (std::size_t i = 1; i < curve.size(); ++i) EXPECT_EQ(curve[i].second, curve[i - 1].second + 1) << "trial " << trial;
    EXPECT_EQ(curve.back().first, attempts) << "trial " << trial;
    if (row.at("status") == "ok") {
      ++ok;
      EXPECT_EQ(row.at("last_step"), "8");
      continue;
    }
    ASSERT_EQ(row.at("status"), "stopped") << row.at("reason");
    EXPECT_TRUE(row.at("last_step") == "1" || row.at("last_step") == "3") << row.at("last_step");
    EXPECT_EQ(std::stod(row.at("objective")), values.at(trial).at(row.at("last_step"))) << trial;
    EXPECT_NE(row.at("reason").find("and not promoted: not among the best"), std::string::npos) << row.at("reason");
  }
  EXPECT_GE(promoted, 4) << out.log;
  EXPECT_GE(ok, 1) << out.log;
  EXPECT_EQ(out.log.find("retrying"), std::string::npos) << "a pause is no failure: " << out.log;
  EXPECT_NE(out.log.find(" paused at "), std::string::npos) << out.log;
  EXPECT_NE(out.log.find(" promoted from epoch 1 to 3: among the best "), std::string::npos) << out.log;
  const RecoveredRun recovered = recover_run(out.run_dir);
  EXPECT_EQ(recovered.state.tasks()[0].ok + recovered.state.tasks()[0].stopped, 12);
  EXPECT_TRUE(recovered.state.paused().empty());
  // The task is done: only its best trial keeps its checkpoint folder (keep_checkpoints = "best").
  const std::optional<std::int64_t> best = recovered.state.tasks()[0].best_trial;
  ASSERT_TRUE(best);
  for (const Row& row : out.rows) {
    const bool kept = fs::is_directory(out.run_dir / "trials" / row.at("trial") / "checkpoint");
    EXPECT_EQ(kept, row.at("trial") == std::to_string(*best)) << "trial " << row.at("trial");
  }
  EXPECT_NE(out.log.find("removed the checkpoint folders of 11 trial(s) that cannot resume"), std::string::npos) << out.log;
}

// --sync in promotion mode: reproducible, and a run stopped mid-round (its running attempts
// resume from their checkpoints) ends as the uninterrupted one.
TEST(EarlyStoppingRunTest, a_sync_promotion_run_is_reproducible_and_resumes_to_the_same_trials) {
  // Stopped mid-run, `lbo status` counts the trials paused at a rung apart.
  const auto paused_column = [](const RunOutput& part) {
    const RecoveredRun run = recover_run(part.run_dir);
    ASSERT_FALSE(run.state.paused().empty()) << "16 reports in, trials wait at rung 1";
    const std::string status = status_report(part.run_dir);
    std::istringstream lines(status);
    std::string header, row;
    while (std::getline(lines, header) && !header.starts_with("task ")) {}
    std::getline(lines, row);
    std::istringstream words(header), cells(row);
    const std::vector<std::string> names{std::istream_iterator<std::string>(words), {}};
    const std::vector<std::string> values{std::istream_iterator<std::string>(cells), {}};
    const auto at = std::find(names.begin(), names.end(), "paused");
    ASSERT_NE(at, names.end()) << status;
    // The header's "origin" is one word, the row's "job file" two: the row's cells are one on.
    EXPECT_EQ(values.at(static_cast<std::size_t>(at - names.begin()) + 1), std::to_string(run.state.paused().size())) << status;
  };
  const RunOutput whole = expect_sync_runs_alike(promotion_job(12, 10, 5), "reports.csv", 16, paused_column);
  int promoted = 0;
  for (const Row& row : whole.rows) promoted += row.at("attempts") != "1" ? 1 : 0;
  EXPECT_GT(promoted, 0) << whole.log;
}

// A task's budget in steps: once its trials reported 30 steps it starts no new trial and ends
// when the running ones have (2 slots: at most 2 × 8 steps more), far below its 40 trials; a
// resumed run keeps the budget (the journal's task) and the steps spent (its reports). A stopped
// trial counts up to the step it was stopped at: the reports it sent before the stop reached it
// (reports.csv has them) depend on timing.
TEST(EarlyStoppingRunTest, a_budget_in_steps_ends_the_task_when_its_trials_spent_it) {
  lbo::testing::ScratchDir dir;
  std::string job = asha_job(40, 2);
  job.insert(job.find("budget = 40"), "budget_steps = 30\n");
  const RunOutput out = run_job(job, dir, 2);
  ASSERT_EQ(out.exit_code, kExitDone) << out.log;
  EXPECT_LT(out.rows.size(), 40u);
  const RecoveredRun recovered = recover_run(out.run_dir);
  std::int64_t steps = 0, reported = 0;
  std::map<std::string, std::int64_t> last, last_counted;  // per trial and attempt
  for (const Row& r : lbo::testing::read_csv(out.run_dir / "reports.csv")) {
    const std::string key = r.at("trial") + "/" + r.at("attempt");
    const std::int64_t step = std::stoll(r.at("step"));
    reported += step - std::exchange(last[key], step);
    const Trial& t = recovered.state.trial(std::stoll(r.at("trial")));
    const bool past_stop = t.finished && t.outcome.status == lbo::workers::TrialStatus::stopped &&
                           std::stoi(r.at("attempt")) == t.attempts && step > t.outcome.last_step;
    if (!past_stop) steps += step - std::exchange(last_counted[key], step);
  }
  EXPECT_GE(steps, 30);
  EXPECT_LE(steps, 30 + 2 * 8);
  EXPECT_GE(reported, steps);
  EXPECT_EQ(recovered.state.tasks()[0].steps, steps);
  EXPECT_EQ(recovered.state.job().tasks[0].budget_steps, 30);
  EXPECT_TRUE(recovered.state.all_budgets_done());
  EXPECT_NE(out.log.find("task a done: "), std::string::npos);
  EXPECT_NE(out.log.find(" trials ok, " + std::to_string(steps) + "/30 steps"), std::string::npos) << out.log;
}
