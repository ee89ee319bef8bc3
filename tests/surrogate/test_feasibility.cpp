// Feasibility: the Laplace GP classifier against a one-trial case solved by hand, its mode's
// fixed point, its gradient by finite differences, a known failure region, and what one task's
// failures tell another.
#include "lbo/surrogate/feasibility.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "finite_difference.hpp"
#include "test_data.hpp"
#include "lbo/surrogate/batch.hpp"
#include "lbo/surrogate/gp.hpp"
#include "lbo/surrogate/local_penalty.hpp"

using namespace lbo::surrogate;

namespace {

double logistic(double z) { return 1 / (1 + std::exp(-z)); }

double matern(double r, double l) {
  const double s = std::sqrt(5.0) * r / l;
  return (1 + s + s * s / 3) * std::exp(-s);
}

// A g × g grid over the unit square; a point fails where x0 + x1 > 1.3.
FeasibilityData corner_grid(int g, int task) {
  FeasibilityData d;
  d.x.resize(g * g, 2);
  for (int i = 0; i < g; ++i) {
    for (int j = 0; j < g; ++j) {
      const Eigen::Index r = i * g + j;
      d.x(r, 0) = (i + 0.5) / g;
      d.x(r, 1) = (j + 0.5) / g;
      d.task.push_back(task);
      d.ok.push_back(d.x(r, 0) + d.x(r, 1) > 1.3 ? 0 : 1);
    }
  }
  return d;
}

FeasibilityData joined(FeasibilityData a, const FeasibilityData& b) {
  const Eigen::Index n = a.x.rows();
  a.x.conservativeResize(n + b.x.rows(), Eigen::NoChange);
  a.x.bottomRows(b.x.rows()) = b.x;
  a.task.insert(a.task.end(), b.task.begin(), b.task.end());
  a.ok.insert(a.ok.end(), b.ok.begin(), b.ok.end());
  return a;
}

Eigen::VectorXd point(double a, double b) { return Eigen::Vector2d(a, b); }

}  // namespace

// One failed trial: the mode g solves −σ(g + m) = g/k (k = σ_f²), the evidence is
// log σ(−(g + m)) − g²/(2k) − ½ log(1 + k w), and at the trial the latent is N(g + m, k/(1 + k w)).
TEST(FeasibilityTest, one_failed_trial_matches_the_scalar_laplace_approximation) {
  FeasibilityData d;
  d.x = Eigen::MatrixXd::Constant(1, 2, 0.5);
  d.task = {0};
  d.ok = {0};
  const FeasibilityHyper hyper{0.3, 4.0, 1.0};
  const Feasibility model(d, hyper);
  const double m = std::log(1.0 / 2.0);  // (0 successes + 1) / (1 failure + 1)
  EXPECT_NEAR(model.mean(), m, 1e-15);
  double lo = -50, hi = 0;  // the root of h(g) = −σ(g + m) − g/k, decreasing in g
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (-logistic(mid + m) - mid / hyper.amplitude > 0 ? lo : hi) = mid;
  }
  const double g = 0.5 * (lo + hi);
  const double pi = logistic(g + m);
  const double w = pi * (1 - pi);
  EXPECT_NEAR(model.mode()(0), g + m, 1e-9);
  EXPECT_NEAR(model.log_evidence(), std::log(1 - pi) - g * g / (2 * hyper.amplitude) - 0.5 * std::log(1 + hyper.amplitude * w),
              1e-9);
  const auto [mean, var] = model.latent(point(0.5, 0.5), 0);
  EXPECT_NEAR(mean, g + m, 1e-9);
  EXPECT_NEAR(var, hyper.amplitude / (1 + hyper.amplitude * w), 1e-9);
  // MacKay's probit average of the logistic.
  EXPECT_NEAR(model.log_probability(point(0.5, 0.5), 0), std::log(logistic(mean / std::sqrt(1 + std::numbers::pi * var / 8))),
              1e-12);
}

