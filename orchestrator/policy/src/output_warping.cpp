#include "output_warping.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/tools/minima.hpp>
#include <cmath>
#include <limits>
#include <numbers>

#include "lbo/surrogate/linalg.hpp"

namespace lbo::orchestrator {

namespace {

double normal_quantile(double p) { return boost::math::quantile(boost::math::normal(), p); }

}  // namespace

double yeo_johnson(double z, double lambda) {
  // log1p and expm1 keep the transform exact near λ = 0 and λ = 2, where it turns into a log.
  if (z >= 0) return std::abs(lambda) < 1e-8 ? std::log1p(z) : std::expm1(lambda * std::log1p(z)) / lambda;
  const double mu = 2.0 - lambda;
  return std::abs(mu) < 1e-8 ? -std::log1p(-z) : -std::expm1(mu * std::log1p(-z)) / mu;
}

double yeo_johnson_log_slope(double z, double lambda) {
  return z >= 0 ? (lambda - 1.0) * std::log1p(z) : (1.0 - lambda) * std::log1p(-z);
}

double yeo_johnson_log_likelihood(const Eigen::VectorXd& z, double lambda) {
  const Eigen::VectorXd t = z.unaryExpr([lambda](double v) { return yeo_johnson(v, lambda); });
  const double variance = (t.array() - t.mean()).square().mean();
  double log_jacobian = 0;
  for (const double v : z) log_jacobian += yeo_johnson_log_slope(v, lambda);
  if (!(variance > 0)) return -std::numeric_limits<double>::infinity();
  return -0.5 * static_cast<double>(z.size()) * std::log(variance) + log_jacobian;
}

double yeo_johnson_exponent(const Eigen::VectorXd& z) {
  if (z.size() < 2 || !((z.array() - z.mean()).abs().maxCoeff() > 0)) return 1.0;
  // Brent's method on [−1, 3]: the likelihood is smooth and, for the samples of interest,
  // unimodal in λ (scikit-learn's PowerTransformer uses the same search).
  const auto [lambda, value] = boost::math::tools::brent_find_minima(
      [&z](double l) { return -yeo_johnson_log_likelihood(z, l); }, -1.0, 3.0, 30);
  // The identity when it is as likely to within rounding: a value near 1 is no evidence.
  return -value - yeo_johnson_log_likelihood(z, 1.0) > 1e-9 ? lambda : 1.0;
}

OutputWarping::OutputWarping(jobs::OutputWarping kind, const Eigen::VectorXd& y) : kind_(kind) {
  if (kind_ == jobs::OutputWarping::none) return;
  if (kind_ == jobs::OutputWarping::yeo_johnson) {
    fit_yeo_johnson(y);
    return;
  }
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

void OutputWarping::fit_yeo_johnson(const Eigen::VectorXd& y) {
  if (y.size() < 2) return;
  // The population sd, as scikit-learn's PowerTransformer standardizes (and the one measured in
  // bench/log/2026-12-03-lifelong-transfer-yeo-johnson-warping.md), not surrogate::Standardization's
  // n − 1, which also maps no spread to a scale of 1 where this warps every value to 0.
  mean_ = y.mean();
  sd_ = std::sqrt((y.array() - mean_).square().mean());
  if (!(sd_ > 0)) return;
  lambda_ = yeo_johnson_exponent((y.array() - mean_) / sd_);
}

double OutputWarping::copula(double y) const {
  const auto at_most = std::upper_bound(sorted_.begin(), sorted_.end(), y) - sorted_.begin();
  const double cdf = std::clamp(static_cast<double>(at_most) / static_cast<double>(sorted_.size()), delta_, 1.0 - delta_);
  return normal_quantile(cdf);
}

double OutputWarping::operator()(double y) const {
  if (kind_ == jobs::OutputWarping::none) return y;
  if (kind_ == jobs::OutputWarping::yeo_johnson) return sd_ > 0 ? yeo_johnson((y - mean_) / sd_, lambda_) : 0.0;
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
