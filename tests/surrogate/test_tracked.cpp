// TrackedPosterior against its closed form: the posterior conditioned on the same points and
// values, predicted at the same points.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "lbo/surrogate/gp.hpp"
#include "lbo/surrogate/residual.hpp"
#include "lbo/surrogate/transfer.hpp"

using namespace lbo::surrogate;

namespace {

Eigen::MatrixXd uniform(int n, int d, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  Eigen::MatrixXd X(n, d);
  for (Eigen::Index i = 0; i < X.size(); ++i) X.data()[i] = u(rng);
  return X;
}

Eigen::VectorXd smooth(const Eigen::MatrixXd& X) {
  return (3.0 * X.col(0).array()).sin() + X.col(1).array().square() - 0.5 * X.col(2).array();
}

std::shared_ptr<const TaskPosterior> gp_on(const Eigen::MatrixXd& X, const Eigen::VectorXd& y) {
  Eigen::VectorXd theta(5);
  theta << std::log(0.4), std::log(0.6), std::log(0.8), 0.0, std::log(1e-3);
  return make_gp_posterior(X, y, theta, Standardization{});
}

// Mean and variance agree within `tolerance` at every point.
void expect_agree(const Posterior& got, const Posterior& want, double tolerance) {
  EXPECT_LT((got.mean - want.mean).cwiseAbs().maxCoeff(), tolerance);
  EXPECT_LT((got.var - want.var).cwiseAbs().maxCoeff(), tolerance);
}

// Adds points one at a time to `tracked` (believed, then two of them given results) and checks
// mean and variance at C against conditioning `posterior` on the same points and values.
void expect_tracks(const TaskPosterior& posterior, TrackedPosterior& tracked, const Eigen::MatrixXd& C,
                   std::mt19937_64& rng) {
  const Eigen::MatrixXd P = uniform(6, 3, rng);
  std::vector<double> values;
  for (Eigen::Index i = 0; i < P.rows(); ++i) {
    const double believed = tracked.mean_at(P.row(i).transpose());
    if (i == 4) {
      const double given = 1.5;
      EXPECT_EQ(tracked.add(P.row(i).transpose(), &given), i);
      values.push_back(given);
    } else {
      EXPECT_EQ(tracked.add(P.row(i).transpose(), nullptr), i);
      values.push_back(believed);
    }
  }
  tracked.set_value(1, -0.75);
  values[1] = -0.75;
  tracked.set_value(5, 2.0);
  values[5] = 2.0;
  const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(values.size()));
  const auto exact = posterior.condition(P, &y);
  const Posterior want = exact->predict(C);
  const Posterior& got = tracked.at_points();
  expect_agree(got, want, 1e-8);
  const Eigen::VectorXd probe = uniform(1, 3, rng).row(0).transpose();
  EXPECT_NEAR(tracked.mean_at(probe), exact->predict(probe.transpose()).mean(0), 1e-8);
  // The points do matter: the variance at C fell where they are.
  EXPECT_LT(got.var.sum(), posterior.predict(C).var.sum());
}

}  // namespace

TEST(TrackedPosteriorTest, a_gp_tracks_points_and_changed_values_exactly) {
  std::mt19937_64 rng(7);
  const Eigen::MatrixXd X = uniform(12, 3, rng);
  const auto gp = gp_on(X, smooth(X));
  const Eigen::MatrixXd C = uniform(40, 3, rng);
  const auto tracked = gp->track(C);
  expect_agree(tracked->at_points(), gp->predict(C), 1e-10);
  expect_tracks(*gp, *tracked, C, rng);
}

