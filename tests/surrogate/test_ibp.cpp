#include "lbo/surrogate/ibp.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace lbo::surrogate;

namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// ∫ f(y) dy over the real line by the trapezoid rule on [-a, a] (the integrands here decay
// exponentially in |y|).
template <class F>
double integrate(F f, double a = 400, int steps = 400000) {
  const double h = 2 * a / steps;
  double sum = 0.5 * (f(-a) + f(a));
  for (int i = 1; i < steps; ++i) sum += f(-a + i * h);
  return sum * h;
}

}  // namespace

TEST(IbpTest, stick_breaking_multiplies_the_sticks) {
  const std::vector<double> pi = ibp::stick_breaking({0.5, 0.8, 0.25});
  ASSERT_EQ(pi.size(), 3u);
  EXPECT_DOUBLE_EQ(pi[0], 0.5);
  EXPECT_DOUBLE_EQ(pi[1], 0.4);
  EXPECT_DOUBLE_EQ(pi[2], 0.1);
}

TEST(IbpTest, sampled_sticks_have_the_beta_prior_means) {
  // v ~ Beta(α, 1): E[v] = α/(α+1), and E[π_m] = (α/(α+1))^m since the sticks are independent.
  const double alpha = 2.0;
  std::mt19937_64 rng(1);
  const int draws = 40000;
  std::vector<double> mean(4, 0.0);
  for (int i = 0; i < draws; ++i) {
    const auto pi = ibp::stick_breaking(ibp::sample_sticks(4, alpha, rng));
    for (int m = 0; m < 4; ++m) mean[m] += pi[m] / draws;
  }
  for (int m = 0; m < 4; ++m) {
    EXPECT_NEAR(mean[m], ibp::expected_stick(m + 1, alpha), 0.006) << "m = " << m + 1;
  }
  EXPECT_NEAR(ibp::expected_stick(2, alpha), 4.0 / 9.0, 1e-15);
}

TEST(IbpTest, concrete_density_is_the_logistic_density_of_the_logit) {
  // z = σ(y): p_z(z) = p_y(y) / σ'(y), a change of variables between eq. (6) and the logistic.
  for (const double tau : {0.1, 0.5, 1.0}) {
    for (const double log_a : {-2.0, 0.0, 1.5}) {
      for (const double y : {-3.0, -0.4, 0.0, 0.7, 2.5}) {
        const double z = sigmoid(y);
        const double jacobian = std::log(z * (1 - z));
        EXPECT_NEAR(ibp::concrete_log_density(z, log_a, tau) + jacobian, ibp::logistic_log_density(y, log_a, tau),
                    1e-10);
      }
    }
  }
}

TEST(IbpTest, concrete_density_integrates_to_one) {
  for (const double tau : {0.1, 0.5, 1.0}) {
    const double total = integrate([&](double y) { return std::exp(ibp::logistic_log_density(y, 0.8, tau)); });
    EXPECT_NEAR(total, 1.0, 1e-6) << "tau = " << tau;
  }
}

TEST(IbpTest, concrete_samples_exceed_a_half_with_probability_a_over_one_plus_a) {
  // Maddison et al. 2017, Proposition 1: P(z > ½) = a/(1+a) at every temperature.
  const double log_a = 0.9, tau = 0.3;
  const int draws = 100000;
  int above = 0;
  for (int i = 0; i < draws; ++i) above += ibp::concrete_sample(log_a, tau, (i + 0.5) / draws) > 0.5;
  const double a = std::exp(log_a);
  EXPECT_NEAR(static_cast<double>(above) / draws, a / (1 + a), 1e-4);
}

TEST(IbpTest, kl_estimate_is_unbiased_and_its_gradient_follows_the_sample) {
  const double tau = 0.5, log_gamma = 1.2, log_a = -0.7;
  // KL(q ‖ p) by quadrature in logit space.
  const double exact = integrate([&](double y) {
    const double lq = ibp::logistic_log_density(y, log_gamma, tau);
    return std::exp(lq) * (lq - ibp::logistic_log_density(y, log_a, tau));
  });
  EXPECT_GT(exact, 0);
  // The mean of the one-sample estimates over a fine grid of uniforms (stratified: no noise).
  const int draws = 200000;
  double mean = 0;
  for (int i = 0; i < draws; ++i) {
    const double u = (i + 0.5) / draws;
    const double y = (log_gamma + std::log(u) - std::log1p(-u)) / tau;
    mean += ibp::concrete_kl(y, log_gamma, log_a, tau).value / draws;
  }
  EXPECT_NEAR(mean, exact, 1e-3 * exact);
  // With the logistic noise L held fixed, the estimate's derivative w.r.t. log γ.
  for (const double L : {-2.0, 0.1, 1.7}) {
    const auto value = [&](double lg) { return ibp::concrete_kl((lg + L) / tau, lg, log_a, tau).value; };
    const double h = 1e-6;
    const double numeric = (value(log_gamma + h) - value(log_gamma - h)) / (2 * h);
    EXPECT_NEAR(ibp::concrete_kl((log_gamma + L) / tau, log_gamma, log_a, tau).d_log_gamma, numeric, 1e-7);
  }
}
