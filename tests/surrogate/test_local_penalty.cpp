// LocalPenalty: the hard local penalizer, worked by hand, and its gradient by finite differences;
// BatchProposer's scores under it.
#include "lbo/surrogate/local_penalty.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "finite_difference.hpp"
#include "test_data.hpp"
#include "lbo/surrogate/batch.hpp"
#include "lbo/surrogate/gp.hpp"

using namespace lbo::surrogate;
using lbo::testing::peaked_at_half;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Candidates on the x axis of the unit square at the given abscissae.
Eigen::MatrixXd on_axis(std::initializer_list<double> xs) {
  Eigen::MatrixXd C = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(xs.size()), 2);
  Eigen::Index i = 0;
  for (double x : xs) C(i++, 0) = x;
  return C;
}

}  // namespace

TEST(LocalPenaltyTest, the_radius_is_the_distance_to_the_best_plus_the_sd_over_the_lipschitz_constant) {
  EXPECT_DOUBLE_EQ(LocalPenalty::radius(1.0, 0.5, 2.0, 3.0), 0.5);
  // Above the best (where González's penalizer vanishes) the radius stays positive.
  EXPECT_DOUBLE_EQ(LocalPenalty::radius(3.0, 0.0, 2.0, 2.0), 0.5);
  EXPECT_DOUBLE_EQ(LocalPenalty::radius(2.0, 0.0, 2.0, 2.0), 0.0);
}

TEST(LocalPenaltyTest, a_penalty_is_the_distance_over_the_radius_inside_the_ball_and_one_outside) {
  const Eigen::MatrixXd C = on_axis({0.0, 0.1, 0.25, 0.5, 0.9});
  LocalPenalty penalty(C.rows());
  penalty.add(C, Eigen::Vector2d(0.0, 0.0), 0.5);
  const Eigen::VectorXd& log = penalty.log_at_candidates();
  EXPECT_EQ(log(0), -kInf) << "at the center";
  EXPECT_NEAR(log(1), std::log(0.2), 1e-12);
  EXPECT_NEAR(log(2), std::log(0.5), 1e-12);
  EXPECT_EQ(log(3), 0.0) << "on the sphere";
  EXPECT_EQ(log(4), 0.0);
  // A second ball multiplies (each candidate is within 0.6 of (0.5, 0.3) but the first).
  penalty.add(C, Eigen::Vector2d(0.5, 0.3), 0.6);
  EXPECT_EQ(log(0), -kInf);
  EXPECT_NEAR(log(1), std::log(0.2) + std::log(0.5 / 0.6), 1e-12);
  EXPECT_NEAR(log(2), std::log(0.5) + std::log(std::hypot(0.25, 0.3) / 0.6), 1e-12);
  EXPECT_NEAR(log(3), std::log(0.3 / 0.6), 1e-12);
  EXPECT_NEAR(log(4), std::log(0.5 / 0.6), 1e-12);
  EXPECT_EQ(penalty.size(), 2);
  for (Eigen::Index i = 1; i < C.rows(); ++i) EXPECT_NEAR(penalty.log_at(C.row(i).transpose()), log(i), 1e-12);
}

TEST(LocalPenaltyTest, a_zero_radius_penalizes_its_center_alone) {
  const Eigen::MatrixXd C = on_axis({0.0, 1e-9});
  LocalPenalty penalty(C.rows());
  penalty.add(C, Eigen::Vector2d(0.0, 0.0), 0.0);
  EXPECT_EQ(penalty.log_at_candidates()(0), -kInf);
  EXPECT_EQ(penalty.log_at_candidates()(1), 0.0);
}

TEST(LocalPenaltyTest, the_gradient_of_the_log_matches_finite_differences) {
  const Eigen::MatrixXd C = on_axis({});
  LocalPenalty penalty(0);
  penalty.add(C, Eigen::Vector2d(0.2, 0.3), 0.5);
  penalty.add(C, Eigen::Vector2d(0.6, 0.4), 0.3);
  penalty.add(C, Eigen::Vector2d(0.9, 0.9), 0.1);  // far: no share
  const Eigen::Vector2d x(0.45, 0.33);
  Eigen::VectorXd g;
  const double log = penalty.log_at(x, &g);
  EXPECT_NEAR(log, std::log((x - Eigen::Vector2d(0.2, 0.3)).norm() / 0.5) + std::log((x - Eigen::Vector2d(0.6, 0.4)).norm() / 0.3),
              1e-12);
  const Eigen::VectorXd numeric =
      lbo::testing::numerical_gradient([&](const Eigen::VectorXd& p) { return penalty.log_at(p); }, x);
  EXPECT_LT(lbo::testing::relative_error(g, numeric), 1e-6);
}

