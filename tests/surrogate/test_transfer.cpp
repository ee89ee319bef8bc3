#include "lbo/surrogate/transfer.hpp"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <memory>
#include <vector>

#include "finite_difference.hpp"
#include "lbo/surrogate/gp.hpp"
#include "lbo/surrogate/linalg.hpp"
#include "test_data.hpp"

using namespace lbo::surrogate;
using lbo::testing::bowl;
using lbo::testing::numerical_gradient;
using lbo::testing::relative_error;
using lbo::testing::sample_unit_square;

namespace {

// θ = [log ℓ₁, log ℓ₂, log σ_f², log σ_n², log s²].
Eigen::VectorXd theta_with_basis(double ls, double signal, double noise, double s2) {
  Eigen::VectorXd t(5);
  t << std::log(ls), std::log(ls), std::log(signal), std::log(noise), std::log(s2);
  return t;
}

double wavy(double x1, double x2) { return std::sin(5 * x1) + std::cos(4 * x2); }

// Two fixed functions: GP posteriors of a bowl and of a wavy surface.
std::shared_ptr<const MeanBasis> two_functions() {
  const Observations a = bowl(15, 0.1, 31);
  const Observations b = sample_unit_square(15, 32, wavy);
  const Eigen::VectorXd theta = (Eigen::VectorXd(4) << std::log(0.3), std::log(0.3), 0.0, std::log(1e-3)).finished();
  return std::make_shared<MeanBasis>(std::vector<std::shared_ptr<const TaskPosterior>>{
      make_gp_posterior(a.X, a.y, theta, Standardization{}), make_gp_posterior(b.X, b.y, theta, Standardization{})});
}

// The full covariance of the basis GP at X, noise included, written out directly.
Eigen::MatrixXd direct_covariance(const Eigen::MatrixXd& X, const Eigen::VectorXd& theta, const MeanBasis& basis) {
  const Eigen::MatrixXd G = basis.values(X);
  Eigen::MatrixXd C = matern52(X, X, theta);
  C.array() += 1.0;
  C += std::exp(theta(4)) / basis.size() * G * G.transpose();
  C.diagonal().array() += std::exp(theta(3));
  return C;
}

Eigen::MatrixXd test_points() {
  Eigen::MatrixXd T(6, 2);
  T << 0.1, 0.2, 0.5, 0.5, 0.9, 0.1, 0.3, 0.8, 0.7, 0.6, 0.05, 0.95;
  return T;
}

double rms_error(const TaskPosterior& p, const Observations& truth) {
  const Standardization& s = p.standardization();
  const Eigen::VectorXd predicted = (s.offset + s.scale * p.predict(truth.X).mean.array()).matrix();
  return std::sqrt((predicted - truth.y).squaredNorm() / static_cast<double>(truth.y.size()));
}

}  // namespace

TEST(MeanBasisTest, objective_is_the_log_density_under_the_basis_kernel) {
  const auto basis = two_functions();
  const Observations o = sample_unit_square(8, 33, [](double x1, double x2) { return 2 * wavy(x1, x2) + x1; });
  const Eigen::VectorXd theta = theta_with_basis(0.4, 0.6, 0.02, 1.7);
  const Eigen::MatrixXd G = basis->values(o.X);
  const Eigen::FullPivLU<Eigen::MatrixXd> lu(direct_covariance(o.X, theta, *basis));
  const double direct = -0.5 * 8 * std::log(2 * M_PI) - 0.5 * std::log(lu.determinant()) - 0.5 * o.y.dot(lu.solve(o.y));
  EXPECT_NEAR(gp_objective(o.X, o.y, theta, false, &G).value, direct, 1e-9);
  const double plain_prior = gp_objective(o.X, o.y, theta.head(4), true).value - gp_objective(o.X, o.y, theta.head(4), false).value;
  EXPECT_NEAR(gp_objective(o.X, o.y, theta, true, &G).value, direct + plain_prior - 0.5 * theta(4) * theta(4), 1e-9);
}

TEST(MeanBasisTest, hyperparameter_gradients_match_finite_differences) {
  const auto basis = two_functions();
  const Observations o = sample_unit_square(9, 34, [](double x1, double x2) { return wavy(x1, x2) - x2; });
  const Eigen::MatrixXd G = basis->values(o.X);
  const Eigen::VectorXd theta = theta_with_basis(0.3, 1.2, 0.03, 0.4);
  for (bool prior : {false, true}) {
    const GpObjective g = gp_objective(o.X, o.y, theta, prior, &G);
    ASSERT_EQ(g.gradient.size(), 5);
    const Eigen::VectorXd numeric =
        numerical_gradient([&](const Eigen::VectorXd& t) { return gp_objective(o.X, o.y, t, prior, &G).value; }, theta);
    EXPECT_LT(relative_error(g.gradient, numeric), 1e-6) << "prior " << prior;
  }
}

