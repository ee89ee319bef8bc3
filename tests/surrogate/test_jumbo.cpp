#include "lbo/surrogate/jumbo.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "finite_difference.hpp"
#include "lbo/surrogate/batch.hpp"
#include "lbo/surrogate/linalg.hpp"
#include "test_data.hpp"

using namespace lbo::surrogate;
using lbo::testing::numerical_gradient;
using lbo::testing::relative_error;
using Kind = CoordinateGroup::Kind;

namespace {

const BoxSpace kSquare({{Kind::continuous, 0, 1, 0}, {Kind::continuous, 1, 1, 0}});

// A GP posterior of a peak at `centre` on the unit square (fixed θ, a 4 × 4 grid).
std::shared_ptr<const TaskPosterior> peak(double cx, double cy) {
  Eigen::MatrixXd X(16, 2);
  Eigen::VectorXd y(16);
  for (int i = 0; i < 16; ++i) {
    X(i, 0) = 0.1 + 0.8 * (i % 4) / 3.0;
    X(i, 1) = 0.1 + 0.8 * (i / 4) / 3.0;
    y(i) = std::exp(-(std::pow(X(i, 0) - cx, 2) + std::pow(X(i, 1) - cy, 2)) / 0.08);
  }
  const Standardization s = Standardization::of(y);
  Eigen::VectorXd theta(4);
  theta << std::log(0.3), std::log(0.3), 0.0, std::log(1e-3);
  return make_gp_posterior(X, (y.array() - s.offset) / s.scale, theta, s);
}

// Tasks of one family: bowls whose centre moves with the task.
TaskData bowls(int tasks, int n, int finished) {
  TaskData data;
  for (int t = 0; t < tasks; ++t) {
    data.tasks.push_back(lbo::testing::bowl(n, 0.1 * t, 100 + t));
    data.finished.push_back(t < finished);
  }
  return data;
}

}  // namespace

TEST(JumboTest, pretraining_gradient_matches_finite_differences) {
  const Mlp network(2, {4, 3});
  std::vector<Observations> tasks = {lbo::testing::bowl(6, 0.0, 1), lbo::testing::bowl(5, 0.2, 2)};
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal(0.0, 0.5);
  Eigen::VectorXd packed(network.parameter_count() + 2 * 4);
  for (Eigen::Index i = 0; i < packed.size(); ++i) packed(i) = normal(rng);
  Eigen::VectorXd gradient;
  pretrain_objective(network, tasks, packed, gradient);
  const Eigen::VectorXd numeric = numerical_gradient(
      [&](const Eigen::VectorXd& p) {
        Eigen::VectorXd g;
        return pretrain_objective(network, tasks, p, g);
      },
      packed);
  EXPECT_LT(relative_error(gradient, numeric), 1e-6);
}

TEST(JumboTest, the_network_fits_every_earlier_task_through_its_own_head) {
  const Mlp network(2, {20, 6});
  const TaskData data = bowls(3, 30, 3);
  const Pretrained trained = pretrain_features(network, data.tasks, 5, 400);
  // Standardized targets have variance 1: a fit that explains most of it per task.
  EXPECT_LT(trained.loss, 0.05);
  const Pretrained untrained = pretrain_features(network, data.tasks, 5, 0);
  EXPECT_GT(untrained.loss, 10 * trained.loss);
}

