#include "lbo/surrogate/ablr.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "finite_difference.hpp"
#include "test_data.hpp"
#include "lbo/surrogate/linalg.hpp"

using namespace lbo::surrogate;
using lbo::testing::numerical_gradient;
using lbo::testing::relative_error;
using lbo::testing::bowl;

namespace {


}  // namespace

TEST(AblrTest, objective_gradient_matches_finite_differences) {
  // A small network; one task in dual form (N < D), one in primal form (N > D).
  Ablr ablr(2, AblrOptions{.hidden = {6, 5}});
  TaskData data{{bowl(3, 0.0, 1), bowl(12, 0.1, 2)}};
  for (auto& t : data.tasks) t.y = (t.y.array() - t.y.mean()) / 0.1;
  std::mt19937_64 rng(3);
  const int p = ablr.network().parameter_count();
  Eigen::VectorXd packed(p + 4);
  packed.head(p) = ablr.network().initial_parameters(rng);
  packed.tail(4) << 0.3, 2.0, -0.2, 1.5;
  Eigen::VectorXd analytic;
  ablr.objective(packed, data, analytic);
  const Eigen::VectorXd numeric = numerical_gradient(
      [&](const Eigen::VectorXd& v) {
        Eigen::VectorXd ignored;
        return ablr.objective(v, data, ignored);
      },
      packed);
  EXPECT_LT(relative_error(analytic, numeric), 1e-5);
}

TEST(AblrTest, fits_a_task_and_its_posterior_behaves) {
  Ablr ablr(2, AblrOptions{.hidden = {20, 20}, .max_iterations = 300});
  const Observations train = bowl(40, 0.0, 4);
  ablr.fit(TaskData{{train}}, 5);
  const auto post = ablr.posterior(0);
  ASSERT_TRUE(post);
  const Observations test = bowl(20, 0.0, 6);
  const Posterior p = post->predict(test.X);
  double error = 0;
  for (int i = 0; i < 20; ++i) error += std::abs(post->standardization().invert(p.mean(i)) - test.y(i));
  EXPECT_LT(error / 20, 0.03);  // outputs span about 0.4
  EXPECT_TRUE((p.var.array() > 0).all());
  // Gradients of the predictive mean and variance w.r.t. x.
  const Eigen::Vector2d x(0.4, 0.55);
  const PointPosterior g = post->predict_with_gradient(x);
  EXPECT_NEAR(g.mean, post->predict(x.transpose()).mean(0), 1e-12);
  const auto mean_at = [&](const Eigen::VectorXd& v) { return post->predict(v.transpose()).mean(0); };
  const auto var_at = [&](const Eigen::VectorXd& v) { return post->predict(v.transpose()).var(0); };
  EXPECT_LT(relative_error(g.d_mean, numerical_gradient(mean_at, x)), 1e-5);
  EXPECT_LT(relative_error(g.d_var, numerical_gradient(var_at, x)), 1e-5);
}

