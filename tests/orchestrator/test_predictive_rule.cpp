// The predictive rule (predictive_rule.hpp) and the forecast it asks (curve_forecast.hpp),
// against curves worked by hand: an earlier task whose slow starters end best, a later task that
// learns from it.

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "curve_forecast.hpp"
#include "early_stopping.hpp"
#include "model_data.hpp"
#include "predictive_rule.hpp"
#include "promotions.hpp"
#include "rung_table.hpp"
#include "stop_rule.hpp"
#include "test_support.hpp"

using namespace lbo::orchestrator;
using lbo::jobs::Config;

namespace {

// Rungs 1, 3 and 9 below max_step 27 (r = 1, η = 3); x in [0, 1] the one parameter.
constexpr std::int64_t kSteps[] = {1, 3, 9, 27};

// The earlier task's curves: a small x starts slow and ends best. Its values at steps 1, 3, 9 and
// 27: from 0.4 + 0.4x at step 1 to a final 0.9 − 0.3x, a third of the way at each rung, and a
// little deterministic noise (±0.004) that keeps the regression's residuals above zero.
std::vector<double> slow_starter_curve(double x, int i) {
  const double first = 0.4 + 0.4 * x, last = 0.9 - 0.3 * x, noise = 0.004 * std::sin(7.0 * i + 1.0);
  return {first, first + (last - first) / 3, first + 2 * (last - first) / 3, last + noise};
}

class PredictiveTest : public ::testing::Test {
 protected:
  explicit PredictiveTest(const std::string& rule_keys = "", const std::string& mode = "stop")
      : job_(lbo::testing::job_from(lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 40\n[[tasks]]\nname = \"b\"\nbudget = 40\n") +
                                        "[early_stopping]\nrule = \"predictive\"\nstep_name = \"epoch\"\nmax_step = 27\nmode = \"" +
                                        mode + "\"\n" + rule_keys,
                                    dir_.path())),
        table_(*job_.early_stopping, lbo::jobs::Direction::maximize, 3),
        forecast_(job_, table_),
        state_(lbo::testing::started_state(job_)) {}

  // A trial of `task` at `x` that reports `values` at kSteps (as many as given) and, with all
  // four, ends ok with the last.
  std::int64_t curve(int task, double x, const std::vector<double>& values) {
    const std::int64_t id = lbo::testing::start_trial(state_, task, Config{{x}});
    for (std::size_t s = 0; s < values.size(); ++s) report(id, kSteps[s], values[s]);
    if (values.size() == 4) lbo::testing::end_attempt(state_, id, lbo::testing::ok_with(values[3]));
    return id;
  }
  void report(std::int64_t id, std::int64_t step, double value) {
    state_.apply(TrialsReported{{{id, state_.trial(id).attempts, step, value, "{}", 0.1 * static_cast<double>(step)}}, 0});
  }
  // `n` curves of the earlier task a, x spread over [0, 1].
  void earlier_task(int n) {
    for (int i = 0; i < n; ++i) {
      const double x = (i + 0.5) / n;
      curve(0, x, slow_starter_curve(x, i));
    }
  }
  RungTable::AtRung at(std::int64_t id, std::int64_t step) const { return *table_.at_rung(state_.trial(id), step); }
  StopRuleParts parts() const { return {table_, forecast_}; }

  lbo::testing::ScratchDir dir_;
  lbo::jobs::JobSpec job_;
  RungTable table_;
  CurveForecast forecast_;
  RunState state_;
};

}  // namespace

