#include "lbo/surrogate/meta_kgl.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <numeric>
#include <set>

using namespace lbo::surrogate;

namespace {

Eigen::MatrixXd gaussian(Eigen::Index rows, Eigen::Index cols, std::mt19937_64& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = n(rng);
  return m;
}

// Every coefficient of a [task][group] solution in one vector, and back.
Eigen::VectorXd flatten(const std::vector<std::vector<Eigen::VectorXd>>& beta) {
  std::vector<double> v;
  for (const auto& task : beta) {
    for (const auto& group : task) v.insert(v.end(), group.data(), group.data() + group.size());
  }
  return Eigen::Map<Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

std::vector<std::vector<Eigen::VectorXd>> shape_like(const GroupLassoProblem& p, const Eigen::VectorXd& v) {
  std::vector<std::vector<Eigen::VectorXd>> beta(p.features.size());
  Eigen::Index at = 0;
  for (std::size_t t = 0; t < p.features.size(); ++t) {
    for (const auto& block : p.features[t]) {
      beta[t].push_back(v.segment(at, block.cols()));
      at += block.cols();
    }
  }
  return beta;
}

// Minimizes the objective over a grid around `centre`, then again around the best point with a
// grid five times finer, `levels` times: brute force, sure to find the minimum of a convex
// function up to the last grid's step, and exact at zero coefficients (every grid holds its
// centre, and a coefficient's first centre is 0).
Eigen::VectorXd grid_minimum(const GroupLassoProblem& p, double lambda, Eigen::Index size, int levels) {
  constexpr int kPoints = 21;
  Eigen::VectorXd centre = Eigen::VectorXd::Zero(size), best = centre;
  double step = 0.3, best_value = group_lasso_objective(p, shape_like(p, centre), lambda);
  for (int level = 0; level < levels; ++level) {
    std::vector<int> index(static_cast<std::size_t>(size), 0);
    for (;;) {
      Eigen::VectorXd v(size);
      for (Eigen::Index i = 0; i < size; ++i) v(i) = centre(i) + step * (index[static_cast<std::size_t>(i)] - kPoints / 2);
      const double value = group_lasso_objective(p, shape_like(p, v), lambda);
      if (value < best_value) best_value = value, best = v;
      std::size_t i = 0;
      while (i < index.size() && ++index[i] == kPoints) index[i++] = 0;
      if (i == index.size()) break;
    }
    centre = best;
    step /= 5;
  }
  return best;
}

GroupLassoProblem random_problem(int tasks, int groups, int points, int max_rank, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  GroupLassoProblem p;
  for (int t = 0; t < tasks; ++t) {
    std::vector<Eigen::MatrixXd> blocks;
    for (int j = 0; j < groups; ++j) blocks.push_back(gaussian(points, static_cast<Eigen::Index>(rng() % (max_rank + 1)), rng));
    p.features.push_back(std::move(blocks));
    p.targets.push_back(gaussian(points, 1, rng).col(0));
  }
  return p;
}

}  // namespace

TEST(GroupLassoTest, solution_matches_a_brute_force_minimum) {
  // 2 tasks, 2 groups of one feature each: β ∈ R⁴.
  std::mt19937_64 rng(5);
  GroupLassoProblem p;
  for (int t = 0; t < 2; ++t) {
    p.features.push_back({gaussian(4, 1, rng), gaussian(4, 1, rng)});
    p.targets.push_back(gaussian(4, 1, rng).col(0));
  }
  const double lambda_max = group_lasso_lambda_max(p);
  bool saw_zero_group = false, saw_two_groups = false;
  for (double ratio : {0.9, 0.6, 0.3, 0.05}) {
    const double lambda = ratio * lambda_max;
    const GroupLassoSolution s = solve_group_lasso(p, lambda);
    ASSERT_TRUE(s.converged) << ratio;
    const Eigen::VectorXd brute = grid_minimum(p, lambda, 4, 9);
    const double brute_value = group_lasso_objective(p, shape_like(p, brute), lambda);
    const double value = group_lasso_objective(p, s.beta, lambda);
    EXPECT_LE(value, brute_value + 1e-9) << ratio;
    EXPECT_LT((flatten(s.beta) - brute).cwiseAbs().maxCoeff(), 1e-4) << ratio;
    const int zero_groups = static_cast<int>((s.group_norms.array() == 0).count());
    saw_zero_group |= zero_groups == 1;
    saw_two_groups |= zero_groups == 0;
  }
  EXPECT_TRUE(saw_zero_group && saw_two_groups) << "the λs should cover a sparse and a full solution";
}

TEST(GroupLassoTest, solution_satisfies_the_optimality_conditions) {
  const GroupLassoProblem p = random_problem(4, 10, 8, 3, 21);
  const double lambda = 0.3 * group_lasso_lambda_max(p);
  const GroupLassoSolution s = solve_group_lasso(p, lambda, nullptr, 20000, 1e-12);
  ASSERT_TRUE(s.converged);
  // ∇_j of the loss: −(2/N) Σ_s Φ_s^(j)ᵀ r_s, grouped over tasks.
  const double n = static_cast<double>(p.observations());
  std::vector<Eigen::VectorXd> residual;
  for (std::size_t t = 0; t < p.targets.size(); ++t) {
    Eigen::VectorXd fitted = Eigen::VectorXd::Zero(p.targets[t].size());
    for (int j = 0; j < p.groups(); ++j) {
      if (p.features[t][j].cols()) fitted += p.features[t][j] * s.beta[t][j];
    }
    residual.push_back(p.targets[t] - fitted);
  }
  int active = 0;
  for (int j = 0; j < p.groups(); ++j) {
    std::vector<double> g, b;
    for (std::size_t t = 0; t < p.targets.size(); ++t) {
      if (p.features[t][j].cols() == 0) continue;
      const Eigen::VectorXd gt = -2.0 / n * p.features[t][j].transpose() * residual[t];
      g.insert(g.end(), gt.data(), gt.data() + gt.size());
      b.insert(b.end(), s.beta[t][j].data(), s.beta[t][j].data() + s.beta[t][j].size());
    }
    const Eigen::Map<Eigen::VectorXd> grad(g.data(), static_cast<Eigen::Index>(g.size()));
    const Eigen::Map<Eigen::VectorXd> beta(b.data(), static_cast<Eigen::Index>(b.size()));
    if (beta.norm() == 0) {
      EXPECT_LE(grad.norm(), lambda * (1 + 1e-6)) << "group " << j;  // 0 ∈ ∇ + λ·(unit ball)
    } else {
      ++active;
      EXPECT_LT((grad + lambda * beta / beta.norm()).norm(), 1e-6 * lambda) << "group " << j;
    }
  }
  EXPECT_GT(active, 0);
  EXPECT_LT(active, p.groups());
}

TEST(GroupLassoTest, lambda_max_is_the_smallest_lambda_with_no_active_group) {
  const GroupLassoProblem p = random_problem(3, 6, 7, 2, 8);
  const double lambda_max = group_lasso_lambda_max(p);
  EXPECT_EQ(solve_group_lasso(p, lambda_max * 1.0001).group_norms.maxCoeff(), 0.0);
  EXPECT_GT(solve_group_lasso(p, lambda_max * 0.98).group_norms.maxCoeff(), 0.0);
}

TEST(GroupLassoTest, kernel_features_are_a_square_root_of_the_gram_matrix) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  Eigen::MatrixXd X(9, 2);
  for (Eigen::Index i = 0; i < X.size(); ++i) X.data()[i] = u(rng);
  for (const BaseKernel& k : {BaseKernel{KernelFamily::matern52, {0, 1}, 0.3, {}},
                              BaseKernel{KernelFamily::cosine, {0, 1}, 1, {2, 5}}}) {
    const Eigen::MatrixXd phi = kernel_features(k, X);
    EXPECT_LT((phi * phi.transpose() - k.gram(X, X)).cwiseAbs().maxCoeff(), 1e-9) << k.name();
  }
  EXPECT_EQ(kernel_features(BaseKernel{KernelFamily::cosine, {0}, 1, {3}}, X).cols(), 1);  // rank one
}

