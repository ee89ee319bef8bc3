// Objective and Objectives: which result is better, the best of several, dominance and the
// Pareto set, each against cases worked out by hand.

#include "lbo/jobs/objective.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

using lbo::jobs::Direction;
using lbo::jobs::Objective;
using lbo::jobs::Objectives;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

TEST(ObjectiveTest, better_orients_by_direction_and_a_nan_is_never_better) {
  const Objective auc(Direction::maximize, "auc");
  const Objective loss(Direction::minimize, "loss");
  EXPECT_EQ(Objective().name(), "objective");
  EXPECT_TRUE(Objective().maximizes());
  EXPECT_TRUE(auc.better(0.8, 0.7));
  EXPECT_FALSE(auc.better(0.7, 0.8));
  EXPECT_FALSE(auc.better(0.7, 0.7));  // strictly
  EXPECT_TRUE(loss.better(0.2, 0.3));
  EXPECT_FALSE(loss.better(0.3, 0.2));
  EXPECT_FALSE(loss.better(kNaN, 0.3));
  EXPECT_TRUE(loss.better(0.3, kNaN));
  EXPECT_FALSE(loss.better(kNaN, kNaN));
  EXPECT_EQ(auc.oriented(0.8), 0.8);
  EXPECT_EQ(loss.oriented(0.8), -0.8);
  EXPECT_EQ(loss.oriented(loss.oriented(0.25)), 0.25);
}

TEST(ObjectiveTest, the_best_of_values_is_the_first_of_equals_and_skips_nans) {
  const Objective loss(Direction::minimize);
  EXPECT_EQ(loss.best_of({}), -1);
  EXPECT_EQ(loss.best_of({kNaN, kNaN}), -1);
  EXPECT_EQ(loss.best_of({kNaN, 3, 1, 2, 1}), 2);
  EXPECT_EQ(Objective(Direction::maximize).best_of({kNaN, 3, 1, 3}), 1);
}

TEST(ObjectiveTest, values_are_written_with_six_significant_digits) {
  EXPECT_EQ(Objective::format(0.8123456), "0.812346");
  EXPECT_EQ(Objective::format(1.5e-7), "1.5e-07");
  EXPECT_EQ(Objective::format(-42), "-42");
  EXPECT_EQ(Objective::significant(0.8123456, 3), "0.812");
  EXPECT_EQ(Objective::significant(123456.0, 3), "1.23e+05");
  EXPECT_EQ(Objective::significant(-0.5, 3), "-0.5");
}

// Two objectives: accuracy up, training hours down.
TEST(ObjectivesTest, dominance_is_no_worse_in_every_objective_and_better_in_one) {
  const Objectives two({Objective(Direction::maximize, "accuracy"), Objective(Direction::minimize, "hours")});
  EXPECT_EQ(two.size(), 2u);
  EXPECT_EQ(two.primary().name(), "accuracy");
  EXPECT_EQ(two.index_of("hours"), 1);
  EXPECT_EQ(two.index_of("loss"), -1);
  EXPECT_TRUE(two.dominates({0.9, 1.0}, {0.8, 2.0}));   // better in both
  EXPECT_TRUE(two.dominates({0.9, 1.0}, {0.9, 2.0}));   // equal accuracy, fewer hours
  EXPECT_FALSE(two.dominates({0.9, 1.0}, {0.9, 1.0}));  // equal: neither
  EXPECT_FALSE(two.dominates({0.9, 3.0}, {0.8, 2.0}));  // a trade-off: neither
  EXPECT_FALSE(two.dominates({0.8, 2.0}, {0.9, 3.0}));
  EXPECT_FALSE(two.dominates({0.8, 2.0}, {0.9, 1.0}));
  EXPECT_TRUE(two.dominates({0.1, 9.0}, {kNaN, 1.0}));  // a missing value loses to any result
  EXPECT_FALSE(two.dominates({kNaN, 1.0}, {0.1, 9.0}));
  EXPECT_THROW(two.dominates({0.9}, {0.8, 1.0}), std::invalid_argument);
}