TEST(JumboTest, the_feature_posterior_is_the_inner_gp_at_the_features_with_chained_gradients) {
  const auto network = std::make_shared<const Mlp>(2, std::vector<int>{5, 3});
  std::mt19937_64 rng(8);
  const auto parameters = std::make_shared<const Eigen::VectorXd>(network->initial_parameters(rng));
  const Observations o = lbo::testing::bowl(8, 0.0, 4);
  const Eigen::MatrixXd Z = (network->forward(*parameters, o.X).array() + 1) / 2;
  Eigen::VectorXd theta(5);
  theta << std::log(0.4), std::log(0.5), std::log(0.6), 0.0, std::log(1e-3);
  const Standardization s = Standardization::of(o.y);
  const auto inner = make_gp_posterior(Z, (o.y.array() - s.offset) / s.scale, theta, s);
  const auto warm = make_feature_posterior(network, parameters, inner);

  const Eigen::Vector2d x(0.3, 0.7);
  const Eigen::MatrixXd z = (network->forward(*parameters, x.transpose()).array() + 1) / 2;
  EXPECT_NEAR(warm->predict(x.transpose()).mean(0), inner->predict(z).mean(0), 1e-14);
  const PointPosterior at = warm->predict_with_gradient(x);
  const auto mean = [&](const Eigen::VectorXd& p) { return warm->predict(p.transpose()).mean(0); };
  const auto var = [&](const Eigen::VectorXd& p) { return warm->predict(p.transpose()).var(0); };
  EXPECT_LT(relative_error(at.d_mean, numerical_gradient(mean, x)), 1e-6);
  EXPECT_LT(relative_error(at.d_var, numerical_gradient(var, x)), 1e-6);

  // Tracking at candidates agrees with conditioning anew.
  const Eigen::MatrixXd C = o.X.topRows(4);
  auto tracked = warm->track(C);
  const double y = 0.4;
  tracked->add(x, &y);
  const Eigen::VectorXd yy = Eigen::VectorXd::Constant(1, y);
  const Posterior direct = warm->condition(x.transpose(), &yy)->predict(C);
  EXPECT_LT((tracked->at_points().mean - direct.mean).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((tracked->at_points().var - direct.var).cwiseAbs().maxCoeff(), 1e-10);
}

// The acquisition combination at its two limits (paper §4: l_α → ∞ is GP-UCB on the cold GP,
// l_α → 0 the warm GP alone), with and without refinement, and a middle threshold in between.
TEST(JumboTest, the_threshold_limits_are_the_cold_and_the_warm_gps_choices) {
  const auto cold = peak(0.8, 0.2), warm = peak(0.25, 0.7);
  const Eigen::MatrixXd none(0, 2);
  const AcquisitionParams params{.ucb_beta = 1.0, .xi = 0.01, .incumbent = 0.0};
  for (const Refinement refine : {Refinement::none, Refinement::full}) {
    for (const AcquisitionKind kind : {AcquisitionKind::ucb, AcquisitionKind::ei}) {
      SCOPED_TRACE(std::string(to_string(kind)) + (refine == Refinement::full ? " refined" : " candidates only"));
      const Eigen::VectorXd cold_choice =
          BatchProposer(cold, none, kSquare, {}, 9).next(kind, params, refine).front().x;
      const Eigen::VectorXd warm_choice =
          BatchProposer(warm, none, kSquare, {}, 9).next(kind, params, refine).front().x;
      ASSERT_GT((cold_choice - warm_choice).norm(), 0.3);  // the two GPs disagree

      const auto infinite = make_jumbo_posterior(cold, warm, std::numeric_limits<double>::infinity());
      EXPECT_EQ(BatchProposer(infinite, none, kSquare, {}, 9).next(kind, params, refine).front().x, cold_choice);
      const auto zero = make_jumbo_posterior(cold, warm, 0.0);
      EXPECT_EQ(BatchProposer(zero, none, kSquare, {}, 9).next(kind, params, refine).front().x, warm_choice);

      // In between: the cold GP's best among the warm GP's near-best points.
      const double threshold = 0.3;
      const auto middle = make_jumbo_posterior(cold, warm, threshold);
      const Eigen::VectorXd x = BatchProposer(middle, none, kSquare, {}, 9).next(kind, params, refine).front().x;
      const Acquisition warm_acquisition(kind, params, warm), cold_acquisition(kind, params, cold);
      const double warm_best = warm_acquisition.evaluate(Eigen::MatrixXd(warm_choice.transpose()))(0);
      EXPECT_GE(warm_acquisition.evaluate(Eigen::MatrixXd(x.transpose()))(0), warm_best - threshold - 1e-9);
      EXPECT_GT(cold_acquisition.evaluate(Eigen::MatrixXd(x.transpose()))(0),
                cold_acquisition.evaluate(Eigen::MatrixXd(warm_choice.transpose()))(0));
    }
  }
}

TEST(JumboTest, a_batch_hallucinates_its_points_in_both_gps) {
  const auto cold = peak(0.8, 0.2), warm = peak(0.25, 0.7);
  const auto jumbo = make_jumbo_posterior(cold, warm, 0.5);
  const AcquisitionParams params{.ucb_beta = 1.0, .xi = 0.01, .incumbent = 0.0};
  BatchProposer batch(jumbo, Eigen::MatrixXd(0, 2), kSquare, {}, 4);
  std::vector<Eigen::VectorXd> points;
  for (int i = 0; i < 4; ++i) {
    const Eigen::VectorXd x = batch.next(AcquisitionKind::ucb, params).front().x;
    for (const Eigen::VectorXd& p : points) EXPECT_GT((x - p).norm(), 1e-3);
    points.push_back(x);
    batch.accept(x);
  }
  // The same batch with the first three pending chooses the fourth point the same way.
  const Eigen::MatrixXd pending = stack_rows({points[0], points[1], points[2]}, 2);
  BatchProposer fresh(jumbo, pending, kSquare, {}, 4);
  EXPECT_LT((fresh.next(AcquisitionKind::ucb, params).front().x - points[3]).norm(), 1e-9);
}

TEST(JumboTest, without_a_finished_task_each_task_is_its_cold_gp) {
  TaskData data = bowls(2, 10, 0);
  Jumbo jumbo(2);
  jumbo.fit(data, 3);
  EXPECT_TRUE(jumbo.trained_on().empty());
  GpSurrogate gp;
  gp.fit(data, 3);
  const Eigen::MatrixXd C = data.tasks[0].X;
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(jumbo.posterior(t)->guide().posterior, nullptr);
    const Posterior a = jumbo.posterior(t)->predict(C), b = gp.posterior(t)->predict(C);
    EXPECT_LT((a.mean - b.mean).cwiseAbs().maxCoeff(), 1e-9);
  }
}

