#include "lbo/surrogate/hedge.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace lbo::surrogate {

GpHedge::GpHedge(int arms, double eta) : gains_(static_cast<std::size_t>(arms), 0.0), eta_(eta) {
  if (arms < 1) throw std::invalid_argument("GpHedge needs at least one arm");
}

std::vector<double> GpHedge::probabilities() const {
  const double top = *std::max_element(gains_.begin(), gains_.end());
  std::vector<double> p(gains_.size());
  double total = 0;
  for (std::size_t i = 0; i < gains_.size(); ++i) total += p[i] = std::exp(eta_ * (gains_[i] - top));
  for (double& v : p) v /= total;
  return p;
}

int GpHedge::choose(std::mt19937_64& rng) const {
  const std::vector<double> p = probabilities();
  const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  double cumulative = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    cumulative += p[i];
    if (u < cumulative) return static_cast<int>(i);
  }
  return static_cast<int>(p.size()) - 1;
}

void GpHedge::reward(const std::vector<double>& rewards) {
  if (rewards.size() != gains_.size()) throw std::invalid_argument("GpHedge::reward: one reward per arm");
  for (std::size_t i = 0; i < gains_.size(); ++i) {
    if (std::isfinite(rewards[i])) gains_[i] += rewards[i];
  }
}

}  // namespace lbo::surrogate
