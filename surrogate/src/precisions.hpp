#pragma once
// Bounds of the BLR precisions that ABLR and LBO learn by empirical Bayes (standardized outputs),
// and the map that lets an unconstrained optimizer respect them. Private to surrogate/.
//
// The weight prior precision α (LBO's λ) stays within [1e-3, 1e3]; the noise precision β within
// [1, 1e3], i.e. noise std between 0.03 and 1. Without the upper bound a network that
// interpolates a few points drives β to infinity and the posterior becomes overconfident.

#include <algorithm>
#include <cmath>

namespace lbo::surrogate::detail {

inline constexpr double kLogAlphaLow = -6.907755279, kLogAlphaHigh = 6.907755279;
inline constexpr double kLogBetaLow = 0.0, kLogBetaHigh = 6.907755279;
inline constexpr double kLogAlphaStart = 0.0, kLogBetaStart = 4.605170186;  // α = 1, β = 100

/// v = low + (high − low)·σ(u): any u maps into the box.
inline double to_bounded(double u, double low, double high) { return low + (high - low) / (1.0 + std::exp(-u)); }
/// The u with to_bounded(u) = v (v clamped just inside the box).
inline double from_bounded(double v, double low, double high) {
  const double q = std::clamp((v - low) / (high - low), 1e-9, 1.0 - 1e-9);
  return std::log(q / (1.0 - q));
}
/// dv/du.
inline double bounded_derivative(double u, double low, double high) {
  const double s = 1.0 / (1.0 + std::exp(-u));
  return (high - low) * s * (1.0 - s);
}

}  // namespace lbo::surrogate::detail