// The mode is the fixed point f − m = K ∇log p(y | f) (R&W eq. 3.17), K built here by hand.
TEST(FeasibilityTest, the_mode_is_the_fixed_point_of_the_laplace_equations) {
  const FeasibilityData d = joined(corner_grid(5, 0), corner_grid(4, 1));
  const FeasibilityHyper hyper{0.25, 3.0, 0.6};
  const Feasibility model(d, hyper);
  const Eigen::Index n = d.x.rows();
  Eigen::MatrixXd K(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < n; ++j) {
      K(i, j) = hyper.amplitude * matern((d.x.row(i) - d.x.row(j)).norm(), hyper.lengthscale) *
                (d.task[i] == d.task[j] ? 1.0 : hyper.task_correlation);
    }
  }
  const Eigen::VectorXd f = model.mode();
  Eigen::VectorXd grad(n);
  for (Eigen::Index i = 0; i < n; ++i) grad(i) = (d.ok[i] ? 1.0 : 0.0) - logistic(f(i));
  EXPECT_LT((f.array() - model.mean() - (K * grad).array()).abs().maxCoeff(), 1e-8);
}

TEST(FeasibilityTest, log_probability_gradient_matches_finite_differences) {
  const FeasibilityData d = joined(corner_grid(5, 0), corner_grid(3, 2));
  const Feasibility model(d, FeasibilityHyper{0.3, 4.0, 0.7});
  for (const Eigen::VectorXd& x : {point(0.31, 0.77), point(0.9, 0.6), point(0.05, 0.12), point(0.7, 0.7)}) {
    for (int task : {0, 2, 5}) {
      Eigen::VectorXd g;
      model.log_probability(x, task, &g);
      const Eigen::VectorXd numeric = lbo::testing::numerical_gradient(
          [&](const Eigen::VectorXd& y) { return model.log_probability(y, task); }, x);
      EXPECT_LT(lbo::testing::relative_error(g, numeric), 1e-6) << "task " << task << " at " << x.transpose();
    }
  }
}

TEST(FeasibilityTest, batch_predictions_equal_the_pointwise_ones) {
  const Feasibility model(corner_grid(6, 0), FeasibilityHyper{0.2, 8.0, 1.0});
  Eigen::MatrixXd X(3, 2);
  X << 0.1, 0.2, 0.95, 0.9, 0.6, 0.65;
  const Eigen::VectorXd batch = model.log_probabilities(X, 0);
  for (Eigen::Index i = 0; i < 3; ++i) EXPECT_NEAR(batch(i), model.log_probability(X.row(i).transpose(), 0), 1e-12);
}

TEST(FeasibilityTest, nothing_to_learn_without_a_failure) {
  FeasibilityData d = corner_grid(4, 0);
  std::fill(d.ok.begin(), d.ok.end(), 1);
  EXPECT_EQ(Feasibility::fit(d), nullptr);
}

// A fit on a grid recovers the failure region: a fresh grid's points far from the boundary are
// classified right, and the corner's probability is low, the opposite corner's high.
TEST(FeasibilityTest, fit_recovers_a_known_failure_region) {
  const auto model = Feasibility::fit(corner_grid(8, 0));
  ASSERT_NE(model, nullptr);
  EXPECT_LT(std::exp(model->log_probability(point(0.95, 0.95), 0)), 0.15);
  EXPECT_GT(std::exp(model->log_probability(point(0.1, 0.1), 0)), 0.85);
  int right = 0, total = 0;
  for (int i = 0; i < 20; ++i) {
    for (int j = 0; j < 20; ++j) {
      const double a = (i + 0.25) / 20, b = (j + 0.75) / 20;
      if (std::abs(a + b - 1.3) < 0.15) continue;  // near the boundary either answer is fair
      ++total;
      right += (std::exp(model->log_probability(point(a, b), 0)) > 0.5) == (a + b <= 1.3) ? 1 : 0;
    }
  }
  EXPECT_GT(right, 0.95 * total) << right << " of " << total;
}