// The curves make the rise to the final value a linear function of the features: at rung 1,
// final − v1 = (0.9 − 0.3x) − (0.4 + 0.4x) = 0.5 − 0.7x. The forecast of a new curve of the same
// family is that (within the noise's ±0.004), its spread about the noise's size.
TEST_F(PredictiveTest, forecast_learns_the_rise_to_the_final_value_from_ended_curves) {
  earlier_task(24);
  for (const double x : {0.05, 0.5, 0.95}) {
    const std::int64_t id = curve(1, x, {0.4 + 0.4 * x});
    const std::optional<Forecast> f = forecast_.at_rung(state_, state_.trial(id), 0, at(id, 1));
    ASSERT_TRUE(f.has_value());
    EXPECT_NEAR(f->mean, 0.9 - 0.3 * x, 0.005) << x;
    EXPECT_GT(f->sd, 0.001);
    EXPECT_LT(f->sd, 0.01);
    EXPECT_EQ(f->curves, 24);
    EXPECT_EQ(f->tasks, 1);
  }
}

// A regression needs its features (the value, its rise, x: 3) and three more curves: with 5 it
// forecasts nothing, with 6 it does.
TEST_F(PredictiveTest, forecast_waits_for_its_features_and_three_more_curves) {
  EXPECT_EQ(forecast_.needed(), 6);
  earlier_task(5);
  const std::int64_t id = curve(1, 0.3, {0.52});
  EXPECT_FALSE(forecast_.at_rung(state_, state_.trial(id), 0, at(id, 1)).has_value());
  EXPECT_EQ(forecast_.curves(state_, 0), 5);
  curve(0, 0.7, slow_starter_curve(0.7, 5));
  EXPECT_TRUE(forecast_.at_rung(state_, state_.trial(id), 0, at(id, 1)).has_value());
}

// A forecast is a function of the run state: one asked as the curves came (refit as each ended)
// and one made fresh on the finished state (a resumed run's) are the same numbers, bit for bit.
TEST_F(PredictiveTest, forecast_is_the_same_asked_as_curves_end_or_fresh_after_a_resume) {
  const std::int64_t id = curve(1, 0.2, {0.48, 0.6});
  for (int i = 0; i < 12; ++i) {
    const double x = (i + 0.5) / 12;
    curve(0, x, slow_starter_curve(x, i));
    (void)forecast_.at_rung(state_, state_.trial(id), 1, at(id, 3));
  }
  const std::optional<Forecast> live = forecast_.at_rung(state_, state_.trial(id), 1, at(id, 3));
  const CurveForecast fresh(job_, table_);
  const std::optional<Forecast> resumed = fresh.at_rung(state_, state_.trial(id), 1, at(id, 3));
  ASSERT_TRUE(live && resumed);
  EXPECT_EQ(live->mean, resumed->mean);
  EXPECT_EQ(live->sd, resumed->sd);
}

// The hand-worked case. Task b's best so far is 0.75 (x = 0.5, run to the end). A trial at
// x = 0.05 that starts slow (0.42 at epoch 1, below the 0.6 the full trial had there) is one the
// earlier curves say ends near 0.885: the predictive rule lets it go on, where ASHA at the same
// rung stops it. A trial at x = 0.95 that starts fast (0.78) is one they say ends near 0.615:
// it is stopped, and its reason gives the forecast and the probability.
TEST_F(PredictiveTest, a_slow_start_that_earlier_curves_say_ends_well_goes_on_a_fast_one_that_ends_low_is_stopped) {
  earlier_task(24);
  curve(1, 0.5, {0.6, 0.65, 0.7, 0.75});
  const std::int64_t slow = curve(1, 0.05, {0.42});
  const std::int64_t fast = curve(1, 0.95, {0.78});
  const std::unique_ptr<StopRule> predictive = make_stop_rule(parts());
  EXPECT_FALSE(predictive->decide(state_, state_.trial(slow), 0, at(slow, 1)).has_value());
  const std::optional<StopDecision> stop = predictive->decide(state_, state_.trial(fast), 0, at(fast, 1));
  ASSERT_TRUE(stop.has_value());
  EXPECT_EQ(stop->trial, fast);
  EXPECT_EQ(stop->step, 1);
  EXPECT_EQ(stop->value, 0.78);
  EXPECT_NEAR(stop->forecast, 0.615, 0.005);
  EXPECT_NE(stop->reason.find("predictive at epoch 1 (rung 1 of 3): 0.78 there; its forecast at epoch 27 is 0.61"), std::string::npos)
      << stop->reason;
  EXPECT_NE(stop->reason.find("(from 25 curve(s) of 2 task(s)): a probability of "), std::string::npos) << stop->reason;
  EXPECT_NE(stop->reason.find("to beat the task's best, 0.75, below 5.0%"), std::string::npos) << stop->reason;

  lbo::jobs::EarlyStoppingSpec asha = *job_.early_stopping;
  asha.rule = lbo::jobs::StoppingRule::asha;
  const RungTable asha_rungs(asha, lbo::jobs::Direction::maximize, 3);
  const std::unique_ptr<StopRule> rank_rule = make_stop_rule({asha_rungs, forecast_});
  EXPECT_TRUE(rank_rule->decide(state_, state_.trial(slow), 0, at(slow, 1)).has_value());
}