TEST(AblrTest, hallucination_keeps_the_mean_and_shrinks_the_variance) {
  Ablr ablr(2, AblrOptions{.hidden = {10, 10}, .max_iterations = 100});
  ablr.fit(TaskData{{bowl(15, 0.0, 7)}}, 8);
  const auto post = ablr.posterior(0);
  Eigen::MatrixXd pending(1, 2);
  pending << 0.9, 0.9;
  const auto conditioned = post->condition(pending, nullptr);
  const Eigen::MatrixXd test = Eigen::MatrixXd::Random(5, 2).cwiseAbs();
  EXPECT_LT((conditioned->predict(test).mean - post->predict(test).mean).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_LT(conditioned->predict(pending).var(0), post->predict(pending).var(0));
}

TEST(AblrTest, warm_start_keeps_parameters_and_new_tasks_join) {
  Ablr ablr(2, AblrOptions{.hidden = {8, 8}, .max_iterations = 50, .warm_iterations = 5});
  ablr.fit(TaskData{{bowl(10, 0.0, 9)}}, 1);
  EXPECT_EQ(ablr.tasks(), 1);
  const Eigen::VectorXd first = ablr.parameters();
  ablr.fit(TaskData{{bowl(10, 0.0, 9), bowl(6, 0.2, 10)}}, 2);
  EXPECT_EQ(ablr.tasks(), 2);
  EXPECT_EQ(ablr.parameters().size(), first.size() + 2);
  ASSERT_TRUE(ablr.posterior(1));
  EXPECT_FALSE(ablr.posterior(2));
  // A task without observations gets no posterior but keeps its slot.
  ablr.fit(TaskData{{bowl(10, 0.0, 9), Observations{Eigen::MatrixXd(0, 2), Eigen::VectorXd(0)}}}, 3);
  EXPECT_FALSE(ablr.posterior(1));
  EXPECT_TRUE(ablr.posterior(0));
}

TEST(AblrTest, same_seed_same_fit) {
  const TaskData data{{bowl(12, 0.0, 11)}};
  Ablr a(2, AblrOptions{.hidden = {8, 8}, .max_iterations = 40});
  Ablr b(2, AblrOptions{.hidden = {8, 8}, .max_iterations = 40});
  a.fit(data, 17);
  b.fit(data, 17);
  EXPECT_EQ(a.parameters(), b.parameters());
}

TEST(AblrTest, non_finite_observations_are_refused) {
  Ablr ablr(2, AblrOptions{.hidden = {4}});
  Observations o = bowl(5, 0.0, 12);
  o.y(2) = std::nan("");
  EXPECT_THROW(ablr.fit(TaskData{{o}}, 1), NumericalError);
  GpSurrogate gp;
  EXPECT_THROW(gp.fit(TaskData{{o}}, 1), NumericalError);
}

TEST(AblrTest, a_fit_on_one_point_does_not_collapse_later_fits) {
  // One point: the network weights would shrink to zero, a saddle later fits cannot leave.
  Ablr ablr(2, AblrOptions{.hidden = {10, 10}, .max_iterations = 200});
  const Observations all = bowl(30, 0.0, 13);
  for (int n : {1, 2, 3, 30}) ablr.fit(TaskData{{Observations{all.X.topRows(n), all.y.head(n)}}}, static_cast<std::uint64_t>(n));
  const int p = ablr.network().parameter_count();
  EXPECT_GT(ablr.parameters().head(p).norm(), 0.1);
  const Posterior fitted = ablr.posterior(0)->predict(all.X);
  EXPECT_GT(fitted.mean.cwiseAbs().maxCoeff(), 0.5);  // it explains the standardized data
}

TEST(AblrTest, restored_state_predicts_and_refits_like_the_original) {
  const TaskData first{{bowl(12, 0.0, 14), bowl(5, 0.2, 15)}};
  TaskData second = first;
  second.tasks[1] = bowl(8, 0.2, 15);
  second.tasks.push_back(bowl(3, 0.1, 16));  // a task that arrives after the checkpoint
  Ablr original(2, AblrOptions{.hidden = {8, 8}, .max_iterations = 60, .warm_iterations = 20});
  original.fit(first, 1);
  Ablr restored(2, AblrOptions{.hidden = {8, 8}, .max_iterations = 60, .warm_iterations = 20});
  restored.restore(original.state(), first);
  const Eigen::MatrixXd test = Eigen::MatrixXd::Random(6, 2).cwiseAbs();
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(restored.posterior(t)->predict(test).mean, original.posterior(t)->predict(test).mean);
    EXPECT_EQ(restored.posterior(t)->predict(test).var, original.posterior(t)->predict(test).var);
  }
  original.fit(second, 2);
  restored.fit(second, 2);
  EXPECT_EQ(restored.parameters(), original.parameters());
  EXPECT_THROW(restored.restore(SurrogateState{}, first), NumericalError);
}
