#include "lbo/surrogate/posterior.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace lbo::surrogate;

namespace {

Eigen::VectorXd random_vector(Eigen::Index n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(3.0, 20.0);
  Eigen::VectorXd v(n);
  for (Eigen::Index i = 0; i < n; ++i) v(i) = normal(rng);
  return v;
}

}  // namespace

TEST(StandardizationTest, vector_overloads_equal_the_scalar_ones_bit_for_bit) {
  // 17 entries: the vectorized loops and their scalar tails both run.
  const Eigen::VectorXd y = random_vector(17, 21);
  const Standardization s = Standardization::of(y);
  ASSERT_NE(s.scale, 1.0);
  const Eigen::VectorXd z = s.apply(y), mean = s.invert(z), var = s.invert_variance(z.cwiseAbs());
  ASSERT_EQ(z.size(), y.size());
  for (Eigen::Index i = 0; i < y.size(); ++i) {
    EXPECT_EQ(z(i), s.apply(y(i)));
    EXPECT_EQ(mean(i), s.invert(z(i)));
    EXPECT_EQ(var(i), s.invert_variance(std::abs(z(i))));
  }
}

TEST(StandardizationTest, apply_gives_mean_zero_and_unit_variance_and_invert_undoes_it) {
  const Eigen::VectorXd y = random_vector(40, 22);
  const Standardization s = Standardization::of(y);
  const Eigen::VectorXd z = s.apply(y);
  EXPECT_NEAR(z.mean(), 0.0, 1e-12);
  EXPECT_NEAR((z.array() - z.mean()).square().sum() / 39.0, 1.0, 1e-12);
  EXPECT_LT((s.invert(z) - y).cwiseAbs().maxCoeff(), 1e-12 * y.cwiseAbs().maxCoeff());
}
