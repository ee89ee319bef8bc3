#include "output_warping.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <numbers>

namespace lbo::orchestrator {

OutputWarping::OutputWarping(jobs::OutputWarping kind, const Eigen::VectorXd& y) : kind_(kind) {
  if (kind_ == jobs::OutputWarping::none) return;
  sorted_.assign(y.data(), y.data() + y.size());
  std::sort(sorted_.begin(), sorted_.end());
  const auto n = static_cast<double>(sorted_.size());
  if (sorted_.size() > 1) delta_ = 1.0 / (4.0 * std::pow(n, 0.25) * std::sqrt(std::numbers::pi * std::log(n)));
}

double OutputWarping::operator()(double y) const {
  if (kind_ == jobs::OutputWarping::none) return y;
  // One value or none: no spread to keep (δ would be infinite at n = 1).
  if (sorted_.size() < 2) return 0.0;
  const auto at_most = std::upper_bound(sorted_.begin(), sorted_.end(), y) - sorted_.begin();
  const double cdf = std::clamp(static_cast<double>(at_most) / static_cast<double>(sorted_.size()), delta_, 1.0 - delta_);
  return boost::math::quantile(boost::math::normal(), cdf);
}

Eigen::VectorXd OutputWarping::operator()(const Eigen::VectorXd& y) const {
  if (kind_ == jobs::OutputWarping::none) return y;
  return y.unaryExpr([this](double v) { return (*this)(v); });
}

}  // namespace lbo::orchestrator
