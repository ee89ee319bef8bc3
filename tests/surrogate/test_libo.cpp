#include "lbo/surrogate/libo.hpp"

#include "lbo/surrogate/linalg.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace lbo::surrogate;

namespace {

Eigen::MatrixXd uniform_points(Eigen::Index rows, Eigen::Index cols, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = u(rng);
  return m;
}

// A two-dimensional dictionary with every family: a Matérn, an RBF and two cosine products.
std::shared_ptr<const CombinedKernel> mixed_kernel() {
  auto dictionary = std::make_shared<const KernelDictionary>(std::vector<BaseKernel>{
      {KernelFamily::matern52, {0, 1}, 0.4, {}},
      {KernelFamily::rbf, {1}, 0.3, {}},
      {KernelFamily::cosine, {0, 1}, 1, {2, 1}},
      {KernelFamily::cosine, {0}, 1, {3}},
  });
  return std::make_shared<const CombinedKernel>(dictionary, std::vector<int>{});
}

}  // namespace

TEST(FixedKernelGpTest, objective_gradient_matches_finite_differences) {
  std::mt19937_64 rng(4);
  const auto kernel = mixed_kernel();
  const Eigen::MatrixXd X = uniform_points(9, 2, rng);
  const Eigen::VectorXd y = (3.0 * X.col(0)).array().sin().matrix() + X.col(1);
  // The learned kernel (two of the four) alone, and mixed with all four.
  const Eigen::MatrixXd K = CombinedKernel(std::make_shared<KernelDictionary>(kernel->dictionary()), {1, 3}).gram(X, X);
  const Eigen::MatrixXd K_full = kernel->gram(X, X);
  // Dynamic vectors throughout (a fixed-size one assigned to a dynamic one trips GCC 12's
  // -Warray-bounds on Eigen's unused AVX path).
  const std::vector<Eigen::VectorXd> thetas = {
      (Eigen::VectorXd(2) << 0.3, -3.0).finished(), (Eigen::VectorXd(2) << -1.0, -1.0).finished(),
      (Eigen::VectorXd(3) << 0.3, -3.0, -2.0).finished(), (Eigen::VectorXd(3) << -0.5, -2.0, 1.0).finished()};
  for (const Eigen::VectorXd& theta : thetas) {
    const Eigen::MatrixXd* full = theta.size() == 3 ? &K_full : nullptr;
    const GpObjective o = fixed_kernel_objective(K, full, y, theta);
    ASSERT_EQ(o.gradient.size(), theta.size());
    for (Eigen::Index j = 0; j < theta.size(); ++j) {
      const double h = 1e-6;
      Eigen::VectorXd up = theta, down = theta;
      up(j) += h;
      down(j) -= h;
      const double numeric =
          (fixed_kernel_objective(K, full, y, up).value - fixed_kernel_objective(K, full, y, down).value) / (2 * h);
      EXPECT_NEAR(o.gradient(j), numeric, 1e-5 * std::max(1.0, std::abs(numeric))) << "θ" << j << " of " << theta.size();
    }
  }
}

TEST(FixedKernelGpTest, a_share_of_k_full_mixes_the_two_kernels) {
  const auto all = mixed_kernel();
  const auto dictionary = std::make_shared<KernelDictionary>(all->dictionary());
  const CombinedKernel mixed(dictionary, {0, 2}, 0.3), learned(dictionary, {0, 2});
  const Eigen::MatrixXd A = (Eigen::MatrixXd(2, 2) << 0.1, 0.2, 0.7, 0.4).finished();
  const Eigen::MatrixXd B = (Eigen::MatrixXd(3, 2) << 0.3, 0.9, 0.5, 0.5, 0.0, 1.0).finished();
  EXPECT_LT((mixed.gram(A, B) - (0.7 * learned.gram(A, B) + 0.3 * all->gram(A, B))).cwiseAbs().maxCoeff(), 1e-14);
  EXPECT_LT((mixed.diagonal(A) - (0.7 * learned.diagonal(A) + 0.3 * all->diagonal(A))).cwiseAbs().maxCoeff(), 1e-14);
  const Eigen::VectorXd x = A.row(1).transpose();
  EXPECT_LT((mixed.gradient(x, B) - (0.7 * learned.gradient(x, B) + 0.3 * all->gradient(x, B))).cwiseAbs().maxCoeff(), 1e-14);
  // No active set: k_full, whatever the share.
  EXPECT_EQ(CombinedKernel(dictionary, {}, 0.3).full_share(), 0.0);
}