TEST(JumboTest, learns_features_from_finished_tasks_refits_when_one_finishes_and_restores_exactly) {
  TaskData data = bowls(3, 12, 1);
  data.tasks[2].X.conservativeResize(4, 2);
  data.tasks[2].y.conservativeResize(4);
  JumboOptions options;
  options.hidden = {16};
  options.features = 4;
  options.cold_switch = false;  // every task keeps its guide (the switch: the next test)
  Jumbo jumbo(2, options);
  jumbo.fit(data, 7);
  EXPECT_EQ(jumbo.trained_on(), std::vector<int>{0});
  const auto guide = jumbo.posterior(2)->guide();
  ASSERT_NE(guide.posterior, nullptr);
  EXPECT_EQ(guide.threshold, options.threshold);
  const std::vector<double> network = jumbo.state().jumbo->network;

  // A new result refits the task's GPs, not the network.
  data.tasks[2] = lbo::testing::bowl(5, 0.2, 102);
  jumbo.fit(data, 8);
  EXPECT_EQ(jumbo.state().jumbo->network, network);
  EXPECT_EQ(jumbo.state().jumbo->cold.fitted_sizes[2], 5);

  // The warm GP of a task like the earlier one predicts it better than chance: the features
  // carry the family's shape (a bowl whose centre moves).
  const Observations test = lbo::testing::bowl(50, 0.2, 999);
  const Posterior warm = guide.posterior->predict(test.X);
  const Eigen::VectorXd truth = (test.y.array() - test.y.mean());
  const Eigen::VectorXd predicted = (warm.mean.array() - warm.mean.mean());
  EXPECT_GT(truth.dot(predicted) / (truth.norm() * predicted.norm()), 0.5);

  // A checkpoint round trip on a fresh model predicts the same, the guide too.
  Jumbo restored(2, options);
  restored.restore(jumbo.state(), data);
  EXPECT_EQ(restored.trained_on(), std::vector<int>{0});
  for (int t = 0; t < 3; ++t) {
    const Posterior a = jumbo.posterior(t)->predict(test.X), b = restored.posterior(t)->predict(test.X);
    EXPECT_LT((a.mean - b.mean).cwiseAbs().maxCoeff(), 1e-12) << "task " << t;
    const Posterior ga = jumbo.posterior(t)->guide().posterior->predict(test.X);
    const Posterior gb = restored.posterior(t)->guide().posterior->predict(test.X);
    EXPECT_LT((ga.mean - gb.mean).cwiseAbs().maxCoeff(), 1e-12) << "task " << t;
    EXPECT_LT((ga.var - gb.var).cwiseAbs().maxCoeff(), 1e-12) << "task " << t;
  }
  EXPECT_THROW(restored.restore(SurrogateState{}, data), NumericalError);
  Jumbo other(2);  // another network shape
  EXPECT_THROW(other.restore(jumbo.state(), data), NumericalError);

  // The second task finishes: the network is retrained on both.
  data.finished[1] = true;
  jumbo.fit(data, 9);
  EXPECT_EQ(jumbo.trained_on(), (std::vector<int>{0, 1}));
  EXPECT_NE(jumbo.state().jumbo->network, network);
}

