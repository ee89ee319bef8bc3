#include "lbo/surrogate/maximizer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace lbo::surrogate;
using Kind = CoordinateGroup::Kind;

namespace {

// f(x) and its gradient, for objectives written pointwise.
BoxObjective pointwise(std::function<double(const Eigen::VectorXd&, Eigen::VectorXd&)> f) {
  BoxObjective o;
  o.gradient = f;
  o.values = [f](const Eigen::MatrixXd& X) {
    Eigen::VectorXd v(X.rows());
    Eigen::VectorXd g;
    for (Eigen::Index i = 0; i < X.rows(); ++i) v(i) = f(X.row(i).transpose(), g);
    return v;
  };
  return o;
}

}  // namespace

TEST(MaximizerTest, finds_the_peak_of_a_continuous_function) {
  const BoxSpace space({{Kind::continuous, 0, 1, 0}, {Kind::continuous, 1, 1, 0}, {Kind::continuous, 2, 1, 0}});
  const Eigen::Vector3d peak(0.23, 0.71, 0.5);
  // A narrow bump on a slope: candidates alone land near it, refinement must finish the job.
  const BoxObjective f = pointwise([&](const Eigen::VectorXd& x, Eigen::VectorXd& g) {
    const Eigen::VectorXd d = x - peak;
    const double bump = std::exp(-d.squaredNorm() / 0.02);
    g = -2.0 * d / 0.02 * bump;
    g(0) += 0.1;
    return bump + 0.1 * x(0);
  });
  const auto result = maximize(f, space, MaximizerOptions{}, 7);
  ASSERT_FALSE(result.empty());
  // The maximum of bump + 0.1x₀ sits a little right of the bump: x₀ = 0.23 + 0.001.
  EXPECT_NEAR(result[0].x(0), 0.231, 2e-3);
  EXPECT_NEAR(result[0].x(1), 0.71, 1e-3);
  EXPECT_NEAR(result[0].x(2), 0.5, 1e-3);
  for (std::size_t i = 1; i < result.size(); ++i) EXPECT_LE(result[i].value, result[i - 1].value);
}

TEST(MaximizerTest, mixed_integer_categorical_and_continuous) {
  // [one-hot (4 categories) | integer with 5 levels | continuous]
  const BoxSpace space({{Kind::one_hot, 0, 4, 0}, {Kind::integer, 4, 1, 5}, {Kind::continuous, 5, 1, 0}});
  const double bonus[4] = {0.0, 0.3, 1.0, 0.5};
  const BoxObjective f = pointwise([&](const Eigen::VectorXd& x, Eigen::VectorXd& g) {
    Eigen::Index category = 0;
    x.head(4).maxCoeff(&category);
    g = Eigen::VectorXd::Zero(6);
    g(4) = -2.0 * (x(4) - 0.7);
    g(5) = -2.0 * (x(5) - 0.33);
    return bonus[category] - (x(4) - 0.7) * (x(4) - 0.7) - (x(5) - 0.33) * (x(5) - 0.33);
  });
  const auto result = maximize(f, space, MaximizerOptions{.candidates = 256, .refine = 4}, 3);
  const Eigen::VectorXd& best = result[0].x;
  EXPECT_EQ(best.head(4), Eigen::Vector4d(0, 0, 1, 0));  // exactly one-hot, the best category
  EXPECT_DOUBLE_EQ(best(4), 0.75);                        // the grid point nearest 0.7
  EXPECT_NEAR(best(5), 0.33, 1e-4);
  // Every returned point is valid and distinct.
  for (std::size_t i = 0; i < result.size(); ++i) {
    EXPECT_DOUBLE_EQ(result[i].x.head(4).sum(), 1.0);
    EXPECT_DOUBLE_EQ(std::round(result[i].x(4) * 4) / 4, result[i].x(4));
    for (std::size_t j = 0; j < i; ++j) EXPECT_FALSE(result[i].x == result[j].x);
  }
}