TEST(LocalPenaltyTest, a_penalty_lowers_any_value) {
  EXPECT_DOUBLE_EQ(LocalPenalty::apply(2.0, std::log(0.5)), 1.0);
  EXPECT_DOUBLE_EQ(LocalPenalty::apply(-2.0, std::log(0.5)), -4.0);
  EXPECT_EQ(LocalPenalty::apply(-2.0, 0.0), -2.0);
  EXPECT_EQ(LocalPenalty::apply(2.0, -kInf), 0.0);
  EXPECT_EQ(LocalPenalty::apply(-2.0, -kInf), -kInf);
}

// A 1-d GP peaked at 0.5: a running trial at UCB's maximum, penalized, lowers the candidates around
// it by exactly its penalizer, with the posterior's moments there and the batch's Lipschitz
// constant; the maximum moves off it; the posterior itself is not conditioned on it.
TEST(LocalPenaltyTest, a_penalized_point_lowers_the_batchs_scores_by_its_penalizer) {
  const auto posterior = peaked_at_half();
  const BoxSpace line({{CoordinateGroup::Kind::continuous, 0, 1, 0}});
  Eigen::MatrixXd C(201, 1);
  for (Eigen::Index i = 0; i < C.rows(); ++i) C(i, 0) = 0.005 * static_cast<double>(i);
  BatchProposer batch(posterior, Eigen::MatrixXd(0, 1), line, MaximizerOptions{.candidates = 201, .refine = 0}, C);
  const AcquisitionParams params{.ucb_beta = 4.0, .xi = 0.0, .incumbent = 1.0};
  const auto value_at = [](const std::vector<Maximum>& ranked, double x) {
    for (const Maximum& m : ranked) {
      if (std::abs(m.x(0) - x) < 1e-12) return m.value;
    }
    return std::numeric_limits<double>::quiet_NaN();
  };
  const std::vector<Maximum> before = batch.next(AcquisitionKind::ucb, params, Refinement::none);
  const double peak = before.front().x(0);
  ASSERT_GT(peak, 0.1);
  ASSERT_LT(peak, 0.9);

  const Eigen::MatrixXd at_peak = Eigen::MatrixXd::Constant(1, 1, peak);
  batch.penalize(at_peak, 1.0);
  EXPECT_EQ(batch.penalized(), 1);
  EXPECT_EQ(batch.points(), 0) << "penalized, not believed";
  const Posterior moments = posterior->predict(at_peak);
  const double radius = LocalPenalty::radius(moments.mean(0), std::sqrt(moments.var(0)), 1.0, batch.lipschitz());
  ASSERT_GT(radius, 0.02);
  ASSERT_LT(radius, 0.5);
  const std::vector<Maximum> after = batch.next(AcquisitionKind::ucb, params, Refinement::none);
  for (double offset : {0.01, 0.02}) {
    const double x = peak + offset;
    EXPECT_NEAR(value_at(after, x), value_at(before, x) * offset / radius, 1e-9) << x;
  }
  const auto grid = [](double x) { return std::round(x / 0.005) * 0.005; };
  const double far = peak + radius + 0.05 <= 1.0 ? grid(peak + radius + 0.05) : grid(peak - radius - 0.05);
  EXPECT_NEAR(value_at(after, far), value_at(before, far), 1e-12) << "outside the ball";
  EXPECT_GE(std::abs(after.front().x(0) - peak), 0.01) << "the maximum moved off the penalized point";
  EXPECT_EQ(batch.candidates_left(), 200) << "the penalized point is taken";
  // The Lipschitz constant: the largest gradient norm of the mean at the first candidates.
  double largest = BatchProposer::kMinLipschitz;
  for (Eigen::Index i = 0; i < BatchProposer::kLipschitzPoints; ++i) {
    largest = std::max(largest, std::abs(posterior->predict_with_gradient(C.row(i).transpose()).d_mean(0)));
  }
  EXPECT_DOUBLE_EQ(batch.lipschitz(), largest);
}

