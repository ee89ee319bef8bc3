#include "lbo/surrogate/gp.hpp"
#include "lbo/surrogate/surrogate.hpp"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>

#include "finite_difference.hpp"

using namespace lbo::surrogate;
using lbo::testing::numerical_gradient;
using lbo::testing::relative_error;

namespace {

Eigen::VectorXd theta_for(int d, double ls, double signal, double noise) {
  Eigen::VectorXd t(d + 2);
  t.head(d).setConstant(std::log(ls));
  t(d) = std::log(signal);
  t(d + 1) = std::log(noise);
  return t;
}

Observations smooth_data(int n, int d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Observations o{Eigen::MatrixXd(n, d), Eigen::VectorXd(n)};
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < d; ++j) o.X(i, j) = u(rng);
    o.y(i) = std::sin(6 * o.X(i, 0)) + (d > 1 ? 0.5 * o.X(i, 1) : 0.0);
  }
  return o;
}

}  // namespace

TEST(GpTest, matern52_known_values) {
  const Eigen::VectorXd theta = theta_for(2, 0.5, 2.0, 1e-3);
  Eigen::MatrixXd A(2, 2);
  A << 0.1, 0.2, 0.6, 0.2;  // distance 0.5 along x₁: r = 1
  const Eigen::MatrixXd K = matern52(A, A, theta);
  EXPECT_NEAR(K(0, 0), 2.0, 1e-12);
  const double r = 1.0, s5 = std::sqrt(5.0);
  EXPECT_NEAR(K(0, 1), 2.0 * (1 + s5 * r + 5.0 / 3.0 * r * r) * std::exp(-s5 * r), 1e-12);
  EXPECT_NEAR(K(0, 1), K(1, 0), 1e-15);
}

TEST(GpTest, posterior_matches_closed_form) {
  const Observations o = smooth_data(8, 2, 1);
  const Eigen::VectorXd theta = theta_for(2, 0.3, 1.5, 0.05);
  const auto post = make_gp_posterior(o.X, o.y, theta, Standardization{});
  Eigen::MatrixXd K = matern52(o.X, o.X, theta);
  K.diagonal().array() += 0.05;
  const Eigen::MatrixXd K_inv = K.inverse();
  const Eigen::MatrixXd test = Eigen::MatrixXd::Random(5, 2).cwiseAbs();
  const Eigen::MatrixXd Ks = matern52(test, o.X, theta);
  const Posterior p = post->predict(test);
  for (int i = 0; i < 5; ++i) {
    EXPECT_NEAR(p.mean(i), Ks.row(i).dot(K_inv * o.y), 1e-9);
    EXPECT_NEAR(p.var(i), 1.5 - Ks.row(i).dot(K_inv * Ks.row(i).transpose()), 1e-9);
  }
}

TEST(GpTest, objective_is_the_log_density_plus_prior) {
  const Observations o = smooth_data(7, 2, 2);
  const Eigen::VectorXd theta = theta_for(2, 0.4, 0.8, 0.02);
  Eigen::MatrixXd C = matern52(o.X, o.X, theta);
  C.diagonal().array() += 0.02;
  const Eigen::FullPivLU<Eigen::MatrixXd> lu(C);
  const double direct = -0.5 * 7 * std::log(2 * M_PI) - 0.5 * std::log(lu.determinant()) - 0.5 * o.y.dot(lu.solve(o.y));
  EXPECT_NEAR(gp_objective(o.X, o.y, theta, false).value, direct, 1e-9);
  double prior = 0;
  for (int i = 0; i < 2; ++i) prior += 3 * theta(i) - 6 * std::exp(theta(i));
  prior += -0.5 * theta(2) * theta(2) - 0.5 * std::pow((theta(3) - std::log(1e-2)) / 2, 2);
  EXPECT_NEAR(gp_objective(o.X, o.y, theta, true).value, direct + prior, 1e-9);
}

