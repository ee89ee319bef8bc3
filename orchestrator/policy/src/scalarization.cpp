#include "scalarization.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

namespace lbo::orchestrator {

Scalarization::Scalarization(const jobs::Objectives& objectives, const std::vector<std::vector<double>>& results,
                             std::vector<double> weights)
    : objectives_(objectives), weights_(std::move(weights)), low_(objectives.size(), 0.0), high_(objectives.size(), 0.0) {
  if (weights_.size() != objectives_.size()) throw std::invalid_argument("Scalarization: one weight per objective");
  bool any = false;
  for (const std::vector<double>& r : results) {
    if (r.size() != objectives_.size() || std::any_of(r.begin(), r.end(), [](double v) { return std::isnan(v); })) continue;
    for (std::size_t i = 0; i < r.size(); ++i) {
      const double v = objectives_[i].oriented(r[i]);
      low_[i] = any ? std::min(low_[i], v) : v;
      high_[i] = any ? std::max(high_[i], v) : v;
    }
    any = true;
  }
}

std::vector<double> Scalarization::random_weights(std::size_t objectives, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::exponential_distribution<double> exponential(1.0);
  std::vector<double> w(objectives);
  double sum = 0;
  for (double& x : w) sum += (x = exponential(random));
  for (double& x : w) x /= sum;
  return w;
}

double Scalarization::operator()(const std::vector<double>& values) const {
  double worst = -std::numeric_limits<double>::infinity(), total = 0;
  for (std::size_t i = 0; i < weights_.size(); ++i) {
    const double range = high_[i] - low_[i];
    // One result, or all equal so far: every one sits in the middle.
    const double z = range > 0 ? (objectives_[i].oriented(values[i]) - low_[i]) / range : 0.5;
    const double cost = weights_[i] * (1.0 - z);
    worst = std::max(worst, cost);
    total += cost;
  }
  return -(worst + kRho * total);
}

}  // namespace lbo::orchestrator
