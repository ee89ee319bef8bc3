#include "lbo/surrogate/residual.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "finite_difference.hpp"
#include "test_data.hpp"
#include "lbo/surrogate/lbo.hpp"

using namespace lbo::surrogate;
using lbo::testing::numerical_gradient;
using lbo::testing::relative_error;

namespace {

// A bowl in [0,1]² with a ripple the few smooth features of a small LBO miss.
Observations rippled_bowl(int n, std::uint64_t seed) {
  return lbo::testing::sample_unit_square(n, seed, [](double x1, double x2) {
    return -std::pow(x1 - 0.4, 2) - std::pow(x2 - 0.6, 2) + 0.1 * std::sin(12 * x1);
  });
}

std::unique_ptr<ResidualGp> fitted(const Observations& data) {
  auto model = std::make_unique<ResidualGp>(std::make_unique<Lbo>(2, LboOptions{.networks = 3, .hidden = {10, 10}}));
  model->fit(TaskData{{data}}, 7);
  return model;
}

}  // namespace

// Data in the lower-left quarter only: at the far corner the features extrapolate, and the
// residual GP keeps an uncertainty there the features alone do not have.
TEST(ResidualGpTest, the_features_mean_stays_and_the_residual_gp_adds_uncertainty_away_from_the_data) {
  Observations data = rippled_bowl(25, 1);
  data.X *= 0.5;
  const auto model = fitted(data);
  const auto post = model->posterior(0);
  const auto base = model->base().posterior(0);
  ASSERT_TRUE(post && base);
  // Same units as the feature model's posterior.
  EXPECT_EQ(post->standardization().offset, base->standardization().offset);
  EXPECT_EQ(post->standardization().scale, base->standardization().scale);
  // At the observations, the mean is as close to the data as the features' own (or closer).
  const Eigen::VectorXd z = ((data.y.array() - base->standardization().offset) / base->standardization().scale).matrix();
  const double base_error = (base->predict(data.X).mean - z).array().abs().mean();
  const double error = (post->predict(data.X).mean - z).array().abs().mean();
  EXPECT_LE(error, base_error + 1e-3) << "features alone " << base_error << ", with the residual GP " << error;
  Eigen::MatrixXd corner(1, 2);
  corner << 1.0, 1.0;
  const double base_var = base->predict(corner).var(0), var = post->predict(corner).var(0);
  std::printf("variance at the far corner: features %.2e, with the residual GP %.2e\n", base_var, var);
  EXPECT_GT(var, base_var + 1e-3);
}

TEST(ResidualGpTest, gradients_match_finite_differences) {
  const auto model = fitted(rippled_bowl(20, 2));
  const auto post = model->posterior(0);
  for (const Eigen::Vector2d& x : {Eigen::Vector2d(0.3, 0.7), Eigen::Vector2d(0.85, 0.15)}) {
    const PointPosterior g = post->predict_with_gradient(x);
    const Posterior p = post->predict(x.transpose());
    EXPECT_NEAR(g.mean, p.mean(0), 1e-10);
    EXPECT_NEAR(g.var, p.var(0), 1e-10);
    const auto mean_at = [&](const Eigen::VectorXd& v) { return post->predict(v.transpose()).mean(0); };
    const auto var_at = [&](const Eigen::VectorXd& v) { return post->predict(v.transpose()).var(0); };
    EXPECT_LT(relative_error(g.d_mean, numerical_gradient(mean_at, x)), 1e-5);
    EXPECT_LT(relative_error(g.d_var, numerical_gradient(var_at, x)), 1e-5);
  }
}

// A new result joins the residual GP exactly: the same as a GP with the fitted θ on the old
// residuals plus the new one; a hallucinated point keeps the mean and shrinks the variance.
TEST(ResidualGpTest, conditioning_equals_the_residual_gp_with_the_point_added) {
  const Observations data = rippled_bowl(15, 3);
  const auto model = fitted(data);
  const auto post = model->posterior(0);
  const auto base = model->base().posterior(0);
  const SurrogateState state = model->state();
  ASSERT_TRUE(state.gp && state.lbo);
  const Eigen::VectorXd theta = Eigen::Map<const Eigen::VectorXd>(state.gp->theta[0].data(),
                                                                  static_cast<Eigen::Index>(state.gp->theta[0].size()));
  Eigen::MatrixXd x(1, 2);
  x << 0.55, 0.45;
  const Eigen::VectorXd y = Eigen::VectorXd::Constant(1, 0.3);  // standardized, as the policy passes it
  // What the residual GP was fitted on, then with the new residual.
  const Standardization& sb = base->standardization();
  const Eigen::VectorXd r = ((data.y.array() - sb.offset) / sb.scale).matrix() - base->predict(data.X).mean;
  const Standardization sr{};  // residuals stay in the task's standardized units
  Eigen::MatrixXd X_all(16, 2);
  X_all << data.X, x;
  Eigen::VectorXd r_all(16);
  r_all << r, y - base->predict(x).mean;
  const ResidualPosterior expected(base, make_gp_posterior(X_all, ((r_all.array() - sr.offset) / sr.scale).matrix(), theta, sr));
  const auto conditioned = post->condition(x, &y);
  Eigen::MatrixXd probe(3, 2);
  probe << 0.1, 0.2, 0.5, 0.5, 0.9, 0.8;
  EXPECT_LT((conditioned->predict(probe).mean - expected.predict(probe).mean).norm(), 1e-8);
  EXPECT_LT((conditioned->predict(probe).var - expected.predict(probe).var).norm(), 1e-8);
  const auto hallucinated = post->condition(x, nullptr);
  EXPECT_NEAR(hallucinated->predict(x).mean(0), post->predict(x).mean(0), 1e-9);
  EXPECT_LT(hallucinated->predict(x).var(0), post->predict(x).var(0));
}

TEST(ResidualGpTest, restored_state_gives_the_same_posterior) {
  const Observations data = rippled_bowl(18, 4);
  const auto model = fitted(data);
  ResidualGp restored(std::make_unique<Lbo>(2, LboOptions{.networks = 3, .hidden = {10, 10}}));
  restored.restore(model->state(), TaskData{{data}});
  Eigen::MatrixXd probe(2, 2);
  probe << 0.2, 0.9, 0.7, 0.3;
  EXPECT_LT((restored.posterior(0)->predict(probe).mean - model->posterior(0)->predict(probe).mean).norm(), 1e-9);
  EXPECT_LT((restored.posterior(0)->predict(probe).var - model->posterior(0)->predict(probe).var).norm(), 1e-9);
}

// TransferGp tells a changed basis function by its identity: a task whose base and residual
// posteriors stay keeps its combined posterior, the same object.
TEST(ResidualGpTest, a_task_without_new_observations_keeps_its_posterior_object) {
  Observations data = rippled_bowl(12, 5);
  ResidualGp model(std::make_unique<GpSurrogate>());
  TaskData two{{data, rippled_bowl(10, 6)}};
  model.fit(two, 1);
  const auto first = model.posterior(0), second = model.posterior(1);
  model.fit(two, 2);
  EXPECT_EQ(model.posterior(0), first);
  EXPECT_EQ(model.posterior(1), second);
  two.tasks[1] = rippled_bowl(11, 6);
  model.fit(two, 3);
  EXPECT_EQ(model.posterior(0), first);
  EXPECT_NE(model.posterior(1), second);
}