namespace {

// The paper's synthetic environment (App. G.1): f_s = Σ_{j∈J*} β_s^(j) cos(jπx) on [0, 1] with
// |J*| = 5 of the first 50 cosine bases, |β_s^(j)| ≥ 0.5 (beta-min), ‖f_s‖ ≤ 10, noise σ = 0.1.
struct SyntheticFamily {
  std::vector<int> active;  // 1-based frequencies, ascending
  std::vector<Observations> tasks;
};

SyntheticFamily synthetic_family(int tasks, int points, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int> all(50);
  std::iota(all.begin(), all.end(), 1);
  std::shuffle(all.begin(), all.end(), rng);
  SyntheticFamily family;
  family.active.assign(all.begin(), all.begin() + 5);
  std::sort(family.active.begin(), family.active.end());
  std::uniform_real_distribution<double> u(0, 1), magnitude(0.5, 4.0);
  std::normal_distribution<double> noise(0, 0.1);
  for (int s = 0; s < tasks; ++s) {
    std::vector<double> beta;
    for (std::size_t j = 0; j < family.active.size(); ++j) beta.push_back((u(rng) < 0.5 ? -1 : 1) * magnitude(rng));
    Observations o{Eigen::MatrixXd(points, 1), Eigen::VectorXd(points)};
    for (int i = 0; i < points; ++i) {
      const double x = u(rng);
      double y = noise(rng);
      for (std::size_t j = 0; j < beta.size(); ++j) y += beta[j] * std::cos(family.active[j] * M_PI * x);
      o.X(i, 0) = x;
      o.y(i) = y;
    }
    family.tasks.push_back(std::move(o));
  }
  return family;
}

}  // namespace

