#include "output_warping.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <numbers>

#include "lbo/surrogate/linalg.hpp"

namespace lbo::orchestrator {

namespace {

double normal_quantile(double p) { return boost::math::quantile(boost::math::normal(), p); }

}  // namespace

OutputWarping::OutputWarping(jobs::OutputWarping kind, const Eigen::VectorXd& y) : kind_(kind) {
  if (kind_ == jobs::OutputWarping::none) return;
  sorted_.assign(y.data(), y.data() + y.size());
  std::sort(sorted_.begin(), sorted_.end());
  if (sorted_.size() < 2) return;
  const auto n = static_cast<double>(sorted_.size());
  delta_ = 1.0 / (4.0 * std::pow(n, 0.25) * std::sqrt(std::numbers::pi * std::log(n)));
  if (kind_ != jobs::OutputWarping::copula_below_median) return;
  median_ = surrogate::sample_quantile(sorted_, 0.5);
  scale_ = (surrogate::sample_quantile(sorted_, 0.75) - median_) / normal_quantile(0.75);
  // Ties above the median (a tabulated objective's plateau): the best value sits where the
  // copula would put it, Φ⁻¹(1 − δ).
  if (scale_ <= 0) scale_ = (sorted_.back() - median_) / normal_quantile(1.0 - delta_);
}

double OutputWarping::copula(double y) const {
  const auto at_most = std::upper_bound(sorted_.begin(), sorted_.end(), y) - sorted_.begin();
  const double cdf = std::clamp(static_cast<double>(at_most) / static_cast<double>(sorted_.size()), delta_, 1.0 - delta_);
  return normal_quantile(cdf);
}

double OutputWarping::operator()(double y) const {
  if (kind_ == jobs::OutputWarping::none) return y;
  // One value or none: no spread to keep (δ would be infinite at n = 1).
  if (sorted_.size() < 2) return 0.0;
  if (kind_ == jobs::OutputWarping::copula) return copula(y);
  if (y < median_) return std::min(copula(y), 0.0);
  return scale_ > 0 ? (y - median_) / scale_ : 0.0;
}

Eigen::VectorXd OutputWarping::operator()(const Eigen::VectorXd& y) const {
  if (kind_ == jobs::OutputWarping::none) return y;
  return y.unaryExpr([this](double v) { return (*this)(v); });
}

}  // namespace lbo::orchestrator