// A batch predicts at thousands of points at once, in blocks of rows on several threads: each
// point's mean and variance are those it has alone, wherever the blocks begin.
TEST(TrackedPosteriorTest, many_points_at_once_are_predicted_and_tracked_as_each_alone) {
  std::mt19937_64 rng(10);
  const Eigen::MatrixXd X = uniform(30, 3, rng);
  const auto gp = gp_on(X, smooth(X));
  const Eigen::MatrixXd C = uniform(700, 3, rng);  // two blocks and a part of one
  const Posterior all = gp->predict(C);  // on the cores' OpenMP threads
  const auto tracked = gp->track(C);
  for (Eigen::Index i = 0; i < C.rows(); ++i) {
    const Posterior one = gp->predict(C.row(i));
    EXPECT_NEAR(all.mean(i), one.mean(0), 1e-12) << i;
    EXPECT_NEAR(all.var(i), one.var(0), 1e-12) << i;
    EXPECT_NEAR(tracked->at_points().mean(i), one.mean(0), 1e-10) << i;
    EXPECT_NEAR(tracked->at_points().var(i), one.var(0), 1e-10) << i;
  }
  expect_tracks(*gp, *tracked, C, rng);
}

TEST(TrackedPosteriorTest, storage_grows_past_its_first_capacity) {
  std::mt19937_64 rng(8);
  const Eigen::MatrixXd X = uniform(3, 3, rng);
  const auto gp = gp_on(X, smooth(X));
  const Eigen::MatrixXd C = uniform(10, 3, rng);
  const auto tracked = gp->track(C);
  const Eigen::MatrixXd P = uniform(45, 3, rng);  // several doublings
  const Eigen::VectorXd y = smooth(P);
  for (Eigen::Index i = 0; i < P.rows(); ++i) tracked->add(P.row(i).transpose(), &y(i));
  expect_agree(tracked->at_points(), gp->condition(P, &y)->predict(C), 1e-7);
}

TEST(TrackedPosteriorTest, a_residual_and_a_model_average_track_as_they_condition) {
  std::mt19937_64 rng(9);
  const Eigen::MatrixXd X = uniform(10, 3, rng);
  const Eigen::VectorXd y = smooth(X);
  const auto base = gp_on(X, y);
  const Eigen::MatrixXd R = uniform(8, 3, rng);
  const Eigen::VectorXd r = smooth(R) - base->predict(R).mean;
  Eigen::VectorXd theta(5);
  theta << std::log(0.3), std::log(0.3), std::log(0.3), std::log(0.5), std::log(1e-2);
  const auto residual_gp = make_gp_posterior(R, r, theta, Standardization{0.1, 2.0});
  const auto residual = std::make_shared<ResidualPosterior>(base, residual_gp);
  const Eigen::MatrixXd C = uniform(30, 3, rng);
  expect_tracks(*residual, *residual->track(C), C, rng);

  const auto average = std::make_shared<ModelAverage>(residual, gp_on(R, smooth(R)), 0.3);
  const auto tracked = average->track(C);
  EXPECT_LT((tracked->at_points().var - average->predict(C).var).cwiseAbs().maxCoeff(), 1e-10);
  expect_tracks(*average, *tracked, C, rng);
}

TEST(TrackedPosteriorTest, the_generic_tracker_conditions_anew) {
  // The base class's track() (what a feature model's posterior uses), through a wrapper that
  // does not override it.
  class Plain final : public TaskPosterior {
   public:
    explicit Plain(std::shared_ptr<const TaskPosterior> inner) : TaskPosterior(inner->standardization()), inner_(std::move(inner)) {}
    int dimension() const override { return inner_->dimension(); }
    Posterior predict(const Eigen::MatrixXd& X) const override { return inner_->predict(X); }
    PointPosterior predict_with_gradient(const Eigen::VectorXd& x) const override { return inner_->predict_with_gradient(x); }
    std::shared_ptr<const TaskPosterior> condition(const Eigen::MatrixXd& X, const Eigen::VectorXd* y) const override {
      return std::make_shared<Plain>(inner_->condition(X, y));
    }

   private:
    std::shared_ptr<const TaskPosterior> inner_;
  };
  std::mt19937_64 rng(10);
  const Eigen::MatrixXd X = uniform(10, 3, rng);
  const auto plain = std::make_shared<Plain>(gp_on(X, smooth(X)));
  const Eigen::MatrixXd C = uniform(20, 3, rng);
  expect_tracks(*plain, *plain->track(C), C, rng);
}