// While its task has no result there is no best to beat: nothing is stopped. Minimizing, the
// same curves negated give the same decisions (the forecast and the best are oriented).
TEST_F(PredictiveTest, nothing_is_stopped_before_the_task_has_a_result) {
  earlier_task(24);
  const std::int64_t fast = curve(1, 0.95, {0.78});
  const PredictiveJudge judge(table_, forecast_, false);
  EXPECT_FALSE(judge.chance(state_, state_.trial(fast), 0, at(fast, 1), std::nullopt).has_value());
  curve(1, 0.5, {0.6, 0.65, 0.7, 0.75});
  const std::optional<PredictiveJudge::Chance> c = judge.chance(state_, state_.trial(fast), 0, at(fast, 1), std::nullopt);
  ASSERT_TRUE(c.has_value());
  EXPECT_LT(c->probability, 1e-6);
  EXPECT_EQ(c->best, 0.75);
}

// The same curves for an objective to minimize (each value negated): the same trial is stopped,
// its forecast in the objective's own sign.
TEST(PredictiveMinimizeTest, a_minimized_objective_is_judged_as_its_negation) {
  lbo::testing::ScratchDir dir;
  std::string text = lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 40\n[[tasks]]\nname = \"b\"\nbudget = 40\n") +
                     "[early_stopping]\nrule = \"predictive\"\nmax_step = 27\n";
  text.replace(text.find("\"maximize\""), 10, "\"minimize\"");
  const lbo::jobs::JobSpec job = lbo::testing::job_from(text, dir.path());
  const RungTable table(*job.early_stopping, job.stopping_objective().direction(), 3);
  const CurveForecast forecast(job, table);
  RunState state = lbo::testing::started_state(job);
  const auto curve = [&](int task, double x, const std::vector<double>& values) {
    const std::int64_t id = lbo::testing::start_trial(state, task, Config{{x}});
    for (std::size_t s = 0; s < values.size(); ++s) {
      state.apply(TrialsReported{{{id, 1, kSteps[s], -values[s], "{}", 0.0}}, 0});
    }
    if (values.size() == 4) lbo::testing::end_attempt(state, id, lbo::testing::ok_with(-values[3]));
    return id;
  };
  for (int i = 0; i < 24; ++i) curve(0, (i + 0.5) / 24, slow_starter_curve((i + 0.5) / 24, i));
  curve(1, 0.5, {0.6, 0.65, 0.7, 0.75});
  const std::int64_t slow = curve(1, 0.05, {0.42}), fast = curve(1, 0.95, {0.78});
  const std::unique_ptr<StopRule> rule = make_stop_rule({table, forecast});
  EXPECT_FALSE(rule->decide(state, state.trial(slow), 0, *table.at_rung(state.trial(slow), 1)).has_value());
  const std::optional<StopDecision> stop = rule->decide(state, state.trial(fast), 0, *table.at_rung(state.trial(fast), 1));
  ASSERT_TRUE(stop.has_value());
  EXPECT_NEAR(stop->forecast, -0.615, 0.005);
  EXPECT_NE(stop->reason.find("to beat the task's best, -0.75"), std::string::npos) << stop->reason;
}