TEST(FixedKernelGpTest, one_observation_gives_the_closed_form_posterior) {
  const auto kernel = mixed_kernel();
  const Eigen::MatrixXd x0 = (Eigen::MatrixXd(1, 2) << 0.2, 0.7).finished();
  const Eigen::MatrixXd xs = (Eigen::MatrixXd(2, 2) << 0.2, 0.7, 0.9, 0.1).finished();
  const double y0 = 1.3, signal = 1.7, noise = 0.05;
  const auto p = make_fixed_kernel_posterior(kernel, x0, Eigen::VectorXd::Constant(1, y0),
                                             Eigen::Vector2d(std::log(signal), std::log(noise)), Standardization{});
  const Posterior post = p->predict(xs);
  const double k00 = kernel->gram(x0, x0)(0, 0);
  for (Eigen::Index i = 0; i < xs.rows(); ++i) {
    const double ks = kernel->gram(xs.row(i), x0)(0, 0), kss = kernel->gram(xs.row(i), xs.row(i))(0, 0);
    const double denominator = signal * k00 + noise;
    EXPECT_NEAR(post.mean(i), signal * ks * y0 / denominator, 1e-12);
    EXPECT_NEAR(post.var(i), signal * kss - signal * ks * signal * ks / denominator, 1e-12);
  }
}

TEST(FixedKernelGpTest, point_gradients_match_finite_differences) {
  std::mt19937_64 rng(8);
  const auto kernel = std::make_shared<const CombinedKernel>(std::make_shared<KernelDictionary>(mixed_kernel()->dictionary()),
                                                             std::vector<int>{1, 2}, 0.2);
  const Eigen::MatrixXd X = uniform_points(7, 2, rng);
  const Eigen::VectorXd y = X.col(0) - 2.0 * X.col(1).cwiseAbs2();
  const auto p = make_fixed_kernel_posterior(kernel, X, y, Eigen::Vector2d(0.2, -4.0), Standardization{});
  for (int trial = 0; trial < 5; ++trial) {
    const Eigen::VectorXd x = uniform_points(2, 1, rng);
    const PointPosterior at = p->predict_with_gradient(x);
    const Posterior batch = p->predict(x.transpose());
    EXPECT_NEAR(at.mean, batch.mean(0), 1e-12);
    EXPECT_NEAR(at.var, batch.var(0), 1e-12);
    for (int j = 0; j < 2; ++j) {
      const double h = 1e-6;
      Eigen::VectorXd up = x, down = x;
      up(j) += h;
      down(j) -= h;
      const Posterior a = p->predict(up.transpose()), b = p->predict(down.transpose());
      EXPECT_NEAR(at.d_mean(j), (a.mean(0) - b.mean(0)) / (2 * h), 1e-6);
      EXPECT_NEAR(at.d_var(j), (a.var(0) - b.var(0)) / (2 * h), 1e-6);
    }
  }
}