TEST(ObjectivesTest, the_pareto_set_keeps_every_result_none_dominates) {
  const Objectives two({Objective(Direction::maximize, "accuracy"), Objective(Direction::minimize, "hours")});
  // 0: (0.70, 1) cheap; 1: (0.80, 2); 2: (0.75, 3) dominated by 1; 3: (0.90, 5) best accuracy;
  // 4: (0.80, 2) equal to 1 (both kept); 5: (0.60, 1) dominated by 0; 6: NaN accuracy.
  const std::vector<std::vector<double>> results{{0.70, 1}, {0.80, 2}, {0.75, 3}, {0.90, 5}, {0.80, 2}, {0.60, 1}, {kNaN, 0.5}};
  EXPECT_EQ(two.pareto_set(results), (std::vector<std::size_t>{0, 1, 3, 4}));
  const Objectives one({Objective(Direction::minimize)});
  EXPECT_EQ(one.pareto_set({{3}, {1}, {2}, {1}}), (std::vector<std::size_t>{1, 3}));  // one objective: the best, ties kept
  EXPECT_TRUE(two.pareto_set({}).empty());
}

TEST(ObjectivesTest, objectives_are_named_once_and_at_least_one) {
  EXPECT_THROW(Objectives({}), std::invalid_argument);
  EXPECT_THROW(Objectives({Objective(Direction::maximize, "auc"), Objective(Direction::minimize, "auc")}), std::invalid_argument);
}

// A constraint's limits are inclusive; a result's metrics are judged by every constraint, and a
// value missing or not a finite number is a problem that names the metric.
TEST(ConstraintTest, limits_are_inclusive_and_a_missing_value_is_named) {
  using lbo::jobs::Constraint;
  const Constraint at_most{"memory_gb", std::nullopt, 16.0};
  const Constraint between{"latency_ms", 0.5, 5.0};
  EXPECT_TRUE(at_most.satisfied(16.0));
  EXPECT_FALSE(at_most.satisfied(16.000001));
  EXPECT_TRUE(at_most.satisfied(-1e300));
  EXPECT_FALSE(at_most.satisfied(std::nan("")));
  EXPECT_TRUE(between.satisfied(0.5));
  EXPECT_FALSE(between.satisfied(0.49));
  EXPECT_EQ(at_most.describe(), "memory_gb <= 16");
  EXPECT_EQ((Constraint{"x", 1e-7, std::nullopt}).describe(), "1e-07 <= x");
  const std::vector<Constraint> both{at_most, between};
  EXPECT_TRUE(lbo::jobs::check_constraints({}, "not json").feasible);
  auto check = lbo::jobs::check_constraints(both, R"({"memory_gb": 12, "latency_ms": 2})");
  EXPECT_TRUE(check.feasible && check.problem.empty());
  check = lbo::jobs::check_constraints(both, R"({"memory_gb": 12, "latency_ms": 7})");
  EXPECT_FALSE(check.feasible);
  EXPECT_TRUE(check.problem.empty());
  check = lbo::jobs::check_constraints(both, R"({"memory_gb": 12})");
  EXPECT_NE(check.problem.find("lack \"latency_ms\", which [[constraints]] limits (0.5 <= latency_ms <= 5)"), std::string::npos)
      << check.problem;
  check = lbo::jobs::check_constraints(both, R"({"memory_gb": "12 GB", "latency_ms": 2})");
  EXPECT_NE(check.problem.find("\"memory_gb\", which [[constraints]] limits (memory_gb <= 16), is not a number: \"12 GB\""),
            std::string::npos)
      << check.problem;
  check = lbo::jobs::check_constraints(both, "{}");
  EXPECT_NE(check.problem.find("lack \"memory_gb\""), std::string::npos) << check.problem;
}

