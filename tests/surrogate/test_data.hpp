#pragma once
// Observations for the surrogate tests: points drawn uniformly on [0,1]² with values f(x1, x2).

#include <cmath>
#include <cstdint>
#include <random>

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

}  // namespace lbo::testing