TEST(FixedKernelGpTest, conditioning_equals_the_posterior_on_all_points) {
  std::mt19937_64 rng(15);
  const auto kernel = mixed_kernel();
  const Eigen::MatrixXd X = uniform_points(8, 2, rng), Xn = uniform_points(3, 2, rng), C = uniform_points(6, 2, rng);
  const Eigen::VectorXd y = X.col(0) + X.col(1), yn = Xn.col(0) - Xn.col(1);
  const Eigen::Vector2d theta(0.1, -3.0);
  const auto p = make_fixed_kernel_posterior(kernel, X, y, theta, Standardization{});
  Eigen::MatrixXd all(11, 2);
  all << X, Xn;
  Eigen::VectorXd all_y(11);
  all_y << y, yn;
  const Posterior conditioned = p->condition(Xn, &yn)->predict(C);
  const Posterior direct = make_fixed_kernel_posterior(kernel, all, all_y, theta, Standardization{})->predict(C);
  EXPECT_LT((conditioned.mean - direct.mean).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_LT((conditioned.var - direct.var).cwiseAbs().maxCoeff(), 1e-9);
  // Hallucinated at the mean: the mean stays, the variance shrinks.
  const Posterior before = p->predict(C), believed = p->condition(Xn, nullptr)->predict(C);
  EXPECT_LT((believed.mean - before.mean).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_TRUE((believed.var.array() <= before.var.array() + 1e-12).all());
}

namespace {

// LiBO's synthetic environment (App. G.1), one-dimensional: f_s = Σ_{j∈J*} β_s^(j) cos(jπx) with
// |J*| = 3 of the first 50 cosine bases (frequencies `active`), noise σ = 0.1. Every row is
// exploration; the first `finished` tasks are finished.
TaskData cosine_family(const std::vector<int>& active, int tasks, int points, int finished, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1), magnitude(0.5, 3.0);
  std::normal_distribution<double> noise(0, 0.1);
  TaskData data;
  for (int s = 0; s < tasks; ++s) {
    std::vector<double> beta;
    for (std::size_t j = 0; j < active.size(); ++j) beta.push_back((u(rng) < 0.5 ? -1 : 1) * magnitude(rng));
    Observations o{Eigen::MatrixXd(points, 1), Eigen::VectorXd(points)};
    for (int i = 0; i < points; ++i) {
      o.X(i, 0) = u(rng);
      o.y(i) = noise(rng);
      for (std::size_t j = 0; j < beta.size(); ++j) o.y(i) += beta[j] * std::cos(active[j] * M_PI * o.X(i, 0));
    }
    data.tasks.push_back(std::move(o));
    data.finished.push_back(s < finished);
    data.exploration.emplace_back(static_cast<std::size_t>(points));
    std::iota(data.exploration.back().begin(), data.exploration.back().end(), Eigen::Index{0});
  }
  return data;
}

// 30 finished tasks of the family with frequencies 3, 7 and 12 and task 30 of it, open; task 31,
// open, is a narrow bump those cosines cannot make (at a scale no kept kernel has).
TaskData family_and_a_bump() {
  TaskData data = cosine_family({3, 7, 12}, 31, 10, 30, 4);
  std::mt19937_64 rng(6);
  Observations bump{uniform_points(14, 1, rng), Eigen::VectorXd(14)};
  for (Eigen::Index i = 0; i < 14; ++i) bump.y(i) = 3.0 * std::exp(-std::pow((bump.X(i, 0) - 0.37) / 0.05, 2));
  data.tasks.push_back(bump);
  data.finished.push_back(false);
  data.exploration.emplace_back();
  return data;
}

// The indices of the cosine bases cos(jπx) of KernelDictionary::standard(1), by frequency j.
std::vector<int> cosine_indices(const KernelDictionary& dictionary, const std::vector<int>& frequencies) {
  std::vector<int> indices;
  for (int f : frequencies) {
    for (int j = 0; j < dictionary.size(); ++j) {
      const BaseKernel& k = dictionary.kernel(j);
      if (k.family == KernelFamily::cosine && k.frequencies == std::vector<int>{f}) indices.push_back(j);
    }
  }
  return indices;
}

}  // namespace

TEST(LiboTest, without_a_finished_task_the_kernel_is_the_uniform_combination) {
  const TaskData data = cosine_family({3, 7, 12}, 2, 6, 0, 1);
  Libo libo(1);
  libo.fit(data, 5);
  EXPECT_TRUE(libo.active().empty());
  EXPECT_EQ(libo.describe_active(), "k_full");
  ASSERT_NE(libo.posterior(0), nullptr);
  // k_full of the standard dictionary: the mean of all its kernels.
  const Eigen::MatrixXd a = Eigen::MatrixXd::Constant(1, 1, 0.25), b = Eigen::MatrixXd::Constant(1, 1, 0.6);
  double sum = 0;
  for (const BaseKernel& k : libo.dictionary().kernels()) sum += k.gram(a, b)(0, 0);
  EXPECT_NEAR(CombinedKernel(std::make_shared<KernelDictionary>(libo.dictionary()), {}).gram(a, b)(0, 0),
              sum / libo.dictionary().size(), 1e-12);
}

TEST(LiboTest, learns_the_familys_kernels_from_finished_tasks_and_predicts_a_new_task_better) {
  const std::vector<int> frequencies = {3, 7, 12};
  // 30 finished tasks of 10 points, and a new task with 6 points.
  TaskData data = cosine_family(frequencies, 31, 10, 30, 2);
  Observations& fresh = data.tasks.back();
  const Eigen::MatrixXd test_x = fresh.X.bottomRows(4);
  const Eigen::VectorXd test_y = fresh.y.tail(4);
  fresh = {fresh.X.topRows(6), fresh.y.head(6)};
  data.exploration.back().resize(6);

  Libo libo(1);
  libo.fit(data, 3);
  const std::vector<int> expected = cosine_indices(libo.dictionary(), frequencies);
  for (int j : expected) {
    EXPECT_TRUE(std::binary_search(libo.active().begin(), libo.active().end(), j)) << libo.describe_active();
  }
  EXPECT_LE(libo.active().size(), 6u) << libo.describe_active();
  ASSERT_EQ(libo.learned_from().size(), 30u);

  // With k̂, 6 points of the new task predict its held-out ones better than k_full does.
  TaskData alone;
  alone.tasks = {fresh};
  Libo untaught(1);
  untaught.fit(alone, 3);
  const auto error = [&](const Libo& model, int task) {
    const auto p = model.posterior(task);
    const Posterior post = p->predict(test_x);
    Eigen::VectorXd predicted(test_y.size());
    for (Eigen::Index i = 0; i < test_y.size(); ++i) predicted(i) = p->standardization().invert(post.mean(i));
    return (predicted - test_y).norm();
  };
  EXPECT_LT(error(libo, 30), 0.5 * error(untaught, 0));
}

TEST(LiboTest, refits_only_what_changed_and_restores_exactly) {
  TaskData data = cosine_family({2, 5}, 4, 8, 2, 9);
  Libo libo(1);
  libo.fit(data, 11);
  const std::vector<int> active = libo.active();
  EXPECT_FALSE(active.empty());

  // The same finished tasks: Ĵ is kept (no re-estimation, whatever the seed).
  libo.fit(data, 12);
  EXPECT_EQ(libo.active(), active);
  EXPECT_EQ(libo.state().libo->learned_key, libo_learning_key(data));

  // A checkpoint round trip on a fresh model predicts the same.
  Libo restored(1);
  restored.restore(libo.state(), data);
  EXPECT_EQ(restored.active(), active);
  const Eigen::MatrixXd C = Eigen::VectorXd::LinSpaced(9, 0, 1);
  for (int t = 0; t < 4; ++t) {
    const Posterior a = libo.posterior(t)->predict(C), b = restored.posterior(t)->predict(C);
    EXPECT_LT((a.mean - b.mean).cwiseAbs().maxCoeff(), 1e-12) << "task " << t;
    EXPECT_LT((a.var - b.var).cwiseAbs().maxCoeff(), 1e-12) << "task " << t;
  }
  EXPECT_THROW(restored.restore(SurrogateState{}, data), NumericalError);

  // A third task finishes: META-KGL runs again on three tasks.
  data.finished[2] = true;
  libo.fit(data, 13);
  EXPECT_EQ(libo.learned_from(), (std::vector<int>{0, 1, 2}));
}

TEST(LiboTest, a_task_unlike_the_family_takes_a_larger_share_of_k_full) {
  const TaskData data = family_and_a_bump();
  Libo libo(1);
  libo.fit(data, 3);
  ASSERT_FALSE(libo.active().empty());
  const double family = libo.kernel(30)->full_share(), unlike = libo.kernel(31)->full_share();
  EXPECT_LT(family, 0.1) << libo.describe_active();
  EXPECT_GT(unlike, 3 * family) << libo.describe_active();
  // The paper's k̂ alone: no share.
  Libo pure(1, LiboOptions{.full_share = false});
  pure.fit(data, 3);
  EXPECT_EQ(pure.kernel(31)->full_share(), 0.0);
}

TEST(LiboTest, the_gp_switch_takes_the_plain_gp_where_it_predicts_the_task_better) {
  const TaskData data = family_and_a_bump();
  Libo libo(1);
  libo.fit(data, 3);
  const LiboState state = *libo.state().libo;
  ASSERT_EQ(state.loo_plain.size(), 32u);

  // The stored densities: each GP's leave-one-out density of the task's z at its own θ.
  for (std::size_t t : {30u, 31u}) {
    const Observations& o = data.tasks[t];
    const Standardization s = Standardization::of(o.y);
    const Eigen::VectorXd z = (o.y.array() - s.offset) / s.scale;
    const std::vector<double>& theta = state.gp.theta[t];
    Eigen::MatrixXd C = std::exp(theta[0]) * libo.kernel(static_cast<int>(t))->gram(o.X, o.X);
    C.diagonal().array() += std::exp(theta[1]);
    EXPECT_NEAR(state.loo_learned[t], loo_log_predictive(C, z), 1e-9);
    const std::vector<double>& plain = state.plain.theta[t];
    ASSERT_EQ(plain.size(), 3u);
    EXPECT_NEAR(state.loo_plain[t],
                loo_log_predictive(o.X, z, Eigen::Map<const Eigen::VectorXd>(plain.data(), 3)), 1e-9);
  }
  // The family's task keeps its k̂ GP; the bump proposes from its plain GP, and says so.
  EXPECT_GT(state.loo_learned[30], state.loo_plain[30]);
  EXPECT_FALSE(libo_plain_chosen(state, 30));
  EXPECT_EQ(state.task_kernels[30].rfind("plain GP", 0), std::string::npos) << state.task_kernels[30];
  EXPECT_GT(state.loo_plain[31], state.loo_learned[31]);
  EXPECT_TRUE(libo_plain_chosen(state, 31));
  EXPECT_EQ(state.task_kernels[31].rfind("plain GP (leave-one-out log density ", 0), 0u) << state.task_kernels[31];
  const Observations& o = data.tasks[31];
  const Standardization s = Standardization::of(o.y);
  const auto plain = make_gp_posterior(o.X, (o.y.array() - s.offset) / s.scale,
                                       Eigen::Map<const Eigen::VectorXd>(state.plain.theta[31].data(), 3), s);
  const Eigen::MatrixXd C = Eigen::VectorXd::LinSpaced(9, 0, 1);
  EXPECT_LT((libo.posterior(31)->predict(C).mean - plain->predict(C).mean).cwiseAbs().maxCoeff(), 1e-9);

  // Restored: the same choices and the same predictions.
  Libo restored(1);
  restored.restore(libo.state(), data);
  for (int t : {30, 31}) {
    const Posterior a = libo.posterior(t)->predict(C), b = restored.posterior(t)->predict(C);
    EXPECT_LT((a.mean - b.mean).cwiseAbs().maxCoeff(), 1e-12) << "task " << t;
  }
  EXPECT_EQ(restored.state().libo->task_kernels, state.task_kernels);
  // A state saved before the switch existed restores as it ran: every task on its k̂ GP.
  SurrogateState older = libo.state();
  older.libo->plain = GpState{};
  older.libo->loo_learned.clear();
  older.libo->loo_plain.clear();
  Libo from_older(1);
  from_older.restore(older, data);
  EXPECT_FALSE(libo_plain_chosen(*from_older.state().libo, 31));
  const auto kernel_gp = make_fixed_kernel_posterior(libo.kernel(31), o.X, (o.y.array() - s.offset) / s.scale,
                                                     Eigen::Vector2d(state.gp.theta[31][0], state.gp.theta[31][1]), s);
  EXPECT_LT((from_older.posterior(31)->predict(C).mean - kernel_gp->predict(C).mean).cwiseAbs().maxCoeff(), 1e-9);

  // Switched off: k̂ always, nothing compared.
  Libo kernel_only(1, LiboOptions{.gp_switch = false});
  kernel_only.fit(data, 3);
  EXPECT_TRUE(std::isnan(kernel_only.state().libo->loo_plain[31]));
  EXPECT_FALSE(libo_plain_chosen(*kernel_only.state().libo, 31));
}
