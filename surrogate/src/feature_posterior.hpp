#pragma once
// The posterior of a BLR on the concatenated features of one or more networks (ABLR: one shared
// network; LBO: the networks a task uses). Private to surrogate/.
//
// A network may come with a latent function learned on earlier tasks, g_j(x) = h̄_jᵀφ_j(x)
// (LBO's shared g_m, see lbo.hpp): after the blocks comes one column Σ_j g_j(x), the earlier
// function these networks carry, whose weight is the task's scale of it. With `bias` > 0, a last
// column of that constant lets a task sit at another level than its features' span (an offset).

#include <memory>
#include <vector>

#include "lbo/surrogate/blr.hpp"
#include "lbo/surrogate/mlp.hpp"
#include "lbo/surrogate/posterior.hpp"

namespace lbo::surrogate::detail {

/// The networks see inputs centred on [-1, 1], where tanh units start out in their linear range.
inline Eigen::MatrixXd centred(const Eigen::MatrixXd& X) { return (2.0 * X.array() - 1.0).matrix(); }

/// The feature networks of one posterior: weights per network, and per network the head h̄ of
/// an earlier latent function (size 0: none).
struct FeatureMaps {
  std::shared_ptr<const Mlp> mlp;
  std::vector<std::shared_ptr<const Eigen::VectorXd>> weights;
  std::vector<Eigen::VectorXd> heads;  // empty, or one per network
  double bias = 0;  ///< the bias column's value; 0: none

  const Eigen::VectorXd* head(std::size_t j) const {
    return j < heads.size() && heads[j].size() > 0 ? &heads[j] : nullptr;
  }
  Eigen::Index latent_columns() const {
    for (std::size_t j = 0; j < weights.size(); ++j) {
      if (head(j) != nullptr) return 1;
    }
    return 0;
  }
  Eigen::Index columns() const {
    return mlp->output_dim() * static_cast<Eigen::Index>(weights.size()) + latent_columns() + (bias > 0 ? 1 : 0);
  }

  /// Features of X (n × d, rows in [0,1]^d): each network's block side by side, Σ_j g_j, 1.
  Eigen::MatrixXd operator()(const Eigen::MatrixXd& X) const {
    const Eigen::Index D = mlp->output_dim();
    const Eigen::Index blocks = D * static_cast<Eigen::Index>(weights.size());
    Eigen::MatrixXd phi(X.rows(), columns());
    const Eigen::MatrixXd U = centred(X);
    if (latent_columns() > 0) phi.col(blocks).setZero();
    for (std::size_t j = 0; j < weights.size(); ++j) {
      auto block = phi.middleCols(static_cast<Eigen::Index>(j) * D, D);
      block = mlp->forward(*weights[j], U);
      if (const Eigen::VectorXd* h = head(j)) phi.col(blocks) += block * *h;
    }
    if (bias > 0) phi.col(phi.cols() - 1).setConstant(bias);
    return phi;
  }

  /// A vector over the columns pulled back onto the network blocks: v_block + v_g · h̄ (the
  /// transpose of the map from the blocks to the columns; the bias has no block).
  Eigen::VectorXd on_blocks(const Eigen::VectorXd& v) const {
    const Eigen::Index D = mlp->output_dim();
    Eigen::VectorXd out = v.head(D * static_cast<Eigen::Index>(weights.size()));
    const Eigen::Index latent = out.size();
    for (std::size_t j = 0; j < weights.size(); ++j) {
      if (const Eigen::VectorXd* h = head(j)) out.segment(static_cast<Eigen::Index>(j) * D, D) += v(latent) * *h;
    }
    return out;
  }
};

class FeaturePosterior final : public TaskPosterior {
 public:
  FeaturePosterior(FeatureMaps maps, BayesianLinearRegression blr, Standardization s)
      : TaskPosterior(s), maps_(std::move(maps)), blr_(std::move(blr)) {}

  int dimension() const override { return maps_.mlp->input_dim(); }

  Posterior predict(const Eigen::MatrixXd& X) const override { return blr_.predict(maps_(X)); }

  PointPosterior predict_with_gradient(const Eigen::VectorXd& x) const override {
    const Eigen::VectorXd phi = maps_(x.transpose()).row(0).transpose();
    const Eigen::VectorXd cov_phi = blr_.weight_covariance_times(phi);
    PointPosterior p;
    p.mean = phi.dot(blr_.weight_mean());
    p.var = std::max(phi.dot(cov_phi), 1e-12);
    // ∂(φᵀm)/∂x = 2 J_φᵀ m, ∂(φᵀΣφ)/∂x = 4 J_φᵀ Σφ (the 2 from centring), network by network,
    // with the latent columns folded onto their blocks.
    const Eigen::VectorXd mean_on_blocks = maps_.on_blocks(blr_.weight_mean());
    const Eigen::VectorXd cov_on_blocks = maps_.on_blocks(cov_phi);
    const Eigen::VectorXd u = (2.0 * x.array() - 1.0).matrix();
    const Eigen::Index D = maps_.mlp->output_dim();
    p.d_mean = Eigen::VectorXd::Zero(x.size());
    p.d_var = Eigen::VectorXd::Zero(x.size());
    for (std::size_t j = 0; j < maps_.weights.size(); ++j) {
      const Eigen::Index at = static_cast<Eigen::Index>(j) * D;
      Eigen::MatrixXd V(D, 2);
      V << 2.0 * mean_on_blocks.segment(at, D), 4.0 * cov_on_blocks.segment(at, D);
      const Eigen::MatrixXd g = maps_.mlp->input_gradient(*maps_.weights[j], u, V);
      p.d_mean += g.col(0);
      p.d_var += g.col(1);
    }
    return p;
  }

  std::shared_ptr<const TaskPosterior> condition(const Eigen::MatrixXd& X, const Eigen::VectorXd* y) const override {
    BayesianLinearRegression blr = blr_;
    blr.observe(maps_(X), y);
    return std::make_shared<FeaturePosterior>(maps_, std::move(blr), standardization());
  }

  /// The latent function each network carries for this task: the posterior mean of its head
  /// plus its latent column's weight times h̄ (one D-vector per network).
  std::vector<Eigen::VectorXd> effective_heads() const {
    const Eigen::VectorXd on_blocks = maps_.on_blocks(blr_.weight_mean());
    const Eigen::Index D = maps_.mlp->output_dim();
    std::vector<Eigen::VectorXd> heads;
    for (std::size_t j = 0; j < maps_.weights.size(); ++j) heads.push_back(on_blocks.segment(static_cast<Eigen::Index>(j) * D, D));
    return heads;
  }

 private:
  FeatureMaps maps_;
  BayesianLinearRegression blr_;
};

}  // namespace lbo::surrogate::detail
