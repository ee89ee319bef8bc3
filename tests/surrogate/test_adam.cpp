// Adam: its first two steps against Kingma & Ba's update written out, and a quadratic minimized.
#include "lbo/surrogate/adam.hpp"

#include <gtest/gtest.h>

#include <cmath>

using lbo::surrogate::Adam;

TEST(AdamTest, the_first_two_steps_are_kingma_and_bas_update) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  Eigen::VectorXd rates(3);
  rates << 0.1, 0.01, 0.5;
  Adam adam(rates, b1, b2, eps);
  Eigen::VectorXd x(3);
  x << 1.0, -2.0, 0.5;
  Eigen::VectorXd g1(3), g2(3);
  g1 << 0.3, -4.0, 1e-3;
  g2 << -0.1, -2.0, 2e-3;
  const Eigen::VectorXd x0 = x;
  adam.step(x, g1);
  for (int i = 0; i < 3; ++i) {
    // m̂ = g, v̂ = g²: a step of the rate against the gradient's sign.
    EXPECT_NEAR(x(i), x0(i) - rates(i) * g1(i) / (std::abs(g1(i)) + eps), 1e-14) << i;
  }
  const Eigen::VectorXd x1 = x;
  const double scale = 0.7;
  adam.step(x, g2, scale);
  for (int i = 0; i < 3; ++i) {
    const double m = b1 * (1 - b1) * g1(i) + (1 - b1) * g2(i);
    const double v = b2 * (1 - b2) * g1(i) * g1(i) + (1 - b2) * g2(i) * g2(i);
    const double m_hat = m / (1 - b1 * b1), v_hat = v / (1 - b2 * b2);
    EXPECT_NEAR(x(i), x1(i) - scale * rates(i) * m_hat / (std::sqrt(v_hat) + eps), 1e-14) << i;
  }
}

TEST(AdamTest, it_minimizes_a_quadratic) {
  Adam adam(2, 0.05);
  Eigen::VectorXd x(2);
  x << 3.0, -1.0;
  const Eigen::Vector2d center(0.5, 2.0), curvature(1.0, 10.0);
  for (int it = 0; it < 3000; ++it) {
    const Eigen::VectorXd g = (curvature.array() * (x - center).array()).matrix();
    adam.step(x, g, 1.0 - 0.99 * it / 2999.0);
  }
  EXPECT_NEAR(x(0), center(0), 1e-3);
  EXPECT_NEAR(x(1), center(1), 1e-3);
}
