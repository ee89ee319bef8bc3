#include "lbo/surrogate/ibp.hpp"

#include <cmath>

namespace lbo::surrogate::ibp {

namespace {

double softplus(double x) { return x > 30 ? x : std::log1p(std::exp(x)); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

std::vector<double> stick_breaking(const std::vector<double>& v) {
  std::vector<double> pi(v.size());
  double product = 1.0;
  for (std::size_t m = 0; m < v.size(); ++m) pi[m] = product *= v[m];
  return pi;
}

std::vector<double> sample_sticks(int networks, double alpha, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(networks));
  for (double& vk : v) vk = std::pow(u(rng), 1.0 / alpha);
  return v;
}

double expected_stick(int m, double alpha) { return std::pow(alpha / (alpha + 1.0), m); }

double concrete_sample(double log_a, double tau, double u) {
  return sigmoid((log_a + std::log(u) - std::log1p(-u)) / tau);
}

double concrete_log_density(double z, double log_a, double tau) {
  // log[a τ z^{−τ−1} (1−z)^{−τ−1} / (a z^{−τ} + (1−z)^{−τ})²]
  const double log_z = std::log(z), log_1mz = std::log1p(-z);
  const double first = log_a - tau * log_z, second = -tau * log_1mz;
  const double top = std::max(first, second);
  const double log_sum = top + std::log(std::exp(first - top) + std::exp(second - top));
  return log_a + std::log(tau) - (tau + 1.0) * (log_z + log_1mz) - 2.0 * log_sum;
}

double logistic_log_density(double y, double log_a, double tau) {
  const double w = tau * y - log_a;  // (y − μ)/s with μ = log a/τ, s = 1/τ
  return -w + std::log(tau) - 2.0 * softplus(-w);
}

KlEstimate concrete_kl(double y, double log_gamma, double log_a_prior, double tau) {
  KlEstimate kl;
  kl.value = logistic_log_density(y, log_gamma, tau) - logistic_log_density(y, log_a_prior, tau);
  // τy − log γ = L does not move with γ, so log q(y) is constant along the reparameterization;
  // −log p(y) moves through y: d/dlog γ = (1 − 2σ(−w))·τ·(1/τ) with w = τy − log a.
  const double w = tau * y - log_a_prior;
  kl.d_log_gamma = 1.0 - 2.0 * sigmoid(-w);
  return kl;
}

}  // namespace lbo::surrogate::ibp