TEST(MeanBasisTest, posterior_matches_closed_form_and_its_gradients_finite_differences) {
  const auto basis = two_functions();
  const Observations o = sample_unit_square(10, 35, [](double x1, double x2) { return wavy(x1, x2) + 0.3 * x1; });
  const Eigen::VectorXd theta = theta_with_basis(0.35, 0.5, 0.01, 2.0);
  const auto post = make_gp_posterior(o.X, o.y, theta, Standardization{}, basis);
  const Eigen::MatrixXd T = test_points();
  // Cross- and prior covariances of the basis GP, directly: the joint covariance of [X; T].
  Eigen::MatrixXd XT(16, 2);
  XT << o.X, T;
  Eigen::MatrixXd joint = direct_covariance(XT, theta, *basis);
  joint.diagonal().array() -= std::exp(theta(3));
  const Eigen::MatrixXd K = joint.topLeftCorner(10, 10) + 0.01 * Eigen::MatrixXd::Identity(10, 10);
  const Eigen::MatrixXd Ks = joint.bottomLeftCorner(6, 10);
  const Posterior p = post->predict(T);
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(p.mean(i), Ks.row(i).dot(K.ldlt().solve(o.y)), 1e-8);
    EXPECT_NEAR(p.var(i), joint(10 + i, 10 + i) - Ks.row(i).dot(K.ldlt().solve(Ks.row(i).transpose())), 1e-8);
  }
  const Eigen::Vector2d x(0.41, 0.27);
  const PointPosterior q = post->predict_with_gradient(x);
  EXPECT_NEAR(q.mean, post->predict(x.transpose()).mean(0), 1e-10);
  EXPECT_NEAR(q.var, post->predict(x.transpose()).var(0), 1e-10);
  const auto mean_at = [&](const Eigen::VectorXd& v) { return post->predict(v.transpose()).mean(0); };
  const auto var_at = [&](const Eigen::VectorXd& v) { return post->predict(v.transpose()).var(0); };
  EXPECT_LT(relative_error(q.d_mean, numerical_gradient(mean_at, x)), 1e-6);
  EXPECT_LT(relative_error(q.d_var, numerical_gradient(var_at, x)), 1e-6);
}

