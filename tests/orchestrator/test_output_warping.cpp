// [policy] output_warping = "copula": the Gaussian copula transform against its closed form, and
// the run as the models see it through it.

#include <gtest/gtest.h>

#include <boost/math/distributions/normal.hpp>

#include <cmath>
#include <numbers>

#include "model_data.hpp"
#include "output_warping.hpp"
#include "test_support.hpp"

using namespace lbo::orchestrator;
using Warp = lbo::orchestrator::OutputWarping;

namespace {

// Φ, the standard normal CDF, by its closed form through erfc (independent of the quantile
// function the warping uses).
double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::numbers::sqrt2); }

Eigen::VectorXd vector(std::initializer_list<double> values) {
  Eigen::VectorXd y(static_cast<Eigen::Index>(values.size()));
  Eigen::Index i = 0;
  for (double v : values) y(i++) = v;
  return y;
}

}  // namespace

// Two values: δ = 1 / (4 · 2^¼ · √(π ln 2)); the lower one's CDF is 1/2 (z = 0), the upper one's
// is 1, winsorized to 1 − δ. A new value between them has the lower one's CDF, one below both 0,
// winsorized to δ.
TEST(OutputWarpingTest, copula_is_the_winsorized_empirical_cdf_through_the_normal_quantile) {
  const Warp warp(lbo::jobs::OutputWarping::copula, vector({3.0, 1.0}));
  const double delta = 1.0 / (4.0 * std::pow(2.0, 0.25) * std::sqrt(std::numbers::pi * std::log(2.0)));
  EXPECT_NEAR(warp(1.0), 0.0, 1e-12);
  EXPECT_NEAR(normal_cdf(warp(3.0)), 1.0 - delta, 1e-12);
  EXPECT_NEAR(warp(2.0), 0.0, 1e-12);
  EXPECT_NEAR(normal_cdf(warp(-7.0)), delta, 1e-12);
  EXPECT_NEAR(normal_cdf(warp(9.0)), 1.0 - delta, 1e-12);
  // n = 25: δ = 0.0352 < 1/25, so the lowest keeps its CDF of 1/25.
  Eigen::VectorXd y(25);
  for (Eigen::Index i = 0; i < 25; ++i) y(i) = static_cast<double>(i);
  const Eigen::VectorXd z = Warp(lbo::jobs::OutputWarping::copula, y)(y);
  EXPECT_NEAR(normal_cdf(z(0)), 1.0 / 25, 1e-12);
  EXPECT_NEAR(normal_cdf(z(12)), 13.0 / 25, 1e-12);
}

// Only the order counts: a heavy tail (50 among values below 1) and any increasing map of the
// values give the same warped values; ties share theirs; one value or none map to 0.
TEST(OutputWarpingTest, copula_keeps_the_order_and_nothing_else) {
  const Eigen::VectorXd tail = vector({0.1, 0.4, 50.0, 0.2, 0.3});
  const Eigen::VectorXd even = vector({0.1, 0.4, 0.5, 0.2, 0.3});
  const Eigen::VectorXd z = Warp(lbo::jobs::OutputWarping::copula, tail)(tail);
  EXPECT_TRUE(z.isApprox(Warp(lbo::jobs::OutputWarping::copula, even)(even), 1e-14));
  const Eigen::VectorXd exp_tail = tail.array().exp().matrix();
  EXPECT_TRUE(z.isApprox(Warp(lbo::jobs::OutputWarping::copula, exp_tail)(exp_tail), 1e-14));
  EXPECT_LT(z(0), z(3));
  EXPECT_LT(z(3), z(4));
  EXPECT_LT(z(4), z(1));
  EXPECT_LT(z(1), z(2));
  EXPECT_LT(z(2) - z(1), 1.0) << "the outlier is one rank above the next, no more";
  const Eigen::VectorXd ties = vector({2.0, 1.0, 2.0});
  const Eigen::VectorXd zt = Warp(lbo::jobs::OutputWarping::copula, ties)(ties);
  EXPECT_EQ(zt(0), zt(2));
  EXPECT_LT(zt(1), zt(0));
  EXPECT_EQ(Warp(lbo::jobs::OutputWarping::copula, vector({4.0}))(4.0), 0.0);
  EXPECT_EQ(Warp(lbo::jobs::OutputWarping::none, tail)(tail), tail);
}

