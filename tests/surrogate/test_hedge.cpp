#include "lbo/surrogate/hedge.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace lbo::surrogate;

TEST(HedgeTest, starts_uniform_and_follows_softmax_of_gains) {
  GpHedge hedge(3, 2.0);
  for (double p : hedge.probabilities()) EXPECT_NEAR(p, 1.0 / 3, 1e-12);
  hedge.reward({1.0, 0.0, -1.0});
  const auto p = hedge.probabilities();
  const double z = std::exp(2.0) + 1 + std::exp(-2.0);
  EXPECT_NEAR(p[0], std::exp(2.0) / z, 1e-12);
  EXPECT_NEAR(p[2], std::exp(-2.0) / z, 1e-12);
  hedge.reward({0.5, 0.5, std::nan("")});  // a non-finite reward is ignored
  EXPECT_DOUBLE_EQ(hedge.gains()[2], -1.0);
}

TEST(HedgeTest, choices_follow_the_probabilities) {
  GpHedge hedge(3, 1.0);
  hedge.reward({2.0, 0.0, 0.0});
  std::mt19937_64 rng(5);
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < 20000; ++i) ++counts[hedge.choose(rng)];
  const auto p = hedge.probabilities();
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(counts[i] / 20000.0, p[i], 0.015);
}

TEST(HedgeTest, huge_gains_do_not_overflow) {
  GpHedge hedge(2, 1.0);
  hedge.reward({1e6, 0.0});
  const auto p = hedge.probabilities();
  EXPECT_NEAR(p[0], 1.0, 1e-12);
  EXPECT_TRUE(std::isfinite(p[1]));
}
