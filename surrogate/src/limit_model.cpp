#include "lbo/surrogate/limit_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <stdexcept>
#include <utility>

#include "lbo/surrogate/gp.hpp"

namespace lbo::surrogate {

namespace {

// The largest log P a proposal can see: P underflows to 0 far outside the limit, and log 0
// would make every candidate there equal.
constexpr double kLogFloor = -700;

double log_normal_pdf(double u) { return -0.5 * u * u - 0.5 * std::log(2 * std::numbers::pi); }

}  // namespace

double log_normal_cdf(double u, double* derivative) {
  double log;
  if (u > -30) {  // erfc keeps its relative accuracy in the tail until it underflows (about −37)
    const double cdf = 0.5 * std::erfc(-u / std::numbers::sqrt2);
    log = std::log(cdf);
    if (derivative != nullptr) *derivative = std::exp(log_normal_pdf(u) - log);
  } else {
    // The asymptotic series of Mills' ratio (Abramowitz & Stegun 26.2.12): Φ(u) = φ(u)/(−u) ·
    // (1 − 1/u² + 3/u⁴ − 15/u⁶ + ...), exact to 1e-13 here, where erfc would underflow.
    const double w = 1 / (u * u);
    const double series = 1 - w + 3 * w * w - 15 * w * w * w + 105 * w * w * w * w;
    log = log_normal_pdf(u) - std::log(-u) + std::log(series);
    if (derivative != nullptr) *derivative = -u / series;
  }
  return log;
}

LimitModel::LimitModel(std::shared_ptr<const TaskPosterior> posterior, Eigen::VectorXd theta, double low, double high,
                       std::string label, int points, int outside)
    : posterior_(std::move(posterior)), theta_(std::move(theta)), label_(std::move(label)), points_(points), outside_(outside) {
  const Standardization& s = posterior_->standardization();
  low_z_ = std::isfinite(low) ? s.apply(low) : -kNone;
  high_z_ = std::isfinite(high) ? s.apply(high) : kNone;
}

std::shared_ptr<const LimitModel> LimitModel::fit(const LimitData& data, double low, double high, std::string label,
                                                  const Eigen::VectorXd* theta) {
  const Eigen::Index n = data.x.rows();
  if (n == 0 || data.value.size() != n) throw std::invalid_argument("LimitModel::fit: no values, or not one per point");
  if (!(low < high)) throw std::invalid_argument("LimitModel::fit: low must be < high");
  const Eigen::Index m = std::min<Eigen::Index>(n, kMaxPoints);
  Observations taken{Eigen::MatrixXd(m, data.x.cols()), Eigen::VectorXd(m)};
  for (Eigen::Index i = 0; i < m; ++i) {
    const Eigen::Index k = m == n ? i : (i * (n - 1)) / std::max<Eigen::Index>(m - 1, 1);  // spread over the order
    taken.X.row(i) = data.x.row(k);
    taken.y(i) = data.value(k);
  }
  int outside = 0;
  for (Eigen::Index i = 0; i < n; ++i) outside += (data.value(i) < low || data.value(i) > high) ? 1 : 0;
  GaussianProcess gp;
  if (theta != nullptr) {
    gp.set(taken, *theta);
  } else {
    gp.fit(taken, /*seed=*/static_cast<std::uint64_t>(m));
  }
  return std::shared_ptr<const LimitModel>(
      new LimitModel(gp.posterior(), gp.theta(), low, high, std::move(label), static_cast<int>(m), outside));
}

std::pair<double, double> LimitModel::predict(const Eigen::VectorXd& x) const {
  const Posterior p = posterior_->predict(x.transpose());
  const Standardization& s = posterior_->standardization();
  return {s.invert(p.mean(0)), std::sqrt(std::max(s.invert_variance(p.var(0)), 0.0))};
}

LimitModel::Interval LimitModel::interval(double mean, double var) const {
  Interval out;
  const double sd = std::sqrt(var);
  out.a = (low_z_ - mean) / sd;
  out.b = (high_z_ - mean) / sd;
  if (!std::isfinite(low_z_)) {
    out.log = log_normal_cdf(out.b, &out.slope_b);
  } else if (!std::isfinite(high_z_)) {
    out.log = log_normal_cdf(-out.a, &out.slope_a);
    out.slope_a = -out.slope_a;
  } else {
    // Φ(b) − Φ(a), each side where it is accurate: by the upper tail when the interval lies above 0.
    const bool upper = out.a > 0;
    const double hi = upper ? -out.a : out.b, lo = upper ? -out.b : out.a;  // P = Φ(hi) − Φ(lo), hi > lo
    double d_hi = 0, d_lo = 0;
    const double log_hi = log_normal_cdf(hi, &d_hi), log_lo = log_normal_cdf(lo, &d_lo);
    const double ratio = std::exp(log_lo - log_hi);  // Φ(lo)/Φ(hi) < 1
    if (ratio < 1 - 1e-12) {
      out.log = log_hi + std::log1p(-ratio);
      // d log P = (φ(hi) dhi − φ(lo) dlo) / P, with φ(u) = Φ(u) · d log Φ(u).
      const double w_hi = d_hi / (1 - ratio), w_lo = d_lo * ratio / (1 - ratio);
      out.slope_b = upper ? w_lo : w_hi;   // b enters as hi (or as −lo, upper)
      out.slope_a = upper ? -w_hi : -w_lo;  // a enters as lo (or as −hi, upper)
    } else {
      out.log = kLogFloor;  // an interval too narrow to tell apart: nothing to follow
    }
  }
  if (out.log < kLogFloor) {
    out.log = kLogFloor;
    out.slope_a = out.slope_b = 0;
  }
  return out;
}

double LimitModel::log_probability(const Eigen::VectorXd& x, int /*task*/, Eigen::VectorXd* gradient) const {
  const PointPosterior p = posterior_->predict_with_gradient(x);
  const double var = std::max(p.var, 1e-12);
  const Interval in = interval(p.mean, var);
  if (gradient != nullptr) {
    // d(bound − μ)/σ / dx = −dμ/σ − u dσ/σ, dσ = dv / (2σ).
    const double sd = std::sqrt(var);
    const auto d_of = [&](double u) -> Eigen::VectorXd { return -p.d_mean / sd - u * p.d_var / (2 * var); };
    *gradient = Eigen::VectorXd::Zero(x.size());
    if (in.slope_a != 0) *gradient += in.slope_a * d_of(in.a);
    if (in.slope_b != 0) *gradient += in.slope_b * d_of(in.b);
  }
  return in.log;
}

// A proposal weighs every candidate at once (BatchProposer::weigh_feasibility): one batched
// posterior, without the gradients a point-by-point evaluation computes. At 64 slots a new
// result came with every proposal, and the limit's weights of its candidates one at a time cost
// the master more than the objective's own proposal (bench/log/2026-12-02-scale-limits-at-64-slots.md).
Eigen::VectorXd LimitModel::log_probabilities(const Eigen::MatrixXd& X, int /*task*/) const {
  const Posterior p = posterior_->predict(X);
  Eigen::VectorXd out(X.rows());
  for (Eigen::Index i = 0; i < X.rows(); ++i) out(i) = interval(p.mean(i), std::max(p.var(i), 1e-12)).log;
  return out;
}

std::string LimitModel::describe() const {
  char text[160];
  std::snprintf(text, sizeof text, "GP of %s on %d trials (%d outside the limit)", label_.c_str(), points_, outside_);
  return text;
}

}  // namespace lbo::surrogate