// min_probability sets the line. Task b's best is 0.752, a hair above its family's 0.75; a
// second trial at x = 0.5 is forecast near 0.75, a chance between 5% and a half: it goes on
// under the default 5% and is stopped under a min_probability of 60%.
TEST_F(PredictiveTest, min_probability_is_the_line_between_going_on_and_a_stop) {
  earlier_task(24);
  curve(1, 0.5, {0.6, 0.65, 0.7, 0.752});
  const std::int64_t twin = curve(1, 0.5, {0.6});
  const PredictiveJudge judge(table_, forecast_, false);
  const std::optional<PredictiveJudge::Chance> c = judge.chance(state_, state_.trial(twin), 0, at(twin, 1), std::nullopt);
  ASSERT_TRUE(c.has_value());
  EXPECT_GT(c->probability, 0.05);
  EXPECT_LT(c->probability, 0.5);
  EXPECT_FALSE(make_stop_rule(parts())->decide(state_, state_.trial(twin), 0, at(twin, 1)).has_value());
  lbo::jobs::EarlyStoppingSpec strict = *job_.early_stopping;
  strict.min_probability = 0.6;
  const RungTable strict_rungs(strict, lbo::jobs::Direction::maximize, 3);
  EXPECT_TRUE(make_stop_rule({strict_rungs, forecast_})->decide(state_, state_.trial(twin), 0, at(twin, 1)).has_value());
}

// In stop mode the rule runs through EarlyStopping as the others do: a report at a rung decides
// there, once; a stop carries its forecast to the outcome the master journals.
TEST_F(PredictiveTest, early_stopping_asks_the_rule_at_each_rung_reached) {
  earlier_task(24);
  curve(1, 0.5, {0.6, 0.65, 0.7, 0.75});
  const std::int64_t slow = lbo::testing::start_trial(state_, 1, Config{{0.05}});
  const std::int64_t fast = lbo::testing::start_trial(state_, 1, Config{{0.95}});
  EarlyStopping stopping(parts(), false);
  report(slow, 1, 0.42);
  report(fast, 1, 0.78);
  const std::vector<StopDecision> stops = stopping.after_reports(state_, {slow, fast});
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].trial, fast);
  report(slow, 2, 0.5);  // between rungs: nothing to decide
  EXPECT_TRUE(stopping.after_reports(state_, {slow}).empty());
}

// --sync: a decision within a round reads only the results from before the trial started
// (Trial::finals_before), so that a round resumed after some of its trials ended (their results
// applied, the others run again) decides as the round that ran through. A trial that started
// before its task's first result has no best to beat under --sync, and is judged without it.
TEST_F(PredictiveTest, sync_decisions_read_only_the_results_from_before_the_trial_started) {
  earlier_task(24);
  const std::int64_t fast = lbo::testing::start_trial(state_, 1, Config{{0.95}});
  EXPECT_EQ(state_.trial(fast).finals_before, 24);
  const std::int64_t full = curve(1, 0.5, {0.6, 0.65, 0.7, 0.75});  // a round-mate that ends first
  EXPECT_EQ(state_.trial(full).final_seq, 24);
  report(fast, 1, 0.78);
  const PredictiveJudge sync(table_, forecast_, true), async(table_, forecast_, false);
  EXPECT_EQ(sync.within_round(state_.trial(fast)), 24);
  EXPECT_FALSE(async.within_round(state_.trial(fast)).has_value());
  EXPECT_FALSE(sync.chance(state_, state_.trial(fast), 0, at(fast, 1), sync.within_round(state_.trial(fast))).has_value());
  EXPECT_TRUE(async.chance(state_, state_.trial(fast), 0, at(fast, 1), std::nullopt).has_value());
  // The curves too: 24 before it started, 25 now.
  EXPECT_EQ(forecast_.curves(state_, 0, 24), 24);
  EXPECT_EQ(forecast_.curves(state_, 0), 25);
  // A later trial, started after the full one ended, is judged under --sync.
  const std::int64_t later = curve(1, 0.95, {0.78});
  EXPECT_TRUE(sync.chance(state_, state_.trial(later), 0, at(later, 1), sync.within_round(state_.trial(later))).has_value());
}

