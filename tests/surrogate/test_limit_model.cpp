// LimitModel: log Φ against erfc and its tail series, P(low ≤ c ≤ high) against the closed form
// under the model's own posterior, its gradient by finite differences (one-sided and two-sided,
// below and above the interval), a known limit learned from values, and JointFeasibility's sum.
#include "lbo/surrogate/limit_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "finite_difference.hpp"

using namespace lbo::surrogate;

namespace {

double phi_cdf(double u) { return 0.5 * std::erfc(-u / std::numbers::sqrt2); }

// The distance from the square's centre on a g × g grid: a limit `radius <= r` is a disc.
LimitData radius_grid(int g) {
  LimitData d;
  d.x.resize(g * g, 2);
  d.value.resize(g * g);
  for (int i = 0; i < g; ++i) {
    for (int j = 0; j < g; ++j) {
      const Eigen::Index r = i * g + j;
      d.x(r, 0) = (i + 0.5) / g;
      d.x(r, 1) = (j + 0.5) / g;
      d.value(r) = std::hypot(d.x(r, 0) - 0.5, d.x(r, 1) - 0.5);
    }
  }
  return d;
}

}  // namespace

TEST(LimitModelTest, log_normal_cdf_matches_erfc_and_its_tail_series) {
  for (double u : {-29.0, -12.0, -3.0, -0.5, 0.0, 1.5, 6.0}) {
    double slope = 0;
    EXPECT_NEAR(log_normal_cdf(u, &slope), std::log(phi_cdf(u)), 1e-12 * std::max(1.0, std::abs(std::log(phi_cdf(u))))) << u;
    const double h = 1e-6;
    EXPECT_NEAR(slope, (log_normal_cdf(u + h) - log_normal_cdf(u - h)) / (2 * h), 1e-6 * std::max(1.0, std::abs(slope))) << u;
  }
  // Past the switch to the series, against erfc where it still holds (down to about −37).
  for (double u : {-30.5, -33.0, -36.0}) EXPECT_NEAR(log_normal_cdf(u), std::log(phi_cdf(u)), 1e-10 * std::abs(u * u)) << u;
  // Continuous across the switch, and finite far beyond erfc's underflow.
  EXPECT_NEAR(log_normal_cdf(-30.0 + 1e-9), log_normal_cdf(-30.0 - 1e-9), 1e-6);
  double slope = 0;
  EXPECT_TRUE(std::isfinite(log_normal_cdf(-1e3, &slope)));
  EXPECT_NEAR(slope, 1e3, 1.0);  // φ/Φ ≈ −u in the tail
}

// Near the limit, where the closed form Φ(b) − Φ(a) in doubles is still accurate (the model's
// own sums keep their accuracy further out, where that difference cancels).
TEST(LimitModelTest, the_probability_is_the_normal_mass_within_the_limit_under_the_posterior) {
  const LimitData d = radius_grid(6);
  const auto upper = LimitModel::fit(d, -LimitModel::kNone, 0.3, "radius");
  const auto lower = LimitModel::fit(d, 0.3, LimitModel::kNone, "radius");
  const auto both = LimitModel::fit(d, 0.1, 0.3, "radius");
  int compared = 0;
  for (const Eigen::Vector2d& x : {Eigen::Vector2d(0.8, 0.5), Eigen::Vector2d(0.5, 0.21), Eigen::Vector2d(0.71, 0.71),
                                   Eigen::Vector2d(0.6, 0.58), Eigen::Vector2d(0.43, 0.6)}) {
    const auto [mean, sd] = upper->predict(x);
    const double below_high = phi_cdf((0.3 - mean) / sd), below_low = phi_cdf((0.1 - mean) / sd);
    if (below_high > 1e-6 && below_high < 1 - 1e-6) {
      EXPECT_NEAR(upper->log_probability(x, 0), std::log(below_high), 1e-9) << x.transpose();
      EXPECT_NEAR(lower->log_probability(x, 0), std::log(1 - below_high), 1e-9) << x.transpose();
      ++compared;
    }
    if (below_high - below_low > 1e-6) {
      EXPECT_NEAR(both->log_probability(x, 0), std::log(below_high - below_low), 1e-8) << x.transpose();
      ++compared;
    }
  }
  EXPECT_GE(compared, 4) << "the points lie too far from the limit to test anything";
  const long outside = (d.value.array() > 0.3).count();
  EXPECT_EQ(upper->describe(), "GP of radius on 36 trials (" + std::to_string(outside) + " outside the limit)");
}

TEST(LimitModelTest, the_gradient_matches_finite_differences) {
  const LimitData d = radius_grid(5);
  const auto upper = LimitModel::fit(d, -LimitModel::kNone, 0.25, "r");
  const auto lower = LimitModel::fit(d, 0.25, LimitModel::kNone, "r");
  const auto below = LimitModel::fit(d, 0.3, 0.45, "r");   // the centre lies below the interval
  const auto above = LimitModel::fit(d, -0.2, 0.05, "r");  // the corners lie above it
  for (const auto* model : {upper.get(), lower.get(), below.get(), above.get()}) {
    for (const Eigen::Vector2d& x : {Eigen::Vector2d(0.52, 0.47), Eigen::Vector2d(0.8, 0.3), Eigen::Vector2d(0.93, 0.88)}) {
      Eigen::VectorXd g;
      model->log_probability(x, 0, &g);
      const Eigen::VectorXd fd = lbo::testing::numerical_gradient([&](const Eigen::VectorXd& p) { return model->log_probability(p, 0); }, x);
      EXPECT_LT(lbo::testing::relative_error(g, fd), 1e-4) << x.transpose() << ": " << g.transpose() << " vs " << fd.transpose();
    }
  }
}

