#pragma once
// Mlp: the feature map φ of ABLR and LBO, a fully connected tanh network with batch forward
// and backward passes written against Eigen. Parameters live in one flat vector so that
// L-BFGS and Adam can work on them directly.

#include <Eigen/Core>
#include <random>
#include <vector>

namespace lbo::surrogate {

/// Activations of one forward pass, kept for the backward pass: A₀ = X, A_l = tanh(A_{l−1}W_lᵀ + b_l).
struct MlpCache {
  std::vector<Eigen::MatrixXd> activations;
};

class Mlp {
 public:
  /// input_dim → hidden[0] → … → hidden.back() (the feature dimension D), tanh after each layer.
  Mlp(int input_dim, std::vector<int> hidden);

  int input_dim() const { return input_dim_; }
  int output_dim() const { return hidden_.back(); }
  int parameter_count() const { return parameter_count_; }

  /// Glorot-uniform weights, zero biases.
  Eigen::VectorXd initial_parameters(std::mt19937_64& rng) const;

  /// Φ = φ(X): X is n × input_dim, Φ is n × output_dim. Fills `cache` when given.
  Eigen::MatrixXd forward(const Eigen::VectorXd& params, const Eigen::MatrixXd& X, MlpCache* cache = nullptr) const;
  /// ∂L/∂params from d_out = ∂L/∂Φ (n × output_dim) and the cache of the forward pass.
  Eigen::VectorXd backward(const Eigen::VectorXd& params, const MlpCache& cache, const Eigen::MatrixXd& d_out) const;
  /// J_φ(x)ᵀ V for one input x (length input_dim) and V (output_dim × k): column j is the
  /// gradient of V(:,j)ᵀφ(x) w.r.t. x. Result: input_dim × k.
  Eigen::MatrixXd input_gradient(const Eigen::VectorXd& params, const Eigen::VectorXd& x, const Eigen::MatrixXd& V) const;

 private:
  struct Layer {
    int in, out;
    int weight_offset, bias_offset;  // W is out × in, column-major
  };
  int input_dim_;
  std::vector<int> hidden_;
  std::vector<Layer> layers_;
  int parameter_count_ = 0;
};

}  // namespace lbo::surrogate