// Penalizing several points at once, candidates and others mixed, is penalizing each alone: a
// candidate's moments come from before any point joined, the others' from the posterior.
TEST(LocalPenaltyTest, points_penalized_together_are_penalized_as_one_by_one) {
  const auto posterior = peaked_at_half();
  const BoxSpace line({{CoordinateGroup::Kind::continuous, 0, 1, 0}});
  Eigen::MatrixXd C(101, 1);
  for (Eigen::Index i = 0; i < C.rows(); ++i) C(i, 0) = 0.01 * static_cast<double>(i);
  const MaximizerOptions options{.candidates = 101, .refine = 0};
  BatchProposer together(posterior, Eigen::MatrixXd(0, 1), line, options, C);
  BatchProposer alone(posterior, Eigen::MatrixXd(0, 1), line, options, C);
  Eigen::MatrixXd X(3, 1);
  X << C(30, 0), 0.4321, C(70, 0);  // two candidates, and a point between candidates
  together.penalize(X, 1.0);
  for (Eigen::Index i = 0; i < X.rows(); ++i) alone.penalize(X.row(i), 1.0);
  const AcquisitionParams params{.ucb_beta = 4.0, .xi = 0.0, .incumbent = 1.0};
  const std::vector<Maximum> a = together.next(AcquisitionKind::ucb, params, Refinement::none);
  const std::vector<Maximum> b = alone.next(AcquisitionKind::ucb, params, Refinement::none);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].x(0), b[i].x(0));
    if (std::isfinite(b[i].value)) {
      EXPECT_NEAR(a[i].value, b[i].value, 1e-12);
    } else {
      EXPECT_EQ(a[i].value, b[i].value);
    }
  }
  EXPECT_EQ(together.candidates_left(), 99) << "the two candidates are taken";
  // Every other candidate's score is the raw one times the three penalizers, each at the
  // posterior's moments at its point.
  const BatchProposer none(posterior, Eigen::MatrixXd(0, 1), line, options, C);
  const std::vector<Maximum> raw = none.next(AcquisitionKind::ucb, params, Refinement::none);
  const Posterior moments = posterior->predict(X);
  int checked = 0;
  for (const Maximum& r : raw) {
    if (r.x(0) == X(0, 0) || r.x(0) == X(2, 0)) continue;
    double expected = r.value;
    for (Eigen::Index j = 0; j < X.rows(); ++j) {
      const double radius = LocalPenalty::radius(moments.mean(j), std::sqrt(moments.var(j)), 1.0, together.lipschitz());
      expected = LocalPenalty::apply(expected, std::log(std::min(std::abs(r.x(0) - X(j, 0)) / radius, 1.0)));
    }
    for (const Maximum& m : a) {
      if (m.x(0) != r.x(0)) continue;
      EXPECT_NEAR(m.value, expected, 1e-9) << r.x(0);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 99);
}

// A refined maximum avoids a penalized point as the candidates' ranking does: refinement maximizes
// the penalized acquisition.
TEST(LocalPenaltyTest, refinement_maximizes_the_penalized_acquisition) {
  const auto posterior = peaked_at_half();
  const BoxSpace line({{CoordinateGroup::Kind::continuous, 0, 1, 0}});
  BatchProposer batch(posterior, Eigen::MatrixXd(0, 1), line, MaximizerOptions{.candidates = 64, .refine = 3}, 3);
  const AcquisitionParams params{.ucb_beta = 1.0, .xi = 0.0, .incumbent = 1.0};
  const double peak = batch.next(AcquisitionKind::ucb, params).front().x(0);
  batch.penalize(Eigen::MatrixXd::Constant(1, 1, peak), 1.0);
  const std::vector<Maximum> after = batch.next(AcquisitionKind::ucb, params);
  ASSERT_FALSE(after.empty());
  // Its value is the penalized acquisition at its point.
  const Acquisition acquisition(AcquisitionKind::ucb, params, posterior);
  const double raw = acquisition.evaluate(after.front().x.transpose())(0);
  const Posterior moments = posterior->predict(Eigen::MatrixXd::Constant(1, 1, peak));
  const double radius = LocalPenalty::radius(moments.mean(0), std::sqrt(moments.var(0)), 1.0, batch.lipschitz());
  const double distance = std::abs(after.front().x(0) - peak);
  EXPECT_NEAR(after.front().value, raw * std::min(distance / radius, 1.0), 1e-9);
  EXPECT_GT(distance, 1e-3);
}
