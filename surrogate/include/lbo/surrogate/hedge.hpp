#pragma once
// GP-Hedge (Hoffman, Brochu & de Freitas 2011): a portfolio of acquisitions. Each nominates its
// maximizer; one nominee is played with probability softmax(η·gains); after the next refit every
// arm gains the refitted posterior mean at its nominee.

#include <cstdint>
#include <random>
#include <vector>

namespace lbo::surrogate {

class GpHedge {
 public:
  explicit GpHedge(int arms = 3, double eta = 1.0);

  /// softmax(η·gains), computed stably.
  std::vector<double> probabilities() const;
  /// An arm drawn from probabilities().
  int choose(std::mt19937_64& rng) const;
  /// Adds each arm's reward (the refitted posterior mean at its last nominee, standardized).
  void reward(const std::vector<double>& rewards);

  const std::vector<double>& gains() const { return gains_; }
  double eta() const { return eta_; }

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(gains_, eta_);
  }

 private:
  std::vector<double> gains_;
  double eta_;
};

}  // namespace lbo::surrogate
