#pragma once
// The posterior of a BLR on the concatenated features of one or more networks (ABLR: one shared
// network; LBO: the networks a task uses). Private to surrogate/.

#include <memory>
#include <vector>

#include "lbo/surrogate/blr.hpp"
#include "lbo/surrogate/mlp.hpp"
#include "lbo/surrogate/posterior.hpp"

namespace lbo::surrogate::detail {

/// The networks see inputs centred on [-1, 1], where tanh units start out in their linear range.
inline Eigen::MatrixXd centred(const Eigen::MatrixXd& X) { return (2.0 * X.array() - 1.0).matrix(); }

/// Features of X (n × d, rows in [0,1]^d) under each network's weights, side by side.
inline Eigen::MatrixXd features(const Mlp& mlp, const std::vector<std::shared_ptr<const Eigen::VectorXd>>& weights,
                                const Eigen::MatrixXd& X) {
  const Eigen::Index D = mlp.output_dim();
  Eigen::MatrixXd phi(X.rows(), D * static_cast<Eigen::Index>(weights.size()));
  const Eigen::MatrixXd U = centred(X);
  for (std::size_t j = 0; j < weights.size(); ++j) phi.middleCols(static_cast<Eigen::Index>(j) * D, D) = mlp.forward(*weights[j], U);
  return phi;
}

class FeaturePosterior final : public TaskPosterior {
 public:
  FeaturePosterior(std::shared_ptr<const Mlp> mlp, std::vector<std::shared_ptr<const Eigen::VectorXd>> weights,
                   BayesianLinearRegression blr, Standardization s)
      : TaskPosterior(s), mlp_(std::move(mlp)), weights_(std::move(weights)), blr_(std::move(blr)) {}

  int dimension() const override { return mlp_->input_dim(); }

  Posterior predict(const Eigen::MatrixXd& X) const override { return blr_.predict(features(*mlp_, weights_, X)); }

  PointPosterior predict_with_gradient(const Eigen::VectorXd& x) const override {
    const Eigen::VectorXd phi = features(*mlp_, weights_, x.transpose()).row(0).transpose();
    const Eigen::VectorXd cov_phi = blr_.weight_covariance_times(phi);
    PointPosterior p;
    p.mean = phi.dot(blr_.weight_mean());
    p.var = std::max(phi.dot(cov_phi), 1e-12);
    // ∂(φᵀm)/∂x = 2 J_φᵀ m, ∂(φᵀΣφ)/∂x = 4 J_φᵀ Σφ (the 2 from centring), network by network.
    const Eigen::VectorXd u = (2.0 * x.array() - 1.0).matrix();
    const Eigen::Index D = mlp_->output_dim();
    p.d_mean = Eigen::VectorXd::Zero(x.size());
    p.d_var = Eigen::VectorXd::Zero(x.size());
    for (std::size_t j = 0; j < weights_.size(); ++j) {
      const Eigen::Index at = static_cast<Eigen::Index>(j) * D;
      Eigen::MatrixXd V(D, 2);
      V << 2.0 * blr_.weight_mean().segment(at, D), 4.0 * cov_phi.segment(at, D);
      const Eigen::MatrixXd g = mlp_->input_gradient(*weights_[j], u, V);
      p.d_mean += g.col(0);
      p.d_var += g.col(1);
    }
    return p;
  }

  std::shared_ptr<const TaskPosterior> condition(const Eigen::MatrixXd& X, const Eigen::VectorXd* y) const override {
    BayesianLinearRegression blr = blr_;
    blr.observe(features(*mlp_, weights_, X), y);
    return std::make_shared<FeaturePosterior>(mlp_, weights_, std::move(blr), standardization());
  }

 private:
  std::shared_ptr<const Mlp> mlp_;
  std::vector<std::shared_ptr<const Eigen::VectorXd>> weights_;
  BayesianLinearRegression blr_;
};

}  // namespace lbo::surrogate::detail