// A proposal weighs all its candidates at once: the batched probabilities are the point-by-point
// ones, on each side of the limit and in its far tail (the floor).
TEST(LimitModelTest, the_probabilities_of_many_points_at_once_are_each_points) {
  const LimitData d = radius_grid(5);
  const auto upper = LimitModel::fit(d, -LimitModel::kNone, 0.25, "r");
  const auto lower = LimitModel::fit(d, 0.25, LimitModel::kNone, "r");
  const auto both = LimitModel::fit(d, 0.3, 0.45, "r");
  const auto far = LimitModel::fit(d, -LimitModel::kNone, -5.0, "r");  // nowhere within: log P at its floor
  Eigen::MatrixXd X(40, 2);
  for (Eigen::Index i = 0; i < X.rows(); ++i) X.row(i) << 0.025 * static_cast<double>(i), 1.0 - 0.02 * static_cast<double>(i);
  for (const auto* model : {upper.get(), lower.get(), both.get(), far.get()}) {
    const Eigen::VectorXd batched = model->log_probabilities(X, 0);
    ASSERT_EQ(batched.size(), X.rows());
    for (Eigen::Index i = 0; i < X.rows(); ++i) {
      const double one = model->log_probability(X.row(i).transpose(), 0);
      EXPECT_NEAR(batched(i), one, 1e-9 * std::max(1.0, std::abs(one))) << model->describe() << " at row " << i;
    }
  }
}

// Learned from the values alone, the disc of radius 0.3 is where it is: likely inside, unlikely at
// the corners, though every value at the corners said only how far out they were.
TEST(LimitModelTest, a_limit_learned_from_values_knows_the_feasible_disc) {
  const auto model = LimitModel::fit(radius_grid(7), -LimitModel::kNone, 0.3, "radius");
  EXPECT_GT(std::exp(model->log_probability(Eigen::Vector2d(0.5, 0.5), 0)), 0.95);
  EXPECT_GT(std::exp(model->log_probability(Eigen::Vector2d(0.6, 0.45), 0)), 0.8);
  EXPECT_LT(std::exp(model->log_probability(Eigen::Vector2d(0.95, 0.95), 0)), 0.01);
  EXPECT_LT(std::exp(model->log_probability(Eigen::Vector2d(0.05, 0.9), 0)), 0.01);
  // The edge, at 0.3 from the centre: about even.
  const double edge = std::exp(model->log_probability(Eigen::Vector2d(0.8, 0.5), 0));
  EXPECT_GT(edge, 0.2);
  EXPECT_LT(edge, 0.8);
}

TEST(LimitModelTest, a_joint_model_adds_its_parts_logs_and_gradients) {
  const LimitData d = radius_grid(5);
  const auto a = LimitModel::fit(d, -LimitModel::kNone, 0.3, "a");
  const auto b = LimitModel::fit(d, 0.1, LimitModel::kNone, "b");
  const JointFeasibility joint({a, b});
  const Eigen::Vector2d x(0.62, 0.41);
  Eigen::VectorXd ga, gb, g;
  const double sum = a->log_probability(x, 0, &ga) + b->log_probability(x, 0, &gb);
  EXPECT_DOUBLE_EQ(joint.log_probability(x, 0, &g), sum);
  EXPECT_LT((g - ga - gb).norm(), 1e-12);
  Eigen::MatrixXd X(2, 2);
  X << 0.62, 0.41, 0.1, 0.9;
  const Eigen::VectorXd logs = joint.log_probabilities(X, 0);  // each part's batched posterior: to rounding
  EXPECT_NEAR(logs(0), sum, 1e-9 * std::abs(sum));
  const double second = a->log_probability(X.row(1).transpose(), 0) + b->log_probability(X.row(1).transpose(), 0);
  EXPECT_NEAR(logs(1), second, 1e-9 * std::abs(second));
  EXPECT_EQ(joint.describe(), a->describe() + "; " + b->describe());
  EXPECT_THROW(JointFeasibility({a, nullptr}), std::invalid_argument);
  // Weighted: the probability stays the product, the weight is Π P_i^{w_i}.
  const JointFeasibility sharp({a, b}, {1.0, 16.0});
  EXPECT_DOUBLE_EQ(sharp.log_probability(x, 0), sum);
  Eigen::VectorXd gw;
  EXPECT_NEAR(sharp.log_weight(x, 0, &gw), a->log_probability(x, 0) + 16 * b->log_probability(x, 0), 1e-12);
  EXPECT_LT((gw - ga - 16 * gb).norm(), 1e-9);
  EXPECT_NEAR(sharp.log_weights(X, 0)(1), a->log_probability(X.row(1).transpose(), 0) + 16 * b->log_probability(X.row(1).transpose(), 0),
              1e-9);
  EXPECT_DOUBLE_EQ(joint.log_weight(x, 0), joint.log_probability(x, 0)) << "unweighted: the weight is the probability";
  EXPECT_THROW(JointFeasibility({a, b}, {1.0}), std::invalid_argument);
  EXPECT_THROW(JointFeasibility({a, b}, {1.0, 0.0}), std::invalid_argument);
}
