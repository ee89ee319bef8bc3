#pragma once
// ParEGO's scalarization of several objectives (Knowles 2006, "ParEGO: a hybrid algorithm with
// on-line landscape approximation for expensive multiobjective optimization problems", IEEE
// TEC 10(1)): each objective normalized to [0, 1] over a task's results, then the augmented
// Chebyshev function of random weights λ on the simplex,
//     f_λ(x) = max_i λ_i c_i(x) + ρ Σ_i λ_i c_i(x),   c_i = 1 − z_i (a cost), ρ = 0.05,
// which every point of the Pareto front minimizes for some λ. The models see −f_λ (larger is
// better), one number per trial, so every surrogate, the lifelong ones included, proposes for
// several objectives unchanged. Private to policy/.

#include <cstdint>
#include <vector>

#include "lbo/jobs/objective.hpp"

namespace lbo::orchestrator {

class Scalarization {
 public:
  /// Knowles's ρ: the small linear term that keeps weakly dominated points from tying.
  static constexpr double kRho = 0.05;

  /// Normalized over `results` (each one value per objective; rows with a NaN are passed
  /// over), with `weights` (non-negative, summing to 1).
  Scalarization(const jobs::Objectives& objectives, const std::vector<std::vector<double>>& results, std::vector<double> weights);

  /// Weights drawn uniformly on the simplex from `seed` (normalized exponentials): a function
  /// of the seed, so of the journal when the seed is.
  static std::vector<double> random_weights(std::size_t objectives, std::uint64_t seed);

  /// −f_λ of a result, larger is better; in [−(1 + ρ), 0] for results inside the range.
  double operator()(const std::vector<double>& values) const;
  const std::vector<double>& weights() const { return weights_; }

 private:
  jobs::Objectives objectives_;
  std::vector<double> weights_;
  std::vector<double> low_, high_;  // oriented (larger is better) range of each objective
};

}  // namespace lbo::orchestrator