TEST(MaximizerTest, categories_are_enumerated_when_candidates_miss_the_best) {
  // Only 2 candidates for 6 categories: the winner must come from enumeration.
  const BoxSpace space({{Kind::one_hot, 0, 6, 0}, {Kind::continuous, 6, 1, 0}});
  const BoxObjective f = pointwise([&](const Eigen::VectorXd& x, Eigen::VectorXd& g) {
    g = Eigen::VectorXd::Zero(7);
    return x(5) * 10.0 + x(6);
  });
  const auto result = maximize(f, space, MaximizerOptions{.candidates = 2, .refine = 2}, 1);
  EXPECT_EQ(result[0].x(5), 1.0);
}

TEST(MaximizerTest, same_seed_same_result) {
  const BoxSpace space({{Kind::continuous, 0, 1, 0}, {Kind::continuous, 1, 1, 0}});
  const BoxObjective f = pointwise([](const Eigen::VectorXd& x, Eigen::VectorXd& g) {
    g.resize(2);
    g << std::cos(9 * x(0)) * 9 * 0.5, -2 * (x(1) - 0.4);
    return 0.5 * std::sin(9 * x(0)) - (x(1) - 0.4) * (x(1) - 0.4);
  });
  const auto a = maximize(f, space, MaximizerOptions{}, 42);
  const auto b = maximize(f, space, MaximizerOptions{}, 42);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].x, b[i].x);
}

TEST(MaximizerTest, extra_starts_are_considered) {
  // A spike too narrow for 16 candidates, given as a start.
  const BoxSpace space({{Kind::continuous, 0, 1, 0}});
  const BoxObjective f = pointwise([](const Eigen::VectorXd& x, Eigen::VectorXd& g) {
    const double d = x(0) - 0.123456;
    g = Eigen::VectorXd::Constant(1, -2 * d / 1e-8 * std::exp(-d * d / 1e-8));
    return std::exp(-d * d / 1e-8);
  });
  const auto result =
      maximize(f, space, MaximizerOptions{.candidates = 16, .refine = 2}, 5, {Eigen::VectorXd::Constant(1, 0.12345)});
  EXPECT_NEAR(result[0].x(0), 0.123456, 1e-5);
}

// Boost's Sobol tables end at kMaxSobolDimension: beyond it the candidates are seeded uniform
// draws, and a proposal in a space of that many parameters works (it threw before).
TEST(MaximizerTest, candidates_above_the_sobol_dimension_limit_are_seeded_uniform_points) {
  const int d = kMaxSobolDimension + 1;
  std::vector<CoordinateGroup> groups;
  for (int j = 0; j < d; ++j) groups.push_back({Kind::continuous, j, 1, 0});
  const BoxSpace space(groups);
  const MaximizerOptions options{.candidates = 16, .refine = 1, .max_iterations = 5};
  const Eigen::MatrixXd X = candidate_points(space, options, 11, {});
  ASSERT_EQ(X.rows(), 16);
  ASSERT_EQ(X.cols(), d);
  EXPECT_GE(X.minCoeff(), 0.0);
  EXPECT_LE(X.maxCoeff(), 1.0);
  // Spread over the box: every coordinate's mean near 1/2, points distinct.
  EXPECT_NEAR(X.mean(), 0.5, 0.01);
  EXPECT_GT((X.row(0) - X.row(1)).norm(), 1.0);
  EXPECT_EQ(X, candidate_points(space, options, 11, {}));
  EXPECT_NE(X, candidate_points(space, options, 12, {}));
  // The maximum of -|x - 0.3|² moves every coordinate toward 0.3.
  const BoxObjective f = pointwise([](const Eigen::VectorXd& x, Eigen::VectorXd& g) {
    g = -2.0 * (x.array() - 0.3).matrix();
    return -(x.array() - 0.3).square().sum();
  });
  const auto result = maximize(f, space, options, 11);
  ASSERT_FALSE(result.empty());
  EXPECT_NEAR(result[0].x.mean(), 0.3, 0.01);
}