TEST(MeanBasisTest, conditioning_equals_refitting_with_the_basis) {
  const auto basis = two_functions();
  const Observations o = sample_unit_square(10, 36, [](double x1, double x2) { return wavy(x1, x2) * x2; });
  const Eigen::VectorXd theta = theta_with_basis(0.3, 0.8, 0.01, 1.0);
  const auto first = make_gp_posterior(o.X.topRows(7), o.y.head(7), theta, Standardization{}, basis);
  const Eigen::VectorXd rest = o.y.tail(3);
  const auto extended = first->condition(o.X.bottomRows(3), &rest);
  const auto refit = make_gp_posterior(o.X, o.y, theta, Standardization{}, basis);
  const Eigen::MatrixXd T = test_points();
  EXPECT_LT((extended->predict(T).mean - refit->predict(T).mean).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_LT((extended->predict(T).var - refit->predict(T).var).cwiseAbs().maxCoeff(), 1e-9);
  const auto hallucinated = first->condition(o.X.bottomRows(3), nullptr);
  EXPECT_LT((hallucinated->predict(T).mean - first->predict(T).mean).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_TRUE((hallucinated->predict(o.X.bottomRows(3)).var.array() < first->predict(o.X.bottomRows(3)).var.array()).all());
}

TEST(MeanBasisTest, a_theta_of_the_wrong_length_is_refused) {
  const Observations o = bowl(5, 0.0, 37);
  EXPECT_THROW(make_gp_posterior(o.X, o.y, theta_with_basis(0.3, 1, 0.01, 1).head(4), Standardization{}, two_functions()),
               NumericalError);
}

// Task 0: a wavy surface seen densely; task 1: the same surface, rescaled and shifted, seen at 5
// points; task 2: an unrelated bowl. Inner model: independent GPs.
TaskData three_tasks() {
  TaskData data;
  data.tasks.push_back(sample_unit_square(40, 41, wavy));
  data.tasks.push_back(sample_unit_square(5, 42, [](double x1, double x2) { return 3 * wavy(x1, x2) + 2; }));
  data.tasks.push_back(bowl(12, 0.2, 43));
  return data;
}

TEST(TransferGpTest, a_rescaled_task_borrows_the_shape_an_unrelated_one_is_not_hurt) {
  const TaskData data = three_tasks();
  TransferGp transfer(std::make_unique<GpSurrogate>());
  transfer.fit(data, 1);
  GpSurrogate alone;
  alone.fit(data, 1);
  const Observations truth1 = sample_unit_square(200, 44, [](double x1, double x2) { return 3 * wavy(x1, x2) + 2; });
  const Observations truth2 = bowl(200, 0.2, 45);
  const double transferred = rms_error(*transfer.posterior(1), truth1), own = rms_error(*alone.posterior(1), truth1);
  EXPECT_LT(transferred, 0.3 * own) << "transfer " << transferred << " alone " << own;
  const double unrelated = rms_error(*transfer.posterior(2), truth2), unrelated_alone = rms_error(*alone.posterior(2), truth2);
  EXPECT_LT(unrelated, 1.25 * unrelated_alone) << "transfer " << unrelated << " alone " << unrelated_alone;
  // Task 1 (5 points) is a basis of the others; it leans on tasks 0 and 2.
  EXPECT_EQ(transfer.basis_tasks(1), (std::vector<int>{0, 2}));
  EXPECT_EQ(transfer.basis_tasks(0), (std::vector<int>{1, 2}));
}

TEST(TransferGpTest, a_task_with_too_few_observations_is_no_basis_and_a_lone_task_is_the_plain_gp) {
  TaskData data = three_tasks();
  data.tasks[1] = sample_unit_square(3, 46, wavy);
  TransferGp transfer(std::make_unique<GpSurrogate>());
  transfer.fit(data, 2);
  EXPECT_EQ(transfer.basis_tasks(0), (std::vector<int>{2}));
  EXPECT_EQ(transfer.basis_tasks(1), (std::vector<int>{0, 2}));

  TaskData lone;
  lone.tasks.push_back(data.tasks[0]);
  TransferGp one(std::make_unique<GpSurrogate>());
  one.fit(lone, 3);
  GpSurrogate plain;
  plain.fit(lone, 3);
  EXPECT_TRUE(one.basis_tasks(0).empty());
  const Eigen::MatrixXd T = test_points();
  EXPECT_LT((one.predict(0, T).mean - plain.predict(0, T).mean).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(TransferGpTest, with_room_for_one_basis_function_a_task_takes_the_one_that_tracks_it) {
  TaskData data = three_tasks();
  data.tasks[1] = sample_unit_square(6, 47, [](double x1, double x2) { return 3 * wavy(x1, x2) + 2; });
  TransferGp::Options options;
  options.max_basis = 1;
  TransferGp transfer(std::make_unique<GpSurrogate>(), options);
  transfer.fit(data, 5);
  EXPECT_EQ(transfer.basis_tasks(1), (std::vector<int>{0}));  // the wavy task, not the more recent bowl
  EXPECT_EQ(transfer.basis_tasks(2).size(), 1u);
  // Fewer than 3 points: no correlation to go by, the most recent task.
  data.tasks.push_back(sample_unit_square(2, 48, wavy));
  TransferGp early(std::make_unique<GpSurrogate>(), options);
  early.fit(data, 6);
  EXPECT_EQ(early.basis_tasks(3), (std::vector<int>{2}));
}

// An inner model whose fits fail once `failing` is set (it keeps its last good posteriors).
class FailingInner final : public Surrogate {
 public:
  bool failing = false;
  void fit(const TaskData& data, std::uint64_t seed) override {
    if (failing) throw NumericalError("inner: no usable fit");
    gps_.fit(data, seed);
  }
  std::shared_ptr<const TaskPosterior> posterior(int task) const override { return gps_.posterior(task); }
  SurrogateState state() const override { return gps_.state(); }
  void restore(const SurrogateState& state, const TaskData& data) override { gps_.restore(state, data); }

 private:
  GpSurrogate gps_;
};

TEST(TransferGpTest, a_failed_inner_fit_still_refits_the_tasks_on_the_last_good_bases) {
  TaskData data = three_tasks();
  auto owned = std::make_unique<FailingInner>();
  FailingInner& inner = *owned;
  TransferGp transfer(std::move(owned));
  transfer.fit(data, 7);
  const auto before = transfer.posterior(1);
  // Task 1 gets a new result; the inner fit fails, the transfer GP of task 1 is refitted.
  const Eigen::RowVector2d x(0.8, 0.2);
  const double value = 3 * wavy(x(0), x(1)) + 2;
  Observations& o = data.tasks[1];
  o.X.conservativeResize(o.X.rows() + 1, Eigen::NoChange);
  o.X.bottomRows(1) = x;
  o.y.conservativeResize(o.y.size() + 1);
  o.y(o.y.size() - 1) = value;
  inner.failing = true;
  ASSERT_NO_THROW(transfer.fit(data, 8));
  const auto after = transfer.posterior(1);
  ASSERT_NE(after, before);
  EXPECT_EQ(transfer.basis_tasks(1), (std::vector<int>{0, 2}));
  const Standardization& s = after->standardization();
  EXPECT_NEAR(s.invert(after->predict(x).mean(0)), value, 0.05 * std::abs(value) + 0.05);
}

// An inner model with no posteriors at all (one that could not fit any task).
class EmptyInner final : public Surrogate {
 public:
  void fit(const TaskData&, std::uint64_t) override {}
  std::shared_ptr<const TaskPosterior> posterior(int) const override { return nullptr; }
  SurrogateState state() const override { return {}; }
  void restore(const SurrogateState&, const TaskData&) override {}
};

TEST(TransferGpTest, other_tasks_plain_gp_means_are_basis_functions_and_a_task_without_one_is_fitted_once) {
  const TaskData data = three_tasks();
  TransferGp transfer(std::make_unique<EmptyInner>());
  transfer.fit(data, 10);
  EXPECT_EQ(transfer.basis_tasks(1), (std::vector<int>{0, 2}));
  const SurrogateState state = transfer.state();
  ASSERT_TRUE(state.transfer);
  EXPECT_EQ(state.transfer->gp_basis[1], (std::vector<int>{0, 2}));
  EXPECT_TRUE(state.transfer->basis[1].empty());
  EXPECT_GT(transfer.basis_weight(1), 0.5);

  // Only task 0 has data: it has no basis, so only its plain GP is fitted.
  TaskData lone = data;
  lone.tasks[1] = Observations{Eigen::MatrixXd(0, 2), Eigen::VectorXd(0)};
  lone.tasks[2] = Observations{Eigen::MatrixXd(0, 2), Eigen::VectorXd(0)};
  TransferGp one(std::make_unique<EmptyInner>());
  one.fit(lone, 11);
  const SurrogateState alone = one.state();
  ASSERT_TRUE(alone.transfer && alone.transfer->plain);
  EXPECT_FALSE(alone.transfer->plain->theta.at(0).empty());
  EXPECT_TRUE(alone.transfer->gp.theta.empty() || alone.transfer->gp.theta[0].empty());
  ASSERT_TRUE(one.posterior(0));
}

TEST(TransferGpTest, restore_rebuilds_the_same_posteriors_and_bases) {
  const TaskData data = three_tasks();
  TransferGp fitted(std::make_unique<GpSurrogate>());
  fitted.fit(data, 4);
  const SurrogateState state = fitted.state();
  ASSERT_TRUE(state.transfer && state.gp);
  TransferGp restored(std::make_unique<GpSurrogate>());
  restored.restore(state, data);
  const Eigen::MatrixXd T = test_points();
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(restored.basis_tasks(t), fitted.basis_tasks(t));
    EXPECT_LT((restored.predict(t, T).mean - fitted.predict(t, T).mean).cwiseAbs().maxCoeff(), 1e-10);
    EXPECT_LT((restored.predict(t, T).var - fitted.predict(t, T).var).cwiseAbs().maxCoeff(), 1e-10);
  }
  SurrogateState bare = state;
  bare.transfer.reset();
  EXPECT_THROW(restored.restore(bare, data), NumericalError);
  SurrogateState before_averaging = state;  // a version 1 TransferState: no plain GPs
  before_averaging.transfer->plain.reset();
  EXPECT_THROW(restored.restore(before_averaging, data), NumericalError);
}

// A task with no new observations keeps its θ and basis tasks, and its posterior follows its
// basis tasks' new means: so a model restored from the state before a fit and fitted again
// proposes as the one that was never stopped (a run resumed with --sync).
TEST(TransferGpTest, a_kept_task_follows_its_basis_tasks_so_a_restored_model_refits_to_the_same_posteriors) {
  const TaskData before = three_tasks();
  TransferGp live(std::make_unique<GpSurrogate>());
  live.fit(before, 4);
  const SurrogateState saved = live.state();
  const Eigen::MatrixXd T = test_points();
  const Posterior kept_before = live.predict(1, T);
  const auto unchanged = live.posterior(1);
  live.fit(before, 5);  // nothing new: nothing is rebuilt
  EXPECT_EQ(live.posterior(1), unchanged);

  TaskData after = before;  // task 0 grows; tasks 1 and 2 keep their observations
  const Observations more = sample_unit_square(10, 46, wavy);
  Observations& grown = after.tasks[0];
  grown.X.conservativeResize(grown.X.rows() + more.X.rows(), Eigen::NoChange);
  grown.X.bottomRows(more.X.rows()) = more.X;
  grown.y.conservativeResize(grown.y.size() + more.y.size());
  grown.y.tail(more.y.size()) = more.y;
  live.fit(after, 6);
  ASSERT_EQ(live.basis_tasks(1), (std::vector<int>{0, 2}));
  EXPECT_EQ(live.state().transfer->gp.theta[1], saved.transfer->gp.theta[1]);  // θ kept
  EXPECT_GT((live.predict(1, T).mean - kept_before.mean).cwiseAbs().maxCoeff(), 1e-6);  // the basis moved

  // Marked finished, a task leans on finished tasks only (their means stay put).
  TaskData marked = before;
  marked.finished = {false, true, true};
  TransferGp finished(std::make_unique<GpSurrogate>());
  finished.fit(marked, 4);
  EXPECT_EQ(finished.basis_tasks(1), (std::vector<int>{2}));
  EXPECT_EQ(finished.basis_tasks(0), (std::vector<int>{1, 2}));

  TransferGp resumed(std::make_unique<GpSurrogate>());
  resumed.restore(saved, after);
  resumed.fit(after, 6);
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(resumed.basis_tasks(t), live.basis_tasks(t));
    EXPECT_LT((resumed.predict(t, T).mean - live.predict(t, T).mean).cwiseAbs().maxCoeff(), 1e-12) << "task " << t;
    EXPECT_LT((resumed.predict(t, T).var - live.predict(t, T).var).cwiseAbs().maxCoeff(), 1e-12) << "task " << t;
    EXPECT_NEAR(resumed.basis_weight(t), live.basis_weight(t), 1e-12) << "task " << t;
  }
}

namespace {

// Two GPs of the same data: one with the basis and a smooth kernel, one plain and rough.
std::pair<std::shared_ptr<const TaskPosterior>, std::shared_ptr<const TaskPosterior>> two_models(const Observations& o) {
  const Eigen::VectorXd rough = (Eigen::VectorXd(4) << std::log(0.15), std::log(0.25), std::log(2.0), std::log(1e-2)).finished();
  return {make_gp_posterior(o.X, o.y, theta_with_basis(0.6, 1.0, 1e-3, 1.5), Standardization{}, two_functions()),
          make_gp_posterior(o.X, o.y, rough, Standardization{})};
}

}  // namespace

TEST(ModelAverageTest, moments_are_the_mixtures_and_gradients_match_finite_differences) {
  const Observations o = sample_unit_square(9, 51, [](double x1, double x2) { return wavy(x1, x2) + x1 * x2; });
  const auto [a, b] = two_models(o);
  const double w = 0.3;
  const ModelAverage average(a, b, w);
  const Eigen::MatrixXd T = test_points();
  const Posterior p = average.predict(T), pa = a->predict(T), pb = b->predict(T);
  for (int i = 0; i < T.rows(); ++i) {
    // The mixture's mean and variance (law of total variance), written out.
    const double mean = w * pa.mean(i) + (1 - w) * pb.mean(i);
    const double var = w * pa.var(i) + (1 - w) * pb.var(i) +
                       w * (1 - w) * (pa.mean(i) - pb.mean(i)) * (pa.mean(i) - pb.mean(i));
    EXPECT_NEAR(p.mean(i), mean, 1e-12);
    EXPECT_NEAR(p.var(i), var, 1e-10);
  }
  const Eigen::Vector2d x(0.37, 0.61);
  const PointPosterior q = average.predict_with_gradient(x);
  EXPECT_NEAR(q.mean, average.predict(x.transpose()).mean(0), 1e-10);
  EXPECT_NEAR(q.var, average.predict(x.transpose()).var(0), 1e-10);
  const auto mean_at = [&](const Eigen::VectorXd& v) { return average.predict(v.transpose()).mean(0); };
  const auto var_at = [&](const Eigen::VectorXd& v) { return average.predict(v.transpose()).var(0); };
  EXPECT_LT(relative_error(q.d_mean, numerical_gradient(mean_at, x)), 1e-6);
  EXPECT_LT(relative_error(q.d_var, numerical_gradient(var_at, x)), 1e-6);
}

TEST(ModelAverageTest, conditioning_conditions_both_models_and_hallucinating_keeps_the_mean) {
  const Observations o = sample_unit_square(10, 52, [](double x1, double x2) { return wavy(x1, x2) - x2; });
  const Observations first{o.X.topRows(7), o.y.head(7)};
  const auto [a, b] = two_models(first);
  const ModelAverage average(a, b, 0.6);
  const Eigen::VectorXd rest = o.y.tail(3);
  const auto extended = average.condition(o.X.bottomRows(3), &rest);
  const ModelAverage direct(a->condition(o.X.bottomRows(3), &rest), b->condition(o.X.bottomRows(3), &rest), 0.6);
  const Eigen::MatrixXd T = test_points();
  EXPECT_LT((extended->predict(T).mean - direct.predict(T).mean).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((extended->predict(T).var - direct.predict(T).var).cwiseAbs().maxCoeff(), 1e-10);
  const auto hallucinated = average.condition(o.X.bottomRows(3), nullptr);
  EXPECT_LT((hallucinated->predict(T).mean - average.predict(T).mean).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_TRUE((hallucinated->predict(o.X.bottomRows(3)).var.array() < average.predict(o.X.bottomRows(3)).var.array()).all());
}

TEST(TransferGpTest, a_basis_the_data_bear_out_gets_the_weight_one_they_do_not_loses_it) {
  // Task 0: the wavy surface; task 1: it rescaled (the basis explains it); task 2: an unrelated
  // rough surface seen at many points (the basis only adds spurious structure).
  TaskData data;
  data.tasks.push_back(sample_unit_square(40, 53, wavy));
  data.tasks.push_back(sample_unit_square(12, 54, [](double x1, double x2) { return 3 * wavy(x1, x2) + 2; }));
  data.tasks.push_back(sample_unit_square(30, 55, [](double x1, double x2) { return std::cos(9 * x1 * x2) + x1; }));
  TransferGp transfer(std::make_unique<GpSurrogate>());
  transfer.fit(data, 9);
  EXPECT_GT(transfer.basis_weight(1), 0.9);
  EXPECT_LT(transfer.basis_weight(2), 0.5);
  // The posterior is the average with that weight.
  const auto* average = dynamic_cast<const ModelAverage*>(transfer.posterior(2).get());
  if (average != nullptr) {
    EXPECT_NEAR(average->weight(), transfer.basis_weight(2), 1e-12);
  }
  // Without a basis there is nothing to weigh.
  TaskData lone;
  lone.tasks.push_back(data.tasks[2]);
  TransferGp one(std::make_unique<GpSurrogate>());
  one.fit(lone, 9);
  EXPECT_EQ(one.basis_weight(0), 0.0);
}

TEST(TransferGpTest, a_tracked_posterior_with_a_basis_equals_conditioning) {
  const TaskData data = three_tasks();
  TransferGp transfer(std::make_unique<GpSurrogate>());
  transfer.fit(data, 1);
  const auto posterior = transfer.posterior(1);
  const Observations C = sample_unit_square(50, 47, wavy);
  const auto tracked = posterior->track(C.X);
  const Observations P = sample_unit_square(5, 48, wavy);
  std::vector<double> values;
  for (Eigen::Index i = 0; i < P.X.rows(); ++i) {
    values.push_back(tracked->mean_at(P.X.row(i).transpose()));
    tracked->add(P.X.row(i).transpose(), nullptr);
  }
  tracked->set_value(2, 1.25);
  values[2] = 1.25;
  const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(values.size()));
  const Posterior want = posterior->condition(P.X, &y)->predict(C.X);
  EXPECT_LT((tracked->at_points().mean - want.mean).cwiseAbs().maxCoeff(), 1e-7);
  EXPECT_LT((tracked->at_points().var - want.var).cwiseAbs().maxCoeff(), 1e-7);
  EXPECT_LT(tracked->at_points().var.sum(), posterior->predict(C.X).var.sum());
}
