#include "lbo/surrogate/acquisition.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "finite_difference.hpp"
#include "lbo/surrogate/gp.hpp"

using namespace lbo::surrogate;
using lbo::testing::numerical_gradient;
using lbo::testing::relative_error;

namespace {

std::shared_ptr<const TaskPosterior> some_posterior() {
  Eigen::MatrixXd X(6, 2);
  X << 0.1, 0.1, 0.4, 0.8, 0.5, 0.3, 0.9, 0.6, 0.2, 0.7, 0.7, 0.9;
  Eigen::VectorXd y(6);
  y << 0.3, -1.0, 0.8, 1.2, -0.4, 0.1;
  Eigen::VectorXd theta(4);
  theta << std::log(0.3), std::log(0.4), 0.0, std::log(1e-3);
  return make_gp_posterior(X, y, theta, Standardization{});
}

}  // namespace

TEST(AcquisitionTest, closed_form_values) {
  const AcquisitionParams params{.ucb_beta = 4.0, .xi = 0.0, .incumbent = 1.0};
  EXPECT_NEAR(acquisition_value(AcquisitionKind::ucb, 0.5, 0.25, params).value, 0.5 + 2.0 * 0.5, 1e-12);
  // μ at the incumbent: EI = σφ(0), PI = ½.
  EXPECT_NEAR(acquisition_value(AcquisitionKind::ei, 1.0, 0.36, params).value, 0.6 / std::sqrt(2 * M_PI), 1e-12);
  EXPECT_NEAR(acquisition_value(AcquisitionKind::pi, 1.0, 0.36, params).value, 0.5, 1e-12);
  // No uncertainty: EI is the plain improvement, PI an indicator.
  EXPECT_NEAR(acquisition_value(AcquisitionKind::ei, 1.5, 0.0, params).value, 0.5, 1e-12);
  EXPECT_EQ(acquisition_value(AcquisitionKind::pi, 0.5, 0.0, params).value, 0.0);
}

TEST(AcquisitionTest, derivatives_in_mean_and_variance_match_finite_differences) {
  const AcquisitionParams params{.ucb_beta = 3.0, .xi = 0.01, .incumbent = 0.4};
  for (AcquisitionKind kind : {AcquisitionKind::ucb, AcquisitionKind::ei, AcquisitionKind::pi}) {
    const AcquisitionValue a = acquisition_value(kind, 0.3, 0.2, params);
    const Eigen::VectorXd numeric = numerical_gradient(
        [&](const Eigen::VectorXd& v) { return acquisition_value(kind, v(0), v(1), params).value; },
        Eigen::Vector2d(0.3, 0.2));
    EXPECT_NEAR(a.d_mean, numeric(0), 1e-7) << to_string(kind);
    EXPECT_NEAR(a.d_var, numeric(1), 1e-7) << to_string(kind);
  }
}

TEST(AcquisitionTest, gradients_in_x_match_finite_differences_with_pending_points) {
  for (AcquisitionKind kind : {AcquisitionKind::ucb, AcquisitionKind::ei, AcquisitionKind::pi}) {
    Acquisition acquisition(kind, AcquisitionParams{.ucb_beta = 2.0, .xi = 0.01, .incumbent = 1.0}, some_posterior());
    Eigen::MatrixXd pending(1, 2);
    pending << 0.6, 0.5;
    acquisition.set_pending(pending);
    for (const Eigen::Vector2d& x : {Eigen::Vector2d(0.33, 0.52), Eigen::Vector2d(0.8, 0.15)}) {
      Eigen::VectorXd gradient;
      const double value = acquisition.evaluate(x, gradient);
      EXPECT_NEAR(value, acquisition.evaluate(Eigen::MatrixXd(x.transpose()))(0), 1e-12);
      const Eigen::VectorXd numeric = numerical_gradient(
          [&](const Eigen::VectorXd& v) { return acquisition.evaluate(Eigen::MatrixXd(v.transpose()))(0); }, x);
      EXPECT_LT(relative_error(gradient, numeric), 1e-5) << to_string(kind);
    }
  }
}

TEST(AcquisitionTest, pending_points_lower_ucb_around_them) {
  Acquisition acquisition(AcquisitionKind::ucb, AcquisitionParams{.ucb_beta = 4.0}, some_posterior());
  Eigen::MatrixXd point(1, 2);
  point << 0.6, 0.45;
  const double before = acquisition.evaluate(point)(0);
  acquisition.set_pending(point);
  EXPECT_LT(acquisition.evaluate(point)(0), before);
}

TEST(AcquisitionTest, ucb_schedule_grows_slowly_with_t) {
  const double b1 = ucb_beta_schedule(1, 2), b10 = ucb_beta_schedule(10, 2), b100 = ucb_beta_schedule(100, 2);
  EXPECT_GT(b1, 0);
  EXPECT_LT(b1, b10);
  EXPECT_LT(b10, b100);
  EXPECT_NEAR(b10, 0.2 * 2 * (3 * std::log(10.0) + std::log(M_PI * M_PI / 0.3)), 1e-12);
}