TEST(JumboTest, the_cold_switch_drops_the_guide_of_a_task_whose_results_the_cold_gp_predicts_better) {
  // Two finished bowls teach the network; task 2 is a bowl of the family, task 3 a ripple the
  // bowls' features cannot represent.
  TaskData data = bowls(3, 20, 2);
  data.tasks[2] = lbo::testing::bowl(4, 0.2, 102);
  data.tasks.push_back(lbo::testing::sample_unit_square(
      25, 103, [](double x1, double x2) { return std::sin(9 * x1) * std::cos(7 * x2); }));
  data.finished.push_back(false);
  JumboOptions options;
  options.hidden = {16};
  options.features = 4;
  Jumbo jumbo(2, options);
  jumbo.fit(data, 11);
  const JumboState state = *jumbo.state().jumbo;
  ASSERT_EQ(state.loo_cold.size(), 4u);

  // The stored densities are loo_log_predictive of each GP at its own θ, of the same z.
  for (std::size_t t : {2u, 3u}) {
    const Observations& o = data.tasks[t];
    const Standardization s = Standardization::of(o.y);
    const Eigen::VectorXd z = (o.y.array() - s.offset) / s.scale;
    const auto theta = [](const std::vector<double>& v) {
      return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
    };
    EXPECT_NEAR(state.loo_cold[t], loo_log_predictive(o.X, z, theta(state.cold.theta[t])), 1e-9);
    EXPECT_NEAR(state.loo_warm[t], loo_log_predictive(jumbo.features(o.X), z, theta(state.warm.theta[t])), 1e-9);
  }
  EXPECT_GT(state.loo_warm[2], state.loo_cold[2]);
  EXPECT_NE(jumbo.posterior(2)->guide().posterior, nullptr);
  EXPECT_FALSE(jumbo_cold_alone(state, 2));
  EXPECT_EQ(describe_jumbo_task(state, 2), "cold GP within the warm GP's best");

  EXPECT_GT(state.loo_cold[3], state.loo_warm[3]);
  EXPECT_EQ(jumbo.posterior(3)->guide().posterior, nullptr);
  EXPECT_TRUE(jumbo_cold_alone(state, 3));
  EXPECT_EQ(describe_jumbo_task(state, 3).rfind("cold GP alone (leave-one-out log density: cold ", 0), 0u);
  GpSurrogate gp;
  gp.fit(data, 11);
  const Eigen::MatrixXd C = data.tasks[0].X;
  // Cold alone is the plain GP of the task (the same fit: same seed stream, same start).
  const Posterior a = jumbo.posterior(3)->predict(C), b = gp.posterior(3)->predict(C);
  EXPECT_LT((a.mean - b.mean).cwiseAbs().maxCoeff(), 1e-9);

  // Restored, the choice is the same (recomputed from the saved θ).
  Jumbo restored(2, options);
  restored.restore(jumbo.state(), data);
  EXPECT_EQ(restored.posterior(3)->guide().posterior, nullptr);
  EXPECT_NE(restored.posterior(2)->guide().posterior, nullptr);
  EXPECT_EQ(restored.state().jumbo->loo_cold, state.loo_cold);
  // A state saved before the switch existed (no densities) restores to the same choices.
  SurrogateState older = jumbo.state();
  older.jumbo->loo_cold.clear();
  older.jumbo->loo_warm.clear();
  Jumbo from_older(2, options);
  from_older.restore(older, data);
  EXPECT_EQ(from_older.posterior(3)->guide().posterior, nullptr);
  EXPECT_NE(from_older.posterior(2)->guide().posterior, nullptr);

  // Switched off: JUMBO as in the paper, a guide for every task with a warm GP, nothing compared.
  options.cold_switch = false;
  Jumbo paper(2, options);
  paper.fit(data, 11);
  EXPECT_NE(paper.posterior(3)->guide().posterior, nullptr);
  EXPECT_TRUE(std::isnan(paper.state().jumbo->loo_cold[3]));
  EXPECT_EQ(describe_jumbo_task(*paper.state().jumbo, 3), "cold GP within the warm GP's best");
}
