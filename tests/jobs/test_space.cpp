#include "lbo/jobs/space.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

using namespace lbo::jobs;

namespace {

// model ∈ {xgboost, logreg}; lr (log float), depth (int) when xgboost; C (log float) when logreg.
Space example_space() {
  ParamSpec model{.name = "model", .type = ParamType::categorical, .choices = {"xgboost", "logreg"}};
  ParamSpec lr{.name = "lr", .type = ParamType::real, .low = 1e-3, .high = 0.5, .log = true,
               .when = {Condition{0, {0}}}};
  ParamSpec depth{.name = "depth", .type = ParamType::integer, .low = 1, .high = 10,
                  .when = {Condition{0, {0}}}};
  ParamSpec c{.name = "C", .type = ParamType::real, .low = 1e-3, .high = 10, .log = true,
              .when = {Condition{0, {1}}}};
  return Space({model, lr, depth, c});
}

}  // namespace

TEST(SpaceTest, samples_respect_conditions_and_bounds) {
  const Space space = example_space();
  std::mt19937_64 rng(1);
  std::map<int, int> model_counts;
  for (int i = 0; i < 2000; ++i) {
    const Config c = space.sample(rng);
    ASSERT_TRUE(space.is_valid(c));
    ASSERT_TRUE(c.values[0].has_value());
    const int model = static_cast<int>(*c.values[0]);
    ++model_counts[model];
    EXPECT_EQ(c.values[1].has_value(), model == 0);
    EXPECT_EQ(c.values[2].has_value(), model == 0);
    EXPECT_EQ(c.values[3].has_value(), model == 1);
    if (model == 0) {
      EXPECT_GE(*c.values[1], 1e-3);
      EXPECT_LE(*c.values[1], 0.5);
      EXPECT_EQ(*c.values[2], std::floor(*c.values[2]));
      EXPECT_GE(*c.values[2], 1);
      EXPECT_LE(*c.values[2], 10);
    }
  }
  // Both choices are drawn about equally often.
  EXPECT_NEAR(model_counts[0], 1000, 150);
  EXPECT_NEAR(model_counts[1], 1000, 150);
}

TEST(SpaceTest, log_scale_is_uniform_in_log_space) {
  const Space space({ParamSpec{.name = "x", .low = 1e-4, .high = 1, .log = true}});
  std::mt19937_64 rng(3);
  int below_1e_2 = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) below_1e_2 += *space.sample(rng).values[0] < 1e-2 ? 1 : 0;
  // Half of the log range [1e-4, 1] lies below 1e-2; a linear draw would put 1% there.
  EXPECT_NEAR(static_cast<double>(below_1e_2) / n, 0.5, 0.02);
}

TEST(SpaceTest, integers_cover_every_value_inclusive) {
  const Space space({ParamSpec{.name = "k", .type = ParamType::integer, .low = 1, .high = 4}});
  std::mt19937_64 rng(5);
  std::set<double> seen;
  for (int i = 0; i < 500; ++i) seen.insert(*space.sample(rng).values[0]);
  EXPECT_EQ(seen, (std::set<double>{1, 2, 3, 4}));
}

TEST(SpaceTest, log_integers_stay_in_bounds_and_favour_small_values) {
  const Space space(
      {ParamSpec{.name = "k", .type = ParamType::integer, .low = 1, .high = 1000, .log = true}});
  std::mt19937_64 rng(9);
  int small = 0;
  for (int i = 0; i < 5000; ++i) {
    const double k = *space.sample(rng).values[0];
    ASSERT_GE(k, 1);
    ASSERT_LE(k, 1000);
    small += k < 32 ? 1 : 0;
  }
  EXPECT_GT(small, 2000);  // about half the log range; a linear draw gives ~3%
}

TEST(SpaceTest, same_seed_same_samples_other_seed_other_samples) {
  const Space space = example_space();
  std::mt19937_64 a(42), b(42), c(43);
  bool any_difference = false;
  for (int i = 0; i < 50; ++i) {
    const Config ca = space.sample(a), cb = space.sample(b), cc = space.sample(c);
    EXPECT_EQ(ca, cb);
    any_difference = any_difference || !(ca == cc);
  }
  EXPECT_TRUE(any_difference);
}

