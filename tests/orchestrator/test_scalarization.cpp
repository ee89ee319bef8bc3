// ParEGO's augmented Chebyshev scalarization (scalarization.hpp): its values against cases
// worked by hand, and the property it is chosen for: every point of a front, a concave one too,
// is the best of the front for some weights (a weighted sum reaches only the convex hull).

#include "scalarization.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

using lbo::jobs::Direction;
using lbo::jobs::Objective;
using lbo::jobs::Objectives;
using lbo::orchestrator::Scalarization;

namespace {
const Objectives kTrade({Objective(Direction::maximize, "acc"), Objective(Direction::minimize, "hours")});
}

TEST(ScalarizationTest, values_are_the_augmented_chebyshev_function_of_the_normalized_costs) {
  const Scalarization s(kTrade, {{0.0, 10.0}, {1.0, 0.0}, {0.5, std::nan("")}}, {0.3, 0.7});
  EXPECT_DOUBLE_EQ(s({1.0, 0.0}), 0.0);                    // best in both: no cost
  EXPECT_DOUBLE_EQ(s({0.0, 10.0}), -(0.7 + 0.05 * 1.0));   // worst in both: max λ + ρ Σ λ
  EXPECT_DOUBLE_EQ(s({0.5, 5.0}), -(0.35 + 0.05 * 0.5));   // costs 0.15 and 0.35
  EXPECT_DOUBLE_EQ(s({1.0, 10.0}), -(0.7 + 0.05 * 0.7));   // hours alone cost
  // All results equal: each sits in the middle of its range.
  const Scalarization flat(kTrade, {{0.5, 2.0}}, {0.5, 0.5});
  EXPECT_DOUBLE_EQ(flat({0.5, 2.0}), -(0.25 + 0.05 * 0.5));
  EXPECT_THROW(Scalarization(kTrade, {}, {1.0}), std::invalid_argument);
}

TEST(ScalarizationTest, every_point_of_a_concave_front_is_the_best_for_some_weights) {
  // acc = k/10, hours = 10·sqrt(acc): every point is on the front, which bulges away from the
  // ideal (a weighted sum's best is always one of the two ends).
  std::vector<std::vector<double>> front;
  for (int k = 0; k <= 10; ++k) front.push_back({k / 10.0, 10.0 * std::sqrt(k / 10.0)});
  std::set<std::size_t> reached, reached_by_sum;
  for (int w = 0; w <= 200; ++w) {
    const std::vector<double> lambda = {w / 200.0, 1.0 - w / 200.0};
    const Scalarization s(kTrade, front, lambda);
    std::size_t best = 0, best_sum = 0;
    const auto sum = [&](const std::vector<double>& p) { return lambda[0] * p[0] - lambda[1] * p[1] / 10.0; };
    for (std::size_t i = 1; i < front.size(); ++i) {
      if (s(front[i]) > s(front[best])) best = i;
      if (sum(front[i]) > sum(front[best_sum])) best_sum = i;
    }
    reached.insert(best);
    reached_by_sum.insert(best_sum);
  }
  EXPECT_EQ(reached.size(), front.size());
  EXPECT_EQ(reached_by_sum, (std::set<std::size_t>{0, 10}));  // what the scalarization is for
}

TEST(ScalarizationTest, random_weights_lie_on_the_simplex_and_follow_the_seed) {
  const std::vector<double> w = Scalarization::random_weights(3, 42);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_NEAR(std::accumulate(w.begin(), w.end(), 0.0), 1.0, 1e-12);
  EXPECT_TRUE(std::all_of(w.begin(), w.end(), [](double x) { return x >= 0; }));
  EXPECT_EQ(w, Scalarization::random_weights(3, 42));
  EXPECT_NE(w, Scalarization::random_weights(3, 43));
  // Uniform on the simplex: each weight's mean is 1/m.
  double mean = 0;
  for (std::uint64_t seed = 0; seed < 4000; ++seed) mean += Scalarization::random_weights(2, seed)[0];
  EXPECT_NEAR(mean / 4000, 0.5, 0.02);
}