// copula_below_median on nine values with a far poor one: the median is 4 and q₇₅ is 6, so
// s = 2 / Φ⁻¹(¾) above the median; below it, the copula's value (the lowest's CDF is 1/9, above
// δ = 0.055 for n = 9). A poor tail ten times as far changes nothing, a best value ten times
// as far is ten times as far.
TEST(OutputWarpingTest, copula_below_median_ranks_the_poor_half_and_scales_the_better_half) {
  constexpr auto kind = lbo::jobs::OutputWarping::copula_below_median;
  const Eigen::VectorXd y = vector({-1000.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0});
  const Eigen::VectorXd z = Warp(kind, y)(y);
  const double s = 2.0 / 0.6744897501960817;  // Φ⁻¹(¾)
  EXPECT_NEAR(normal_cdf(z(0)), 1.0 / 9, 1e-12);
  EXPECT_NEAR(normal_cdf(z(1)), 2.0 / 9, 1e-12);
  EXPECT_NEAR(normal_cdf(z(3)), 4.0 / 9, 1e-12);
  EXPECT_EQ(z(4), 0.0);
  for (Eigen::Index i = 5; i < 9; ++i) EXPECT_NEAR(z(i), (y(i) - 4.0) / s, 1e-12) << i;
  Eigen::VectorXd far_poor = y;
  far_poor(0) = -10000.0;
  EXPECT_TRUE(Warp(kind, far_poor)(far_poor).isApprox(z, 1e-14));
  Eigen::VectorXd far_best = y;
  far_best(8) = 44.0;
  EXPECT_NEAR(Warp(kind, far_best)(far_best)(8), 40.0 / s, 1e-12);
  // A new value is warped as the fitted ones are: between two poor ones, the lower one's CDF;
  // beyond the best, on the same line.
  const Warp warp(kind, y);
  EXPECT_EQ(warp(1.5), z(1));
  EXPECT_NEAR(warp(10.0), 6.0 / s, 1e-12);
}

// The better half tied (a table's plateau): the best sits at Φ⁻¹(1 − δ), where the copula puts
// it; all tied at the top: the whole better half at 0. Warped values keep the values' order.
TEST(OutputWarpingTest, copula_below_median_with_ties_keeps_the_order) {
  constexpr auto kind = lbo::jobs::OutputWarping::copula_below_median;
  const Eigen::VectorXd y = vector({1.0, 2.0, 3.0, 3.0, 3.0, 3.0, 3.0, 9.0});
  const Eigen::VectorXd z = Warp(kind, y)(y);
  const double delta = 1.0 / (4.0 * std::pow(8.0, 0.25) * std::sqrt(std::numbers::pi * std::log(8.0)));
  EXPECT_NEAR(normal_cdf(z(7)), 1.0 - delta, 1e-12);
  for (Eigen::Index i = 2; i < 7; ++i) EXPECT_EQ(z(i), 0.0);
  EXPECT_LT(z(0), z(1));
  EXPECT_LT(z(1), 0.0);
  const Eigen::VectorXd top = vector({1.0, 2.0, 3.0, 3.0, 3.0});
  EXPECT_EQ(Warp(kind, top)(top), vector({Warp(kind, top)(1.0), Warp(kind, top)(2.0), 0.0, 0.0, 0.0}));
  Eigen::VectorXd mixed(40);
  for (Eigen::Index i = 0; i < 40; ++i) mixed(i) = std::sin(1.7 * static_cast<double>(i)) * std::exp(0.1 * static_cast<double>(i));
  const Eigen::VectorXd zm = Warp(kind, mixed)(mixed);
  for (Eigen::Index i = 0; i < 40; ++i) {
    for (Eigen::Index j = 0; j < 40; ++j) {
      if (mixed(i) < mixed(j)) {
        EXPECT_LE(zm(i), zm(j)) << i << " " << j;
      }
    }
  }
  EXPECT_EQ(Warp(kind, vector({4.0}))(4.0), 0.0);
}