TEST(SpaceTest, trial_seeds_differ_per_trial_and_run) {
  std::set<std::uint64_t> seeds;
  for (std::int64_t t = 0; t < 1000; ++t) seeds.insert(trial_seed(7, t));
  for (std::int64_t t = 0; t < 1000; ++t) seeds.insert(trial_seed(8, t));
  EXPECT_EQ(seeds.size(), 2000u);
  EXPECT_EQ(trial_seed(7, 3), trial_seed(7, 3));
}

TEST(SpaceTest, json_holds_active_parameters_typed) {
  const Space space = example_space();
  Config c{{0.0, 0.25, 4.0, std::nullopt}};
  ASSERT_TRUE(space.is_valid(c));
  const auto j = nlohmann::json::parse(space.to_json(c));
  EXPECT_EQ(j.size(), 3u);
  EXPECT_TRUE(j["model"].is_string());
  EXPECT_EQ(j["model"], "xgboost");
  EXPECT_TRUE(j["depth"].is_number_integer());
  EXPECT_EQ(j["depth"], 4);
  EXPECT_TRUE(j["lr"].is_number_float());
  EXPECT_DOUBLE_EQ(j["lr"].get<double>(), 0.25);
  EXPECT_FALSE(j.contains("C"));
}

TEST(SpaceTest, validity_catches_inactive_values_and_out_of_range) {
  const Space space = example_space();
  EXPECT_FALSE(space.is_valid(Config{{1.0, 0.25, 4.0, 1.0}}));  // lr/depth set for logreg
  EXPECT_FALSE(space.is_valid(Config{{1.0, std::nullopt, std::nullopt, std::nullopt}}));  // C missing
  EXPECT_FALSE(space.is_valid(Config{{0.0, 0.9, 4.0, std::nullopt}}));   // lr > high
  EXPECT_FALSE(space.is_valid(Config{{0.0, 0.1, 4.5, std::nullopt}}));   // depth not integral
  EXPECT_FALSE(space.is_valid(Config{{2.0, std::nullopt, std::nullopt, std::nullopt}}));  // no choice 2
  EXPECT_TRUE(space.is_valid(Config{{1.0, std::nullopt, std::nullopt, 3.0}}));
}

TEST(SpaceTest, nested_conditions_follow_evaluation_order) {
  // `inner` depends on `mid`, which depends on `top`; declared child first.
  ParamSpec inner{.name = "inner", .low = 0, .high = 1, .when = {Condition{1, {1}}}};
  ParamSpec mid{.name = "mid", .type = ParamType::categorical, .choices = {"a", "b"},
                .when = {Condition{2, {0}}}};
  ParamSpec top{.name = "top", .type = ParamType::categorical, .choices = {"on", "off"}};
  const Space space({inner, mid, top});
  EXPECT_EQ(space.evaluation_order(), (std::vector<int>{2, 1, 0}));
  std::mt19937_64 rng(11);
  int inner_active = 0;
  for (int i = 0; i < 1000; ++i) {
    const Config c = space.sample(rng);
    ASSERT_TRUE(space.is_valid(c));
    inner_active += c.values[0].has_value() ? 1 : 0;
  }
  EXPECT_NEAR(inner_active, 250, 60);  // P(top = on) · P(mid = b)
}

