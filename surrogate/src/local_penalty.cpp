#include "lbo/surrogate/local_penalty.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lbo::surrogate {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// log min(distance / radius, 1); a radius of 0 penalizes the center alone.
double log_factor(double distance, double radius) {
  if (distance <= 0) return -kInf;
  if (distance >= radius) return 0.0;
  return std::log(distance / radius);
}

}  // namespace

double LocalPenalty::radius(double mean, double sd, double best, double lipschitz) {
  return (std::abs(mean - best) + sd) / lipschitz;
}

double LocalPenalty::apply(double value, double log_penalty) {
  if (log_penalty >= 0) return value;
  if (value >= 0) return value * std::exp(log_penalty);
  return value / std::exp(log_penalty);  // exp(−∞) = 0: −∞
}

LocalPenalty::LocalPenalty(Eigen::Index candidates) : log_candidates_(Eigen::VectorXd::Zero(candidates)) {}

void LocalPenalty::add(const Eigen::MatrixXd& C, const Eigen::VectorXd& center, double radius) {
  centers_.insert(centers_.end(), center.data(), center.data() + center.size());
  radii_.push_back(radius);
  if (!(radius > 0)) {
    for (Eigen::Index i = 0; i < C.rows(); ++i) {
      if (C.row(i) == center.transpose()) log_candidates_(i) = -kInf;
    }
    return;
  }
  const Eigen::VectorXd distance = (C.rowwise() - center.transpose()).rowwise().norm();
  for (Eigen::Index i = 0; i < C.rows(); ++i) log_candidates_(i) += log_factor(distance(i), radius);
}

double LocalPenalty::log_at(const Eigen::VectorXd& x, Eigen::VectorXd* gradient) const {
  if (gradient != nullptr) gradient->setZero(x.size());
  if (radii_.empty()) return 0;
  const Eigen::Map<const Eigen::MatrixXd> centers(centers_.data(), x.size(), static_cast<Eigen::Index>(radii_.size()));
  const Eigen::VectorXd distance = (centers.colwise() - x).colwise().norm().transpose();
  double log = 0;
  for (Eigen::Index j = 0; j < distance.size(); ++j) {
    const double factor = log_factor(distance(j), radii_[static_cast<std::size_t>(j)]);
    if (factor == 0.0) continue;
    log += factor;
    // ∇ log(‖x − c‖ / r) = (x − c) / ‖x − c‖².
    if (gradient != nullptr && std::isfinite(factor)) *gradient += (x - centers.col(j)) / (distance(j) * distance(j));
  }
  if (gradient != nullptr && !std::isfinite(log)) gradient->setZero();
  return log;
}

}  // namespace lbo::surrogate