// Yeo–Johnson against its closed forms: ((z + 1)^λ − 1) / λ at z ≥ 0, ln(z + 1) at λ = 0,
// −((1 − z)^(2−λ) − 1) / (2 − λ) below 0, −ln(1 − z) at λ = 2, the identity at λ = 1.
TEST(OutputWarpingTest, yeo_johnson_is_its_closed_form_on_both_sides_of_zero) {
  EXPECT_NEAR(yeo_johnson(3.0, 0.5), 2.0, 1e-12);
  EXPECT_NEAR(yeo_johnson(3.0, 0.0), std::log(4.0), 1e-12);
  EXPECT_NEAR(yeo_johnson(3.0, 2.0), 7.5, 1e-12);
  EXPECT_NEAR(yeo_johnson(-3.0, 1.5), -2.0, 1e-12);
  EXPECT_NEAR(yeo_johnson(-3.0, 2.0), -std::log(4.0), 1e-12);
  EXPECT_NEAR(yeo_johnson(-3.0, 0.0), -7.5, 1e-12);
  EXPECT_NEAR(yeo_johnson(3.0, 1e-10), std::log(4.0), 1e-9);  // continuous through the logs
  EXPECT_NEAR(yeo_johnson(-3.0, 2.0 - 1e-10), -std::log(4.0), 1e-9);
  for (const double z : {-2.5, -0.1, 0.0, 0.7, 4.0}) EXPECT_NEAR(yeo_johnson(z, 1.0), z, 1e-12) << z;
}

// The log slope, which the likelihood's Jacobian sums, against central differences of the
// transform, near the logs (λ = 0, 2) and away from them.
TEST(OutputWarpingTest, yeo_johnson_log_slope_is_the_derivative_of_the_transform) {
  constexpr double h = 1e-6;
  for (const double lambda : {-0.7, 0.0, 0.4, 1.0, 1.9, 2.0, 2.6}) {
    for (const double z : {-3.0, -0.4, 0.3, 2.5}) {
      const double slope = (yeo_johnson(z + h, lambda) - yeo_johnson(z - h, lambda)) / (2 * h);
      EXPECT_NEAR(yeo_johnson_log_slope(z, lambda), std::log(slope), 1e-7) << lambda << " " << z;
    }
  }
}

// The fitted exponent: on a sample symmetric about 0 the likelihood is symmetric about λ = 1
// (ψ_λ(−z) = −ψ_{2−λ}(z)), and the identity is kept exactly; on a sample with a heavy poor tail
// (as a CRPS a hundred times its median, oriented larger is better) λ > 1, the tail comes
// closer, and no exponent of a grid over [−1, 3] is more likely than the fitted one.
TEST(OutputWarpingTest, yeo_johnson_keeps_the_identity_on_normal_values_and_tames_a_heavy_poor_tail) {
  Eigen::VectorXd normal(41);
  for (Eigen::Index i = 0; i < 41; ++i) {
    normal(i) = 3.0 * boost::math::quantile(boost::math::normal(), (static_cast<double>(i) + 0.5) / 41.0);
  }
  EXPECT_EQ(yeo_johnson_exponent(normal), 1.0);
  const Warp identity(lbo::jobs::OutputWarping::yeo_johnson, normal);
  const double sd = std::sqrt((normal.array() - normal.mean()).square().mean());
  for (Eigen::Index i = 0; i < 41; ++i) EXPECT_NEAR(identity(normal(i)), normal(i) / sd, 1e-12) << i;

  Eigen::VectorXd y(30);
  for (Eigen::Index i = 0; i < 30; ++i) y(i) = -(0.05 + 0.01 * static_cast<double>(i));
  y(3) = -52.0;
  y(17) = -9.0;
  const Eigen::VectorXd z = (y.array() - y.mean()) / std::sqrt((y.array() - y.mean()).square().mean());
  const double lambda = yeo_johnson_exponent(z);
  EXPECT_GT(lambda, 1.5);
  for (double grid = -1.0; grid <= 3.0; grid += 0.05) {
    EXPECT_GE(yeo_johnson_log_likelihood(z, lambda), yeo_johnson_log_likelihood(z, grid) - 1e-9) << grid;
  }
  const Warp warp(lbo::jobs::OutputWarping::yeo_johnson, y);
  const Eigen::VectorXd w = warp(y);
  // The outlier's distance to the poorest regular value, in units of the regular values' spread,
  // shrinks.
  EXPECT_LT((w(29) - w(3)) / (w(0) - w(29)), (y(29) - y(3)) / (y(0) - y(29)));
  for (Eigen::Index i = 0; i < 30; ++i) {
    for (Eigen::Index j = 0; j < 30; ++j) {
      if (y(i) < y(j)) {
        EXPECT_LT(w(i), w(j)) << i << " " << j;
      }
    }
  }
  EXPECT_LT(warp(-100.0), w(3));  // a new value beyond the fitted ones keeps its place
  EXPECT_GT(warp(0.0), w(0));
  EXPECT_EQ(Warp(lbo::jobs::OutputWarping::yeo_johnson, vector({4.0, 4.0}))(4.0), 0.0);
  EXPECT_EQ(Warp(lbo::jobs::OutputWarping::yeo_johnson, vector({4.0}))(5.0), 0.0);
}