TEST(SpaceTest, a_balanced_design_covers_every_choice_before_repeating_one) {
  // A 4-way model choice with a conditional 3-way choice under its first model.
  ParamSpec model{.name = "model", .type = ParamType::categorical, .choices = {"a", "b", "c", "d"}};
  ParamSpec kind{.name = "kind", .type = ParamType::categorical, .choices = {"x", "y", "z"},
                 .when = {Condition{0, {0}}}};
  ParamSpec x{.name = "x", .low = 0, .high = 1, .when = {Condition{0, {1}}}};
  const Space space({model, kind, x});
  int independent_complete = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    std::mt19937_64 rng(seed), other(seed + 1000);
    std::vector<Config> design;
    for (int k = 1; k <= 12; ++k) {
      design.push_back(space.sample_balanced(rng, design));
      ASSERT_TRUE(space.is_valid(design.back()));
      // After k draws every model is used floor(k/4) or ceil(k/4) times.
      std::map<int, int> uses;
      for (const Config& c : design) ++uses[static_cast<int>(*c.values[0])];
      for (int m = 0; m < 4; ++m) {
        EXPECT_GE(uses[m], k / 4) << "seed " << seed << ", draw " << k;
        EXPECT_LE(uses[m], (k + 3) / 4) << "seed " << seed << ", draw " << k;
      }
    }
    // The conditional choice is balanced among the draws where it is active (3 of them).
    std::set<int> kinds;
    for (const Config& c : design) {
      if (c.values[1]) kinds.insert(static_cast<int>(*c.values[1]));
    }
    EXPECT_EQ(kinds.size(), 3u) << "seed " << seed;
    // Independent draws: 4 draws cover all 4 models 3 times in 32 (4!/4^4).
    std::set<int> models;
    for (int k = 0; k < 4; ++k) models.insert(static_cast<int>(*space.sample(other).values[0]));
    independent_complete += models.size() == 4 ? 1 : 0;
  }
  EXPECT_LT(independent_complete, 50);
}

TEST(SpaceTest, rejects_cycles_and_bad_bounds) {
  ParamSpec a{.name = "a", .type = ParamType::categorical, .choices = {"x"}, .when = {Condition{1, {0}}}};
  ParamSpec b{.name = "b", .type = ParamType::categorical, .choices = {"y"}, .when = {Condition{0, {0}}}};
  EXPECT_THROW(Space({a, b}), std::invalid_argument);
  EXPECT_THROW(Space({ParamSpec{.name = "x", .low = 1, .high = 1}}), std::invalid_argument);
  EXPECT_THROW(Space({ParamSpec{.name = "x", .low = 0, .high = 1, .log = true}}),
               std::invalid_argument);
}

TEST(SpaceTest, format_value_round_trips_reals) {
  const Space space = example_space();
  const double lr = 0.1234567890123456;
  EXPECT_EQ(std::stod(space.format_value(1, lr)), lr);
  EXPECT_EQ(space.format_value(0, 1.0), "logreg");
  EXPECT_EQ(space.format_value(2, 7.0), "7");
}

// Int values live in doubles, exact up to 2^53: bounds beyond (the int64 extremes gave every
// trial -2^63) are refused, and the widest accepted range is sampled and encoded exactly.
TEST(SpaceTest, int_bounds_lie_within_the_integers_a_double_holds) {
  const double two_63 = 9223372036854775808.0;
  EXPECT_THROW(Space({ParamSpec{.name = "n", .type = ParamType::integer, .low = -two_63, .high = two_63}}),
               std::invalid_argument);
  EXPECT_THROW(Space({ParamSpec{.name = "n", .type = ParamType::integer, .low = 0.5, .high = 2}}), std::invalid_argument);
  const auto bound = static_cast<double>(kMaxIntBound);
  const Space widest({ParamSpec{.name = "n", .type = ParamType::integer, .low = -bound, .high = bound}});
  std::mt19937_64 rng(3);
  std::set<double> seen;
  int negative = 0;
  for (int i = 0; i < 1000; ++i) {
    const Config c = widest.sample(rng);
    ASSERT_TRUE(widest.is_valid(c));
    seen.insert(*c.values[0]);
    negative += *c.values[0] < 0 ? 1 : 0;
  }
  EXPECT_EQ(seen.size(), 1000u);  // spread over the range, never stuck at an extreme
  EXPECT_GT(negative, 400);
  EXPECT_LT(negative, 600);
  EXPECT_EQ(widest.to_json(Config{{bound}}), "{\"n\":9007199254740992}");
  EXPECT_EQ(widest.format_value(0, -bound), "-9007199254740992");
  // One apart at the top of the range: both values are drawn.
  const Space neighbours({ParamSpec{.name = "n", .type = ParamType::integer, .low = bound - 1, .high = bound}});
  std::set<double> drawn;
  for (int i = 0; i < 100; ++i) drawn.insert(*neighbours.sample(rng).values[0]);
  EXPECT_EQ(drawn, (std::set<double>{bound - 1, bound}));
}