// A task with a few successes of its own learns the failure region from an earlier task that
// mapped it; a task whose own trials succeed there is not held to the earlier task's failures.
TEST(FeasibilityTest, failures_carry_over_to_a_task_that_has_not_met_them) {
  FeasibilityData later;
  later.x.resize(3, 2);
  later.x << 0.1, 0.2, 0.3, 0.1, 0.2, 0.4;
  later.task = {1, 1, 1};
  later.ok = {1, 1, 1};
  const auto alike = Feasibility::fit(joined(corner_grid(8, 0), later));
  ASSERT_NE(alike, nullptr);
  EXPECT_GE(alike->hyper().task_correlation, 0.5);
  EXPECT_LT(std::exp(alike->log_probability(point(0.95, 0.95), 1)), 0.3);
  EXPECT_GT(std::exp(alike->log_probability(point(0.1, 0.1), 1)), 0.7);

  FeasibilityData unlike = corner_grid(8, 1);
  std::fill(unlike.ok.begin(), unlike.ok.end(), 1);
  const auto model = Feasibility::fit(joined(corner_grid(8, 0), unlike));
  ASSERT_NE(model, nullptr);
  EXPECT_LT(model->hyper().task_correlation, 0.9);
  EXPECT_GT(std::exp(model->log_probability(point(0.95, 0.95), 1)), 0.6);
  EXPECT_LT(std::exp(model->log_probability(point(0.95, 0.95), 0)), 0.3);
}

TEST(FeasibilityTest, a_large_fit_keeps_its_failures_and_spreads_its_successes) {
  const FeasibilityData d = corner_grid(20, 0);  // 400 trials
  const auto failed = static_cast<int>(std::count(d.ok.begin(), d.ok.end(), 0));
  const auto model = Feasibility::fit(d);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->points(), Feasibility::kMaxPoints);
  EXPECT_EQ(model->failures(), std::min(failed, Feasibility::kMaxPoints / 2));
  EXPECT_LT(std::exp(model->log_probability(point(0.95, 0.95), 0)), 0.15);
  EXPECT_GT(std::exp(model->log_probability(point(0.1, 0.1), 0)), 0.85);
}

// A 1-d GP peaked at 0.5 where trials around 0.5 failed: weighed by the probability of success,
// each candidate's UCB is LocalPenalty::apply(UCB, log p), and the maximum, ranked or refined by
// L-BFGS-B, leaves the failure region.
TEST(FeasibilityTest, a_batch_weighs_its_acquisition_by_the_probability_of_success) {
  const auto posterior = lbo::testing::peaked_at_half();
  FeasibilityData d;
  d.x.resize(9, 1);
  d.x << 0.05, 0.15, 0.25, 0.35, 0.45, 0.5, 0.55, 0.75, 0.95;
  d.task.assign(9, 0);
  d.ok = {1, 1, 1, 1, 0, 0, 0, 1, 1};
  const auto feasibility = Feasibility::fit(d);
  ASSERT_NE(feasibility, nullptr);
  const BoxSpace line({{CoordinateGroup::Kind::continuous, 0, 1, 0}});
  Eigen::MatrixXd C(201, 1);
  for (Eigen::Index i = 0; i < C.rows(); ++i) C(i, 0) = 0.005 * static_cast<double>(i);
  const AcquisitionParams params{.ucb_beta = 0.04, .xi = 0.0, .incumbent = 1.0};
  BatchProposer plain(posterior, Eigen::MatrixXd(0, 1), line, MaximizerOptions{.candidates = 201, .refine = 0}, C);
  BatchProposer weighed(posterior, Eigen::MatrixXd(0, 1), line, MaximizerOptions{.candidates = 201, .refine = 0}, C);
  weighed.weigh_feasibility(feasibility, 0);
  const std::vector<Maximum> before = plain.next(AcquisitionKind::ucb, params, Refinement::none);
  const std::vector<Maximum> after = weighed.next(AcquisitionKind::ucb, params, Refinement::none);
  ASSERT_EQ(before.size(), after.size());
  EXPECT_NEAR(before.front().x(0), 0.5, 0.03);
  for (const Maximum& m : after) {
    const auto same = std::find_if(before.begin(), before.end(), [&](const Maximum& b) { return b.x == m.x; });
    ASSERT_NE(same, before.end());
    EXPECT_NEAR(m.value, LocalPenalty::apply(same->value, feasibility->log_probability(m.x, 0)), 1e-12);
  }
  EXPECT_GT(std::abs(after.front().x(0) - 0.5), 0.08) << after.front().x(0);
  BatchProposer refined(posterior, Eigen::MatrixXd(0, 1), line, MaximizerOptions{.candidates = 64, .refine = 3}, C);
  refined.weigh_feasibility(feasibility, 0);
  EXPECT_GT(std::abs(refined.next(AcquisitionKind::ucb, params).front().x(0) - 0.5), 0.08);
}