// With output_warping = "copula" the fit's data are each task's results warped together (a
// warm-start task's too, minimize negated first), and a task's batch sees the same values.
TEST(OutputWarpingTest, the_models_see_each_tasks_results_warped_and_the_batches_alike) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = lbo::testing::job_from(
      lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 5\n", "",
                             "surrogate = \"gp\"\noutput_warping = \"copula\""),
      dir.path());
  ASSERT_EQ(job.policy.output_warping, lbo::jobs::OutputWarping::copula);
  RunState state = lbo::testing::started_state(job);
  const std::vector<double> objectives = {0.3, 9.0, 0.1, 0.2};
  for (double v : objectives) {
    const std::int64_t id = lbo::testing::start_trial(state, 0, {{v / 10}});
    lbo::testing::end_attempt(state, id, lbo::testing::ok_with(v));
  }
  lbo::testing::start_trial(state, 0, {{0.5}});  // running: not in the data
  WarmTask warm{"earlier.csv:a", {{{0.1}}, {{0.2}}, {{0.3}}}, {5.0, 1.0, 100.0}, lbo::jobs::Direction::minimize};
  const ModelData data(job, {warm});
  const FitRequest fit = data.training_data(state);
  ASSERT_EQ(fit.data.tasks.size(), 2u);
  const Eigen::VectorXd raw = vector({0.3, 9.0, 0.1, 0.2});
  const Eigen::VectorXd expected = Warp(lbo::jobs::OutputWarping::copula, raw)(raw);
  EXPECT_TRUE(fit.data.tasks[1].y.isApprox(expected, 1e-14));
  EXPECT_NEAR(normal_cdf(fit.data.tasks[1].y(2)), 1.0 / 4, 1e-12);  // the lowest of four
  // The warm task minimized: 1 is its best, 100 its worst.
  const Eigen::VectorXd warm_y = fit.data.tasks[0].y;
  EXPECT_GT(warm_y(1), warm_y(0));
  EXPECT_GT(warm_y(0), warm_y(2));
  EXPECT_TRUE(warm_y.isApprox(Warp(lbo::jobs::OutputWarping::copula, vector({-5.0, -1.0, -100.0}))(vector({-5.0, -1.0, -100.0}))));
  const TaskTrials trials = data.trials_of(state, 0, 0);
  for (std::size_t i = 0; i < objectives.size(); ++i) {
    EXPECT_DOUBLE_EQ(trials.value(state.trial(static_cast<std::int64_t>(i))), expected(static_cast<Eigen::Index>(i)));
  }
  EXPECT_EQ(data.raw_values(state, {0, 1}, 0), vector({0.3, 9.0}));
}