TEST(ObjectivesTest, hypervolume_matches_closed_forms) {
  const Objectives up({Objective(Direction::maximize, "a"), Objective(Direction::maximize, "b")});
  // One point: its box above the reference.
  EXPECT_DOUBLE_EQ(up.hypervolume({{3, 2}}, {1, 1}), 2.0 * 1.0);
  // A staircase of (1,3), (2,2), (3,1) over the origin: 3 + 2 + 1 = 6 unit squares, whatever
  // the order, with a dominated point and a duplicate adding nothing.
  EXPECT_DOUBLE_EQ(up.hypervolume({{2, 2}, {1, 3}, {3, 1}}, {0, 0}), 6.0);
  EXPECT_DOUBLE_EQ(up.hypervolume({{3, 1}, {1, 1}, {2, 2}, {1, 3}, {2, 2}}, {0, 0}), 6.0);
  // A point not above the reference in one objective, or with a NaN, adds nothing.
  EXPECT_DOUBLE_EQ(up.hypervolume({{3, 2}, {5, 0.5}, {kNaN, 9}}, {1, 1}), 2.0);
  EXPECT_DOUBLE_EQ(up.hypervolume({}, {0, 0}), 0.0);
  // Minimized objectives measure below the reference: (accuracy up, hours down).
  const Objectives trade({Objective(Direction::maximize, "acc"), Objective(Direction::minimize, "hours")});
  EXPECT_DOUBLE_EQ(trade.hypervolume({{0.9, 3.0}, {0.8, 1.0}}, {0.5, 5.0}), 0.4 * 2.0 + 0.3 * 2.0);
  // Three objectives: two boxes [0,2]×[0,1]×[0,1] and [0,1]×[0,2]×[0,2] overlap in [0,1]³:
  // 2 + 4 − 1 = 5.
  const Objectives three({Objective(Direction::maximize, "a"), Objective(Direction::maximize, "b"), Objective(Direction::maximize, "c")});
  EXPECT_DOUBLE_EQ(three.hypervolume({{2, 1, 1}, {1, 2, 2}}, {0, 0, 0}), 5.0);
  // The front of x + y + z = 1 on a grid approaches the simplex's complement's volume: the
  // points (i, j, k)/n with i + j + k = n dominate the union of their boxes, which a Monte
  // Carlo count over the unit cube checks.
  std::vector<std::vector<double>> front;
  const int n = 6;
  for (int i = 0; i <= n; ++i) {
    for (int j = 0; i + j <= n; ++j) front.push_back({double(i) / n, double(j) / n, double(n - i - j) / n});
  }
  std::uint64_t state = 12345;
  const auto uniform = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return double(state >> 11) / 9007199254740992.0;
  };
  int inside = 0;
  const int draws = 200000;
  for (int d = 0; d < draws; ++d) {
    const double x = uniform(), y = uniform(), z = uniform();
    for (const auto& p : front) {
      if (x <= p[0] && y <= p[1] && z <= p[2]) {
        ++inside;
        break;
      }
    }
  }
  EXPECT_NEAR(three.hypervolume(front, {0, 0, 0}), double(inside) / draws, 0.005);
  EXPECT_THROW(up.hypervolume({{1, 1}}, {0}), std::invalid_argument);
}

TEST(ObjectivesTest, a_derived_reference_lies_a_tenth_of_the_range_past_the_worst) {
  const Objectives trade({Objective(Direction::maximize, "acc"), Objective(Direction::minimize, "hours")});
  const std::vector<double> reference = trade.derived_reference({{0.9, 3.0}, {0.7, 1.0}, {kNaN, 9.0}});
  ASSERT_EQ(reference.size(), 2u);
  EXPECT_DOUBLE_EQ(reference[0], 0.7 - 0.02);
  EXPECT_DOUBLE_EQ(reference[1], 3.0 + 0.2);
  const std::vector<double> one = trade.derived_reference({{0.8, 2.0}});  // no range: 1 away
  ASSERT_EQ(one.size(), 2u);
  EXPECT_DOUBLE_EQ(one[0], 0.8 - 1.0);
  EXPECT_DOUBLE_EQ(one[1], 3.0);
  EXPECT_TRUE(trade.derived_reference({{kNaN, 1.0}}).empty());
  // Every result then adds to the hypervolume: here both corners of the staircase.
  EXPECT_GT(trade.hypervolume({{0.9, 3.0}, {0.7, 1.0}}, reference), trade.hypervolume({{0.9, 3.0}}, reference));
}