TEST(GpTest, leave_one_out_density_equals_predicting_each_point_from_the_others) {
  const Observations o = smooth_data(9, 2, 3);
  const Eigen::VectorXd theta = theta_for(2, 0.35, 1.2, 0.03);
  double direct = 0;
  for (Eigen::Index i = 0; i < o.y.size(); ++i) {
    std::vector<Eigen::Index> others;
    for (Eigen::Index j = 0; j < o.y.size(); ++j) {
      if (j != i) others.push_back(j);
    }
    const auto post = make_gp_posterior(o.X(others, Eigen::all), o.y(others), theta, Standardization{});
    const Posterior p = post->predict(o.X.row(i));
    // The held-out value is a noisy observation: its predictive variance includes σ_n².
    const double var = p.var(0) + 0.03, r = o.y(i) - p.mean(0);
    direct += -0.5 * (std::log(2 * M_PI * var) + r * r / var);
  }
  EXPECT_NEAR(loo_log_predictive(o.X, o.y, theta), direct, 1e-8);
  // A length-scale that fits the data predicts held-out points better than one far too short.
  EXPECT_GT(loo_log_predictive(o.X, o.y, theta), loo_log_predictive(o.X, o.y, theta_for(2, 0.01, 1.2, 0.03)));
}

TEST(GpTest, hyperparameter_gradients_match_finite_differences) {
  const Observations o = smooth_data(9, 3, 3);
  Eigen::VectorXd theta(5);
  theta << std::log(0.3), std::log(0.7), std::log(1.4), std::log(1.2), std::log(0.03);
  for (bool prior : {false, true}) {
    const GpObjective g = gp_objective(o.X, o.y, theta, prior);
    const Eigen::VectorXd numeric =
        numerical_gradient([&](const Eigen::VectorXd& t) { return gp_objective(o.X, o.y, t, prior).value; }, theta);
    EXPECT_LT(relative_error(g.gradient, numeric), 1e-6) << "prior " << prior;
  }
}

TEST(GpTest, predictive_gradients_match_finite_differences) {
  const Observations o = smooth_data(10, 2, 4);
  const auto post = make_gp_posterior(o.X, o.y, theta_for(2, 0.35, 1.0, 0.01), Standardization{});
  const Eigen::Vector2d x(0.37, 0.61);
  const PointPosterior p = post->predict_with_gradient(x);
  const Posterior q = post->predict(x.transpose());
  EXPECT_NEAR(p.mean, q.mean(0), 1e-10);
  EXPECT_NEAR(p.var, q.var(0), 1e-10);
  const auto mean_at = [&](const Eigen::VectorXd& v) { return post->predict(v.transpose()).mean(0); };
  const auto var_at = [&](const Eigen::VectorXd& v) { return post->predict(v.transpose()).var(0); };
  EXPECT_LT(relative_error(p.d_mean, numerical_gradient(mean_at, x)), 1e-6);
  EXPECT_LT(relative_error(p.d_var, numerical_gradient(var_at, x)), 1e-6);
}