// maximize_from on a discrete space, where many candidates are one configuration: every
// distinct row once, at its best-ranked occurrence, best first; with `keep`, the same ranking cut
// after `keep` rows (found without sorting the rows).
TEST(MaximizerTest, ranked_candidates_are_distinct_and_keep_cuts_the_same_ranking) {
  const BoxSpace space({{Kind::integer, 0, 1, 3}, {Kind::integer, 1, 1, 4}});  // 3 × 4 = 12 points
  Eigen::MatrixXd X(200, 2);
  Eigen::VectorXd values(200);
  std::mt19937_64 rng(5);
  for (Eigen::Index i = 0; i < X.rows(); ++i) {
    X(i, 0) = 0.5 * static_cast<double>(std::uniform_int_distribution<int>(0, 2)(rng));
    X(i, 1) = static_cast<double>(std::uniform_int_distribution<int>(0, 3)(rng)) / 3.0;
    // Equal rows score nearly, not exactly, alike; a few are used (−∞).
    values(i) = i % 17 == 0 ? -std::numeric_limits<double>::infinity()
                            : X(i, 0) + 2 * X(i, 1) + 1e-12 * std::uniform_real_distribution<double>(0, 1)(rng);
  }
  const MaximizerOptions options{.candidates = 200, .refine = 0};
  const std::vector<Maximum> all = maximize_from(BoxObjective{}, space, options, X, values);
  ASSERT_EQ(all.size(), 12u);
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) EXPECT_FALSE(all[i].x == all[j].x) << i << " repeats " << j;
    if (i > 0) {
      EXPECT_GE(all[i - 1].value, all[i].value);
    }
    // Its value is the best of the equal rows' values.
    double best = -std::numeric_limits<double>::infinity();
    for (Eigen::Index r = 0; r < X.rows(); ++r) {
      if (X.row(r).transpose() == all[i].x) best = std::max(best, values(r));
    }
    EXPECT_EQ(all[i].value, best);
  }
  for (int keep : {1, 5, 12, 40}) {
    MaximizerOptions cut = options;
    cut.keep = keep;
    const std::vector<Maximum> kept = maximize_from(BoxObjective{}, space, cut, X, values);
    ASSERT_EQ(kept.size(), std::min<std::size_t>(static_cast<std::size_t>(keep), all.size())) << keep;
    for (std::size_t i = 0; i < kept.size(); ++i) {
      EXPECT_EQ(kept[i].x, all[i].x) << keep << ", " << i;
      EXPECT_EQ(kept[i].value, all[i].value);
    }
  }
}

// A refinement with a progress rule (a busy master's brief one) stops once an iteration gains
// little, where the full one crawls on along the valley of a Rosenbrock function to its peak.
TEST(MaximizerTest, a_progress_rule_ends_a_crawling_refinement_early) {
  const BoxSpace space({{Kind::continuous, 0, 1, 0}, {Kind::continuous, 1, 1, 0}});
  int evaluations = 0;
  // 10 − Rosenbrock(u), u = 4x − 2: the maximum 10 at x = (0.75, 0.75).
  const BoxObjective f = pointwise([&](const Eigen::VectorXd& x, Eigen::VectorXd& g) {
    ++evaluations;
    const double u = 4 * x(0) - 2, v = 4 * x(1) - 2;
    g.resize(2);
    g(0) = -4 * (-2 * (1 - u) - 400 * u * (v - u * u));
    g(1) = -4 * 200 * (v - u * u);
    return 10 - (1 - u) * (1 - u) - 100 * (v - u * u) * (v - u * u);
  });
  Eigen::MatrixXd start(1, 2);
  start << 0.2, 0.6;  // u = (−1.2, 0.4), on the far side of the valley
  Eigen::VectorXd g;
  const Eigen::VectorXd at_start = Eigen::VectorXd::Constant(1, f.gradient(start.row(0).transpose(), g));
  const auto refined = [&](double progress) {
    evaluations = 0;
    const MaximizerOptions options{.candidates = 1, .refine = 1, .max_iterations = 200, .progress = progress};
    const Maximum best = maximize_from(f, space, options, start, at_start).front();
    return std::pair{best, evaluations};
  };
  const auto [full, full_evaluations] = refined(0);
  const auto [brief, brief_evaluations] = refined(kBriefProgress);
  EXPECT_NEAR(full.value, 10, 1e-6) << "the full refinement reaches the peak";
  EXPECT_LT(brief_evaluations, full_evaluations);
  EXPECT_LT(brief.value, full.value - 1e-4) << "the brief one stops short of it";
  EXPECT_GT(brief.value, 9.9) << "from " << at_start(0) << ", most of the way";
  EXPECT_EQ(refined(0).second, full_evaluations) << "the count is the refinement's own";
}