// A batch's view through a memo (one per model task, kept by the caller between proposals):
// the warping is the one fitted to the task's results now. It is fitted again when a result
// came, and kept (the same object) while none did.
TEST(OutputWarpingTest, a_memo_keeps_the_warping_until_the_tasks_results_change) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = lbo::testing::job_from(
      lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 6\n", "", "surrogate = \"gp\"\noutput_warping = \"copula_below_median\""),
      dir.path());
  ASSERT_EQ(job.policy.output_warping, lbo::jobs::OutputWarping::copula_below_median);
  constexpr auto kind = lbo::jobs::OutputWarping::copula_below_median;
  RunState state = lbo::testing::started_state(job);
  for (double v : {0.3, 9.0, 0.1, 0.2}) {
    const std::int64_t id = lbo::testing::start_trial(state, 0, {{v / 10}});
    lbo::testing::end_attempt(state, id, lbo::testing::ok_with(v));
  }
  const std::int64_t running = lbo::testing::start_trial(state, 0, {{0.5}});
  const ModelData data(job, {});
  ModelData::WarpingMemo memo;
  const auto check = [&](const Eigen::VectorXd& raw) {
    const TaskTrials trials = data.trials_of(state, 0, 0, &memo);
    const Eigen::VectorXd expected = Warp(kind, raw)(raw);
    for (Eigen::Index i = 0; i < raw.size(); ++i) {
      EXPECT_DOUBLE_EQ(trials.value(state.trial(i)), expected(i)) << i;
      EXPECT_DOUBLE_EQ(trials.value(state.trial(i)), data.trials_of(state, 0, 0).value(state.trial(i))) << i;
    }
  };
  check(vector({0.3, 9.0, 0.1, 0.2}));  // the test job maximizes
  const auto fitted = memo.warping;
  ASSERT_NE(fitted, nullptr);
  check(vector({0.3, 9.0, 0.1, 0.2}));
  EXPECT_EQ(memo.warping, fitted);
  lbo::testing::end_attempt(state, running, lbo::testing::ok_with(0.05));
  check(vector({0.3, 9.0, 0.1, 0.2, 0.05}));
  EXPECT_NE(memo.warping, fitted);
  EXPECT_EQ(memo.raw.size(), 5);
}

// With several objectives a warm-start task's results are scalarized as a run task's are
// (ParEGO), with weights of its own: a result that another dominates is below it, also where
// their first objectives tie (the first objective alone would make them equal); two warm tasks
// of the same results get weights of their own; and the model is the same each time it is built
// from the same job (a function of the seed, so resumes see the same values).
TEST(OutputWarpingTest, a_warm_task_of_several_objectives_is_learned_scalarized_by_weights_of_its_own) {
  lbo::testing::ScratchDir dir;
  std::string text = lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 5\n", "",
                                            "surrogate = \"gp\"\noutput_warping = \"none\"");
  const std::string single = "direction = \"maximize\"\n";
  text.replace(text.find(single), single.size(),
               "objectives = [{ name = \"value\", direction = \"maximize\" }, { name = \"cost\", direction = \"minimize\" }]\n");
  const lbo::jobs::JobSpec job = lbo::testing::job_from(text, dir.path());
  ASSERT_EQ(job.objective.several.size(), 2u);
  const RunState state = lbo::testing::started_state(job);
  // (value, cost): 0 dominates 3 (equal value, less cost) and 2; 1 is the front's other end.
  WarmTask warm{"earlier.csv:a", {{{0.1}}, {{0.2}}, {{0.3}}, {{0.4}}}, {5.0, 9.0, 4.0, 5.0}, lbo::jobs::Direction::maximize};
  warm.values = {{5.0, 1.0}, {9.0, 8.0}, {4.0, 6.0}, {5.0, 7.0}};
  const FitRequest fit = ModelData(job, {warm, warm}).training_data(state);
  ASSERT_EQ(fit.data.tasks.size(), 3u);
  for (std::size_t k = 0; k < 2; ++k) {
    const Eigen::VectorXd& y = fit.data.tasks[k].y;
    ASSERT_EQ(y.size(), 4);
    EXPECT_GT(y(0), y(3)) << "warm task " << k << ": the first objectives tie, the cost decides";
    EXPECT_GT(y(0), y(2)) << "warm task " << k;
    EXPECT_LE(y.maxCoeff(), 0.0);
    EXPECT_GE(y.minCoeff(), -(1 + Scalarization::kRho));
  }
  EXPECT_FALSE(fit.data.tasks[0].y.isApprox(fit.data.tasks[1].y)) << "each warm task draws weights of its own";
  const FitRequest again = ModelData(job, {warm, warm}).training_data(state);
  EXPECT_EQ(again.data.tasks[0].y, fit.data.tasks[0].y);
  EXPECT_EQ(again.data.tasks[1].y, fit.data.tasks[1].y);
}