TEST(MetaKglTest, recovers_the_active_set_of_the_papers_synthetic_family) {
  // The paper's Figure 2 setting: m = 30 tasks of n = 10 points, the 50 cosine bases.
  std::vector<BaseKernel> cosines;
  for (int j = 1; j <= 50; ++j) cosines.push_back({KernelFamily::cosine, {0}, 1, {j}});
  const KernelDictionary dictionary(cosines);
  for (std::uint64_t seed : {1, 2, 3}) {
    const SyntheticFamily family = synthetic_family(30, 10, seed);
    const MetaKglResult result = meta_kgl(dictionary, family.tasks, seed);
    std::vector<int> found;
    for (int j : result.active) found.push_back(j + 1);
    EXPECT_EQ(found, family.active) << "seed " << seed;
    EXPECT_GT(result.lambda, 0);
    EXPECT_LT(result.lambda, result.lambda_max);
  }
}

TEST(MetaKglTest, recovers_the_cosines_among_the_standard_dictionarys_stationary_kernels) {
  // The same family against the 66 kernels lbo uses for one dimension: 16 Matérn-5/2 and RBF
  // kernels of every length-scale besides the 50 cosines. A rough stationary kernel can fit any
  // data; it must not be chosen in place of the family's own bases.
  const KernelDictionary dictionary = KernelDictionary::standard(1);
  for (std::uint64_t seed : {1, 2, 3}) {
    const SyntheticFamily family = synthetic_family(30, 10, seed);
    const MetaKglResult result = meta_kgl(dictionary, family.tasks, seed);
    std::vector<int> found;
    for (int j : result.active) {
      const BaseKernel& k = dictionary.kernel(j);
      found.push_back(k.family == KernelFamily::cosine ? k.frequencies[0] : -1 - j);
    }
    EXPECT_EQ(found, family.active) << "seed " << seed << " (negative: a stationary kernel)";
  }
}

TEST(MetaKglTest, without_data_the_active_set_is_empty_meaning_all_kernels) {
  const KernelDictionary dictionary = KernelDictionary::standard(1);
  EXPECT_TRUE(meta_kgl(dictionary, {}, 1).active.empty());
  Observations one{Eigen::MatrixXd::Constant(1, 1, 0.5), Eigen::VectorXd::Constant(1, 2.0)};
  EXPECT_TRUE(meta_kgl(dictionary, {one}, 1).active.empty());  // a task needs 2 points
}