namespace {

class PredictivePromotionTest : public PredictiveTest {
 protected:
  PredictivePromotionTest() : PredictiveTest("", "promotion") {}
};

}  // namespace

// Promotion mode: every trial pauses at its rungs; a paused trial is promoted when its chance
// of beating the task's best is at least min_probability, the likeliest first, whatever its
// value at the rung. The slow starter (0.42 at epoch 1, lower than the fast one's 0.78) is
// promoted; the fast one never is, and ends stopped with its chance in the reason once its
// task has nothing left to run.
TEST_F(PredictivePromotionTest, promotions_ask_the_forecast_not_the_rank_at_the_rung) {
  earlier_task(24);
  curve(1, 0.5, {0.6, 0.65, 0.7, 0.75});
  const std::int64_t slow = lbo::testing::start_trial(state_, 1, Config{{0.05}});
  const std::int64_t fast = lbo::testing::start_trial(state_, 1, Config{{0.95}});
  Promotions promotions(parts());
  report(slow, 1, 0.42);
  report(fast, 1, 0.78);
  const std::vector<StopDecision> pauses = promotions.after_reports(state_, {slow, fast});
  ASSERT_EQ(pauses.size(), 2u);
  for (const StopDecision& d : pauses) {
    EXPECT_TRUE(d.pause);
    EXPECT_TRUE(std::isfinite(d.forecast));
    lbo::workers::Outcome o;
    o.status = lbo::workers::TrialStatus::paused;
    o.objective = d.value;
    o.last_step = d.step;
    o.forecast = d.forecast;
    lbo::testing::end_attempt(state_, d.trial, o, "local:0", false);
  }
  const auto anything = [](int) { return true; };
  const auto idle = [](std::int64_t) { return false; };
  const std::optional<Promotion> p = promotions.promotion(state_, anything, idle);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->trial, slow);
  EXPECT_NE(p->reason.find("a probability of"), std::string::npos) << p->reason;
  EXPECT_NE(p->reason.find("at least 5.0%"), std::string::npos) << p->reason;
}

// model = "forecast": the model learns a stopped trial's forecast of its final value, not its
// value at the rung; "last" learns the value at the rung. A trial stopped without a forecast
// (none could be made) enters with its value at the rung under either.
TEST_F(PredictiveTest, model_forecast_teaches_the_policy_a_stopped_trials_forecast) {
  const std::int64_t full = curve(0, 0.5, {0.6, 0.65, 0.7, 0.75});
  const auto stopped = [&](double value, double forecast) {
    const std::int64_t id = lbo::testing::start_trial(state_, 0, Config{{0.1}});
    report(id, 1, value);
    lbo::workers::Outcome o;
    o.status = lbo::workers::TrialStatus::stopped;
    o.objective = value;
    o.last_step = 1;
    o.forecast = forecast;
    lbo::testing::end_attempt(state_, id, o);
    return id;
  };
  const std::int64_t judged = stopped(0.42, 0.88);
  const std::int64_t unjudged = stopped(0.5, std::nan(""));
  job_.policy.output_warping = lbo::jobs::OutputWarping::none;
  job_.early_stopping->model = lbo::jobs::CurveModel::forecast;
  const ModelData forecasts(job_, {});
  EXPECT_EQ(forecasts.values(state_, {full, judged, unjudged}, 0), (Eigen::Vector3d{0.75, 0.88, 0.5}));
  job_.early_stopping->model = lbo::jobs::CurveModel::last;
  const ModelData last(job_, {});
  EXPECT_EQ(last.values(state_, {full, judged, unjudged}, 0), (Eigen::Vector3d{0.75, 0.42, 0.5}));
}