TEST(GpTest, hallucinated_points_keep_the_mean_and_equal_adding_them_at_the_mean) {
  const Observations o = smooth_data(8, 2, 5);
  const Eigen::VectorXd theta = theta_for(2, 0.3, 1.0, 0.01);
  const auto post = make_gp_posterior(o.X, o.y, theta, Standardization{});
  Eigen::MatrixXd pending(2, 2);
  pending << 0.9, 0.1, 0.15, 0.85;
  const auto hallucinated = post->condition(pending, nullptr);
  const Eigen::MatrixXd test = Eigen::MatrixXd::Random(6, 2).cwiseAbs();
  EXPECT_LT((hallucinated->predict(test).mean - post->predict(test).mean).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_TRUE((hallucinated->predict(pending).var.array() < post->predict(pending).var.array()).all());
  Eigen::MatrixXd X(10, 2);
  X << o.X, pending;
  Eigen::VectorXd y(10);
  y << o.y, post->predict(pending).mean;
  const auto refit = make_gp_posterior(X, y, theta, Standardization{});
  EXPECT_LT((hallucinated->predict(test).var - refit->predict(test).var).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_LT((hallucinated->predict(test).mean - refit->predict(test).mean).cwiseAbs().maxCoeff(), 1e-9);
}

TEST(GpTest, conditioning_on_real_values_equals_refitting) {
  const Observations o = smooth_data(10, 2, 6);
  const Eigen::VectorXd theta = theta_for(2, 0.3, 1.0, 0.01);
  const auto first = make_gp_posterior(o.X.topRows(7), o.y.head(7), theta, Standardization{});
  const Eigen::VectorXd rest = o.y.tail(3);
  const auto extended = first->condition(o.X.bottomRows(3), &rest);
  const auto refit = make_gp_posterior(o.X, o.y, theta, Standardization{});
  const Eigen::MatrixXd test = Eigen::MatrixXd::Random(5, 2).cwiseAbs();
  EXPECT_LT((extended->predict(test).mean - refit->predict(test).mean).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_LT((extended->predict(test).var - refit->predict(test).var).cwiseAbs().maxCoeff(), 1e-9);
}

TEST(GpTest, fit_learns_a_smooth_function_and_stays_uncertain_far_away) {
  const Observations o = smooth_data(25, 1, 7);
  GaussianProcess gp;
  gp.fit(o, 11);
  const auto post = gp.posterior();
  Eigen::MatrixXd test(3, 1);
  test << 0.2, 0.5, 0.8;
  const Posterior p = post->predict(test);
  for (int i = 0; i < 3; ++i) {
    const double truth = std::sin(6 * test(i, 0));
    EXPECT_NEAR(post->standardization().invert(p.mean(i)), truth, 0.1) << test(i, 0);
  }
  // Two points only: no collapse to zero variance between them.
  GaussianProcess few;
  Observations two{Eigen::MatrixXd(2, 1), Eigen::VectorXd(2)};
  two.X << 0.1, 0.9;
  two.y << 1.0, -1.0;
  few.fit(two, 3);
  Eigen::MatrixXd middle(1, 1);
  middle << 0.5;
  EXPECT_GT(few.posterior()->predict(middle).var(0), 0.05);
  EXPECT_TRUE(few.theta().allFinite());
}

TEST(GpTest, surrogate_refits_only_tasks_whose_data_changed) {
  GpSurrogate gp;
  TaskData data{{smooth_data(6, 2, 8), smooth_data(7, 2, 9)}};
  gp.fit(data, 1);
  const auto first0 = gp.posterior(0), first1 = gp.posterior(1);
  const Observations more = smooth_data(9, 2, 10);
  data.tasks[1] = more;
  gp.fit(data, 2);
  EXPECT_EQ(gp.posterior(0), first0);  // the same object: not refitted
  EXPECT_NE(gp.posterior(1), first1);
  EXPECT_EQ(gp.theta(1).size(), 4);
}

TEST(GpTest, restored_state_predicts_and_refits_like_the_original) {
  TaskData first{{smooth_data(8, 2, 11), smooth_data(6, 2, 12)}};
  TaskData second = first;
  second.tasks[0] = smooth_data(10, 2, 11);
  GpSurrogate original;
  original.fit(first, 3);
  GpSurrogate restored;
  restored.restore(original.state(), first);
  const Eigen::MatrixXd test = Eigen::MatrixXd::Random(5, 2).cwiseAbs();
  for (int t = 0; t < 2; ++t) EXPECT_EQ(restored.predict(t, test).mean, original.predict(t, test).mean);
  original.fit(second, 4);
  restored.fit(second, 4);
  EXPECT_EQ(restored.theta(0), original.theta(0));
  EXPECT_EQ(restored.theta(1), original.theta(1));
  EXPECT_EQ(restored.predict(1, test).var, original.predict(1, test).var);
}
