#include "lbo/jobs/encoding.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace lbo::jobs;

namespace {

Space mixed_space() {
  ParamSpec model{.name = "model", .type = ParamType::categorical, .choices = {"a", "b", "c"}};
  ParamSpec lr{.name = "lr", .low = 1e-3, .high = 1e-1, .log = true, .when = {Condition{0, {0, 2}}}};
  ParamSpec depth{.name = "depth", .type = ParamType::integer, .low = 2, .high = 6};
  ParamSpec x{.name = "x", .low = -5, .high = 5};
  return Space({model, lr, depth, x});
}

}  // namespace

TEST(EncodingTest, layout_has_one_hot_groups_and_scalars) {
  const Encoder encoder(mixed_space());
  ASSERT_EQ(encoder.dimension(), 6);
  const auto& g = encoder.groups();
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g[0].kind, EncodedGroup::Kind::one_hot);
  EXPECT_EQ(g[0].offset, 0);
  EXPECT_EQ(g[0].width, 3);
  EXPECT_EQ(g[1].kind, EncodedGroup::Kind::continuous);
  EXPECT_EQ(g[1].offset, 3);
  EXPECT_EQ(g[2].kind, EncodedGroup::Kind::integer);
  EXPECT_EQ(g[3].offset, 5);
}

TEST(EncodingTest, known_values_encode_to_known_coordinates) {
  const Encoder encoder(mixed_space());
  const auto x = encoder.encode(Config{{2.0, 1e-2, 4.0, 0.0}});
  const std::vector<double> expected = {0, 0, 1, 0.5, 0.5, 0.5};  // 1e-2 is mid-way in log space
  ASSERT_EQ(x.size(), expected.size());
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], expected[i], 1e-12) << i;
  // Inactive lr encodes as 0.
  const auto y = encoder.encode(Config{{1.0, std::nullopt, 2.0, 5.0}});
  EXPECT_EQ(y[3], 0.0);
  EXPECT_EQ(y[4], 0.0);
  EXPECT_EQ(y[5], 1.0);
}

TEST(EncodingTest, decode_inverts_encode_on_samples) {
  const Space space = mixed_space();
  const Encoder encoder(space);
  std::mt19937_64 rng(2);
  for (int i = 0; i < 500; ++i) {
    const Config c = space.sample(rng);
    const Config back = encoder.decode(encoder.encode(c));
    ASSERT_TRUE(space.is_valid(back));
    for (int p = 0; p < space.size(); ++p) {
      ASSERT_EQ(back.values[p].has_value(), c.values[p].has_value());
      if (c.values[p]) {
        EXPECT_NEAR(*back.values[p], *c.values[p], 1e-9 * std::abs(*c.values[p]) + 1e-12);
      }
    }
  }
}

TEST(EncodingTest, decode_of_any_point_is_valid) {
  const Space space = mixed_space();
  const Encoder encoder(space);
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> u(-0.2, 1.2);  // also outside the box: clamped
  for (int i = 0; i < 500; ++i) {
    std::vector<double> x(encoder.dimension());
    for (double& xi : x) xi = u(rng);
    ASSERT_TRUE(space.is_valid(encoder.decode(x)));
  }
}

TEST(EncodingTest, integers_round_to_nearest_and_one_hot_takes_arg_max) {
  const Encoder encoder(mixed_space());
  // depth: 2 + 0.6 · 4 = 4.4 → 4; model: arg-max is "b" (index 1), so lr is inactive.
  const Config c = encoder.decode(std::vector<double>{0.2, 0.7, 0.1, 0.9, 0.6, 0.25});
  EXPECT_EQ(*c.values[0], 1.0);
  EXPECT_FALSE(c.values[1].has_value());
  EXPECT_EQ(*c.values[2], 4.0);
  EXPECT_DOUBLE_EQ(*c.values[3], -2.5);
}
