#pragma once
// Observations for the surrogate tests: points drawn uniformly on [0,1]² with values f(x1, x2).

#include <cmath>
#include <cstdint>
#include <random>

#include "lbo/surrogate/gp.hpp"
#include "lbo/surrogate/surrogate.hpp"

namespace lbo::testing {

template <class F>
surrogate::Observations sample_unit_square(int n, std::uint64_t seed, F f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  surrogate::Observations o{Eigen::MatrixXd(n, 2), Eigen::VectorXd(n)};
  for (int i = 0; i < n; ++i) {
    o.X(i, 0) = u(rng);
    o.X(i, 1) = u(rng);
    o.y(i) = f(o.X(i, 0), o.X(i, 1));
  }
  return o;
}

/// A smooth bowl whose centre moves with `shift`.
inline surrogate::Observations bowl(int n, double shift, std::uint64_t seed) {
  return sample_unit_square(n, seed, [shift](double x1, double x2) {
    return -std::pow(x1 - 0.3 - shift, 2) - 0.5 * std::pow(x2 - 0.6, 2);
  });
}

/// A 1-d GP posterior on (0.1, 0), (0.5, 1), (0.9, 0): peaked at 0.5 (ℓ = 0.2, σ_f² = 1,
/// σ_n² = 1e-4).
inline std::shared_ptr<const surrogate::TaskPosterior> peaked_at_half() {
  Eigen::MatrixXd X(3, 1);
  X << 0.1, 0.5, 0.9;
  Eigen::VectorXd y(3);
  y << 0.0, 1.0, 0.0;
  Eigen::VectorXd theta(3);
  theta << std::log(0.2), 0.0, std::log(1e-4);
  return surrogate::make_gp_posterior(X, y, theta, surrogate::Standardization{});
}

}  // namespace lbo::testing
