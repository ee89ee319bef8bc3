#include "lbo/surrogate/acquisition.hpp"

#include <cmath>
#include <numbers>

namespace lbo::surrogate {

namespace {

constexpr double kMinSigma = 1e-9;

double normal_pdf(double u) { return std::exp(-0.5 * u * u) / std::sqrt(2.0 * std::numbers::pi); }
double normal_cdf(double u) { return 0.5 * std::erfc(-u / std::numbers::sqrt2); }

}  // namespace

std::string_view to_string(AcquisitionKind kind) {
  switch (kind) {
    case AcquisitionKind::ucb: return "ucb";
    case AcquisitionKind::ei: return "ei";
    case AcquisitionKind::pi: return "pi";
  }
  return "?";
}

AcquisitionValue acquisition_value(AcquisitionKind kind, double mean, double var, const AcquisitionParams& params) {
  const double sigma = std::sqrt(std::max(var, 0.0));
  AcquisitionValue a;
  // σ = √var: ∂/∂var = ∂/∂σ · 1/(2σ).
  const double dsigma_dvar = sigma > kMinSigma ? 0.5 / sigma : 0.0;
  switch (kind) {
    case AcquisitionKind::ucb: {
      const double root_beta = std::sqrt(params.ucb_beta);
      a.value = mean + root_beta * sigma;
      a.d_mean = 1.0;
      a.d_var = root_beta * dsigma_dvar;
      return a;
    }
    case AcquisitionKind::ei: {
      const double gap = mean - params.incumbent - params.xi;
      if (sigma <= kMinSigma) {
        a.value = std::max(gap, 0.0);
        a.d_mean = gap > 0 ? 1.0 : 0.0;
        return a;
      }
      const double u = gap / sigma;
      a.value = gap * normal_cdf(u) + sigma * normal_pdf(u);
      a.d_mean = normal_cdf(u);
      a.d_var = normal_pdf(u) * dsigma_dvar;  // ∂EI/∂σ = φ(u)
      return a;
    }
    case AcquisitionKind::pi: {
      const double gap = mean - params.incumbent - params.xi;
      if (sigma <= kMinSigma) {
        a.value = gap > 0 ? 1.0 : 0.0;
        return a;
      }
      const double u = gap / sigma;
      a.value = normal_cdf(u);
      a.d_mean = normal_pdf(u) / sigma;
      a.d_var = -u * normal_pdf(u) / sigma * dsigma_dvar;  // ∂PI/∂σ = −uφ(u)/σ
      return a;
    }
  }
  return a;
}

double ucb_beta_schedule(int t, int dimension, double delta, double scale) {
  const double tt = std::max(t, 1);
  return scale * 2.0 *
         ((dimension / 2.0 + 2.0) * std::log(tt) + std::log(std::numbers::pi * std::numbers::pi / (3.0 * delta)));
}

Acquisition::Acquisition(AcquisitionKind kind, AcquisitionParams params, std::shared_ptr<const TaskPosterior> posterior)
    : kind_(kind), params_(params), base_(std::move(posterior)), conditioned_(base_) {}

void Acquisition::set_pending(const Eigen::MatrixXd& P) {
  conditioned_ = P.rows() > 0 ? base_->condition(P, nullptr) : base_;
}

Eigen::VectorXd Acquisition::evaluate(const Eigen::MatrixXd& X) const {
  const Posterior p = conditioned_->predict(X);
  Eigen::VectorXd values(X.rows());
  for (Eigen::Index i = 0; i < X.rows(); ++i) values(i) = acquisition_value(kind_, p.mean(i), p.var(i), params_).value;
  return values;
}

double Acquisition::evaluate(const Eigen::VectorXd& x, Eigen::VectorXd& gradient) const {
  const PointPosterior p = conditioned_->predict_with_gradient(x);
  const AcquisitionValue a = acquisition_value(kind_, p.mean, p.var, params_);
  gradient = a.d_mean * p.d_mean + a.d_var * p.d_var;
  return a.value;
}

}  // namespace lbo::surrogate
